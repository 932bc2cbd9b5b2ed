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

* it names two of the question's entities, or one and a key term, with a score of at least
  ``SEED_SHARE`` of the best article's (the *core* of the story). An entity is named by one of its
  proper names (a word the window's articles never write in lower case, such as *Maravia*) or by
  at least half of its weight; or
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

SEED_SHARE = 0.1
EXPAND_SIMILARITY = 0.5
EXPAND_DAYS = 3
ANCHOR_RATIO = 4
HEAD_RATIO = 1.5
STORY_SHARE = 0.5
HISTORY_RELEVANCE = 0.3
PREFIX_MIN = 5
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
               "october", "november", "december")  # fmt: skip
MONTHS = frozenset((*MONTH_NAMES, "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
# Words that make a question (its form, dates, resolution and direction), not its subject.
_QUESTION_TEXT = """will would which what who whom how many much when whether happen happens end ends take takes
    towards toward relation relations coded code codes cameo fictional question resolve resolves resolved
    yes report reports month months week weeks year years day days date dates quarter period number percent
    time utc calendar according first event events subject object after before until by above below up down
    over under more most not no win wins become becomes remain remains someone else another other"""
# Capitalised at the start of a sentence without naming anything.
SENTENCE_STARTERS = frozenset(
    """after following despite amid because before since while although though as in on at for from two three
    four five six seven eight nine ten first second third last new more most some many several both all no not
    breaking update report analysis""".split()
)
_STEMMER = snowballstemmer.stemmer("english")
QUESTION_WORDS = frozenset(str(_STEMMER.stemWord(w)) for w in f"{_QUESTION_TEXT} {' '.join(MONTHS)}".split())
_WORD = re.compile(r"[^\W_][\w'\u2019\-]*")


@lru_cache(maxsize=65536)
def stem_word(word: str) -> str:
    """The Snowball stem of one lower-case word."""
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    """Snowball stems of the project's tokens of ``text`` (stop words dropped)."""
    return [stem_word(t) for t in tokenize(text)]


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() or (any(c.isdigit() for c in word) and any(c.isupper() for c in word))


def entity_phrases(text: str, *, skip_title_case: bool = False, context: str = "") -> list[tuple[str, ...]]:
    """Runs of capitalised words in ``text`` as stem tuples (*of* may join two runs).

    A sentence's first word counts only when the text (or ``context``) also capitalises it
    mid-sentence, or the next word is capitalised too; months and weekdays are never entities. With ``skip_title_case``, text whose words are nearly all
    capitalised (a Title Case headline) yields nothing.
    """
    words = _WORD.findall(text)
    if skip_title_case:
        long_words = [w for w in words if len(w) > 3]
        if long_words and sum(_is_capitalised(w) for w in long_words) >= 0.7 * len(long_words):
            return []
    matches = list(_WORD.finditer(text))
    starts: list[bool] = []
    last_end = 0
    for match in matches:
        gap = text[last_end : match.start()]
        starts.append(last_end == 0 or any(c in ".!?:\n" for c in gap))
        last_end = match.end()
    # A capitalised word that opens a sentence names something only when the text also capitalises
    # it mid-sentence, or the next word is capitalised too ("Reserve Bank of ...").
    mid_sentence = {
        m.group(0).lower()
        for m, start in zip(matches, starts, strict=True)
        if not start and _is_capitalised(m.group(0))
    }
    if context:
        mid_sentence |= {w.lower() for w in _WORD.findall(context) if _is_capitalised(w)}
    phrases: list[tuple[str, ...]] = []
    run: list[str] = []
    for k, match in enumerate(matches):
        word = match.group(0)
        lower = word.lower().replace("\u2019", "'")
        if lower.endswith("'s"):
            lower = lower[:-2]
        capitalised = _is_capitalised(word) and lower not in MONTHS
        if capitalised and starts[k] and not run:
            following = k + 1 < len(matches) and not starts[k + 1] and _is_capitalised(matches[k + 1].group(0))
            capitalised = lower not in SENTENCE_STARTERS and (word.lower() in mid_sentence or following)
        if capitalised:
            run.extend(stem_word(p) for p in tokenize(lower) if p not in STOPWORDS)
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
    """The question's subject: entity phrases and key stems, each with its weight."""

    phrases: dict[tuple[str, ...], float]
    keys: dict[str, float]
    title_entities: tuple[tuple[str, ...], ...]
    option_entities: tuple[tuple[str, ...], ...] = ()
    context_entities: tuple[tuple[str, ...], ...] = ()  # of the resolution criteria and background

    @classmethod
    def for_question(cls, *, title: str, criteria: str, background: str, options: Sequence[str] = ()) -> SubjectTerms:
        def clean(phrase: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(s for s in phrase if s not in QUESTION_WORDS and not s.isdigit() and len(s) > 1)

        everything = f"{title} {criteria} {background}"
        title_entities = tuple(
            p for p in dict.fromkeys(clean(p) for p in entity_phrases(title, context=everything)) if p
        )
        phrases: dict[tuple[str, ...], float] = dict.fromkeys(title_entities, 3.0)
        context = [*entity_phrases(criteria, context=everything), *entity_phrases(background, context=everything)]
        # An option that names something ("People's Party for Freedom and Democracy") is one name as a
        # whole, lower-case joining words and all; "Another party" names nothing.
        option_entities = tuple(
            p
            for p in dict.fromkeys(clean(tuple(stems(o))) for o in options if entity_phrases(o, context=everything))
            if p
        )
        context.extend(option_entities)
        in_title = {s for t in title_entities for s in t}
        for phrase in (clean(p) for p in context):
            # A context entity counts for what it adds to the title's ("Port Halden Dockworkers' Union"
            # adds the union to "Port Halden").
            extra = tuple(s for s in phrase if s not in in_title)
            if extra:
                phrases.setdefault(extra, 1.5)
        named = {s for phrase in phrases for s in phrase}
        keys: dict[str, float] = {}
        # Options are candidates, not the subject: their names are entities above, their words no keys.
        for text, weight in ((title, 2.0), (criteria, 1.0), (background, 0.5)):
            for stem in stems(text):
                if stem not in QUESTION_WORDS and stem not in named and not stem.isdigit() and len(stem) > 1:
                    keys.setdefault(stem, weight)
        context_entities = tuple(
            p for p in dict.fromkeys(clean(p) for p in context[: len(context) - len(option_entities)]) if p
        )
        return cls(
            phrases=phrases,
            keys=keys,
            title_entities=title_entities,
            option_entities=option_entities,
            context_entities=context_entities,
        )

    @property
    def weights(self) -> dict[str, float]:
        out = dict(self.keys)
        for phrase, weight in self.phrases.items():
            for stem in phrase:
                out[stem] = max(out.get(stem, 0.0), weight)
        return out


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
    lowercase: frozenset[str] = frozenset()  # stems of the words it writes in lower case
    relevance: float = 0.0

    @classmethod
    def make(cls, *, id: int, title: str, lead: str, body: str, host: str, published_at: datetime) -> Doc:
        all_stems, head, entities, lowercase = _analyse(title, lead, body)
        return cls(
            id=id,
            title=title,
            lead=lead,
            host=host,
            published_at=published_at,
            body=body,
            stems=all_stems,
            head=Counter(dict(head)),
            entities=entities,
            lowercase=lowercase,
        )


@lru_cache(maxsize=50_000)
def _analyse(
    title: str, lead: str, body: str
) -> tuple[frozenset[str], tuple[tuple[str, int], ...], tuple[tuple[str, ...], ...], frozenset[str]]:
    """Stems, headline-and-lead stem counts, entities and lower-case stems of one article. Cached: a
    batch of builds reads the same archive again and again."""
    text = f"{title}. {lead} {body}"
    entities = tuple(
        dict.fromkeys(
            [*entity_phrases(title, skip_title_case=True, context=f"{lead} {body}"), *entity_phrases(f"{lead} {body}")]
        )
    )
    lowercase = frozenset(stem_word(w.lower()) for w in _WORD.findall(f"{lead} {body}") if w[:1].islower())
    return frozenset(stems(text)), tuple(Counter(stems(f"{title}. {lead}")).items()), entities, lowercase


def idf_of(documents: Iterable[Iterable[str]]) -> dict[str, float]:
    """``ln(1 + N / df)`` of every stem over the documents (each counted once per document)."""
    docs = [set(d) for d in documents]
    df: Counter[str] = Counter(s for d in docs for s in d)
    n = len(docs)
    return {s: math.log(1 + n / c) for s, c in df.items()}


def _present(stem: str, doc: Doc) -> bool:
    """The stem, or (five letters or more) a word it begins or that is one letter shorter: *Bulgaria*
    and *Bulgarian*, *Bolivian* and *Bolivia* (not *freed* for *freedom*)."""
    if stem in doc.stems:
        return True
    if len(stem) < PREFIX_MIN:
        return False
    return any(s.startswith(stem) or (len(stem) - len(s) <= 1 and stem.startswith(s)) for s in doc.stems)


def cosine(a: Counter[str], b: Counter[str], idf: dict[str, float]) -> float:
    """Cosine of two stem bags weighted by ``idf``."""
    dot = sum(a[t] * b[t] * idf.get(t, 0.0) ** 2 for t in a.keys() & b.keys())
    if not dot:
        return 0.0
    na = math.sqrt(sum((c * idf.get(t, 0.0)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf.get(t, 0.0)) ** 2 for t, c in b.items()))
    return dot / (na * nb) if na and nb else 0.0


@dataclass(frozen=True)
class Anchors:
    """The question's specific names in this window: per entity phrase, the stems that name it."""

    phrases: dict[tuple[str, ...], frozenset[str]]
    context: frozenset[str] = frozenset()  # specific names of the criteria and background

    @property
    def stems(self) -> frozenset[str]:
        return frozenset().union(*self.phrases.values()) if self.phrases else frozenset()

    def named(self, doc: Doc) -> int:
        """How many of the question's entities ``doc`` names by their specific stems; two entities
        named by the same word ("Party for Freedom", "People's Party for Freedom and Democracy")
        count once."""
        used: set[str] = set()
        count = 0
        for heads in self.phrases.values():
            found = {s for s in heads if _present(s, doc)}
            if found and not found & used:
                count += 1
                used |= found
        return count


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
            counts[stem] = sum(1 for d in docs if _present(stem, d))
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
    return Anchors(kept, context - frozenset().union(*kept.values()) if kept else context)


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
        score += weight * sum(idf.get(s, unknown) for s in phrase if _present(s, doc))
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
