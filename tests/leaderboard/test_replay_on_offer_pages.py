"""A replay question still on offer (its outcome unpublished) reads "Open for replay" on every page
and is listed and counted with the open questions, not the resolved ones; once staff publish its
outcome it is resolved. A search that finds nothing only because of the status filter says so."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.test import Client

from ingestion.models import Question
from ingestion.services.questions import question_publish_outcome, question_resolve
from tests.factories import QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _text(client: Client, url: str) -> str:
    html = client.get(url).content.decode()
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html.split("<main", 1)[1])).split())


def _replay(title: str) -> Question:
    question = QuestionFactory(
        title=title,
        track=Question.Track.REPLAY,
        open_at=datetime(2025, 1, 1, tzinfo=UTC),
        close_at=datetime(2025, 3, 1, tzinfo=UTC),
    )
    question_resolve(question=question, outcome=True, resolved_at=datetime(2025, 2, 20, tzinfo=UTC), now=NOW)
    return question


def test_a_replay_question_on_offer_is_open_until_published(client: Client) -> None:
    offered = _replay("Will the harbour reopen by March 2025?")
    QuestionFactory(title="Will the live bridge open?")

    listing = _text(client, "/questions/")
    assert "Will the harbour reopen by March 2025?" in listing
    row = listing.split("Will the harbour reopen by March 2025?", 1)[1][:80]
    assert "Open for replay" in row and "Resolved" not in row
    assert "Created by staff (2)" in listing  # "Open now" counts it with the live one
    assert "Will the harbour reopen" not in _text(client, "/questions/?status=resolved")

    page = _text(client, f"/questions/{offered.pk}/")
    assert "Open for replay" in page and "Resolved" not in page.split("Opens (t0)")[0]
    assert "Real-world deadline 2025-03-01" in page
    client.force_login(UserFactory())
    assert "Submit a forecast" in _text(client, f"/questions/{offered.pk}/")

    question_publish_outcome(question=offered, now=NOW)
    assert "Will the harbour reopen" in _text(client, "/questions/?status=resolved")
    assert "Will the harbour reopen" not in _text(client, "/questions/")
    page = _text(client, f"/questions/{offered.pk}/")
    assert "Open for replay" not in page and "Submit a forecast" not in page


def test_a_search_hidden_by_the_status_filter_says_why(client: Client) -> None:
    question = _replay("Will the dam be finished by 2025?")
    question_publish_outcome(question=question, now=NOW)
    text = _text(client, "/questions/?status=open&q=dam+finished")
    assert "No open question matches “dam finished”." in text
    assert "among the others, it matches 1 resolved: show every status" in text
    html = client.get("/questions/?status=open&q=dam+finished").content.decode()
    link = re.search(r'href="\?([^"]*)">show every status', html)
    assert link is not None
    assert "Will the dam be finished by 2025?" in _text(client, "/questions/?" + unescape(link.group(1)))
    # A search that matches nothing anywhere says only that.
    assert "No question matches." in _text(client, "/questions/?status=open&q=zeppelin")
