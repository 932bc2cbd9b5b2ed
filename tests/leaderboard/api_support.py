"""Helpers for the API tests: questions of each type, replay questions, a logged-in staff client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from django.test import Client

from ingestion.models import Question, Resolution
from leaderboard.models import Forecast, ReplaySession
from tests.factories import T0, QuestionFactory

T_RES = T0 + timedelta(days=100)

TYPE_FIELDS: dict[str, dict[str, Any]] = {
    "binary": {},
    "multiple_choice": {"options": ["Yes", "No", "Maybe"]},
    "quantity": {"unit": "USD", "lower_bound": 0.0, "upper_bound": 1000.0},
    "timeframe": {"granularity": "quarter"},
    "relation": {"subject": "USA", "object": "CHN", "target_date": datetime(2026, 6, 1).date()},
    "open_ended": {"background_events": ["Talks began."]},
}

VALID_PREDICTIONS: dict[str, dict[str, Any]] = {
    "binary": {"probability": 0.7},
    "multiple_choice": {"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.2}},
    "quantity": {"interval": [10, 20]},
    "timeframe": {"period": "2026-Q3"},
    "relation": {"relations": {"04": ["042", "043"], "05": []}},
    "open_ended": {"events": ["Ceasefire signed", "Elections called"]},
}


def live_question(qtype: str = "binary", **kwargs: Any) -> Question:
    return QuestionFactory(type=qtype, **{**TYPE_FIELDS[qtype], **kwargs})


def replay_question(qtype: str = "binary", outcome: Any = True, **kwargs: Any) -> Question:
    """A resolved replay question with window [T0, T_RES) and an unpublished outcome."""
    fields = {
        "track": Question.Track.REPLAY,
        "status": Question.Status.RESOLVED,
        "open_at": T0,
        "close_at": T0 + timedelta(days=90),
        "resolve_by": T0 + timedelta(days=120),
        **TYPE_FIELDS[qtype],
        **kwargs,
    }
    question = QuestionFactory(type=qtype, **fields)
    Resolution.objects.create(
        question=question,
        version=1,
        kind=Resolution.Kind.RESOLVE,
        outcome=outcome,
        resolved_at=T_RES,
        author_label="import",
        created_at=T_RES + timedelta(days=1),
    )
    return question


def staff_client(base_url: str, user: Any) -> httpx.Client:
    """An httpx client carrying a logged-in Django session for ``user``."""
    django_client = Client()
    django_client.force_login(user)
    cookie = django_client.cookies["sessionid"].value
    return httpx.Client(base_url=base_url, timeout=30, cookies={"sessionid": cookie})


def stored() -> tuple[int, int]:
    return Forecast.objects.count(), ReplaySession.objects.count()


def now_utc() -> datetime:
    return datetime.now(UTC)
