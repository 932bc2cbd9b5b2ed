"""load_questions: the documented JSON file, all six types, idempotent, rejected whole when invalid."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ingestion.models import Question, Resolution

SAMPLE = Path(__file__).parent / "fixtures" / "questions" / "sample.json"

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def load(path: Path) -> str:
    out = StringIO()
    call_command("load_questions", str(path), stdout=out)
    return out.getvalue()


def write(tmp_path: Path, entries: Any) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(entries))
    return path


def test_loads_every_type_with_their_fields() -> None:
    assert "7 created, 0 updated, 0 unchanged" in load(SAMPLE)
    assert set(Question.objects.values_list("type", flat=True)) == set(Question.Type.values)
    mc = Question.objects.get(external_id="demo-mc-1")
    assert mc.options == ["Greens", "Labour", "Liberals"] and mc.status == Question.Status.OPEN
    relation = Question.objects.get(external_id="demo-rel-1")
    assert (relation.subject, relation.object, str(relation.target_date)) == ("USA", "CHN", "2025-11-03")
    assert relation.status == Question.Status.RESOLVED and relation.track == Question.Track.REPLAY
    assert relation.current_resolution is not None
    assert relation.current_resolution.outcome == {"relations": {"04": ["042", "043"], "05": ["057"]}}
    replay = Question.objects.get(external_id="demo-replay-binary-1")
    resolution = replay.current_resolution
    assert resolution is not None and resolution.outcome is True
    assert resolution.resolved_at.isoformat() == "2025-03-28T12:00:00+00:00"
    assert Question.objects.get(external_id="demo-tf-1").granularity == "quarter"


def test_loading_twice_changes_nothing() -> None:
    load(SAMPLE)
    snapshot = list(Question.objects.order_by("pk").values())
    resolutions = Resolution.objects.count()
    assert "0 created, 0 updated, 7 unchanged" in load(SAMPLE)
    assert list(Question.objects.order_by("pk").values()) == snapshot
    assert Resolution.objects.count() == resolutions


def test_an_edited_entry_updates_its_question(tmp_path: Path) -> None:
    load(SAMPLE)
    entries = json.loads(SAMPLE.read_text())
    entries[0]["title"] = "Will the Northland central bank cut rates before 1 August 2030?"
    assert "0 created, 1 updated, 6 unchanged" in load(write(tmp_path, entries))
    assert Question.objects.get(external_id="demo-binary-1").title.endswith("1 August 2030?")


@pytest.mark.parametrize(
    ("index", "change", "named"),
    [
        (0, {"type": "yes_no"}, "type"),
        (0, {"open_at": "yesterday"}, "open_at"),
        (0, {"close_at": "2030-06-01T00:00:00"}, "close_at"),
        (1, {"options": ["Greens"]}, "options"),
        (3, {"granularity": "fortnight"}, "granularity"),
        (4, {"subject": "XXX"}, "subject"),
        (4, {"outcome": {"relations": {"04": ["057"]}}}, "outcome.relations.04"),
        (6, {"outcome": "maybe"}, "outcome"),
        (6, {"resolved_at": None}, "resolved_at"),
        (0, {"colour": "blue"}, "colour"),
        # A list or an object where a choice belongs is refused by name too.
        (0, {"type": ["binary"]}, "type"),
        (0, {"track": {"live": True}}, "track"),
        (0, {"status": ["open"]}, "status"),
        (3, {"granularity": ["month"]}, "granularity"),
        (0, {"origin": {}}, "origin"),
    ],
)
def test_an_invalid_entry_rejects_the_whole_file_naming_entry_and_field(
    tmp_path: Path, index: int, change: dict[str, Any], named: str
) -> None:
    entries = json.loads(SAMPLE.read_text())
    entries[index].update(change)
    with pytest.raises(CommandError) as excinfo:
        load(write(tmp_path, entries))
    message = str(excinfo.value)
    assert f"entry {index} ({entries[index]['external_id']})" in message
    assert named in message
    assert Question.objects.count() == 0 and Resolution.objects.count() == 0


def test_a_file_that_is_not_a_list_or_not_json_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="JSON list"):
        load(write(tmp_path, {"external_id": "x"}))
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    with pytest.raises(CommandError, match="not valid JSON"):
        load(broken)
    with pytest.raises(CommandError, match="no such file"):
        load(tmp_path / "missing.json")
