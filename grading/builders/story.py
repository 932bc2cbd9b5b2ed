"""Which articles tell the question's story: the offline builder's selection step (pure; no Django).

An article in the question's window is scored by the query terms it contains, each weighted by its
rarity in the window (IDF) and its place (title entity 3, title key term 2, criteria or
background term 1). Which articles are about the question is decided by names, not by score:

* **Specific names** (:func:`anchors_of`): per title and option entity, its rarest stems in the
  window ("Bulgaria" in "Prime Minister of Bulgaria"); entities named by more than ``ANCHOR_RATIO``
  times as many articles as the title's most specific one are topic words ("National Assembly",
  "Chapter 11") and name nothing.
* **Core**: an article naming two of the question's entities, or one and key terms of weight 1 or
  more (a title or criteria key term, or two of the background), with a score of at least
  ``SEED_SHARE`` of the best article's.
* **History** (:func:`story_names`): names the core articles bring in (the prime minister who
  resigned) that mostly appear beside the question's names; an article naming one joins when it
  also has a key term or is close to a core article within ``EXPAND_DAYS``.
* **Near-duplicates**: headline and lead with a cosine of at least ``EXPAND_SIMILARITY`` to a core
  article's, published within ``EXPAND_DAYS`` of it (another outlet's report of the same development).

An article's relevance ``r`` in (0, 1] is its score over the best score, or, for articles admitted by
closeness or history, that closeness (or ``HISTORY_RELEVANCE``) when larger. No relevant article means
no graph: the builder records "insufficient evidence" rather than a graph of unrelated stories.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from grading.builders.relevance import QUESTION_WORDS, Doc, SubjectTerms, cosine, idf_of, present

SEED_SHARE = 0.1
EXPAND_SIMILARITY = 0.5
EXPAND_DAYS = 3
ANCHOR_RATIO = 4
HEAD_RATIO = 1.5
STORY_SHARE = 0.5
HISTORY_RELEVANCE = 0.3


@dataclass(frozen=True)
class Anchors:
    """The question's specific names in this window: per entity phrase, the stems that name it."""

    phrases: dict[tuple[str, ...], frozenset[str]]
    context: frozenset[str] = frozenset()  # specific names of the criteria and background
    rival: frozenset[str] = frozenset()  # stems specific enough to name another entity than the question's
    proper: frozenset[str] = frozenset()  # the question's entity stems never written in lower case

    @property
    def stems(self) -> frozenset[str]:
        return frozenset().union(*self.phrases.values()) if self.phrases else frozenset()

    def named(self, doc: Doc) -> int:
        """How many of the question's entities ``doc`` names by their specific stems; two entities
        named by the same word ("Party for Freedom", "People's Party for Freedom and Democracy")
        count once."""
        used: set[str] = set()
        count = 0
        for phrase, heads in self.phrases.items():
            found = {s for s in heads if present(s, doc) and not self._only_in_rivals(s, phrase, doc)}
            if found and not found & used:
                count += 1
                used |= found
        return count

    def _only_in_rivals(self, stem: str, phrase: tuple[str, ...], doc: Doc) -> bool:
        """Whether every name of ``doc`` that holds ``stem`` is another entity: one qualified by a
        specific word the question's entity lacks, and lacking a proper word of the question's
        ("Galdria Competition Bureau" for "Castrel Competition Bureau"; "Danish PM Mette
        Frederiksen" is still Mette Frederiksen). A word outside any name names the question's entity."""
        holding = [p for p in doc.entities if stem in p]
        if not holding or stem in doc.lowercase:
            return False
        mine = set(phrase)
        return all((set(p) - mine) & self.rival and (mine - set(p)) & self.proper for p in holding)


def anchors_of(docs: Sequence[Doc], subject: SubjectTerms) -> Anchors:
    """The specific part of each title and option entity, and which of them are specific enough.

    An entity's specific part is its rarest stems in the window (at most ``HEAD_RATIO`` times the rarest
    count): *Bulgaria* in "Prime Minister of Bulgaria", *Spirit* in "Spirit Airlines". It names the
    question's subject when at most ``ANCHOR_RATIO`` times as many articles name it as name the title's
    most specific entity: "National Assembly" in a question about Bayrou's confidence vote is a topic
    word, shared with every country's parliament, not the subject."""
    counts: dict[str, int] = {}

    def df(stem: str) -> int:
        if stem not in counts:
            counts[stem] = sum(1 for d in docs if present(stem, d))
        return counts[stem]

    def head(phrase: tuple[str, ...]) -> frozenset[str]:
        # A name no article of the window writes ("Spirit" when only airlines in general are in the
        # news) leaves its entity unnamed: its generic rest ("Airlines") does not stand in for it.
        seen = {s: df(s) for s in phrase}
        rarest = min(seen.values(), default=0)
        return frozenset(s for s, n in seen.items() if n <= HEAD_RATIO * rarest)

    title = {p: head(p) for p in subject.title_entities}
    options = {p: head(p) for p in subject.option_entities if p not in title}
    # The scale is set by the names the window does write ("SVN", a code no article uses, sets none).
    found = [df(s) for heads in title.values() for s in heads if df(s)] or [
        df(s) for heads in options.values() for s in heads if df(s)
    ]
    if not found:
        return Anchors({})
    limit = ANCHOR_RATIO * min(found)
    kept = {}
    for phrase, heads in (*title.items(), *options.items()):
        specific = frozenset(s for s in heads if 0 < df(s) <= limit)
        if specific:
            kept[phrase] = specific
    # The background's specific names ("the collapse of the Schoof cabinet") lead to the story's
    # history; they do not make an article about the question on their own.
    # At most as common as the title's most specific name: "House of Representatives" is not.
    context = frozenset(s for p in subject.context_entities for s in head(p) if 0 < df(s) <= min(found))
    # Words of other names as specific as the question's (and never written in lower case): they
    # make a name another entity's.
    written: Counter[str] = Counter(s for d in docs for s in d.stems)
    generic = frozenset().union(*(d.lowercase for d in docs))
    rival = frozenset(s for d in docs for p in d.entities for s in p if written[s] <= limit and s not in generic)
    proper = frozenset(s for p in kept for s in p if s not in generic)
    return Anchors(kept, context - frozenset().union(*kept.values()) if kept else context, rival, proper)


@dataclass(frozen=True)
class _Match:
    score: float
    keys: float  # weight of the key terms it contains (title 2, criteria and options 1, background 0.5)
    named: int  # the question's entities it names by their specific stems
    key_count: int = 0


def _match(doc: Doc, subject: SubjectTerms, anchors: Anchors, idf: dict[str, float], unknown: float) -> _Match:
    score = 0.0
    keys = 0.0
    count = 0
    for phrase, weight in subject.phrases.items():
        score += weight * sum(idf.get(s, unknown) for s in phrase if present(s, doc))
    for stem, weight in subject.keys.items():
        if stem in doc.stems:
            score += weight * idf.get(stem, unknown)
            keys += weight
            count += 1
    return _Match(score, keys, anchors.named(doc), count)


def story_names(docs: Sequence[Doc], core_ids: set[int], named_ids: set[int], anchors: Anchors) -> frozenset[str]:
    """Names the story brings in beyond the question's own (the prime minister who resigned, the
    interim government's leader): entity stems of core articles (and the background's specific
    names), written in upper case only, that mostly appear beside the question's names (at least
    ``STORY_SHARE`` of the articles naming them name one of the question's entities too)."""
    generic = frozenset().union(*(d.lowercase for d in docs))
    candidates = {
        s
        for d in docs
        if d.id in core_ids
        for phrase in d.entities
        for s in phrase
        if s not in generic and s not in QUESTION_WORDS and s not in anchors.stems and len(s) > 2
    } | set(anchors.context)
    names = set()
    for stem in candidates:
        having = [d.id for d in docs if stem in d.stems]
        if len(having) > 1 and sum(i in named_ids for i in having) >= STORY_SHARE * len(having):
            names.add(stem)
    return frozenset(names)


def select_relevant(docs: Sequence[Doc], subject: SubjectTerms) -> list[Doc]:
    """The relevant articles, each with its ``relevance`` set (module docstring), in input order."""
    return select_story(docs, subject)[0]


def select_story(docs: Sequence[Doc], subject: SubjectTerms) -> tuple[list[Doc], frozenset[str]]:
    """The relevant articles (as :func:`select_relevant`) and the stems of the question's specific names."""
    if not docs or not (subject.phrases or subject.keys):
        return [], frozenset()
    idf = idf_of(d.stems for d in docs)
    unknown = max(idf.values(), default=1.0)
    anchors = anchors_of(docs, subject)
    matches = {d.id: _match(d, subject, anchors, idf, unknown) for d in docs}
    best = max(m.score for m in matches.values())
    if best <= 0:
        return [], anchors.stems

    def is_core(doc: Doc) -> bool:
        m = matches[doc.id]
        if m.score < SEED_SHARE * best:
            return False
        if not anchors.phrases:
            return not subject.phrases and m.key_count >= 2
        return m.named >= 2 or (m.named == 1 and m.keys >= 1.0)

    core = [d for d in docs if is_core(d)]
    core_ids = {d.id for d in core}
    names = story_names(docs, core_ids, {d.id for d in docs if matches[d.id].named}, anchors)
    head_idf = idf_of(d.head for d in docs)
    kept: list[Doc] = []
    for doc in docs:
        share = matches[doc.id].score / best
        if doc.id in core_ids:
            doc.relevance = round(share, 4)
            kept.append(doc)
            continue
        # Reports of the same development that do not name the subject: close to a core article
        # and published within a few days of it (a parliament's vote elsewhere, weeks apart, is not).
        closeness = max(
            (
                cosine(doc.head, c.head, head_idf)
                for c in core
                if abs((doc.published_at - c.published_at).days) <= EXPAND_DAYS
            ),
            default=0.0,
        )
        # The story's history: developments that name its own people and bodies, not the question's.
        history = bool(names & doc.stems) and (matches[doc.id].keys >= 1 or closeness >= EXPAND_SIMILARITY / 2)
        if closeness >= EXPAND_SIMILARITY or history:
            doc.relevance = round(max(share, closeness * 0.8, HISTORY_RELEVANCE if history else 0.0), 4)
            kept.append(doc)
    return kept, anchors.stems
