"""Hostile API requests, each answered with a 4xx JSON error naming the problem and storing nothing.

One list, shared by the tests of each behaviour (pagination bounds, text that cannot be stored,
deep nesting), so that every endpoint gets every probe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from leaderboard.models import Forecast, ReplaySession
from leaderboard.services.evidence import evidence_log_flush
from tests.leaderboard.hostile_world import hostile_world

HUGE = "99999999999999999999"


@dataclass(frozen=True)
class Probe:
    name: str
    method: str
    path: str  # {live}, {replay}, {session} are filled in from the world
    params: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    mentions: str = ""  # the error message must contain this (the field or the problem)

    def send(self, client: httpx.Client, world: dict[str, Any]) -> httpx.Response:
        params = {k: v.format(**world) for k, v in self.params.items()}
        body = None if self.body is None else self.body.replace(b"{live}", str(world["live"]).encode())
        headers = {"Content-Type": "application/json"} if body is not None else {}
        return client.request(self.method, self.path.format(**world), params=params, content=body, headers=headers)


# Every list, with the query it needs to be a valid request apart from the probe.
LISTS: dict[str, tuple[str, dict[str, str]]] = {
    "questions": ("/api/v1/questions/", {}),
    "forecasts": ("/api/v1/forecasts/", {}),
    "evidence-log": ("/api/v1/evidence/log/", {}),
    "articles": ("/api/v1/evidence/articles/", {"q": "budget", "question": "{live}"}),
    "events": ("/api/v1/evidence/events/", {"question": "{live}"}),
    "deliveries": ("/api/v1/deliveries/", {}),
}
PAGING = {
    "limit-huge": ({"limit": HUGE}, "limit"),
    "offset-huge": ({"offset": HUGE}, "offset"),
    "limit-100000": ({"limit": "100000"}, "limit"),
    "limit-zero": ({"limit": "0"}, "limit"),
    "limit-negative": ({"limit": "-5"}, "limit"),
    "limit-text": ({"limit": "ten"}, "limit"),
    "offset-negative": ({"offset": "-1"}, "offset"),
    "offset-float": ({"offset": "1.5"}, "offset"),
    # An integral value written as a decimal is no integer either, as the schema says.
    "offset-zero-point-zero": ({"offset": "0.0"}, "offset"),
    "limit-point-zero": ({"limit": "5.0"}, "limit"),
}
PAGING_PROBES = [
    Probe(f"{name}:{case}", "GET", path, {**params, **extra}, mentions=needle)
    for name, (path, params) in LISTS.items()
    for case, (extra, needle) in PAGING.items()
] + [
    Probe("leaderboard:page-huge", "GET", "/api/v1/leaderboard/", {"page": HUGE}, mentions="page"),
    Probe("leaderboard:page_size-huge", "GET", "/api/v1/leaderboard/", {"page_size": HUGE}, mentions="page_size"),
    Probe("questions:question-huge", "GET", "/api/v1/forecasts/", {"question": HUGE}, mentions="question"),
    Probe("events:question-huge", "GET", "/api/v1/evidence/events/", {"question": HUGE}, mentions="question"),
]


def _forecast(**fields: Any) -> bytes:
    body = {"question": "{live}", "prediction": {"probability": 0.5}, **fields}
    return json.dumps(body).replace('"{live}"', "{live}").encode()


# JSON text as a client sends it: json.dumps writes "\u0000" and "\ud800" as escapes.
TEXT_PROBES = [
    Probe("rationale-nul", "POST", "/api/v1/forecasts/", body=_forecast(rationale="a\x00b"), mentions="rationale"),
    Probe(
        "rationale-surrogate", "POST", "/api/v1/forecasts/", body=_forecast(rationale="\ud800"), mentions="rationale"
    ),
    Probe(
        "rationale-low-surrogate",
        "POST",
        "/api/v1/forecasts/",
        body=_forecast(rationale="x\udfffy"),
        mentions="rationale",
    ),
    Probe("key-nul", "POST", "/api/v1/forecasts/", body=_forecast(idempotency_key="k\x00"), mentions="idempotency_key"),
    Probe(
        "key-surrogate",
        "POST",
        "/api/v1/forecasts/",
        body=_forecast(idempotency_key="\ud83d"),
        mentions="idempotency_key",
    ),
    Probe(
        "source-nul",
        "POST",
        "/api/v1/forecasts/",
        body=_forecast(sources=["https://a.example/\x00"]),
        mentions="sources",
    ),
    Probe(
        "prediction-key-surrogate",
        "POST",
        "/api/v1/forecasts/",
        body=_forecast(prediction={"probability": 0.5, "\udc00": 1}),
        mentions="prediction",
    ),
    Probe(
        "graph-title-nul",
        "POST",
        "/api/v1/forecasts/",
        body=_forecast(graph={"events": [{"id": "e1", "title": "\x00", "date": "2026-01-02"}], "edges": []}),
        mentions="graph.events[0].title",
    ),
    Probe(
        "batch-item-surrogate",
        "POST",
        "/api/v1/forecasts/batch/",
        body=b"[" + _forecast(rationale="\ud800") + b"]",
        mentions="rationale",
    ),
    Probe("replay-question-nul", "POST", "/api/v1/replays/", body=b'{"question": "1\\u0000"}', mentions="question"),
    Probe("search-q-nul", "GET", "/api/v1/evidence/articles/", {"q": "a\x00b", "question": "{live}"}, mentions="q"),
    Probe("questions-domain-nul", "GET", "/api/v1/questions/", {"domain": "x\x00"}, mentions="domain"),
    Probe("leaderboard-domain-nul", "GET", "/api/v1/leaderboard/", {"domain": "x\x00"}, mentions="domain"),
    Probe("leaderboard-sort-nul", "GET", "/api/v1/leaderboard/", {"sort": "\x00"}, mentions="sort"),
    Probe(
        "events-subject-nul",
        "GET",
        "/api/v1/evidence/events/",
        {"subject": "U\x00A", "question": "{live}"},
        mentions="subject",
    ),
]


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


DEPTH_PROBES = [
    Probe("body-5000-deep", "POST", "/api/v1/forecasts/", body=_nested(5000), mentions="nested"),
    Probe("body-100000-deep", "POST", "/api/v1/forecasts/", body=_nested(100_000), mentions="nested"),
    Probe(
        "rationale-5000-deep",
        "POST",
        "/api/v1/forecasts/",
        body=b'{"question": {live}, "prediction": {"probability": 0.5}, "rationale": ' + _nested(5000) + b"}",
        mentions="nested",
    ),
    Probe(
        "graph-200-deep",
        "POST",
        "/api/v1/forecasts/",
        body=b'{"question": {live}, "prediction": {"probability": 0.5}, "graph": {"events": '
        + _nested(200)
        + b', "edges": []}}',
        mentions="nested",
    ),
    Probe("batch-100000-deep", "POST", "/api/v1/forecasts/batch/", body=_nested(100_000), mentions="nested"),
    Probe(
        "replay-5000-deep", "POST", "/api/v1/replays/", body=b'{"question": ' + _nested(5000) + b"}", mentions="nested"
    ),
]


def stored() -> tuple[int, int]:
    evidence_log_flush()
    return Forecast.objects.count(), ReplaySession.objects.count()


def refused_storing_nothing(probe: Probe, agent: Any, client: httpx.Client) -> None:
    """Send ``probe`` in a small world and check it is refused and changes nothing."""
    world = hostile_world(agent)
    before = stored()
    assert_refused(probe, probe.send(client, world))
    assert stored() == before


def assert_refused(probe: Probe, response: httpx.Response) -> None:
    """A clear 4xx: JSON with a code and a message that names the field or the problem."""
    assert 400 <= response.status_code < 500, f"{probe.name}: got {response.status_code}: {response.text[:300]}"
    body = response.json()
    assert body["code"] and body["message"], body
    assert probe.mentions in json.dumps(body, ensure_ascii=False), (
        f"{probe.name}: {body} does not name {probe.mentions}"
    )
