"""add_source refuses options the poller would refuse, naming the option, and stores nothing."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingestion.models import Source

pytestmark = pytest.mark.dual_db


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


@pytest.mark.parametrize(
    ("kind", "option", "message"),
    [
        ("polymarket", "min_volume=abc", "source option 'min_volume' should be a number, got 'abc'"),
        ("polymarket", "open_questions=maybe", "source option 'open_questions' should be true or false"),
        ("polymarket", "closed=sometimes", "source option 'closed' should be one of false, true, both"),
        ("manifold", "page_size=0", "source option 'page_size' should be a whole number >= 1, got 0"),
        ("manifold", "min_bettors=-3", "source option 'min_bettors' should be a number >= 0"),
        ("kalshi", "status=weird", "source option 'status' should be one of open, closed, settled"),
        ("kalshi", "horizon_days=soon", "source option 'horizon_days' should be a whole number"),
        ("rss", "max_bytes=-5", "source option 'max_bytes' should be a positive number of bytes, got -5"),
        ("rss", "max_bytes=big", "source option 'max_bytes' should be a positive number of bytes, got 'big'"),
        # A misspelt or misplaced option would otherwise be ignored without a word.
        (
            "polymarket",
            "min_liquidty=500",
            "unknown source option 'min_liquidty' for a polymarket source (did you mean 'min_liquidity'?); "
            "polymarket sources take: clob_url, closed,",
        ),
        ("kalshi", "paging=offset", "unknown source option 'paging' for a kalshi source; kalshi sources take:"),
        ("rss", "min_volume=10", "unknown source option 'min_volume' for a rss source; rss sources take: max_bytes"),
    ],
)
def test_bad_option_is_refused_naming_it(db: object, kind: str, option: str, message: str) -> None:
    with pytest.raises(CommandError, match="^options: " + re.escape(message)):
        run("add_source", kind, f"https://{kind}.example.org/api", "--option", option)
    assert Source.objects.count() == 0


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("polymarket", ["open_questions=true", "min_volume=10000", "closed=both", "paging=offset"]),
        ("manifold", ["min_bettors=20", "bets_page_size=500", "horizon_days=30"]),
        ("kalshi", ["status=settled", "min_volume=100", "price_history=false"]),
        ("rss", ["max_bytes=2000000"]),
    ],
)
def test_documented_options_are_accepted(db: object, kind: str, options: list[str]) -> None:
    args = [arg for option in options for arg in ("--option", option)]
    lines = run("add_source", kind, f"https://{kind}.example.org/api", *args)
    assert lines[-1] == str(Source.objects.get().pk)
