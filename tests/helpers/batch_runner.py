"""Execute an OpenAI batch input file against a real server, as the Batch API would.

Each input line (``custom_id``, ``method``, ``url``, ``body``) is sent to ``server_root + url``;
a 2xx answer goes to the output file, anything else to the error file, both in the OpenAI batch
output format (``id``, ``custom_id``, ``response`` {``status_code``, ``request_id``, ``body``},
``error``). A request the server never answered gets ``response: null`` and an ``error`` object.
Used by the batch round-trip tests against ``llama_cpp.server``; also runnable by hand:
``python -m tests.helpers.batch_runner INPUT.jsonl http://127.0.0.1:8080 OUT.jsonl ERR.jsonl``.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any


def run_batch_file(
    input_path: Path, server_root: str, output_path: Path, error_path: Path
) -> tuple[int, int]:
    """Send every request of ``input_path``; returns (answered, errored)."""
    answered = errored = 0
    with (
        input_path.open(encoding="utf-8") as requests,
        output_path.open("a", encoding="utf-8") as output,
        error_path.open("a", encoding="utf-8") as errors,
    ):
        for raw in requests:
            if not raw.strip():
                continue
            request = json.loads(raw)
            line, ok = _execute(request, server_root.rstrip("/"))
            (output if ok else errors).write(json.dumps(line) + "\n")
            answered += ok
            errored += not ok
    return answered, errored


def _execute(request: dict[str, Any], server_root: str) -> tuple[dict[str, Any], bool]:
    line: dict[str, Any] = {
        "id": f"batch_req_{uuid.uuid4().hex}",
        "custom_id": request["custom_id"],
        "response": None,
        "error": None,
    }
    http = urllib.request.Request(
        server_root + request["url"],
        data=json.dumps(request["body"]).encode("utf-8"),
        method=request["method"],
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(http, timeout=300) as reply:
            status, body = reply.status, reply.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    except OSError as error:
        line["error"] = {"code": "connection_error", "message": str(error)}
        return line, False
    try:
        parsed: Any = json.loads(body)
    except json.JSONDecodeError:
        parsed = {"error": {"message": body.decode("utf-8", "replace")}}
    line["response"] = {
        "status_code": status,
        "request_id": f"req_{uuid.uuid4().hex}",
        "body": parsed,
    }
    return line, 200 <= status < 300


if __name__ == "__main__":
    source, root, out, err = sys.argv[1:5]
    print(run_batch_file(Path(source), root, Path(out), Path(err)))
