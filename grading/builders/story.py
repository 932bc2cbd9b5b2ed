"""Which items tell the question's story: the offline builder's seeding and story-choosing stages (pure; no Django).

**Seeds** (:func:`seed_items`) are the items that certainly belong. An item in the question's
window is scored by the query terms it contains, each weighted by its rarity in the window (IDF) and
its place (title entity 3, title key term 2, criteria or background term 1). Which items are seeds
is decided by names, not by score:

* **Specific names** (:func:`anchors_of`): per title and option entity, its rarest stems in the
  window ("Bulgaria" in "Prime Minister of Bulgaria"); entities named by more than ``ANCHOR_RATIO``
  times as many items as the title's most specific one are topic words ("National Assembly",
  "Chapter 11") and name nothing.
* **Seed**: an item naming two of the question's entities, or one and key terms of weight 1 or
  more (a title or criteria key term, or two of the background), with a score of at least
  ``SEED_SHARE`` of the best item's; and every item staff added to an earlier graph of the question.

**The story** (:func:`choose_story`) is the seeds and the items the seeds' relevance reaches
(:mod:`grading.builders.spread`, Personalized PageRank over :mod:`grading.builders.itemgraph`): an
item joins when its score is at least ``STORY_SHARE`` of the seeds' median score and it is linked
to a seed or to an item already chosen by at least ``BRIDGE_MIN`` (so an item reached only through
a chain of weak links stays out). Items join best first, at most ``MAX_STORY``. A story of the
question's own names is so reached beyond them: the protests, the resignation and the interim
government that led to an early election, which never name its winner.

An item's relevance ``r`` in (0, 1]: for a seed, the larger of its score over the best score and
its spread score over the seeds' median (capped at 1); for another item, its spread score over the
seeds' median, times ``REACHED_RELEVANCE``. No seed means no graph: the builder records
"insufficient evidence" rather than a graph of unrelated stories.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from grading.builders.itemgraph import ItemGraph
from grading.builders.relevance import Doc, SubjectTerms, idf_of, matched_stems, present
from grading.builders.spread import Scores, personalized_pagerank

SEED_SHARE = 0.1
TITLE_KEY = 2.0
ANCHOR_RATIO = 4
HEAD_RATIO = 1.5
STORY_SHARE = 0.06
BRIDGE_MIN = 0.05
BRIDGE_STRONG = 0.5
SPREAD_BRIDGE = 0.4
MAX_STORY = 400
STORY_NAME_SHARE = 0.5
SPREAD_WEIGHT = 0.5
SPREAD_ROUNDS = 2
REACHED_WEIGHT = 0.1
WORDING_FLOOR = 0.1


@dataclass(frozen=True)
class Anchors:
    """The question's specific names in this window: per entity phrase, the stems that name it."""

    phrases: dict[tuple[str, ...], frozenset[str]]
    context: frozenset[str] = frozenset()  # specific names of the criteria and background
    rival: frozenset[str] = frozenset()  # stems specific enough to name another entity than the question's
    proper: frozenset[str] = frozenset()  # the question's entity stems never written in lower case
    primary: tuple[str, ...] | None = None  # the title's most specific name: whom the question is about

    @property
    def stems(self) -> frozenset[str]:
        return frozenset().union(*self.phrases.values()) if self.phrases else frozenset()

    def names_primary(self, doc: Doc) -> bool:
        """Whether ``doc`` names the title's most specific name by all its specific stems."""
        if self.primary is None:
            return False
        heads = self.phrases[self.primary]
        return all(matched_stems(s, doc) and not self._only_in_rivals(s, self.primary, doc) for s in heads)

    def named(self, doc: Doc) -> int:
        """How many of the question's entities ``doc`` names by all their specific stems; two
        entities named by the same words ("Party for Freedom", "People's Party for Freedom and
        Democracy"; "Nepal" and "Nepali Congress" in "Nepali police") count once."""
        used: set[str] = set()
        count = 0
        for phrase, heads in self.phrases.items():
            words: set[str] = set()
            for stem in heads:
                found = matched_stems(stem, doc)
                if not found or self._only_in_rivals(stem, phrase, doc):
                    break
                words |= found
            else:
                if words and not words & used:
                    count += 1
                    used |= words
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

    generic = frozenset().union(*(d.lowercase for d in docs))

    def head(phrase: tuple[str, ...]) -> frozenset[str]:
        # The words of the name that the window never writes in lower case ("Supreme" and "Brazil"
        # in "Supreme Federal Court of Brazil": the Philippines' Supreme Court is another court).
        proper = frozenset(s for s in phrase if s not in generic and df(s))
        if proper:
            return proper
        # Else its rarest words. A name no article of the window writes ("Spirit" when only airlines
        # in general are in the news) leaves its entity unnamed: its generic rest ("Airlines") does
        # not stand in for it.
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
        # A name is named by all its specific words; it is specific when its rarest one is.
        present_heads = frozenset(s for s in heads if df(s))
        if present_heads and min(df(s) for s in present_heads) <= limit:
            kept[phrase] = present_heads
    # The background's specific names ("the collapse of the Schoof cabinet") lead to the story's
    # history; they do not make an article about the question on their own.
    # At most as common as the title's most specific name: "House of Representatives" is not.
    context = frozenset(s for p in subject.context_entities for s in head(p) if 0 < df(s) <= min(found))
    # Words of other names as specific as the question's (and never written in lower case): they
    # make a name another entity's.
    written: Counter[str] = Counter(s for d in docs for s in d.stems)
    rival = frozenset(s for d in docs for p in d.entities for s in p if written[s] <= limit and s not in generic)
    proper = frozenset(s for p in kept for s in p if s not in generic)
    titled = [p for p in title if p in kept]
    primary = min(titled, key=lambda p: (min(df(s) for s in kept[p]), p)) if titled else None
    return Anchors(kept, context - frozenset().union(*kept.values()) if kept else context, rival, proper, primary)


@dataclass(frozen=True)
class _Match:
    score: float
    keys: float  # weight of the key terms it contains (title 2, criteria and options 1, background 0.5)
    named: int  # the question's entities it names by their specific stems
    key_count: int = 0
    title_keys: int = 0  # the title's key terms it contains


def _match(doc: Doc, subject: SubjectTerms, anchors: Anchors, idf: dict[str, float], unknown: float) -> _Match:
    score = 0.0
    keys = 0.0
    count = title = 0
    for phrase, weight in subject.phrases.items():
        score += weight * sum(idf.get(s, unknown) for s in phrase if present(s, doc))
    for stem, weight in subject.keys.items():
        if stem in doc.stems:
            score += weight * idf.get(stem, unknown)
            keys += weight
            count += 1
            title += weight >= TITLE_KEY
    return _Match(score, keys, anchors.named(doc), count, title)


@dataclass(frozen=True)
class Seeds:
    """The items that certainly belong (id -> score share in (0, 1]) and the question's names."""

    shares: dict[int, float]
    anchors: Anchors
    # The question's own words (the names of its title and options, and its topic words: "Chapter
    # 11", "bankruptcy", "court"): shared, they say two items are of one kind or of one country,
    # not of one story (an item naming them is a seed or not on its own merits). The background's
    # names (the prime minister, the rival party) are the story's and do bridge.
    topic: frozenset[str] = frozenset()
    # Every item's score over the best (how much of the question's wording it writes).
    match: dict[int, float] = field(default_factory=dict)
    named: frozenset[int] = frozenset()  # the items that name whom the question is about


def seed_items(docs: Sequence[Doc], subject: SubjectTerms, *, pinned: Collection[int] = ()) -> Seeds:
    """The seeds among ``docs`` (module docstring); ``pinned`` items (added by staff) are seeds too."""
    anchors = anchors_of(docs, subject) if docs else Anchors({})
    shares = {d.id: 1.0 for d in docs if d.id in pinned}
    asked = (*subject.title_entities, *subject.option_entities)
    topic = frozenset({s for p in asked for s in p} | set(subject.keys) | anchors.stems)
    if not docs or not (subject.phrases or subject.keys):
        return Seeds(shares, anchors, topic)
    idf = idf_of(d.stems for d in docs)
    unknown = max(idf.values(), default=1.0)
    matches = {d.id: _match(d, subject, anchors, idf, unknown) for d in docs}
    best = max(m.score for m in matches.values())
    if best <= 0:
        return Seeds(shares, anchors, topic)
    match = {i: m.score / best for i, m in matches.items() if m.score > 0}
    title_keys = any(w >= TITLE_KEY for w in subject.keys.values())
    specific = _specific_keys(docs, subject)
    titled = any(p in anchors.phrases for p in subject.title_entities)
    for doc in docs:
        m = matches[doc.id]
        if m.score < SEED_SHARE * best:
            continue
        # One name and a word of what the title asks ("Bolsonaro" and "convict"), or two words of
        # the criteria and background ("suspends ... pending a ruling").
        seed = m.named >= 2 or (m.named == 1 and (m.title_keys > 0 or m.keys >= 2.0))
        if not titled:
            # No name in the title ("the papal conclave"; the options name regions): two of the
            # title's words, one of them specific ("conclave", not "elect" or "new").
            seed = seed or ((m.title_keys >= 2 and bool(specific & doc.stems)) if title_keys else m.key_count >= 2)
        if seed:
            shares[doc.id] = max(shares.get(doc.id, 0.0), round(m.score / best, 4))
    # The items beside which the story's own names appear: those naming whom the question is about.
    named = frozenset(d.id for d in docs if anchors.names_primary(d)) | frozenset(shares)
    return Seeds(shares, anchors, topic, match, named)


def _specific_keys(docs: Sequence[Doc], subject: SubjectTerms) -> frozenset[str]:
    """The title's key words written by at most ``ANCHOR_RATIO`` times as many items as its rarest."""
    counts = {k: sum(1 for d in docs if k in d.stems) for k, w in subject.keys.items() if w >= TITLE_KEY}
    written = [n for n in counts.values() if n]
    if not written:
        return frozenset()
    return frozenset(k for k, n in counts.items() if 0 < n <= ANCHOR_RATIO * min(written))


def choose_story(graph: ItemGraph, scores: Scores, seeds: Seeds) -> list[Doc]:
    """The story's items, in window order, each with its ``relevance`` set (module docstring)."""
    index = graph.index
    rows = {index[i]: share for i, share in seeds.shares.items() if i in index}
    if not rows:
        return []
    reference = float(np.median([scores[r] for r in rows])) or 1.0
    chosen = set(rows)
    candidates = sorted(
        (r for r in range(len(graph.docs)) if r not in chosen and scores[r] >= STORY_SHARE * reference),
        key=lambda r: (-scores[r], r),
    )
    names = story_names(graph, seeds)
    known = names | seeds.anchors.stems
    changed = True
    while changed and len(chosen) < MAX_STORY:
        changed = False
        for r in candidates:
            if r in chosen or len(chosen) >= MAX_STORY:
                continue
            if _bridged(graph, r, chosen, names, spread=scores[r] >= SPREAD_BRIDGE * reference, known=known):
                chosen.add(r)
                changed = True
    story = []
    for r in sorted(chosen):
        doc = graph.docs[r]
        spread = min(1.0, float(scores[r]) / reference)
        wording = seeds.match.get(doc.id, 0.0)
        doc.relevance = round(max(0.0001, spread**SPREAD_WEIGHT * (WORDING_FLOOR + wording) ** (1 - SPREAD_WEIGHT)), 4)
        story.append(doc)
    return story


def story_names(graph: ItemGraph, seeds: Seeds) -> frozenset[str]:
    """The names the story brings in beyond the question's topic words (the prime minister who
    resigned, the capital where the protests were): names of the items that name the question's
    entities, at least ``STORY_NAME_SHARE`` of whose items in the window name them too. "Trump",
    "Senate" or "Gen Z" appear in many other stories, so they bridge none."""
    index = graph.index
    named = [index[i] for i in seeds.named if i in index]
    inside = set(named)
    names = _mostly_beside(graph.proper, inside, seeds.topic)
    headings = _mostly_beside([frozenset(d.topics) for d in graph.docs], inside, frozenset())
    return names | frozenset(f"{HEADING_MARK}{h}" for h in headings)


HEADING_MARK = "\x00"


def _mostly_beside(labels: Sequence[frozenset[str]], inside: set[int], left_out: frozenset[str]) -> frozenset[str]:
    """The labels of the ``inside`` rows (less ``left_out``) at least ``STORY_NAME_SHARE`` of whose
    rows are inside."""
    candidates = set().union(*(labels[r] for r in inside)) - left_out if inside else set()
    having: Counter[str] = Counter()
    beside: Counter[str] = Counter()
    for r, row in enumerate(labels):
        for label in row & candidates:
            having[label] += 1
            beside[label] += r in inside
    # A name only one item writes links nothing.
    return frozenset(n for n in candidates if beside[n] >= max(2, STORY_NAME_SHARE * having[n]))


def _bridged(
    graph: ItemGraph, row: int, chosen: set[int], names: frozenset[str], *, spread: bool, known: frozenset[str]
) -> bool:
    """Whether item ``row`` joins the story: linked to a chosen item by at least ``BRIDGE_MIN`` and
    sharing a name or a heading with the story; or, naming someone the story knows (``known``: the
    story's names and the question's own names) or no one, linked to it in nearly the same words, or
    reached strongly by the spread. Words alone ("budget", "approves", "wins the most seats") do
    not make another actor's story this one."""
    if graph.proper[row] & names or {f"{HEADING_MARK}{h}" for h in graph.docs[row].topics} & names:
        shares = True
    elif not graph.proper[row] or graph.proper[row] & known:
        shares = False
    else:
        return False  # only other actors
    weights = graph.weights
    begin, end = weights.indptr[row], weights.indptr[row + 1]
    strongest = max(
        (w for c, w in zip(weights.indices[begin:end], weights.data[begin:end], strict=True) if c in chosen),
        default=0.0,
    )
    if strongest >= BRIDGE_STRONG:
        return True  # told in nearly the same words as a development of the story
    if spread and strongest >= 2 * BRIDGE_MIN:
        return True  # the story's relevance reaches it strongly, through a link of some weight
    return shares and strongest >= BRIDGE_MIN


def spread_story(graph: ItemGraph, seeds: Seeds) -> list[Doc]:
    """Spread relevance from the seeds and choose the story, ``SPREAD_ROUNDS`` times: each round
    spreads again from the items chosen so far (the reached ones with ``REACHED_WEIGHT`` each), so a
    cause two or three links from the question's names (the protests behind a resignation behind
    an early election) is reached through the developments between."""
    index = graph.index
    restart = {index[i]: w for i, w in seeds.shares.items() if i in index}
    story: list[Doc] = []
    for _ in range(SPREAD_ROUNDS):
        scores = personalized_pagerank(graph.weights, restart)
        story = choose_story(graph, scores, seeds)
        reached = {index[d.id] for d in story} - set(restart)
        if not reached:
            break
        restart = {**dict.fromkeys(reached, REACHED_WEIGHT), **restart}
    return story
