"""load_questions dates: a bare date means midnight UTC; a naive datetime or a non-date is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ingestion.models import Question

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

REPLAY = {
    "external_id": "dates-1",
    "title": "Did the bridge open in 2025?",
    "type": "binary",
    "track": "replay",
    "open_at": "2025-01-01",
    "close_at": "2025-06-01",
    "resolve_by": "2025-07-01",
    "resolution_criteria": "The official opening.",
    "outcome": True,
    "resolved_at": "2025-06-15",
}


def load(tmp_path: Path, entries: list[dict[str, Any]]) -> str:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(entries))
    out = StringIO()
    call_command("load_questions", str(path), stdout=out)
    return out.getvalue()


def test_bare_dates_mean_midnight_utc(tmp_path: Path) -> None:
    assert "1 created" in load(tmp_path, [REPLAY])
    question = Question.objects.get(external_id="dates-1")
    assert question.open_at == datetime(2025, 1, 1, tzinfo=UTC)
    assert question.close_at == datetime(2025, 6, 1, tzinfo=UTC)
    assert question.resolve_by == datetime(2025, 7, 1, tzinfo=UTC)
    assert question.current_resolution is not None
    assert question.current_resolution.resolved_at == datetime(2025, 6, 15, tzinfo=UTC)
    assert "0 created, 0 updated, 1 unchanged" in load(tmp_path, [REPLAY])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"open_at": "2025-01-01T00:00:00"}, "open_at: '2025-01-01T00:00:00' has no time zone"),
        ({"close_at": "1 June 2025"}, "close_at: '1 June 2025' is not an ISO 8601 date or datetime."),
        ({"resolved_at": "2025-13-40"}, "resolved_at: '2025-13-40' is not an ISO 8601 date or datetime."),
    ],
)
def test_bad_dates_name_the_field_once(tmp_path: Path, change: dict[str, str], message: str) -> None:
    with pytest.raises(CommandError) as excinfo:
        load(tmp_path, [{**REPLAY, **change}])
    text = str(excinfo.value)
    assert "entry 0 (dates-1)" in text and message in text
    # A resolved_at that does not parse is not also reported as missing.
    assert "needs resolved_at" not in text
    assert Question.objects.count() == 0
