"""Which news is about the question: the offline builder's relevance step (pure; no Django).

The question's subject is read from its text: **entities** (runs of capitalised words such as
"Reserve Bank of Maravia" or "Clean Rivers Bill", from the title first, then the resolution
criteria and background) and **key terms** (the title's other content words, minus question
boilerplate such as *will*, *which* or *month*). Words are compared as Snowball stems of the
project's tokens; an entity stem of five letters or more also matches words it begins
(*Maravia* matches *Maravian*).

An article in the question's window is scored by the query terms it contains, each weighted by its
rarity in the window (IDF) and its place (title entity 3, title key term 2, criteria or
background term 1). It is relevant when

* it names at least one of the question's entities and two query terms, with a score of at least
  ``SEED_SHARE`` of the best article's (the *core* of the story), or
* its headline and lead are close to a core article's (cosine of IDF-weighted stems at least
  ``EXPAND_SIMILARITY``): reports of the same developments that do not name the subject.

An article's relevance ``r`` in (0, 1] is its score over the best score, or, for articles admitted by
closeness, that closeness when larger. No relevant article means no graph: the builder records
"insufficient evidence" rather than a graph of unrelated stories.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import snowballstemmer

from ingestion.text import STOPWORDS, tokenize

SEED_SHARE = 0.2
EXPAND_SIMILARITY = 0.3
PREFIX_MIN = 5
# Words that make a question, not its subject.
QUESTION_WORDS = frozenset(
    """will would which what who whom how many much when whether happen happens end ends take takes
    towards toward relation relations coded fictional question resolve resolves resolved report reports
    month months week weeks year years day days date quarter period number percent""".split()
)
MONTHS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)
# Capitalised at the start of a sentence without naming anything.
SENTENCE_STARTERS = frozenset(
    """after following despite amid because before since while although though as in on at for from
    two three four five six seven eight nine ten first second third last new more most some many
    several both all no not breaking update report analysis""".split()
)
_STEMMER = snowballstemmer.stemmer("english")
_WORD = re.compile(r"[^\W_][\w'\u2019\-]*")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    """Snowball stems of the project's tokens of ``text`` (stop words dropped)."""
    return [_stem(t) for t in tokenize(text)]


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() or (any(c.isdigit() for c in word) and any(c.isupper() for c in word))


def entity_phrases(text: str, *, skip_title_case: bool = False) -> list[tuple[str, ...]]:
    """Runs of capitalised words in ``text`` as stem tuples (*of* may join two runs).

    A sentence's first word counts only when it is not a common sentence starter; months and
    weekdays are never entities. With ``skip_title_case``, text whose words are nearly all
    capitalised (a Title Case headline) yields nothing.
    """
    words = _WORD.findall(text)
    if skip_title_case:
        long_words = [w for w in words if len(w) > 3]
        if long_words and sum(_is_capitalised(w) for w in long_words) >= 0.7 * len(long_words):
            return []
    phrases: list[tuple[str, ...]] = []
    run: list[str] = []
    last_end = 0
    for match in _WORD.finditer(text):
        word = match.group(0)
        gap = text[last_end : match.start()]
        at_start = last_end == 0 or any(c in ".!?:\n" for c in gap)
        last_end = match.end()
        lower = word.lower().replace("\u2019", "'")
        if lower.endswith("'s"):
            lower = lower[:-2]
        if _is_capitalised(word) and not (at_start and lower in SENTENCE_STARTERS) and lower not in MONTHS:
            parts = [p for p in tokenize(lower) if p not in STOPWORDS]
            run.extend(_stem(p) for p in parts)
            continue
        if lower == "of" and run:
            continue  # "Reserve Bank of Maravia": keep the run open
        if run:
            phrases.append(tuple(run))
        run = []
    if run:
        phrases.append(tuple(run))
    return [p for p in phrases if p and not all(s in QUESTION_WORDS for s in p)]


@dataclass(frozen=True)
class SubjectTerms:
    """The question's subject: weighted query stems and the entity stems an article must name."""

    weights: dict[str, float]
    entity_stems: frozenset[str]
    title_entities: tuple[tuple[str, ...], ...]

    @classmethod
    def for_question(cls, *, title: str, criteria: str, background: str, options: Sequence[str] = ()) -> SubjectTerms:
        title_entities = tuple(dict.fromkeys(entity_phrases(title)))
        context_entities = [*entity_phrases(criteria), *entity_phrases(background)]
        for option in options:
            context_entities.extend(entity_phrases(option))
        weights: dict[str, float] = {}

        def put(stem: str, weight: float) -> None:
            if stem not in QUESTION_WORDS and not stem.isdigit() and len(stem) > 1:
                weights[stem] = max(weights.get(stem, 0.0), weight)

        entity_stems: set[str] = set()
        for phrase in title_entities:
            for s in phrase:
                put(s, 3.0)
                entity_stems.add(s)
        for phrase in context_entities:
            for s in phrase:
                put(s, 1.5)
                entity_stems.add(s)
        for s in stems(title):
            put(s, 2.0)
        for s in stems(f"{criteria} {' '.join(options)}"):
            put(s, 1.0)
        entity_stems -= QUESTION_WORDS
        return cls(weights=weights, entity_stems=frozenset(entity_stems), title_entities=title_entities)


@dataclass
class Doc:
    """One article as the builder sees it."""

    id: int
    title: str
    lead: str
    host: str
    published_at: datetime
    body: str = ""
    stems: frozenset[str] = field(default_factory=frozenset)
    head: Counter[str] = field(default_factory=Counter)  # stems of the headline and lead
    entities: tuple[tuple[str, ...], ...] = ()
    relevance: float = 0.0

    @classmethod
    def make(cls, *, id: int, title: str, lead: str, body: str, host: str, published_at: datetime) -> Doc:
        text = f"{title}. {lead} {body}"
        return cls(
            id=id,
            title=title,
            lead=lead,
            host=host,
            published_at=published_at,
            body=body,
            stems=frozenset(stems(text)),
            head=Counter(stems(f"{title}. {lead}")),
            entities=tuple(
                dict.fromkeys([*entity_phrases(title, skip_title_case=True), *entity_phrases(f"{lead} {body}")])
            ),
        )


def idf_of(documents: Iterable[Iterable[str]]) -> dict[str, float]:
    """``ln(1 + N / df)`` of every stem over the documents (each counted once per document)."""
    docs = [set(d) for d in documents]
    df: Counter[str] = Counter(s for d in docs for s in d)
    n = len(docs)
    return {s: math.log(1 + n / c) for s, c in df.items()}


def _hits(doc: Doc, query: Iterable[str], entity_stems: frozenset[str]) -> set[str]:
    found = {q for q in query if q in doc.stems}
    for q in query:
        if q not in found and q in entity_stems and len(q) >= PREFIX_MIN and any(s.startswith(q) for s in doc.stems):
            found.add(q)
    return found


def cosine(a: Counter[str], b: Counter[str], idf: dict[str, float]) -> float:
    """Cosine of two stem bags weighted by ``idf``."""
    dot = sum(a[t] * b[t] * idf.get(t, 0.0) ** 2 for t in a.keys() & b.keys())
    if not dot:
        return 0.0
    na = math.sqrt(sum((c * idf.get(t, 0.0)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf.get(t, 0.0)) ** 2 for t, c in b.items()))
    return dot / (na * nb) if na and nb else 0.0


def select_relevant(docs: Sequence[Doc], subject: SubjectTerms) -> list[Doc]:
    """The relevant articles, each with its ``relevance`` set (module docstring), in input order."""
    if not docs or not subject.weights:
        return []
    idf = idf_of(d.stems for d in docs)
    scores: dict[int, float] = {}
    named: dict[int, bool] = {}
    counts: dict[int, int] = {}
    for doc in docs:
        hits = _hits(doc, subject.weights, subject.entity_stems)
        scores[doc.id] = sum(subject.weights[h] * idf.get(h, max(idf.values(), default=1.0)) for h in hits)
        named[doc.id] = bool(hits & subject.entity_stems) or not subject.entity_stems
        counts[doc.id] = len(hits)
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return []
    core = [d for d in docs if named[d.id] and counts[d.id] >= 2 and scores[d.id] >= SEED_SHARE * best]
    head_idf = idf_of(d.head for d in docs)
    kept: list[Doc] = []
    core_ids = {d.id for d in core}
    for doc in docs:
        share = scores[doc.id] / best
        if doc.id in core_ids:
            doc.relevance = round(share, 4)
            kept.append(doc)
            continue
        closeness = max((cosine(doc.head, c.head, head_idf) for c in core), default=0.0)
        if closeness >= EXPAND_SIMILARITY:
            doc.relevance = round(max(share, closeness * 0.8), 4)
            kept.append(doc)
    return kept
