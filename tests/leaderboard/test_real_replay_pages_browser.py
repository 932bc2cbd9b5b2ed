"""The real replay track on the site: a real question's page names its evidence archive with its
licence and attribution, and (once staff publish the outcome, not before) the archive items that
resolve it, each with where it came from; the leaderboard has a Real replay tab."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from ingestion.models import Question
from tests.ingestion.test_import_archive import archive_days, write

QUESTIONS = Path(__file__).resolve().parents[1] / "ingestion" / "fixtures" / "archive" / "real_questions.json"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_real_question_page_says_where_its_evidence_came_from(browser_page: Any, tmp_path: Path) -> None:
    call_command(
        "import_archive", str(write(tmp_path, archive_days("2025-04-28", "2025-05-08"))),
        "--attribution", "Wikipedia contributors", stdout=StringIO(),
    )  # fmt: skip
    call_command("load_questions", str(QUESTIONS), stdout=StringIO())
    question = Question.objects.get(external_id="test-real:merz-first-ballot")
    page = browser_page

    page.goto(f"/questions/{question.pk}/")
    archives = page.locator("#evidence-archives")
    assert "Wikipedia Portal:Current events, CC BY-SA 4.0, Wikipedia contributors" in archives.inner_text()
    assert (
        archives.locator("a[rel~=license]").get_attribute("href") == "https://creativecommons.org/licenses/by-sa/4.0/"
    )
    assert page.locator("#resolved-by").count() == 0  # the answer stays hidden until published

    call_command("publish_outcome", str(question.pk), stdout=StringIO())
    page.goto(f"/questions/{question.pk}/")
    item = page.locator("#resolved-by li")
    assert "Friedrich Merz fails to secure a majority" in item.inner_text()
    assert "2025-05-06 08:53 UTC — Wikipedia Portal:Current events, CC BY-SA 4.0, Wikipedia contributors" in (
        item.inner_text()
    )
    assert item.locator("a").first.get_attribute("href") == (
        "https://en.wikipedia.org/wiki/Portal:Current_events/2025_May_6#wcep-2025-05-06-001"
    )

    page.goto("/leaderboard/")
    page.click("#real-replay-tab")
    page.wait_for_url("**/leaderboard/?*origin=archive*")
    assert page.locator("#real-replay-tab").get_attribute("aria-current") == "page"
    assert "track=replay" in page.url
