"""An archive item shows both its dates: the day the news portal reports the event under and when
its text first became public (which can be weeks later); the evidence gateway goes by the public
date. When the outcome was known before any resolving item was reported, the page says so.

Real items from the shipped archive: Justin Trudeau's resignation announcement of 6 January 2025,
first captured on 26 January."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import unescape
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from ingestion.models import Article, Question
from ingestion.selectors.evidence import articles_search
from tests.ingestion.test_import_archive import archive_days, write

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

RESIGNATION = "wcep-2025-01-06-022"


def _question(external_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "external_id": external_id,
        "title": "Will Justin Trudeau announce his resignation as Liberal leader by 31 January 2025?",
        "type": "binary",
        "track": "replay",
        "domain": "politics",
        "resolution_criteria": "Yes if Justin Trudeau announces that he will resign as leader of the Liberal Party.",
        "open_at": "2024-12-20T00:00:00Z",
        "close_at": "2025-01-31T23:59:59Z",
        "simulated_date_policy": "early",
        "outcome": True,
        "resolved_at": "2025-01-06T16:00:00Z",
        "resolved_by": [RESIGNATION],
        "attribution": {"source": "Wikipedia Portal:Current events", "licence": "CC BY-SA 4.0"},
        **fields,
    }


def _text(url: str) -> str:
    html = Client().get(url).content.decode()
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html.split("<main", 1)[1])).split())


def test_both_dates_shown_and_the_gateway_goes_by_the_public_one(tmp_path: Path) -> None:
    call_command(
        "import_archive", str(write(tmp_path, archive_days("2025-01-06", "2025-01-06"))),
        "--attribution", "Wikipedia contributors", stdout=StringIO(),
    )  # fmt: skip
    item = Article.objects.get(external_id=RESIGNATION)
    assert item.published_at == datetime(2025, 1, 26, 18, 3, 4, tzinfo=UTC)
    assert str(item.reported_on) == "2025-01-06"

    questions = tmp_path / "questions.json"
    questions.write_text(
        json.dumps(
            [
                _question("test-real:trudeau-resigns"),
                # A No settled by its deadline, before the item that confirms it was reported.
                _question(
                    "test-real:trudeau-resigns-early",
                    title="Will Justin Trudeau announce his resignation by 4 January 2025?",
                    close_at="2025-01-04T23:59:59Z",
                    outcome=False,
                    resolved_at="2025-01-05T00:00:00Z",
                    simulated_date_policy="mid",
                    open_at="2024-12-30T00:00:00Z",
                ),
            ]
        ),
        encoding="utf-8",
    )
    call_command("load_questions", str(questions), stdout=StringIO())
    for question in Question.objects.filter(external_id__startswith="test-real:trudeau"):
        call_command("publish_outcome", str(question.pk), stdout=StringIO())

    page = _text(f"/questions/{Question.objects.get(external_id='test-real:trudeau-resigns').pk}/")
    assert "known 2025-01-06" in page
    assert "reported on the portal 2025-01-06 · text first public 2025-01-26 18:03 UTC" in page
    assert "reported the items below later" not in page

    early = _text(f"/questions/{Question.objects.get(external_id='test-real:trudeau-resigns-early').pk}/")
    assert "The outcome was known on 2025-01-05; the archive reported the items below later, and they confirm it." in (
        early
    )

    # The gateway serves the item only from its public date on.
    before = articles_search(query="Trudeau resignation", as_of=datetime(2025, 1, 20, tzinfo=UTC))
    after = articles_search(query="Trudeau resignation", as_of=datetime(2025, 1, 27, tzinfo=UTC))
    assert item.pk not in [r.id for r in before.results] and item.pk in [r.id for r in after.results]
