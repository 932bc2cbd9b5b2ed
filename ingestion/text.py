"""The project's one tokenizer and one English stop-word list (pure: no Django).

Every part of Hindsight that splits text into words uses this module: the event matcher and the
lexical judge of grading, the offline hindsight builder, question generation's clustering and the
benchmarks. It lives in the lowest app so that all of them can import it.

Normalisation (SQuAD-style, extended):

1. Unicode NFKC, then ``casefold``.
2. Apostrophes are deleted (``Biden's`` -> ``bidens``, ``don't`` -> ``dont``).
3. Dotted acronyms are collapsed (``U.S.`` -> ``us``, ``U.K.`` -> ``uk``).
4. Tokens are maximal runs of letters/digits; every other character separates tokens
   (``Israel-Hamas`` -> ``israel``, ``hamas``; ``3.5`` -> ``3``, ``5``).
5. Optionally, English stop words (which include the SQuAD articles *a*, *an*, *the*) are dropped.

Stop words are function words only. Words that carry direction (*up*, *down*, *over*, *under*,
*above*, *below*, *against*, *off*, *out*, *more*, *most*, *few*, *further*), negation (*no*, *not*,
*nor*) or sequence (*after*, *before*, *again*, *once*, *until*, *then*) are **not** stop words:
"Oil prices go up" and "Oil prices go down" must not look alike. Reporting verbs that carry no
event (*said*, *says*, *say*, *also*) are stop words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

__all__ = ["SEPARATOR", "STOPWORDS", "normalise_text", "token_stream", "tokenize", "tokenize_many"]

_STOPWORD_TEXT = """
a about all am an and any are as at be because been being between both but by can could did do
does doing during each for from had has have having he her here hers herself him himself his how
i if in into is it its itself just me my myself now of on only or other our ours ourselves own
same she should so some such than that the their theirs them themselves there these they this
those through to too very was we were what when where which while who whom why will with would
you your yours yourself yourselves s t also said says say
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

_APOSTROPHES = str.maketrans("", "", "'`\u2018\u2019\u02bc")
_ACRONYM = re.compile(r"\b(?:[^\W\d_]\.){2,}")
_TOKEN = re.compile(r"[^\W_]+")
# ASCII fast path: letters and digits are kept, apostrophes deleted, everything else separates tokens
# (the same tokens as ``_TOKEN`` on ASCII text, where ``[^\W_]`` is ``[A-Za-z0-9]``).
_ASCII_TABLE = str.maketrans(
    {chr(c): (None if chr(c) in "'`" else chr(c) if chr(c).isalnum() else " ") for c in range(128)}
)


def normalise_text(text: str) -> str:
    """Return ``text`` NFKC-normalised, case-folded, with apostrophes removed and acronyms collapsed."""
    folded = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()
    folded = folded.translate(_APOSTROPHES)
    if "." in folded:
        folded = _ACRONYM.sub(lambda m: m.group(0).replace(".", "") + " ", folded)
    return folded


def tokenize(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Split ``text`` into normalised unigram tokens (see the module docstring)."""
    folded = normalise_text(text)
    tokens = folded.translate(_ASCII_TABLE).split() if folded.isascii() else _TOKEN.findall(folded)
    if drop_stopwords:
        return [t for t in tokens if t not in STOPWORDS]
    return tokens


# Batch tokenising joins the texts with SEPARATOR (NUL), which becomes a token of its own: one pass
# of each string method for the whole batch.
SEPARATOR: Final = "\x00"


def token_stream(texts: Sequence[str]) -> list[str]:
    """The tokens of every text with stop words kept, each text's tokens followed by ``SEPARATOR``.

    ``SEPARATOR`` is never a token of a text. Dropping it and the stop words from each text's part
    gives exactly ``tokenize(text)``.
    """
    stream: list[str] = []
    run: list[str] = []  # consecutive ASCII texts, tokenised in one pass
    for text in texts:
        if text.isascii() and SEPARATOR not in text:
            run.append(text)
            continue
        if run:
            stream.extend(_ascii_stream(run))
            run = []
        # Non-ASCII text takes per-text rules (NFKC, casefold); a NUL in a text would be ambiguous.
        stream.extend(tokenize(text, drop_stopwords=False))
        stream.append(SEPARATOR)
    if run:
        stream.extend(_ascii_stream(run))
    return stream


# The ASCII rules of normalise_text + tokenize on bytes, whose translate works from a 256-byte
# table (a str translate looks every character up in a dict): lower-case, drop apostrophes,
# collapse acronyms, then letters and digits are kept, NUL (SEPARATOR) too, and all else separates.
_ACRONYM_BYTES = re.compile(rb"\b(?:[A-Za-z]\.){2,}")
_BYTES_TABLE = bytes(c if chr(c).isalnum() or c == 0 else 32 for c in range(256))


def _collapse_acronym(match: re.Match[bytes]) -> bytes:
    return match.group(0).replace(b".", b"") + b" "


def _ascii_stream(texts: list[str]) -> list[str]:
    # The acronym rule cannot cross a text boundary: NUL is neither a letter nor a dot.
    data = (SEPARATOR.join(texts) + SEPARATOR).encode("ascii").lower().translate(None, b"'`")
    if b"." in data:
        data = _ACRONYM_BYTES.sub(_collapse_acronym, data)
    return data.replace(b"\x00", b" \x00 ").translate(_BYTES_TABLE).decode("ascii").split()


def tokenize_many(texts: Sequence[str], *, drop_stopwords: bool = True) -> list[list[str]]:
    """``[tokenize(t, drop_stopwords=...) for t in texts]``, faster for many short texts."""
    out: list[list[str]] = []
    current: list[str] = []
    stop = STOPWORDS if drop_stopwords else frozenset()
    for token in token_stream(texts):
        if token == SEPARATOR:
            out.append(current)
            current = []
        elif token not in stop:
            current.append(token)
    return out
