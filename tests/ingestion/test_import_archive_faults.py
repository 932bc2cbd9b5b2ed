"""import_archive never stops on one bad line: text no database can store (a NUL, a lone surrogate,
NaN), a number for an id, an empty line, a line the database itself refuses, and a ``.gz`` file cut
short are each rejected by line number, or reported where reading stopped, and every other line is
imported, on both databases, from the command line and from the admin's "Import again"."""

from __future__ import annotations

import gzip
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from ingestion.models import Article, Source
from ingestion.services import archives
from tests.factories import UserFactory
from tests.ingestion.test_import_archive import NOW, item, run, write

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def rejected_lines(err: str) -> dict[int, str]:
    return {int(n): why for n, why in re.findall(r"archive\.jsonl(?:\.gz)?:(\d+): rejected: (.*)", err)}


def test_unstorable_text_is_rejected_by_line_and_its_batch_is_kept(tmp_path: Path) -> None:
    lines = [
        item(id="ok-1"),
        item(id="nul-text", text="Budget passes\u0000 after debate."),
        item(id="surrogate-title", title="Parliament \ud800 votes"),
        item(id="nul-extra", category={"tags": ["ok", "bad\u0000tag"]}),
        item(id="nul-key", **{"note\u0000": "x"}),
        '{"id": "nan", "published_at": "2025-05-01T10:00:00Z", "title": "t", "url": "https://n.example/1", '
        '"source": "Example wire", "license": "CC-BY-4.0", "score": NaN}',
        item(id="ok-2", url="https://news.example.org/2025/05/02"),
    ]
    path = tmp_path / "archive.jsonl"
    # As a file holds them: the escapes of json.dumps (ensure_ascii), one object a line.
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, err = run(path)
    assert "7 lines: 2 added, 0 updated, 0 unchanged, 5 rejected (4 unstorable text, 1 bad JSON)" in out
    assert rejected_lines(err) == {
        2: "text contains a NUL character (\\u0000), which text may not hold; no database can store it",
        3: "title contains a lone UTF-16 surrogate (such as \\ud800), which is not valid Unicode text; no database "
        "can store it",
        4: "category.tags[1] contains a NUL character (\\u0000), which text may not hold; no database can store it",
        5: "the line has a key that contains a NUL character (\\u0000), which text may not hold; no database can "
        "store it",
        6: "not valid JSON (NaN is not a JSON number)",
    }
    assert sorted(Article.objects.values_list("external_id", flat=True)) == ["ok-1", "ok-2"]


def test_an_id_must_be_a_string_and_an_empty_line_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, [item(id=7), "", item(id=1.5), item(id=True), "   ", item(id="7")])
    out, err = run(path)
    assert "6 lines: 1 added, 0 updated, 0 unchanged, 5 rejected (3 invalid id, 2 empty line)" in out
    assert rejected_lines(err) == {
        1: "id must be a string, got a number (7)",
        2: "an empty line (each line holds one JSON object)",
        3: "id must be a string, got a number (1.5)",
        4: "id must be a string, got a boolean (true)",
        5: "an empty line (each line holds one JSON object)",
    }
    assert list(Article.objects.values_list("external_id", flat=True)) == ["7"]


def test_a_line_the_database_refuses_goes_alone(tmp_path: Path) -> None:
    # Two archives' items under the same page and id: one URL, which the database holds once. No
    # check before the database sees it, so the batch is refused, then stored line by line.
    same = {"id": "d-1", "url": "https://news.example.org/2025/05/01"}
    lines = [item(id="ok-1"), item(source="Wire A", **same), item(source="Wire B", **same), item(id="ok-2")]
    out, err = run(write(tmp_path, lines))
    assert "4 lines: 3 added, 0 updated, 0 unchanged, 1 rejected (1 url taken)" in out
    assert list(rejected_lines(err)) == [3]
    assert sorted(Article.objects.values_list("source__name", flat=True)) == ["Example wire", "Example wire", "Wire A"]


def _gzip_cut_short(tmp_path: Path, n: int, keep: float) -> tuple[Path, int]:
    """An archive of ``n`` lines, gzipped and cut at ``keep`` of its length; (path, full lines left)."""
    text = "".join(item(id=f"w-{i:03d}", url=f"https://news.example.org/{i}") + "\n" for i in range(1, n + 1))
    data = gzip.compress(text.encode(), mtime=0)
    path = tmp_path / "archive.jsonl.gz"
    path.write_bytes(data[: int(len(data) * keep)])
    with gzip.open(path, "rb") as handle:
        readable = b""
        try:
            while chunk := handle.read(1):
                readable += chunk
        except EOFError:
            pass
    return path, readable.count(b"\n")


def test_a_gzip_cut_short_keeps_every_line_before_the_cut(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(archives, "BATCH_LINES", 10)  # several batches, the last one unfinished at the cut
    path, whole = _gzip_cut_short(tmp_path, 400, keep=0.6)
    assert whole % 10 and whole > 20
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match=r"reading stopped after line \d+: the gzip data ends before its end"):
        call_command("import_archive", str(path), "--now", NOW, stdout=out, stderr=err)
    assert Article.objects.count() == whole  # every whole line, the last batch too
    summary = out.getvalue().strip().splitlines()[-1]
    assert f"{whole + 1} lines: {whole} added" in summary and "1 rejected (1 bad JSON)" in summary
    assert "the file is cut short (nothing left unread)" in summary
    assert list(rejected_lines(err.getvalue())) == [whole + 1]  # the line the cut went through

    # The whole file, imported again, adds the rest and leaves the rest alone.
    text = "".join(item(id=f"w-{i:03d}", url=f"https://news.example.org/{i}") + "\n" for i in range(1, 401))
    path.write_bytes(gzip.compress(text.encode()))
    again, _ = run(path)
    assert f"400 lines: {400 - whole} added, 0 updated, {whole} unchanged, 0 rejected" in again


def test_staff_import_again_a_damaged_file_and_read_what_happened(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(archives, "BATCH_LINES", 10)
    text = "".join(item(id=f"w-{i:03d}", url=f"https://news.example.org/{i}") + "\n" for i in range(1, 41))
    path = tmp_path / "archive.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode()))
    call_command("import_archive", str(path), "--now", NOW, stdout=StringIO())
    source = Source.objects.get(kind=Source.Kind.ARCHIVE)
    assert source.last_error == source.last_warning == ""

    # The file on the server changes: a NUL in one item, another corrected, and the copy is cut short.
    changed = [json.loads(line) for line in text.splitlines()]
    changed[4]["text"] = "Budget passes\u0000"
    changed[6]["title"] = "Corrected: parliament passes the budget"
    data = gzip.compress(("\n".join(json.dumps(c) for c in changed) + "\n").encode())
    path.write_bytes(data[: int(len(data) * 0.8)])

    staff = Client()
    staff.force_login(UserFactory(username="curator", is_staff=True, is_superuser=True))
    done = staff.post(
        "/admin/ingestion/source/",
        {"action": "import_again", "_selected_action": [source.pk], "index": 0},
        follow=True,
    )
    assert "Re-import queued for Example wire" in done.content.decode()
    assert Article.objects.get(external_id="w-007").title == "Corrected: parliament passes the budget"
    assert Article.objects.get(external_id="w-005").body == "Parliament passes the budget after a long debate."
    source.refresh_from_db()
    assert source.last_error.startswith("last import: reading stopped after line ")
    assert "the file is cut short" in source.last_error
    assert "line 5: text contains a NUL character" in source.last_warning
    status = staff.get("/ingestion/sources/").content.decode()
    assert "reading stopped after line" in status and "line 5: text contains a NUL character" in status
