"""The worked examples of MIRAI's appendix (MIRAI, Appendix F.1-F.4 of the ICLR version; F.1/F.2 are Appendix L.1/L.2 of the arXiv version).

The paper lists each example's final answer and ground truth but does not print per-example
scores, so the expected P/R/F1 and KL values below are hand-computed from the definitions (and the
official evaluation script's conventions); closed forms are given next to each literal. MIRAI
prints P/R/F1 x100; Hindsight keeps them as shares, so the checks multiply by 100.
"""

from __future__ import annotations

import math

import pytest

from grading.scoring.relation import RelationScore, macro_average_relation, sanitize_relation, score_relation
from tests.grading.scoring.cameo_table import CAMEO_TABLE

EPS = 1e-10

# (2023-11-03, AUS, ?, CHN): both GPT-4o examples share this ground truth.
GOLD_AUS_CHN = {"03": ["036"], "04": ["042"], "17": ["172"]}
# (2024-02-08, PNG, ?, AUS): both GPT-4o-mini examples share this ground truth.
GOLD_PNG_AUS = {"01": ["010"], "05": ["051"]}

F1_GPT4O_CODE_BLOCK = {"03": ["031", "036"], "04": ["040", "042", "043", "046"], "06": ["061"], "17": ["173"]}
F2_GPT4O_SINGLE_FUNCTION = {"03": ["036"], "04": ["040", "042", "043", "046"], "06": ["061"]}
F3_GPT4O_MINI_CODE_BLOCK = {"03": ["036"], "04": ["042"], "05": ["057"]}
F4_GPT4O_MINI_SINGLE_FUNCTION = {"03": ["036"], "04": ["042", "043"], "05": ["057"]}


def _score(prediction: dict[str, list[str]], gold: dict[str, list[str]]) -> RelationScore:
    return score_relation(prediction, sanitize_relation(gold, CAMEO_TABLE, strict=True), CAMEO_TABLE)


def test_f1_gpt4o_code_block() -> None:
    s = _score(F1_GPT4O_CODE_BLOCK, GOLD_AUS_CHN)
    # first level: pred {03,04,06,17}, gold {03,04,17}: TP 3, FP 1, FN 0
    assert 100 * s.first_level.precision == pytest.approx(75.0)
    assert 100 * s.first_level.recall == pytest.approx(100.0)
    assert 100 * s.first_level.f1 == pytest.approx(85.714285714)  # 600/7
    # second level: 8 predicted codes, gold {036,042,172}: TP 2 (036, 042)
    assert 100 * s.second_level.precision == pytest.approx(25.0)
    assert 100 * s.second_level.recall == pytest.approx(66.666666667)
    assert 100 * s.second_level.f1 == pytest.approx(36.363636364)  # 400/11
    # binary: gold (2/3 mediation, 1/3 conflict), pred (3/4, 1/4)
    assert s.binary_kl == pytest.approx(0.017372000, abs=1e-8)  # 2/3 ln(8/9) + 1/3 ln(4/3)
    assert s.binary_kl == pytest.approx(2 / 3 * math.log(8 / 9) + 1 / 3 * math.log(4 / 3), abs=1e-8)
    # quad: gold (2/3 VC, 0, 0, 1/3 MConf), pred (1/2 VC, 1/4 MC, 0, 1/4 MConf)
    assert s.quad_kl == pytest.approx(0.287682070, abs=1e-8)  # ln(4/3) (eps terms ~ -2e-9)
    assert 100 * s.binary.f1 == pytest.approx(100.0)
    assert 100 * s.quad.precision == pytest.approx(200 / 3)


def test_f2_gpt4o_single_function() -> None:
    s = _score(F2_GPT4O_SINGLE_FUNCTION, GOLD_AUS_CHN)
    # first level: pred {03,04,06}, gold {03,04,17}: TP 2, FP 1, FN 1
    assert 100 * s.first_level.precision == pytest.approx(66.666666667)
    assert 100 * s.first_level.recall == pytest.approx(66.666666667)
    assert 100 * s.first_level.f1 == pytest.approx(66.666666667)
    # second level: pred {036,040,042,043,046,061}, gold {036,042,172}: TP 2
    assert 100 * s.second_level.precision == pytest.approx(33.333333333)
    assert 100 * s.second_level.recall == pytest.approx(66.666666667)
    assert 100 * s.second_level.f1 == pytest.approx(44.444444444)  # 400/9
    # binary: pred all mediation (1, 0) vs gold (2/3, 1/3) -> the eps-smoothed zero dominates
    expected_bin = (2 / 3 + EPS) * math.log((2 / 3 + EPS) / (1 + EPS)) + (1 / 3 + EPS) * math.log((1 / 3 + EPS) / EPS)
    assert s.binary_kl == pytest.approx(7.038769477, abs=1e-8)
    assert s.binary_kl == pytest.approx(expected_bin, abs=1e-8)
    # quad: pred (2/3 VC, 1/3 MC, 0, 0) vs gold (2/3 VC, 0, 0, 1/3 MConf)
    assert s.quad_kl == pytest.approx(7.309079547, abs=1e-8)  # ~ 1/3 ln(1/(3 eps))


def test_f3_gpt4o_mini_code_block() -> None:
    s = _score(F3_GPT4O_MINI_CODE_BLOCK, GOLD_PNG_AUS)
    # first level: pred {03,04,05}, gold {01,05}: TP 1, FP 2, FN 1
    assert 100 * s.first_level.precision == pytest.approx(33.333333333)
    assert 100 * s.first_level.recall == pytest.approx(50.0)
    assert 100 * s.first_level.f1 == pytest.approx(40.0)
    # second level: pred {036,042,057}, gold {010,051}: no overlap
    assert (s.second_level.precision, s.second_level.recall, s.second_level.f1) == (0.0, 0.0, 0.0)
    # binary: everything is mediation on both sides
    assert s.binary_kl == pytest.approx(0.0, abs=1e-12)
    # quad: gold (1/2 VC, 1/2 MC), pred (2/3 VC, 1/3 MC): 1/2 ln(3/4) + 1/2 ln(3/2) = 1/2 ln(9/8)
    assert s.quad_kl == pytest.approx(0.058891518, abs=1e-8)
    assert s.quad_kl == pytest.approx(0.5 * math.log(9 / 8), abs=1e-8)


def test_f4_gpt4o_mini_single_function() -> None:
    s = _score(F4_GPT4O_MINI_SINGLE_FUNCTION, GOLD_PNG_AUS)
    assert 100 * s.first_level.precision == pytest.approx(33.333333333)
    assert 100 * s.first_level.recall == pytest.approx(50.0)
    assert 100 * s.first_level.f1 == pytest.approx(40.0)
    # second level: pred {036,042,043,057}, gold {010,051}: no overlap
    assert (s.second_level.precision, s.second_level.recall, s.second_level.f1) == (0.0, 0.0, 0.0)
    assert s.binary_kl == pytest.approx(0.0, abs=1e-12)
    assert s.quad_kl == pytest.approx(0.058891518, abs=1e-8)


def test_macro_average_of_the_four_examples() -> None:
    scores = [
        _score(F1_GPT4O_CODE_BLOCK, GOLD_AUS_CHN),
        _score(F2_GPT4O_SINGLE_FUNCTION, GOLD_AUS_CHN),
        _score(F3_GPT4O_MINI_CODE_BLOCK, GOLD_PNG_AUS),
        _score(F4_GPT4O_MINI_SINGLE_FUNCTION, GOLD_PNG_AUS),
    ]
    avg = macro_average_relation(scores)
    assert avg is not None
    assert 100 * avg.first_level.f1 == pytest.approx((600 / 7 + 200 / 3 + 40 + 40) / 4)
    assert 100 * avg.second_level.f1 == pytest.approx((400 / 11 + 400 / 9) / 4)
    assert 100 * avg.second_level.precision == pytest.approx((25 + 100 / 3) / 4)
    assert avg.binary_kl == pytest.approx((0.017372000 + 7.038769477) / 4, abs=1e-8)
    assert avg.quad_kl == pytest.approx((0.287682070 + 7.309079547 + 2 * 0.058891518) / 4, abs=1e-8)


def test_metric_section_example_answer_format() -> None:
    # MIRAI, Section 2.3 ("Evaluation metrics"): {"01": ["011", "012"], "02": ["023"]} is a well-formed answer.
    answer = sanitize_relation({"01": ["011", "012"], "02": ["023"]}, CAMEO_TABLE, strict=True)
    assert answer.first_level == {"01", "02"}
    assert answer.second_level == {"011", "012", "023"}
    assert answer.as_dict() == {"01": ["011", "012"], "02": ["023"]}
