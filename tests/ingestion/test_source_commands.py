"""add_source and poll_sources from the command line."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingestion.models import Article, Source
from tests.ingestion.fakeserver import Response

pytestmark = pytest.mark.dual_db


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_add_source_prints_the_id_last(db) -> None:
    lines = run(
        "add_source",
        "rss",
        "https://feeds.example.org/world.xml",
        "--name",
        "World",
        "--option",
        "max_bytes=2000000",
        "--interval",
        "30",
    )
    source = Source.objects.get()
    assert lines[-1] == str(source.pk)
    assert "Added rss source" in lines[0]
    assert (source.kind, source.url, source.name) == ("rss", "https://feeds.example.org/world.xml", "World")
    assert source.options == {"max_bytes": 2000000}
    assert source.poll_interval == timedelta(minutes=30)
    assert source.enabled and source.next_attempt_at is None  # due at once


def test_option_values_are_read_as_json(db) -> None:
    run(
        "add_source",
        "polymarket",
        "https://gamma-api.polymarket.com",
        "--option",
        "open_questions=true",
        "--option",
        "min_volume=10000.5",
        "--option",
        "closed=both",
    )
    assert Source.objects.get().options == {"open_questions": True, "min_volume": 10000.5, "closed": "both"}


def test_add_source_twice_is_safe(db) -> None:
    first = run("add_source", "manifold", "https://api.manifold.markets/v0")
    second = run("add_source", "manifold", "https://api.manifold.markets/v0")
    assert first[-1] == second[-1]
    assert "already exists" in second[0]
    assert Source.objects.count() == 1
    assert Source.objects.get().name == "api.manifold.markets (manifold)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["gopher", "https://x.example/"],
            "kind: unknown kind 'gopher'; choose one of rss, polymarket, manifold, kalshi",
        ),
        (["rss", "not a url"], "url: invalid URL 'not a url'"),
        (["rss", "ftp://x.example/feed"], "url: invalid URL"),
        (["rss", "https://x.example/", "--option", "novalue"], "--option 'novalue': expected KEY=VALUE"),
        (["rss", "https://x.example/", "--interval", "0"], "poll interval must be positive"),
    ],
)
def test_add_source_rejects_bad_input(db, args, message) -> None:
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace("?", r"\?")):
        run("add_source", *args)
    assert Source.objects.count() == 0


def test_poll_sources_reports_each_source(feed_source) -> None:
    good = feed_source("/good", fixture="feeds/rss2sample.xml", name="Good feed")
    bad = feed_source("/bad", response=Response(status=500), name="Bad feed")
    out = StringIO()
    with pytest.raises(CommandError, match=r"1 of 2 source\(s\) failed"):
        call_command("poll_sources", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines == [
        f"source {good.pk} Good feed [rss]: added 4, skipped 0, failed 0",
        f"source {bad.pk} Bad feed [rss]: added 0, skipped 0, failed 0; "
        f"error: HTTP 500 Internal Server Error from {bad.url}",
    ]
    assert Article.objects.count() == 4


def test_poll_one_source_twice(feed_source) -> None:
    source = feed_source("/good", fixture="feeds/rss10_spec_example.rdf", enabled=False)
    first = run("poll_sources", "--source", str(source.pk))
    second = run("poll_sources", "--source", str(source.pk), "--details")
    assert first == [f"source {source.pk} {source.name} [rss]: added 2, skipped 0, failed 0"]
    assert second == [f"source {source.pk} {source.name} [rss]: added 0, skipped 2, failed 0 (2 already stored)"]


def test_poll_unknown_source(db) -> None:
    with pytest.raises(CommandError, match="no source with id 424242"):
        run("poll_sources", "--source", "424242")


def test_poll_with_no_sources(db) -> None:
    assert run("poll_sources") == ["No enabled sources; add one with `manage.py add_source KIND URL`."]
