"""A local OpenAI-compatible server on 127.0.0.1 answering /v1/chat/completions from a script.

The script is a list of steps, taken in order, or a function from the request body to a step.
Each step is one of:
  {"content": "text"}                      a plain assistant message
  {"tool_args": "<json string>"}           a submit_graph tool call with these arguments
  {"status": 500, "body": {...}}           an HTTP error in OpenAI's error shape
  {"hang": True}                           never answers (until the server stops): a timeout
and may add "finish_reason" (e.g. "length") or "usage": None (a server that reports no usage).
The server records every request body so tests can read prompts and corrections.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = list[dict[str, Any]] | Callable[[dict[str, Any]], dict[str, Any]]


class FakeLLM:
    def __init__(self, script: Script) -> None:
        self.responder = script if callable(script) else None
        self.script = [] if callable(script) else list(script)
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.lock = threading.Lock()

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            if self.responder is not None:
                return self.responder(body)
            if not self.script:
                return {"status": 500, "body": {"error": {"message": "script exhausted", "type": "server_error"}}}
            return self.script.pop(0)


def completion(step: dict[str, Any], model: str, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
    finish = "stop"
    if "tool_args" in step:
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": step.get("tool_name", "submit_graph"), "arguments": step["tool_args"]},
            }
        ]
        finish = "tool_calls"
    finish = step.get("finish_reason", finish)
    usage = step.get("usage", {"prompt_tokens": 100 + n, "completion_tokens": 20, "total_tokens": 120 + n})
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                return
            step = fake.next_step(body)
            if step.get("hang"):
                fake.release.wait(timeout=30)
                return
            if "status" in step:
                self._send(step["status"], step.get("body", {"error": {"message": "boom", "type": "server_error"}}))
                return
            self._send(200, completion(step, body.get("model", ""), len(fake.requests)))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def fake_llm(script: Script) -> Iterator[tuple[FakeLLM, str]]:
    """Serve the script; yields (fake, base_url ending in /v1)."""
    fake = FakeLLM(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    """A base URL on which nothing listens (an LLM server that is down)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
