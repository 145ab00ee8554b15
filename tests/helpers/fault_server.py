"""A fault-injecting OpenAI-compatible HTTP server on loopback.

Each request takes the next behaviour from a script (the last one repeats): a normal reply,
429 with Retry-After, 500, a hang longer than the client's timeout, a malformed body, a
connection reset, a 200 reply of the wrong shape (content that is a number or an object, no
choices, an error object, a JSON array), or a server that echoes the request's API key (in an
error body or in the reply). A server can also change what it says served its replies (the
``model`` and ``system_fingerprint`` of each reply) after a number of replies, as a hosted API
does when it moves a model name to another build. Used where no real server can be made to
fail on demand.
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
NUMBER_CONTENT = "content-number"
OBJECT_CONTENT = "content-object"
EMPTY_CHOICES = "empty-choices"
MISSING_CHOICES = "missing-choices"
ERROR_OBJECT = "error-object"
JSON_ARRAY = "json-array"
ECHO_KEY_ERROR = "echo-key-error"
ECHO_KEY_REPLY = "echo-key-reply"
UNAUTHORIZED = "401"  # a refused key, which the server's message quotes
SURROGATE = "surrogate"  # a reply holding a lone surrogate, which UTF-8 cannot encode
NEGATIVE_USAGE = "negative-usage"  # a reply whose usage counts are negative
NUMBER_FINGERPRINT = "fingerprint-number"  # a reply whose system_fingerprint is a number

#: 200 replies of the wrong shape, each a call failure for the client.
MALFORMED_200 = (NUMBER_CONTENT, OBJECT_CONTENT, EMPTY_CHOICES, MISSING_CHOICES, ERROR_OBJECT)


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


def _with_content(content: Any) -> dict[str, Any]:
    reply = chat_reply()
    reply["choices"][0]["message"]["content"] = content
    return reply


def _without_choices_key() -> dict[str, Any]:
    reply = chat_reply()
    del reply["choices"]
    return reply


_WRONG_SHAPES: dict[str, Any] = {
    NUMBER_CONTENT: _with_content(42),
    OBJECT_CONTENT: _with_content({"text": "hi"}),
    EMPTY_CHOICES: {**chat_reply(), "choices": []},
    MISSING_CHOICES: _without_choices_key(),
    ERROR_OBJECT: {"error": {"message": "model overloaded", "type": "server_error"}},
    SURROGATE: _with_content("- odd \ud800 text\n- two\n- three"),
    NEGATIVE_USAGE: {
        **chat_reply(),
        "usage": {"prompt_tokens": -5, "completion_tokens": -3, "total_tokens": -8},
    },
    JSON_ARRAY: [1, 2, 3],
    NUMBER_FINGERPRINT: {**chat_reply(), "system_fingerprint": 7},
}


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        script: Sequence[str],
        *,
        retry_after_s: int = 1,
        hang_s: float = 5.0,
        reply_text: str = "fixed reply",
        served: Sequence[tuple[str, str]] = (),
        served_changes_after: int = 1,
    ):
        """``served``: the (model, system_fingerprint) of the normal replies, the next pair
        after every ``served_changes_after`` of them (the last pair repeats); an empty
        fingerprint is left out of the reply. None given: "fault-server", no fingerprint."""
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self.requests: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._reply = chat_reply(reply_text)
        self._body = json.dumps(self._reply).encode()
        self.served = list(served)
        self.served_changes_after = served_changes_after
        self.replies_served = 0

    def switch_to(self, script: Sequence[str]) -> None:
        """From the next request on, follow ``script`` from its start."""
        with self._lock:
            self.script = [*([OK] * len(self.requests)), *script]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def ok_body(self) -> bytes:
        """A normal reply, saying what served it."""
        with self._lock:
            index = self.replies_served // self.served_changes_after
            self.replies_served += 1
        if not self.served:
            return self._body
        model, fingerprint = self.served[min(index, len(self.served) - 1)]
        reply = {**self._reply, "model": model}
        if fingerprint:
            reply["system_fingerprint"] = fingerprint
        return json.dumps(reply).encode()

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
        if not self.path.startswith("/v1/"):  # as OpenAI-compatible servers (FastAPI's body)
            self._send(404, b'{"detail": "Not Found"}')
            return
        behaviour = self.server.next_behaviour(body)
        if behaviour in _WRONG_SHAPES:
            self._send(200, json.dumps(_WRONG_SHAPES[behaviour]).encode())
        elif behaviour in (ECHO_KEY_ERROR, ECHO_KEY_REPLY, UNAUTHORIZED):
            self._echo_key(behaviour)
        elif behaviour == RESET:
            self._reset()
        elif behaviour == HANG:
            time.sleep(self.server.hang_s)
            self._send(200, self.server.ok_body())
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
            self._send(200, self.server.ok_body())

    def _echo_key(self, behaviour: str) -> None:
        # Servers that echo the credential they rejected (or a model that repeats its prompt).
        key = self.headers.get("authorization", "").removeprefix("Bearer ")
        if behaviour == ECHO_KEY_ERROR:
            message = {"error": {"message": f"Incorrect API key provided: {key}"}}
            self._send(500, json.dumps(message).encode())
        elif behaviour == UNAUTHORIZED:
            message = {"error": {"message": f"Incorrect API key provided: {key}"}}
            self._send(401, json.dumps(message).encode())
        else:
            self._send(200, json.dumps(chat_reply(f"your key is {key}")).encode())

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
