"""Chunked bodies are read (within the size limit) and a 413 or a chunked request closes its connection,
for the site and for /mcp/, under the production command (gunicorn with uvicorn workers) and under the
embedded default's server (uvicorn), each a real server process on the test database."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings

from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question
from tests.served import SERVERS, served

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest, django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    with django_db_blocker.unblock(), served(request.param) as url:
        yield url


def _raw(url: str, payload: bytes, *, timeout: float = 15) -> bytes:
    """Send bytes on one connection and read until the server closes it."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(payload)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def _request(method: str, path: str, key: str, *, body: bytes = b"", chunked: bool = False, extra: str = "") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {key}\r\n{extra}"
    if chunked:
        framed = b"".join(
            b"%x\r\n%s\r\n" % (len(body[i : i + 1000]), body[i : i + 1000]) for i in range(0, len(body), 1000)
        )
        return (
            (head + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
            + framed
            + b"0\r\n\r\n"
        )
    return (head + f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def _statuses(raw: bytes) -> list[int]:
    """Every response's status; a pipelined response starts right after the previous body."""
    return [int(status) for status in re.findall(rb"HTTP/1\.1 (\d{3}) ", raw)]


def test_a_chunked_forecast_is_read_and_stored(server: str, agent_key: str) -> None:
    question = live_question()
    body = json.dumps({"question": question.pk, "prediction": {"probability": 0.25}, "rationale": "r" * 5000}).encode()
    raw = _raw(server, _request("POST", "/api/v1/forecasts/", agent_key, body=body, chunked=True))
    assert _statuses(raw) == [201], raw[:500]
    assert b"connection: close" in raw.lower()
    forecast = Forecast.objects.get()
    assert forecast.prediction == {"probability": 0.25} and forecast.rationale == "r" * 5000


def test_a_chunked_body_over_the_limit_is_413_and_stores_nothing(server: str, agent_key: str) -> None:
    question = live_question()
    body = json.dumps({"question": question.pk, "prediction": {"probability": 0.5}, "rationale": "x" * 1_200_000})
    assert len(body) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw = _raw(server, _request("POST", "/api/v1/forecasts/", agent_key, body=body.encode(), chunked=True))
    assert _statuses(raw) == [413], raw[:500]
    assert b"request_too_large" in raw and b"connection: close" in raw.lower()
    assert not Forecast.objects.exists()


def test_413_closes_the_connection_so_the_next_request_is_not_lost(server: str, agent_key: str) -> None:
    question = live_question()
    big = json.dumps({"question": question.pk, "prediction": {"probability": 0.5}, "rationale": "x" * 2_000_000})
    # Pipelined: the second request must not be read out of the refused body, nor silently dropped
    # on a connection announced as reusable.
    raw = _raw(
        server,
        _request("POST", "/api/v1/forecasts/", agent_key, body=big.encode())
        + _request("GET", "/api/v1/questions/?limit=1", agent_key),
    )
    assert _statuses(raw) == [413], raw[:500]
    assert b"connection: close" in raw.lower()
    # A client reusing its connection sees the close and opens a new one: every answer arrives.
    with httpx.Client(base_url=server, headers={"Authorization": f"Token {agent_key}"}, timeout=15) as client:
        for _ in range(3):
            refused = client.post("/api/v1/forecasts/", content=big, headers={"Content-Type": "application/json"})
            assert refused.status_code == 413 and refused.headers["connection"] == "close"
            assert client.get("/api/v1/questions/", params={"limit": 1}).status_code == 200
    assert not Forecast.objects.exists()


def test_malformed_chunk_framing_is_400(server: str, agent_key: str) -> None:
    payload = _request("POST", "/api/v1/forecasts/", agent_key, chunked=True).replace(b"0\r\n\r\n", b"zz\r\nab\r\n")
    assert _statuses(_raw(server, payload))[0] == 400
    assert not Forecast.objects.exists()


def test_a_chunked_request_closes_its_connection_and_others_keep_theirs(server: str, agent_key: str) -> None:
    question = live_question()
    body = json.dumps({"question": question.pk, "prediction": {"probability": 0.4}}).encode()
    listing = _request("GET", "/api/v1/questions/?limit=1", agent_key)
    # A second request on the connection of a chunked one is not read: the server has closed it.
    raw = _raw(server, _request("POST", "/api/v1/forecasts/", agent_key, body=body, chunked=True) + listing)
    assert _statuses(raw) == [201], raw[:500]
    # Requests with a Content-Length share a connection as usual (the last one asks to close).
    raw = _raw(
        server, listing + listing + _request("GET", "/api/v1/questions/", agent_key, extra="Connection: close\r\n")
    )
    assert _statuses(raw) == [200, 200, 200], raw[:500]


def _mcp_call(key: str, arguments: dict[str, Any], *, chunked: bool = False) -> bytes:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "submit_forecast", "arguments": arguments},
    }
    return _request(
        "POST", "/mcp/", key, body=json.dumps(call).encode(), chunked=chunked,
        extra="Accept: application/json, text/event-stream\r\n",
    )  # fmt: skip


def test_mcp_reads_chunked_calls_and_has_the_same_limit(server: str, agent_key: str) -> None:
    question = live_question()
    raw = _raw(
        server, _mcp_call(agent_key, {"question": question.pk, "prediction": {"probability": 0.7}}, chunked=True)
    )
    assert _statuses(raw) == [200] and b"connection: close" in raw.lower(), raw[:500]
    answer = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    assert answer["result"]["isError"] is False and answer["result"]["structuredContent"]["channel"] == "mcp"
    assert Forecast.objects.get().prediction == {"probability": 0.7}

    big = {"question": question.pk, "prediction": {"probability": 0.1}, "rationale": "x" * 1_100_000}
    for chunked in (False, True):
        raw = _raw(
            server, _mcp_call(agent_key, big, chunked=chunked) + _request("GET", "/api/v1/questions/", agent_key)
        )
        assert _statuses(raw) == [413], raw[:500]
        assert b"request_too_large" in raw and b"connection: close" in raw.lower()
    assert Forecast.objects.count() == 1
