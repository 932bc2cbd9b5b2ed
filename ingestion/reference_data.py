"""Reference tables shipped as data: the CAMEO relation ontology and ISO 3166-1 alpha-3 countries.

Pure module (no Django imports) so validators, graders and pure maths can use it anywhere.
The CAMEO table is exactly the one printed in the MIRAI paper's appendix E.2, because relation
questions are graded against MIRAI-style gold sets; codes outside it are not valid answers.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"


def _load(name: str) -> dict[str, Any]:
    with (DATA_DIR / name).open(encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


@cache
def cameo_first_level() -> dict[str, str]:
    """Two-digit CAMEO code -> name ("01" .. "20")."""
    return dict(_load("cameo.json")["first_level"])


@cache
def cameo_second_level() -> dict[str, str]:
    """Three-digit CAMEO code -> name; each code's first two digits are its parent."""
    return dict(_load("cameo.json")["second_level"])


@cache
def cameo_children() -> dict[str, frozenset[str]]:
    """First-level code -> the set of its second-level codes."""
    children: dict[str, set[str]] = {code: set() for code in cameo_first_level()}
    for code in cameo_second_level():
        children[code[:2]].add(code)
    return {parent: frozenset(codes) for parent, codes in children.items()}


def cameo_parent(code: str) -> str | None:
    """The first-level parent of a second-level code; None for unknown or first-level codes."""
    if code in cameo_second_level():
        return code[:2]
    return None


def cameo_name(code: str) -> str | None:
    """Name of a first- or second-level code, None if the code is not in the table."""
    return cameo_first_level().get(code) or cameo_second_level().get(code)


@cache
def iso3_countries() -> dict[str, str]:
    """ISO 3166-1 alpha-3 code -> short English name (plus the user-assigned XKX for Kosovo)."""
    data = _load("iso3166_alpha3.json")
    return {**data["codes"], **data.get("user_assigned", {})}
