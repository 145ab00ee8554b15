"""A minimal OpenAI-compatible server that answers every chat request at once with a fixed
reply. Raw asyncio HTTP/1.1 with keep-alive, run in its own process, so that it is not what
limits the client throughput being measured.

    python benchmarks/fixed_reply_server.py PORT
"""

from __future__ import annotations

import asyncio
import json
import sys

BODY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "fixed",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "fixed reply"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }
).encode()
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)
MODELS = b'{"object":"list","data":[{"id":"fixed","object":"model"}]}'
MODELS_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(MODELS)).encode()
    + b"\r\n\r\n"
    + MODELS
)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            writer.write(MODELS_RESPONSE if head.startswith(b"GET") else RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port: int) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
