"""A fault-injecting OpenAI-compatible HTTP server on loopback.

Each request takes the next behaviour from a script (the last one repeats): a normal reply,
429 with Retry-After, 500, a hang longer than the client's timeout, a malformed body, or a
connection reset. Used where no real server can be made to fail on demand.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK = "ok"
RATE_LIMITED = "429"
SERVER_ERROR = "500"
HANG = "hang"
MALFORMED = "malformed"
RESET = "reset"
BAD_REQUEST = "400"


def chat_reply(text: str = "fixed reply") -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fault-server",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Sequence[str], *, retry_after_s: int = 1, hang_s: float = 5.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self.requests: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._body = json.dumps(chat_reply()).encode()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_behaviour(self, body: dict[str, Any]) -> str:
        with self._lock:
            index = len(self.requests)
            self.requests.append((time.monotonic(), body))
            return self.script[min(index, len(self.script) - 1)]


class _Handler(BaseHTTPRequestHandler):
    server: FaultServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        behaviour = self.server.next_behaviour(body)
        if behaviour == RESET:
            self._reset()
        elif behaviour == HANG:
            time.sleep(self.server.hang_s)
            self._send(200, self.server._body)
        elif behaviour == MALFORMED:
            self._send(200, b'{"choices": [ this is not json')
        elif behaviour == RATE_LIMITED:
            headers = {"Retry-After": str(self.server.retry_after_s)}
            self._send(429, b'{"error": {"message": "slow down"}}', headers)
        elif behaviour == SERVER_ERROR:
            self._send(500, b'{"error": {"message": "boom"}}')
        elif behaviour == BAD_REQUEST:
            self._send(400, b'{"error": {"message": "bad parameter"}}')
        else:
            self._send(200, self.server._body)

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _reset(self) -> None:
        # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True


@contextmanager
def fault_server(script: Sequence[str], **options: Any) -> Iterator[FaultServer]:
    server = FaultServer(script, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
