"""The numbers a sentence states, in every common written form (pure; no Django).

:func:`read_numbers` is the one reader of numbers in event and article text: the matcher's rules and
the learned decision's features compare the numbers two events state, the trap generator changes
them, the hindsight builder finds the level a quantity question starts from. It reads, and never
raises on any text:

* plain and decimal numbers: ``12``, ``12.5``, ``12.5%`` (the sign of a percentage or a currency
  changes nothing: ``US$4,644.56`` is 4644.56);
* thousands grouped by commas, full stops, spaces, thin or no-break spaces, apostrophes:
  ``1,234``, ``4,644.56``, ``1,234,567.89``, ``1.234.567``, ``53 000``, ``1 234 567``,
  ``9'000``; numbers that spaces separate without grouping thousands are read one by one
  (``in 2024 100 people``);
* a decimal comma: ``1.234,56`` (1234.56), ``12,5`` (12.5); a single comma before exactly three
  digits groups thousands (``1,234`` is 1234), as in English;
* a scale written after the number is left to the words around it: ``$1.2bn`` and ``1.2 billion``
  are both 1.2, so the two spellings state the same number;
* ranges: ``10-12`` (a hyphen or an en dash) states 10 and 12;
* digits of other scripts (``٤٥`` is 45);
* with ``words=True``, English number words from *one* to *ninety* (``five hurt`` states 5); a
  scale word (*hundred*, *million*) is left to the number before it, as ``bn`` is.

A run of digits and separators that no rule above reads (``12.05.2024``, ``1,2,3``, ``3.14.15``:
dates, lists, version numbers) states no number, and neither does a value too large for a float.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Final

__all__ = ["NUMBER_WORDS", "read_numbers", "same_number"]

# Thousands separators besides the comma and the full stop: no-break, narrow no-break and thin spaces
# (a plain space or an apostrophe groups thousands only before exactly three digits).
_SPACES: Final = "\u00a0\u202f\u2009"
_APOSTROPHES: Final = "'\u2019"
# A run of digits with single separators inside (never at either end: "in 2026." ends with the year).
_RUN: Final = re.compile(rf"\d+(?:(?:[.,{_SPACES}]|[ {_APOSTROPHES}](?=\d{{3}}(?!\d)))\d+)*")
_WORD: Final = re.compile(r"[^\W\d_]+")
NUMBER_WORDS: Final[dict[str, float]] = {
    "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0,
    "eight": 8.0, "nine": 9.0, "ten": 10.0, "eleven": 11.0, "twelve": 12.0, "thirteen": 13.0,
    "fourteen": 14.0, "fifteen": 15.0, "sixteen": 16.0, "seventeen": 17.0, "eighteen": 18.0,
    "nineteen": 19.0, "twenty": 20.0, "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0,
    "seventy": 70.0, "eighty": 80.0, "ninety": 90.0,
}  # fmt: skip
_GROUPED: Final = re.compile(r"[0-9]{1,3}(?:X[0-9]{3})+")
# Two stated numbers within this share of each other are one figure reported twice (16 or 15 hurt).
SAME_NUMBER_TOLERANCE: Final = 0.1


def _ascii_digits(text: str) -> str:
    """Decimal digits of any script as ASCII digits (``_RUN`` matches only decimal digits)."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def _grouped(integer: str, separator: str) -> str | None:
    """``integer`` without its thousands ``separator`` when every group after the first has three
    digits (the first one to three), else None."""
    if _GROUPED.fullmatch(integer.replace(separator, "X")) is None:
        return None
    return integer.replace(separator, "")


def _values(run: str) -> tuple[float, ...]:
    """The value of one run of digits and separators (module docstring): one number, the numbers
    that spaces separate, or none when it is not a number."""
    text = _ascii_digits(run)
    for space in _SPACES + _APOSTROPHES:
        text = text.replace(space, " ")
    if " " in text:
        # Spaces group thousands ("1 234 567"); a decimal comma or point may follow the last group.
        cut = max(text.rfind(","), text.rfind("."))
        integer, fraction = (text[:cut], text[cut + 1 :]) if cut > 0 else (text, "")
        grouped = _grouped(integer, " ")
        if grouped is None:  # not thousands: numbers side by side
            return tuple(v for part in text.split(" ") for v in _values(part))
        if cut > 0 and not fraction.isdigit():
            return ()
        text = f"{grouped}.{fraction}" if cut > 0 else grouped
    commas, stops = text.count(","), text.count(".")
    if commas and stops:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        head, _, fraction = text.rpartition(decimal)
        grouped = _grouped(head, "." if decimal == "," else ",")
        if grouped is None:
            return ()
        text = f"{grouped}.{fraction}"
    elif commas + stops == 1:
        # One mark: a full stop is a decimal point; a comma groups thousands when exactly three
        # digits follow it and at most three precede it, else it is a decimal comma.
        head, mark, tail = text.partition("," if commas else ".")
        thousands = mark == "," and len(tail) == 3 and len(head) <= 3
        text = f"{head}{tail}" if thousands else f"{head}.{tail}"
    elif commas or stops:
        grouped = _grouped(text, "," if commas else ".")
        if grouped is None:
            return ()
        text = grouped
    try:
        value = float(text)
    except ValueError:
        return ()
    return (value,) if math.isfinite(value) else ()


def read_numbers(text: str, *, words: bool = False) -> tuple[float, ...]:
    """The distinct numbers ``text`` states, in ascending order; with ``words``, English number
    words too (module docstring)."""
    found = {v for m in _RUN.finditer(text) for v in _values(m.group(0))}
    if words:
        found.update(NUMBER_WORDS[w] for w in _WORD.findall(text.lower()) if w in NUMBER_WORDS)
    return tuple(sorted(found))


def same_number(x: float, y: float) -> bool:
    """Whether two stated numbers are one figure reported twice (:data:`SAME_NUMBER_TOLERANCE`)."""
    return abs(x - y) <= SAME_NUMBER_TOLERANCE * max(abs(x), abs(y))
