"""A local stand-in for the internet: a threaded HTTP server on 127.0.0.1 that answers recorded
payloads, so the real clients (httpx, feedparser) run unchanged against it.

Usage (the ``fake_server`` fixture is registered in tests/ingestion/conftest.py)::

    def test_something(fake_server):
        url = fake_server.add_fixture("/feed.xml", "feeds/rss20_bbc_world.xml", content_type="application/rss+xml")
        fake_server.add("/down", Response(status=503, headers={"Retry-After": "120"}))
        fake_server.add_json("/markets", [{"id": 1}])                  # JSON body
        fake_server.add("/page", lambda req: Response(body=...))       # dynamic: e.g. cursor paging
        fake_server.add("/seq", Response(status=500), Response(body=b"ok"))  # in order; last repeats
        ...
        assert fake_server.requests_to("/feed.xml")[0].headers["user-agent"].startswith("Hindsight/")

Routes: ``add(path, ...)`` matches the path alone, or ``add("/markets?cursor=abc", ...)`` the path
with that exact query string (tried first). A handler gets a ``RecordedRequest`` (``.query`` is a
dict of lists) and returns a ``Response``. ``Response(etag=..., last_modified=...)`` answers 304
when the request's validators match, like a real server. ``Response(delay=2)`` sleeps before
answering (timeouts); ``Response(stream_bytes=N)`` streams N bytes with no Content-Length
(size caps). Every request is recorded in ``fake_server.requests``. Unknown paths answer 404.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_bytes(name: str) -> bytes:
    """A recorded payload under tests/ingestion/fixtures/ (e.g. ``feeds/atom10_example.xml``)."""
    return (FIXTURES / name).read_bytes()


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/plain; charset=utf-8"
    delay: float = 0.0
    etag: str = ""
    last_modified: str = ""
    # Stream this many filler bytes without Content-Length (the client cannot know the size).
    stream_bytes: int = 0


@dataclass
class RecordedRequest:
    method: str
    path: str
    raw_path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names


Handler = Callable[[RecordedRequest], Response]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gives up on purpose (a timeout, a body over its size limit) drops the
        # connection mid-exchange: expected here, not worth a traceback in the test output.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeServer:
    def __init__(self) -> None:
        self.routes: dict[str, list[Response | Handler]] = {}
        self.served: dict[str, int] = {}
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        # Don't wait for handlers still sleeping in a timeout test when the server stops.
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-server", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def add(self, path: str, *responses: Response | Handler) -> str:
        """Serve ``responses`` in order at ``path`` (the last one repeats); returns the full URL."""
        if not responses:
            raise ValueError("add() needs at least one response")
        with self._lock:
            self.routes[path] = list(responses)
            self.served[path] = 0
        return self.url(path)

    def add_fixture(self, path: str, fixture: str, *, content_type: str = "application/xml", **kwargs: Any) -> str:
        return self.add(path, Response(body=fixture_bytes(fixture), content_type=content_type, **kwargs))

    def add_json(self, path: str, data: Any, *, status: int = 200, **kwargs: Any) -> str:
        body = json.dumps(data).encode()
        return self.add(path, Response(status=status, body=body, content_type="application/json", **kwargs))

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path or r.raw_path == path]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _respond(self, request: RecordedRequest) -> Response:
        with self._lock:
            self.requests.append(request)
            key = request.raw_path if request.raw_path in self.routes else request.path
            responses = self.routes.get(key)
            if responses is None:
                return Response(status=404, body=b"not found")
            index = min(self.served[key], len(responses) - 1)
            self.served[key] += 1
            chosen = responses[index]
        return chosen(request) if callable(chosen) else chosen


def _make_handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._handle()

        def do_HEAD(self) -> None:
            self._handle(head=True)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self._handle()

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _handle(self, head: bool = False) -> None:
            parts = urlsplit(self.path)
            request = RecordedRequest(
                method=self.command,
                path=parts.path,
                raw_path=self.path,
                query=parse_qs(parts.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in self.headers.items()},
            )
            response = server._respond(request)
            if response.delay:
                time.sleep(response.delay)
            try:
                self._send(request, response, head=head)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (size cap, timeout): exactly what some tests provoke.
                self.close_connection = True

        def _send(self, request: RecordedRequest, response: Response, *, head: bool) -> None:
            validators_match = (response.etag and request.headers.get("if-none-match") == response.etag) or (
                response.last_modified
                and not response.etag
                and request.headers.get("if-modified-since") == response.last_modified
            )
            status = 304 if validators_match and response.status == 200 else response.status
            self.send_response(status)
            headers = {"Content-Type": response.content_type, **response.headers}
            if response.etag:
                headers["ETag"] = response.etag
            if response.last_modified:
                headers["Last-Modified"] = response.last_modified
            for name, value in headers.items():
                self.send_header(name, value)
            if status == 304:
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if response.stream_bytes:
                # No Content-Length: the body ends when the connection closes.
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                chunk = b"<!-- filler -->" * 4096
                sent = 0
                while sent < response.stream_bytes and not head:
                    piece = chunk[: response.stream_bytes - sent]
                    self.wfile.write(piece)
                    sent += len(piece)
                return
            if "Content-Length" not in response.headers:
                self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if not head:
                self.wfile.write(response.body)

    return _Handler


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    try:
        yield server
    finally:
        server.close()
