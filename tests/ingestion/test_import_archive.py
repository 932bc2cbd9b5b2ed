"""import_archive: a JSON Lines news archive into the evidence store, on the real archive shipped in
ingestion/data/archives/wcep/ (a few weeks of it, so the test stays fast) and on bad lines."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

import ingestion
from ingestion.models import Article, Source
from ingestion.selectors.evidence import articles_search

ARCHIVE = Path(ingestion.__file__).resolve().parent / "data" / "archives" / "wcep" / "documents.jsonl.gz"
NOW = "2026-11-22T12:00:00Z"

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def archive_days(first: str, last: str) -> list[str]:
    """The shipped archive's lines for portal days first..last, as written."""
    with gzip.open(ARCHIVE, "rt", encoding="utf-8") as handle:
        return [line for line in handle if first <= json.loads(line)["portal_date"] <= last]


def write(tmp_path: Path, lines: list[str], name: str = "archive.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line if line.endswith("\n") else line + "\n" for line in lines), encoding="utf-8")
    return path


def run(path: Path, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_archive", str(path), "--now", NOW, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def item(**fields: Any) -> str:
    line = {
        "id": "x-1",
        "published_at": "2025-05-01T10:00:00Z",
        "title": "Parliament passes the budget",
        "text": "Parliament passes the budget after a long debate.",
        "url": "https://news.example.org/2025/05/01",
        "source": "Example wire",
        "license": "CC-BY-4.0",
    }
    line.update(fields)
    return json.dumps({k: v for k, v in line.items() if v is not None})


def test_the_shipped_archive_is_searchable_as_of_each_items_capture_time(tmp_path: Path) -> None:
    lines = archive_days("2025-05-06", "2025-05-08")
    out, err = run(write(tmp_path, lines), "--attribution", "Wikipedia contributors")
    assert f"{len(lines)} lines: {len(lines)} added, 0 updated, 0 unchanged, 0 rejected" in out
    assert err == ""
    source = Source.objects.get(kind=Source.Kind.ARCHIVE)
    assert source.name == "Wikipedia Portal:Current events" and not source.enabled
    assert source.options["attribution"] == "Wikipedia contributors"
    assert source.options["licences"] == ["CC-BY-SA-4.0"]

    white_smoke = Article.objects.get(external_id="wcep-2025-05-08-005")
    assert white_smoke.published_at == datetime(2025, 5, 8, 17, 7, 31, tzinfo=UTC)
    assert white_smoke.url == "https://en.wikipedia.org/wiki/Portal:Current_events/2025_May_8#wcep-2025-05-08-005"
    assert white_smoke.license == "CC-BY-SA-4.0"
    assert white_smoke.extra["category"] and white_smoke.extra["citations"] is not None

    before = articles_search(query="white smoke", as_of=datetime(2025, 5, 8, 17, 7, 31, tzinfo=UTC))
    after = articles_search(query="white smoke", as_of=datetime(2025, 5, 8, 17, 7, 32, tzinfo=UTC))
    assert before.total == 0
    assert [r.id for r in after.results] == [white_smoke.pk]
    assert after.results[0].source == "Wikipedia Portal:Current events"


def test_reimport_changes_nothing_and_a_changed_item_updates_in_place(tmp_path: Path) -> None:
    lines = archive_days("2025-05-08", "2025-05-08")
    path = write(tmp_path, lines)
    run(path)
    stored = {a.external_id: (a.pk, a.fetched_at) for a in Article.objects.all()}

    out, _ = run(path)
    assert f"0 added, 0 updated, {len(lines)} unchanged, 0 rejected" in out
    assert {a.external_id: (a.pk, a.fetched_at) for a in Article.objects.all()} == stored

    first = json.loads(lines[0])
    first["title"] = first["text"] = "Corrected: the conclave convenes in the Sistine Chapel."
    first["category"] = "Religion"
    out, _ = run(write(tmp_path, [json.dumps(first), *lines[1:]]))
    assert f"0 added, 1 updated, {len(lines) - 1} unchanged" in out
    article = Article.objects.get(external_id=first["id"])
    assert article.pk == stored[first["id"]][0]
    assert article.title.startswith("Corrected") and article.extra["category"] == "Religion"
    assert articles_search(query="corrected conclave", as_of=datetime(2026, 1, 1, tzinfo=UTC)).total == 1


def test_bad_lines_are_rejected_by_number_and_the_others_imported(tmp_path: Path) -> None:
    lines = [
        item(id="ok-1"),
        "{not json",
        item(id="no-date", published_at=None),
        item(id="bad-date", published_at="the first of May"),
        item(id="naive", published_at="2025-05-01T10:00:00"),
        item(id="future", published_at="2027-01-01T00:00:00Z"),
        item(id="ok-1", title="The same id again"),
        item(id="no-licence", license=None),
        item(id="ok-2", published_at="2025-05-02", url="https://news.example.org/2025/05/01"),
        "",
        item(id="no-url", url=None),
    ]
    out, err = run(write(tmp_path, lines))
    assert "11 lines: 2 added, 0 updated, 0 unchanged, 9 rejected" in out
    for number, words in [
        (2, "not valid JSON"),
        (3, "no published_at"),
        (4, "'the first of May' is not an ISO 8601"),
        (5, "has no time zone"),
        (6, "after the import's now"),
        (7, "duplicate id 'ok-1' (first on line 1)"),
        (8, "no license"),
        (10, "an empty line"),
        (11, "no url"),
    ]:
        assert (
            f"archive.jsonl:{number}: rejected: " in err
            and words in err.split(f"archive.jsonl:{number}: rejected: ")[1]
        )
    assert sorted(Article.objects.values_list("external_id", flat=True)) == ["ok-1", "ok-2"]
    # A bare date is the end of that day: the item is not served before its day is over.
    assert Article.objects.get(external_id="ok-2").published_at == datetime(2025, 5, 3, tzinfo=UTC)
    assert Article.objects.get(external_id="ok-1").title == "Parliament passes the budget"


def test_unlicensed_lines_need_a_flag_or_a_default_licence(tmp_path: Path) -> None:
    path = write(tmp_path, [item(id="a", license=None), item(id="b", license=None)])
    out, _ = run(path)
    assert "0 added" in out and "2 missing licence" in out
    out, _ = run(path, "--allow-unlicensed")
    assert "2 added" in out
    assert set(Article.objects.values_list("license", flat=True)) == {""}
    out, _ = run(path, "--license", "CC-BY-4.0")
    assert "2 updated" in out
    assert set(Article.objects.values_list("license", flat=True)) == {"CC-BY-4.0"}
