"""A pass-through proxy that makes llama_cpp.server's answers independent of request order.

llama-cpp-python reuses the KV cache of the longest prompt prefix it shares with the previous
request and evaluates only the rest: a prompt evaluated in another batch shape rounds
differently, and greedy decoding of a small model can then take another first token. A live run
and a batch of the same requests send them in different orders (a batch sends all answers,
then all checks), so the same request could get two answers. This proxy sends one fixed request
before each forwarded one, under a lock: every request then starts from the same server state,
whatever came before it, and equal requests get equal answers in any order.
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RESET_BODY = {
    "model": "smollm2",
    "messages": [{"role": "user", "content": "Reset."}],
    "max_tokens": 1,
    "temperature": 0.0,
}


@contextlib.contextmanager
def reset_proxy(base_url: str) -> Iterator[str]:
    """Serve a proxy of ``base_url`` (``http://host:port/v1``); yields the proxy's base URL."""
    root = base_url.removesuffix("/v1")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._forward(self.rfile.read(length))

        def _forward(self, body: bytes | None) -> None:
            with lock:
                if body is not None:
                    _send(root + "/v1/chat/completions", json.dumps(RESET_BODY).encode())
                status, reply = _send(root + self.path, body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _send(url: str, body: bytes | None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST" if body else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
