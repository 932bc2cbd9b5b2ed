"""load_questions with resolved_by: real questions written from an imported archive are linked to
the items that resolve them; an id the archive does not hold, or an item a replay session would
already be served, refuses the whole file by name."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ingestion.models import Question
from tests.ingestion.test_import_archive import archive_days, write

QUESTIONS = Path(__file__).resolve().parent / "fixtures" / "archive" / "real_questions.json"

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


@pytest.fixture
def archive(tmp_path: Path) -> None:
    call_command("import_archive", str(write(tmp_path, archive_days("2025-04-28", "2025-05-08"))), stdout=StringIO())


def load(tmp_path: Path, entries: list[dict[str, Any]]) -> str:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    out = StringIO()
    call_command("load_questions", str(path), stdout=out)
    return out.getvalue()


def test_resolving_items_are_linked_and_a_reload_changes_nothing(archive: None, tmp_path: Path) -> None:
    entries = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    assert "4 created" in load(tmp_path, entries)
    merz = Question.objects.get(external_id="test-real:merz-second-ballot-votes")
    assert merz.origin == Question.Origin.ARCHIVE and merz.current_resolution.outcome == 325.0
    assert sorted(merz.provenance_articles.values_list("external_id", flat=True)) == [
        "wcep-2025-05-06-003",
        "wcep-2025-05-06-004",
    ]
    assert "4 unchanged" in load(tmp_path, entries)
    entries[2]["resolved_by"] = ["wcep-2025-05-06-004"]
    assert "1 updated" in load(tmp_path, entries)
    assert list(merz.provenance_articles.values_list("external_id", flat=True)) == ["wcep-2025-05-06-004"]


@pytest.mark.parametrize(
    ("resolved_by", "words"),
    [
        (["wcep-2025-05-08-007", "wcep-2031-01-01-001"], "unknown archive id(s) 'wcep-2031-01-01-001'"),
        (["wcep-2025-04-28-008"], "archive item 'wcep-2025-04-28-008' (published 2025-04-28 15:30 UTC) is before"),
    ],
)
def test_a_bad_resolved_by_refuses_the_file_by_name(
    archive: None, tmp_path: Path, resolved_by: list[str], words: str
) -> None:
    entries = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    entries[0]["resolved_by"] = resolved_by
    with pytest.raises(CommandError) as caught:
        load(tmp_path, entries)
    assert "entry 0 (test-real:conclave-fourth-ballot): resolved_by: " + words in str(caught.value)
    assert not Question.objects.exists()
