"""The shipped CAMEO (MIRAI appendix E.2) and ISO 3166-1 alpha-3 tables."""

from __future__ import annotations

import re

from ingestion.reference_data import (
    cameo_children,
    cameo_first_level,
    cameo_name,
    cameo_parent,
    cameo_second_level,
    iso3_countries,
)


def test_cameo_first_level_has_the_twenty_root_codes() -> None:
    first = cameo_first_level()
    assert list(first) == [f"{i:02d}" for i in range(1, 21)]
    assert first["01"] == "Make public statement"
    assert first["04"] == "Consult"
    assert first["20"] == "Engage in unconventional mass violence"


def test_cameo_second_level_matches_the_paper() -> None:
    second = cameo_second_level()
    assert len(second) == 149
    assert all(re.fullmatch(r"\d{3}", code) for code in second)
    assert second["036"] == "Express intent to meet or negotiate"
    assert second["042"] == "Make a visit"
    assert second["204"] == "Use weapons of mass destruction"
    # The paper lists exactly 019 as the last child of 01 and 129 for 12; nothing invented beyond it.
    assert "01A" not in second and "200" in second and "205" not in second


def test_children_and_parent_are_consistent() -> None:
    children = cameo_children()
    assert set(children) == set(cameo_first_level())
    assert all(children[p] for p in children)
    assert children["04"] == frozenset({"040", "041", "042", "043", "044", "045", "046"})
    assert sum(len(c) for c in children.values()) == len(cameo_second_level())
    for parent, codes in children.items():
        for code in codes:
            assert cameo_parent(code) == parent
    assert cameo_parent("04") is None
    assert cameo_parent("999") is None
    assert cameo_name("04") == "Consult"
    assert cameo_name("043") == "Host a visit"
    assert cameo_name("xyz") is None


def test_iso3_countries() -> None:
    countries = iso3_countries()
    # 249 officially assigned codes plus the user-assigned XKX that MIRAI uses for Kosovo.
    assert len(countries) == 250
    assert all(re.fullmatch(r"[A-Z]{3}", code) for code in countries)
    assert countries["AUS"] == "Australia"
    assert countries["CHN"] == "China"
    assert countries["XKX"] == "Kosovo"
    assert "ZZZ" not in countries


def test_tables_are_cached() -> None:
    assert cameo_first_level() is cameo_first_level()
    assert iso3_countries() is iso3_countries()
