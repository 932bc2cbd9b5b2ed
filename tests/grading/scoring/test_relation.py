"""MIRAI relation metrics: sanitisation, P/R/F1 conventions, class mapping, KL, macro average."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.relation import (
    BINARY_CLASSES,
    KL_EPSILON,
    QUAD_CLASSES,
    RelationAnswer,
    binary_class,
    class_distribution,
    kl_divergence,
    macro_average_relation,
    prf,
    quad_class,
    relation_answer_from_codes,
    sanitize_relation,
    score_relation,
    score_relation_answers,
    validate_cameo_table,
)
from tests.grading.scoring.cameo_table import CAMEO_TABLE

FIRST_LEVEL = sorted(CAMEO_TABLE)


def test_fixture_table_is_valid() -> None:
    validate_cameo_table(CAMEO_TABLE)
    assert [f"{i:02d}" for i in range(1, 21)] == FIRST_LEVEL
    with pytest.raises(ValueError, match="not its second-level codes"):
        validate_cameo_table({"01": frozenset({"010", "020"})})
    with pytest.raises(ValueError, match="not a first-level"):
        validate_cameo_table({"21": frozenset()})


# ---------------------------------------------------------------------------------------------
# Sanitisation
# ---------------------------------------------------------------------------------------------


def test_invalid_keys_are_dropped_with_their_children() -> None:
    answer = sanitize_relation({"99": ["991"], "1": ["010"], "03": ["036"]}, CAMEO_TABLE)
    assert answer.first_level == {"03"}
    assert answer.second_level == {"036"}


def test_children_under_the_wrong_parent_are_dropped() -> None:
    answer = sanitize_relation({"03": ["036", "042", "0361", "03", "999", 36]}, CAMEO_TABLE)
    assert answer.first_level == {"03"}
    assert answer.second_level == {"036"}


def test_valid_key_with_empty_list_counts() -> None:
    answer = sanitize_relation({"04": [], "17": None, "19": "190"}, CAMEO_TABLE)
    assert answer.first_level == {"04", "17", "19"}
    assert answer.second_level == frozenset()
    gold = RelationAnswer(frozenset({"04"}), frozenset({"042"}))
    assert score_relation({"04": []}, gold, CAMEO_TABLE).first_level.f1 == pytest.approx(1.0)


def test_duplicates_collapse() -> None:
    answer = sanitize_relation({"04": ["042", "042", "043"]}, CAMEO_TABLE)
    assert answer.second_level == {"042", "043"}


@pytest.mark.parametrize("raw", [None, [], "03", 3, ["03", "036"]])
def test_non_mapping_sanitises_to_empty(raw: object) -> None:
    assert sanitize_relation(raw, CAMEO_TABLE) == RelationAnswer(frozenset(), frozenset())


def test_strict_mode_reports_every_problem() -> None:
    with pytest.raises(ValueError) as info:
        sanitize_relation({"99": [], "03": ["042", "036"], "04": "042"}, CAMEO_TABLE, strict=True)
    text = str(info.value)
    assert "'99'" in text and "'042' is not a second-level code of '03'" in text and "not a list" in text
    with pytest.raises(ValueError):
        sanitize_relation(["03"], CAMEO_TABLE, strict=True)


def test_gold_from_event_codes() -> None:
    answer = relation_answer_from_codes(["036", "0361", "042", "17"], CAMEO_TABLE)
    assert answer.first_level == {"03", "04", "17"}
    assert answer.second_level == {"036", "042"}
    with pytest.raises(ValueError, match="unknown CAMEO code"):
        relation_answer_from_codes(["049"], CAMEO_TABLE)
    with pytest.raises(ValueError, match="unknown CAMEO code"):
        relation_answer_from_codes(["21"], CAMEO_TABLE)


# ---------------------------------------------------------------------------------------------
# P/R/F1 and classes
# ---------------------------------------------------------------------------------------------


def test_prf_empty_conventions() -> None:
    empty: frozenset[str] = frozenset()
    assert prf(empty, frozenset({"01"})) == prf(empty, empty)
    s = prf(empty, frozenset({"01"}))
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    s = prf(frozenset({"01"}), empty)
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    s = prf(frozenset({"01", "02"}), frozenset({"01"}))
    assert (s.precision, s.recall) == (0.5, 1.0)
    assert s.f1 == pytest.approx(2 / 3)


def test_empty_prediction_scores_zero() -> None:
    gold = sanitize_relation({"03": ["036"]}, CAMEO_TABLE, strict=True)
    score = score_relation({}, gold, CAMEO_TABLE)
    assert score.first_level.f1 == 0.0 and score.second_level.f1 == 0.0
    # pred distribution is all zeros -> eps; KL = (1 + eps) ln((1 + eps) / eps) + eps ln(1)
    assert score.binary_kl == pytest.approx((1 + 1e-10) * math.log((1 + 1e-10) / 1e-10))


def test_class_mapping_boundaries() -> None:
    assert [binary_class(c) for c in ("01", "08", "09", "20")] == ["mediation", "mediation", "conflict", "conflict"]
    assert [quad_class(c) for c in ("01", "04", "05", "08", "09", "16", "17", "20")] == [
        "verbal cooperation",
        "verbal cooperation",
        "material cooperation",
        "material cooperation",
        "verbal conflict",
        "verbal conflict",
        "material conflict",
        "material conflict",
    ]
    with pytest.raises(ValueError):
        quad_class("21")
    with pytest.raises(ValueError):
        binary_class("00")


def test_distribution_counts_distinct_first_level_codes() -> None:
    assert class_distribution(["03", "04", "06", "17"], QUAD_CLASSES, False) == [0.5, 0.25, 0.0, 0.25]
    assert class_distribution(["03", "03", "17"], BINARY_CLASSES, True) == [0.5, 0.5]
    assert class_distribution([], BINARY_CLASSES, True) == [0.0, 0.0]


def test_kl_uses_eps_and_natural_log() -> None:
    assert KL_EPSILON == 1e-10
    assert kl_divergence([0.5, 0.5], [0.5, 0.5]) == 0.0
    assert kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2), abs=1e-8)  # eps terms ~ -2e-9
    with pytest.raises(ValueError):
        kl_divergence([1.0], [0.5, 0.5])


def test_macro_average() -> None:
    assert macro_average_relation([]) is None
    gold = sanitize_relation({"03": ["036"], "04": ["042"]}, CAMEO_TABLE, strict=True)
    perfect = score_relation({"03": ["036"], "04": ["042"]}, gold, CAMEO_TABLE)
    empty = score_relation({}, gold, CAMEO_TABLE)
    avg = macro_average_relation([perfect, empty])
    assert avg is not None
    assert avg.first_level.f1 == pytest.approx(0.5)
    assert avg.second_level.recall == pytest.approx(0.5)
    assert avg.binary_kl == pytest.approx((perfect.binary_kl + empty.binary_kl) / 2)


# ---------------------------------------------------------------------------------------------
# Property tests, including an independent oracle that follows the MIRAI script step by step
# ---------------------------------------------------------------------------------------------


def _oracle(raw: dict[str, list[str]], gold: dict[str, list[str]]) -> tuple[float, ...]:
    """Straight-line re-statement of the MIRAI evaluation for one question (lists, counts, eps)."""
    first_codes = [c for c in CAMEO_TABLE]
    second_codes = [c for children in CAMEO_TABLE.values() for c in children]
    pred_first = list({k for k in raw if k in first_codes})
    pred_second = list({c for k in pred_first for c in raw[k] if c[:2] == k and c in second_codes})
    gold_first = list(gold)
    gold_second = [c for v in gold.values() for c in v]

    def metrics(pred: Sequence[str], gold_list: Sequence[str]) -> tuple[float, float, float]:
        tp = sum(1 for p in pred if p in gold_list)
        fp = len(pred) - tp
        fn = sum(1 for g in gold_list if g not in pred)
        p = tp / (tp + fp) if tp + fp > 0 else 0
        r = tp / (tp + fn) if tp + fn > 0 else 0
        f = 2 * p * r / (p + r) if p + r > 0 else 0
        return p, r, f

    def kl(pred_cls: list[str], gold_cls: list[str], classes: Sequence[str]) -> float:
        pd = {c: (pred_cls.count(c) / len(pred_cls) if pred_cls else 0) + 1e-10 for c in classes}
        gd = {c: (gold_cls.count(c) / len(gold_cls) if gold_cls else 0) + 1e-10 for c in classes}
        return sum(gd[c] * math.log(gd[c] / pd[c]) for c in classes)

    return (
        *metrics(pred_first, gold_first),
        *metrics(pred_second, gold_second),
        kl([binary_class(c) for c in pred_first], [binary_class(c) for c in gold_first], BINARY_CLASSES),
        kl([quad_class(c) for c in pred_first], [quad_class(c) for c in gold_first], QUAD_CLASSES),
    )


any_code = st.text(alphabet="0123456789", min_size=1, max_size=4)
first_level_codes = st.sampled_from(FIRST_LEVEL)


@st.composite
def raw_predictions(draw: st.DrawFn) -> dict[str, list[str]]:
    keys = draw(st.lists(st.one_of(first_level_codes, any_code), max_size=6, unique=True))
    result: dict[str, list[str]] = {}
    for key in keys:
        children = sorted(CAMEO_TABLE.get(key, frozenset()))
        valid = st.sampled_from(children) if children else any_code
        result[key] = draw(st.lists(st.one_of(valid, any_code, st.sampled_from(["036", "042", "190"])), max_size=5))
    return result


@st.composite
def gold_answers(draw: st.DrawFn) -> dict[str, list[str]]:
    keys = draw(st.lists(first_level_codes, min_size=1, max_size=5, unique=True))
    return {k: draw(st.lists(st.sampled_from(sorted(CAMEO_TABLE[k])), max_size=3, unique=True)) for k in keys}


@given(raw_predictions(), gold_answers())
def test_matches_mirai_oracle(raw: dict[str, list[str]], gold: dict[str, list[str]]) -> None:
    s = score_relation(raw, sanitize_relation(gold, CAMEO_TABLE, strict=True), CAMEO_TABLE)
    ours = (
        s.first_level.precision,
        s.first_level.recall,
        s.first_level.f1,
        s.second_level.precision,
        s.second_level.recall,
        s.second_level.f1,
        s.binary_kl,
        s.quad_kl,
    )
    assert ours == pytest.approx(_oracle(raw, gold), rel=1e-12, abs=1e-12)


@given(raw_predictions(), gold_answers())
def test_bounds(raw: dict[str, list[str]], gold: dict[str, list[str]]) -> None:
    s = score_relation(raw, sanitize_relation(gold, CAMEO_TABLE, strict=True), CAMEO_TABLE)
    for block in (s.first_level, s.second_level, s.binary, s.quad):
        for value in (block.precision, block.recall, block.f1):
            assert 0.0 <= value <= 1.0 + 1e-12
    assert s.binary_kl >= -1e-8
    assert s.quad_kl >= -1e-8


@given(raw_predictions(), gold_answers())
def test_perfect_forecast_scores_best(raw: dict[str, list[str]], gold: dict[str, list[str]]) -> None:
    answer = sanitize_relation(gold, CAMEO_TABLE, strict=True)
    perfect = score_relation_answers(answer, answer)
    other = score_relation(raw, answer, CAMEO_TABLE)
    assert perfect.first_level.f1 == pytest.approx(1.0)
    if answer.second_level:
        assert perfect.second_level.f1 == pytest.approx(1.0)
    assert perfect.binary_kl == 0.0 and perfect.quad_kl == 0.0
    assert perfect.first_level.f1 >= other.first_level.f1 - 1e-9
    assert perfect.second_level.f1 >= other.second_level.f1 - 1e-9
    assert perfect.binary_kl <= other.binary_kl + 1e-8
    assert perfect.quad_kl <= other.quad_kl + 1e-8
