"""A local OpenAI-compatible server on 127.0.0.1 for the question-generation tests.

It answers ``POST /v1/chat/completions`` in the real Chat Completions response format
(https://platform.openai.com/docs/api-reference/chat/object). Each test gives a ``responder``
that sees the parsed request and returns a Reply: content text, an HTTP error status, or a
hang (the server holds the request until the test ends, so the client's timeout fires).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    hang: bool = False


@dataclass
class FakeLLM:
    responder: Callable[[dict[str, Any]], Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def calls(self, kind: str) -> list[dict[str, Any]]:
        """Requests whose system prompt is the generation ('generate') or scoring ('score') one."""
        marker = "You write forecasting questions" if kind == "generate" else "You review forecasting questions"
        return [r for r in self.requests if marker in r["messages"][0]["content"]]


def completion(content: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-local-0001",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_local",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 80, "total_tokens": 200},
    }


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"Unknown path {self.path}", "type": "invalid_request_error"}})
                return
            fake.requests.append(request)
            reply = fake.responder(request)
            if reply.hang:
                fake.release.wait(30)
                return
            if reply.status != 200:
                self._send(
                    reply.status,
                    {"error": {"message": "The server had an error", "type": "server_error", "code": None}},
                )
                return
            self._send(200, completion(reply.content, request.get("model", "")))

    return Handler


@contextmanager
def fake_llm(responder: Callable[[dict[str, Any]], Reply]) -> Iterator[FakeLLM]:
    fake = FakeLLM(responder=responder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
