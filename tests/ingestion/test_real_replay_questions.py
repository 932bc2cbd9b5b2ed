"""The real replay questions (ingestion/data/real_replay/) against the archive they were written from.

Every question must be answerable only by items published after its session's simulated date: the
items that resolve it exist and were first captured after t_sim, and the archive holds enough items
on its storyline before t_sim to reason from. Entries must also pass the project's own validator.

The archive is the one the repository ships (ingestion/data/archives/wcep/documents.jsonl.gz), or the
file named by HINDSIGHT_WCEP_ARCHIVE. No database is used.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ingestion.archives import archive_lines
from ingestion.models import Question
from ingestion.question_data import KNOWN_KEYS, parse_aware_datetime, question_data_clean
from leaderboard.services.replay_sessions import SIMULATED_DATE_FRACTIONS

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "ingestion" / "data" / "real_replay"
ARCHIVE = ROOT / "ingestion" / "data" / "archives" / "wcep" / "documents.jsonl.gz"
# Items on a question's storyline counted in the 180 days before open_at up to t_sim.
STORYLINE_LOOKBACK_DAYS = 180
MIN_STORYLINE_ITEMS = 8
MIN_QUESTIONS = 45

QUESTIONS: list[dict[str, Any]] = json.loads((DATA / "questions.json").read_text(encoding="utf-8"))
STORYLINES: dict[str, str] = json.loads((DATA / "storylines.json").read_text(encoding="utf-8"))
IDS = [q["external_id"] for q in QUESTIONS]


def _archive_path() -> Path:
    override = os.environ.get("HINDSIGHT_WCEP_ARCHIVE")
    return Path(override) if override else ARCHIVE


@cache
def _archive() -> dict[str, dict[str, Any]]:
    path = _archive_path()
    assert path.exists(), f"the archive is missing at {path}"
    docs: dict[str, dict[str, Any]] = {}
    for line in archive_lines(path):
        doc = json.loads(line)
        doc["_published"] = _when(doc["published_at"])
        docs[doc["id"]] = doc
    return docs


def _when(value: str) -> datetime:
    return parse_aware_datetime(value, field_name="time")


def simulated_at(entry: dict[str, Any]) -> datetime:
    """t_sim as a replay session computes it: the policy's fraction of [open_at, resolved_at)."""
    opened, resolved = _when(entry["open_at"]), _when(entry["resolved_at"])
    return opened + (resolved - opened) * SIMULATED_DATE_FRACTIONS[entry["simulated_date_policy"]]


def _by_id() -> list[Any]:
    return [pytest.param(q, id=q["external_id"]) for q in QUESTIONS]


def test_the_set_is_large_varied_and_keyed_once() -> None:
    assert len(QUESTIONS) >= MIN_QUESTIONS
    assert len(set(IDS)) == len(IDS)
    assert all(i.startswith("real-") for i in IDS)
    kinds = {kind: sum(q["type"] == kind for q in QUESTIONS) for kind in Question.Type.values}
    assert kinds["binary"] >= 25 and kinds["multiple_choice"] >= 8
    assert kinds["quantity"] >= 6 and kinds["timeframe"] >= 5
    noes = sum(q["outcome"] is False for q in QUESTIONS if q["type"] == "binary")
    assert 0.35 <= noes / kinds["binary"] <= 0.6, "binary outcomes should not all resolve the same way"
    assert set(STORYLINES) == set(IDS)


@pytest.mark.parametrize("entry", _by_id())
def test_entry_passes_the_validator(entry: dict[str, Any]) -> None:
    # resolved_by names the archive items; the validator may not know the key yet.
    data = {k: v for k, v in entry.items() if k in KNOWN_KEYS or k != "resolved_by"}
    values, outcome, resolved_at = question_data_clean(data)
    assert values["track"] == Question.Track.REPLAY
    assert values["simulated_date_policy"] in SIMULATED_DATE_FRACTIONS
    assert outcome is not None and resolved_at is not None
    if entry["type"] == Question.Type.BINARY:
        assert isinstance(entry["outcome"], bool)
    if entry["type"] == Question.Type.MULTIPLE_CHOICE:
        assert entry["outcome"] in entry["options"]
    if entry["type"] == Question.Type.QUANTITY:
        assert entry["lower_bound"] <= entry["outcome"] <= entry["upper_bound"]
    assert entry["attribution"]["license"] == "CC-BY-SA-4.0"
    assert entry["attribution"]["source"] == "Wikipedia Portal:Current events"


@pytest.mark.parametrize("entry", _by_id())
def test_simulated_date_is_inside_the_window(entry: dict[str, Any]) -> None:
    t_sim = simulated_at(entry)
    assert _when(entry["open_at"]) <= t_sim < _when(entry["resolved_at"])
    assert _when(entry["open_at"]) < _when(entry["close_at"])


@pytest.mark.parametrize("entry", _by_id())
def test_resolving_items_exist_and_appear_only_after_the_simulated_date(entry: dict[str, Any]) -> None:
    docs = _archive()
    t_sim = simulated_at(entry)
    resolving = entry["resolved_by"]
    assert resolving, "a question names the archive items that resolve it"
    missing = [i for i in resolving if i not in docs]
    assert not missing, f"not in the archive: {missing}"
    early = [i for i in resolving if docs[i]["_published"] <= t_sim]
    assert not early, f"published at or before t_sim {t_sim.isoformat()}: {early}"
    first = min(resolving, key=lambda i: docs[i]["_published"])
    assert entry["attribution"]["url"] == docs[first]["url"]


@pytest.mark.parametrize("entry", _by_id())
def test_storyline_has_evidence_before_the_simulated_date(entry: dict[str, Any]) -> None:
    docs = _archive()
    t_sim = simulated_at(entry)
    since = _when(entry["open_at"]).timestamp() - STORYLINE_LOOKBACK_DAYS * 86400
    pattern = re.compile(STORYLINES[entry["external_id"]], re.IGNORECASE)
    items = [
        d
        for d in docs.values()
        if since <= d["_published"].timestamp()
        and d["_published"] < t_sim
        and pattern.search(" ".join([d["text"], *d["topic_path"]]))
    ]
    assert len(items) >= MIN_STORYLINE_ITEMS
    assert not {d["id"] for d in items} & set(entry["resolved_by"])


@pytest.mark.parametrize("entry", _by_id())
def test_no_resolving_item_repeats_another(entry: dict[str, Any]) -> None:
    """The page lists each resolving item: two whose texts repeat each other read as one item twice."""
    docs = _archive()
    texts = [(i, " ".join(docs[i]["text"].split()).lower()) for i in entry["resolved_by"]]
    repeats = [
        (a, b) for n, (a, ta) in enumerate(texts) for b, tb in texts[n + 1 :] if ta.startswith(tb) or tb.startswith(ta)
    ]
    assert not repeats, f"items repeating each other: {repeats}"


# Questions whose outcome was known before the first resolving item's portal day, each read and
# confirmed: the page then says that the items were reported later and confirm it.
KNOWN_BEFORE_THE_ITEMS = {
    # Lift-off on 1 April 2026: the portal's entry of that day, first captured minutes before it, only
    # says the launch is set; the items that confirm the flight were filed on 6 and 10 April.
    "real-artemis-ii-launch-month",
}


@pytest.mark.parametrize("entry", _by_id())
def test_the_outcome_is_not_known_before_the_items_report_it(entry: dict[str, Any]) -> None:
    """The page says when the outcome became known and lists the items that resolve it, each with the
    day the portal reports it: the outcome is not known before the first of them reports it, except a
    No that the deadline passing settled (the items, later, confirm that nothing happened) and the
    cases read one by one above."""
    docs = _archive()
    resolved = _when(entry["resolved_at"])
    first_report = min(docs[i]["portal_date"] for i in entry["resolved_by"])
    settled_by_deadline = entry["outcome"] is False and resolved - _when(entry["close_at"]) <= timedelta(days=1)
    if settled_by_deadline or entry["external_id"] in KNOWN_BEFORE_THE_ITEMS:
        return
    assert resolved.date().isoformat() >= first_report, (
        f"known {resolved.isoformat()}, first reported on the portal on {first_report}"
    )
