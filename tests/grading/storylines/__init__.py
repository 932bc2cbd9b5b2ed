"""Hand-written storylines with their true causal graphs, published through the real ingestion path.

Each ``*.json`` file here is one storyline written by hand (not by the sample-world generator):
a replay question in ``load_questions`` format with its outcome, the true causal graph (events with
direction, magnitude and confidence; links; the outcome event) and 28-36 news articles from six
invented outlets, including irrelevant stories that share words with the question, near-duplicate
reports from several outlets and syndicated copies (``copy_of``: the same story under another URL,
which ingestion keeps once). Everything is fictional; ``held_out`` storylines were written with the
others but evaluated only after the offline builder was tuned on the rest.

``publish`` serves one RSS 2.0 or Atom feed per outlet on the local fake server, adds each outlet as a
source and polls it with the real poller, then loads the questions with ``manage.py load_questions``.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from datetime import date, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from django.core.management import call_command

from grading.scoring.matching import Event
from ingestion.models import Question
from ingestion.services.sources import source_create, source_poll
from tests.ingestion.fakeserver import FakeServer, Response

HERE = Path(__file__).parent
OUTLETS: dict[str, tuple[str, str]] = {
    # slug: (name, feed format)
    "meridianpost": ("The Meridian Post", "rss"),
    "dailyledger": ("Daily Ledger", "rss"),
    "northgatewire": ("Northgate Wire", "atom"),
    "civictimes": ("Civic Times", "rss"),
    "harbourcourier": ("The Harbour Courier", "rss"),
    "capitalobserver": ("Capital Observer", "rss"),
}


@dataclass(frozen=True)
class Storyline:
    key: str
    domain: str
    held_out: bool
    question: dict[str, Any]
    events: list[dict[str, Any]]
    outcome_event: dict[str, Any]
    links: list[dict[str, Any]]
    articles: list[dict[str, Any]]


def load(*, held_out: bool | None = None) -> list[Storyline]:
    """Every storyline (or only the held-out ones, or only the others), in file-name order."""
    stories = []
    for path in sorted(HERE.glob("*.json")):
        data = json.loads(path.read_text())
        story = Storyline(**{k: data[k] for k in Storyline.__dataclass_fields__})
        if held_out is None or story.held_out == held_out:
            stories.append(story)
    return stories


def truth(story: Storyline) -> list[Event]:
    """The true graph's events in the matcher's terms (impact = not Neutral; the outcome flagged)."""
    events = [
        Event(
            id=e["key"],
            title=e["title"],
            description=e["description"],
            date=date.fromisoformat(e["date"]),
            magnitude=e["magnitude"],
            confidence=e["confidence"],
            has_impact=e["direction"] != "Neutral",
        )
        for e in story.events
    ]
    o = story.outcome_event
    events.append(
        Event(
            id=o["key"],
            title=o["title"],
            description=o["description"],
            date=date.fromisoformat(o["date"]),
            is_outcome=True,
        )
    )
    return events


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80]


def _items(stories: list[Storyline]) -> dict[str, list[dict[str, Any]]]:
    """Feed items per outlet: every article of every storyline, syndicated copies resolved."""
    by_title = {a["title"]: a for s in stories for a in s.articles if "title" in a}
    items: dict[str, list[dict[str, Any]]] = {slug: [] for slug in OUTLETS}
    for story in stories:
        for n, article in enumerate(story.articles):
            original = by_title[article["copy_of"]] if "copy_of" in article else article
            published = datetime.fromisoformat(article["published_at"].replace("Z", "+00:00"))
            path = f"{published:%Y/%m}/{_slug(original['title'])}"
            link = f"https://{article['outlet']}.example/{path}"
            if "copy_of" in article:
                link += f"?utm_source=syndication&story={story.key}-{n}"
            items[article["outlet"]].append(
                {
                    "title": original["title"],
                    "summary": original["summary"],
                    "body": original.get("body", ""),
                    "link": link,
                    "published": published,
                }
            )
    return items


def rss(name: str, slug: str, items: list[dict[str, Any]]) -> bytes:
    entries = "".join(
        f"<item><title>{escape(i['title'])}</title><link>{escape(i['link'])}</link>"
        f"<guid>{escape(i['link'])}</guid><pubDate>{format_datetime(i['published'])}</pubDate>"
        f"<description>{escape(i['summary'])}</description>"
        + (
            f"<content:encoded>{escape('<p>' + i['summary'] + '</p><p>' + i['body'] + '</p>')}</content:encoded>"
            if i["body"]
            else ""
        )
        + "</item>"
        for i in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
        f"<title>{escape(name)}</title><link>https://{slug}.example/</link><description>News</description>"
        f"{entries}</channel></rss>"
    ).encode()


def atom(name: str, slug: str, items: list[dict[str, Any]]) -> bytes:
    entries = "".join(
        f'<entry><title>{escape(i["title"])}</title><link href="{escape(i["link"])}"/>'
        f"<id>{escape(i['link'])}</id><updated>{i['published'].isoformat()}</updated>"
        f"<published>{i['published'].isoformat()}</published><summary>{escape(i['summary'])}</summary>"
        + (
            f'<content type="html">{escape("<p>" + i["summary"] + "</p><p>" + i["body"] + "</p>")}</content>'
            if i["body"]
            else ""
        )
        + "</entry>"
        for i in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>{escape(name)}</title><id>https://{slug}.example/</id><updated>2025-12-31T00:00:00Z</updated>"
        f"{entries}</feed>"
    ).encode()


def publish(stories: list[Storyline], server: FakeServer, *, now: datetime) -> dict[str, Question]:
    """Serve, add and poll every outlet's feed, then load the storylines' questions; key -> question."""
    for slug, items in _items(stories).items():
        name, kind = OUTLETS[slug]
        if not items:
            continue
        body = (atom if kind == "atom" else rss)(name, slug, items)
        content_type = "application/atom+xml" if kind == "atom" else "application/rss+xml"
        url = server.add(f"/{slug}/feed.xml", Response(body=body, content_type=content_type))
        source = source_create(kind="rss", url=url, name=name)
        report = source_poll(source_id=source.pk, now=now)
        assert not report.error, report.error
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([s.question for s in stories], handle)
    call_command("load_questions", handle.name, stdout=open("/dev/null", "w"))  # noqa: SIM115
    Path(handle.name).unlink()
    return {s.key: Question.objects.get(external_id=s.question["external_id"]) for s in stories}
