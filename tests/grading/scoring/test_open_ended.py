"""OpenForecast LRAE counting, without-retrieval scores, lexical judge, prompts and response parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grading.scoring.open_ended import (
    DEFAULT_LEXICAL_THRESHOLD,
    STAGE1_ARGUMENT_PROMPT,
    STAGE1_LIST_PROMPT,
    STAGE2_EVIDENCE_PROMPT,
    PredictionVerdict,
    count_verdicts,
    format_label_list,
    lexical_argument_match,
    lexical_judge,
    macro_average_open_ended,
    parse_stage1_response,
    parse_yes_no,
    render_argument_prompt,
    render_stage1_prompt,
    render_stage2_prompt,
    score_open_ended,
)

V = PredictionVerdict


def test_hand_computed_example() -> None:
    # 4 gold labels; 6 atomic predictions.
    verdicts = [
        V(0),  # TP (label 0)
        V(1),  # TP (label 1)
        V(0),  # duplicate of label 0: neither TP nor FP
        V(None, supported=True),  # MTP
        V(None, supported=False),  # FP
        V(None),  # not judged in stage 2 -> FP
    ]
    score = score_open_ended(verdicts, n_gold=4)
    c = score.counts
    assert (c.tp, c.mtp, c.fp, c.fn, c.duplicates) == (2, 1, 2, 2, 1)
    assert score.precision == pytest.approx(3 / 5)  # (TP+MTP)/(TP+MTP+FP)
    assert score.recall == pytest.approx(3 / 5)  # (TP+MTP)/(TP+MTP+FN)
    assert score.f1 == pytest.approx(0.6)
    # Without retrieval (stage 1 only): the MTP is an FP -> P = 2/5, R = 2/4.
    assert score.precision_without_retrieval == pytest.approx(0.4)
    assert score.recall_without_retrieval == pytest.approx(0.5)
    assert score.f1_without_retrieval == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    assert score.judge == "llm"


def test_second_example_all_labels_found() -> None:
    score = score_open_ended([V(2), V(1), V(0), V(None, True), V(None, True)], n_gold=3)
    assert score.precision == 1.0
    assert score.recall == 1.0
    assert score.precision_without_retrieval == pytest.approx(3 / 5)
    assert score.recall_without_retrieval == 1.0
    assert score.f1_without_retrieval == pytest.approx(0.75)


def test_tp_counts_distinct_labels() -> None:
    score = score_open_ended([V(0), V(0), V(0)], n_gold=2)
    assert score.counts.tp == 1
    assert score.counts.fn == 1
    assert score.counts.duplicates == 2
    assert score.precision == 1.0
    assert score.recall == 0.5


def test_empty_prediction_list_scores_zero() -> None:
    score = score_open_ended([], n_gold=3)
    assert (score.precision, score.recall, score.f1) == (0.0, 0.0, 0.0)
    assert score.counts.fn == 3
    assert (score.precision_without_retrieval, score.recall_without_retrieval) == (0.0, 0.0)


def test_empty_gold_list() -> None:
    score = score_open_ended([V(None, True), V(None, False)], n_gold=0)
    assert score.precision == 0.5
    assert score.recall == 1.0  # (0+1)/(0+1+0)
    assert score.recall_without_retrieval == 0.0
    nothing = score_open_ended([], n_gold=0)
    assert (nothing.precision, nothing.recall, nothing.f1) == (0.0, 0.0, 0.0)


def test_invalid_gold_index() -> None:
    with pytest.raises(ValueError, match="out of range"):
        count_verdicts([V(3)], n_gold=3)
    with pytest.raises(ValueError, match="out of range"):
        count_verdicts([V(-1)], n_gold=3)
    with pytest.raises(ValueError):
        count_verdicts([], n_gold=-1)


def test_macro_average_and_judges_never_mixed() -> None:
    a = score_open_ended([V(0)], n_gold=1)
    b = score_open_ended([V(None)], n_gold=1)
    avg = macro_average_open_ended([a, b])
    assert avg is not None
    assert avg.n == 2
    assert avg.f1 == pytest.approx(0.5)
    assert avg.precision == pytest.approx(0.5)
    assert avg.judge == "llm"
    assert macro_average_open_ended([]) is None
    lexical = score_open_ended([V(0)], n_gold=1, judge="lexical")
    with pytest.raises(ValueError, match="different judges"):
        macro_average_open_ended([a, lexical])


# ---------------------------------------------------------------------------------------------
# Lexical judge
# ---------------------------------------------------------------------------------------------


def test_lexical_judge_matches_best_label_over_threshold() -> None:
    gold = ["Pakistan launches a military offensive against TTP", "Afghanistan denies harbouring militants"]
    predictions = [
        "The Pakistani military launches an offensive against the TTP",
        "Afghanistan denies harbouring TTP militants",
        "Oil prices rise sharply",
    ]
    verdicts = lexical_judge(predictions, gold)
    assert [v.gold_index for v in verdicts] == [0, 1, None]
    assert all(v.supported is None for v in verdicts)
    score = score_open_ended(verdicts, len(gold), judge="lexical")
    assert score.precision == pytest.approx(2 / 3)
    assert score.precision == score.precision_without_retrieval


def test_lexical_threshold_is_inclusive() -> None:
    assert DEFAULT_LEXICAL_THRESHOLD == 0.5
    # token F1("alpha beta", "alpha gamma") = 2 * 1 / (2 + 2) = 0.5 exactly
    assert lexical_judge(["alpha beta"], ["alpha gamma"])[0].gold_index == 0
    assert lexical_judge(["alpha beta"], ["alpha gamma"], threshold=0.51)[0].gold_index is None
    # ties go to the lowest index
    assert lexical_judge(["alpha beta"], ["alpha gamma", "beta delta"])[0].gold_index == 0
    with pytest.raises(ValueError):
        lexical_judge(["a"], ["b"], threshold=0.0)


def test_lexical_judge_empty_inputs() -> None:
    assert lexical_judge([], ["x"]) == []
    assert lexical_judge(["x"], []) == [PredictionVerdict(None)]


def test_lexical_argument_match() -> None:
    assert lexical_argument_match("Joe Biden", "Biden") is True  # F1 = 2/3
    assert lexical_argument_match("Donald Trump", "Biden") is False


# ---------------------------------------------------------------------------------------------
# Prompts (OpenForecast, Table 13) and response parsing
# ---------------------------------------------------------------------------------------------


def test_prompt_templates_are_the_papers() -> None:
    assert STAGE1_ARGUMENT_PROMPT.startswith("Question: {question} \nLable: {label} \n Prediction: {prediction}")
    assert STAGE1_ARGUMENT_PROMPT.endswith('The answer (Yes or No) is: "')
    assert STAGE1_LIST_PROMPT.startswith(
        "Following natural language inference, please judge whether the prediction is in accord with the given labels."
    )
    assert '"According to the given information, the answer is Yes, and the index is: (1)"' in STAGE1_LIST_PROMPT
    assert STAGE1_LIST_PROMPT.endswith("\nThe labels are {label}\n The prediction is {prediction} The answer is:")
    assert "If certain content from label can clearly demonstrate the prediction" in STAGE2_EVIDENCE_PROMPT
    assert STAGE2_EVIDENCE_PROMPT.endswith('The prediction is "{prediction}" The answer (Yes or No) is:')


def test_render_prompts() -> None:
    prompt = render_stage1_prompt(["A happens", "B happens"], "A will happen")
    assert "The labels are (1) A happens\n(2) B happens\n" in prompt
    assert "The prediction is A will happen The answer is:" in prompt
    assert format_label_list([]) == ""
    prompt2 = render_stage2_prompt(["chunk one", "chunk two"], "A will happen")
    assert "The label is chunk one\nchunk two\n" in prompt2
    assert '"A will happen"' in prompt2
    prompt3 = render_argument_prompt("Who?", "Biden", "Joe Biden")
    assert prompt3.startswith("Question: Who? \nLable: Biden \n Prediction: Joe Biden \n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("According to the given information, the answer is Yes, and the index is: (2)", 1),
        ("Yes, index 1", 0),
        ("yes (3)", 2),
        ("Yes, and the index is: (4)", None),  # out of range for 3 labels
        ("Yes.", None),  # no index
        ("No", None),
        ("The answer is no. (1)", None),
        ("", None),
        # Full-width brackets and digits, as judges answering in CJK contexts write them.
        ("Yes\uff082\uff09", 1),
        ("\uff39\uff45\uff53\uff0c\uff08\uff13\uff09", 2),
        ("Yes, the index is \uff08\uff14\uff09", None),  # out of range, full-width or not
    ],
)
def test_parse_stage1_response(text: str, expected: int | None) -> None:
    assert parse_stage1_response(text, n_labels=3) == expected


def test_parse_yes_no() -> None:
    assert parse_yes_no(' Yes"') is True
    assert parse_yes_no("no, the label does not say so") is False
    assert parse_yes_no("Not sure") is None
    assert parse_yes_no("Nobody knows; yes") is True
    assert parse_yes_no("\uff2e\uff4f\u3002") is False  # full-width "No."


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


@st.composite
def verdict_lists(draw: st.DrawFn) -> tuple[list[PredictionVerdict], int]:
    n_gold = draw(st.integers(min_value=0, max_value=8))
    index = st.integers(min_value=0, max_value=n_gold - 1) if n_gold else st.none()
    verdict = st.builds(PredictionVerdict, st.one_of(st.none(), index), st.sampled_from([None, True, False]))
    return draw(st.lists(verdict, max_size=12)), n_gold


@given(verdict_lists())
def test_scores_in_unit_interval_and_retrieval_never_hurts(case: tuple[list[PredictionVerdict], int]) -> None:
    verdicts, n_gold = case
    s = score_open_ended(verdicts, n_gold)
    for value in (s.precision, s.recall, s.f1, s.precision_without_retrieval, s.recall_without_retrieval):
        assert 0.0 <= value <= 1.0
    assert s.precision >= s.precision_without_retrieval - 1e-12
    assert s.recall >= s.recall_without_retrieval - 1e-12
    c = s.counts
    assert c.tp + c.mtp + c.fp + c.duplicates == len(verdicts)
    assert c.tp + c.fn == n_gold


@given(st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=30), min_size=1, max_size=6, unique=True))
def test_perfect_prediction_scores_best(gold: list[str]) -> None:
    perfect = score_open_ended([PredictionVerdict(i) for i in range(len(gold))], len(gold))
    assert (perfect.precision, perfect.recall, perfect.f1) == (1.0, 1.0, 1.0)
    assert perfect.f1_without_retrieval == 1.0


def test_repeated_predictions_count_once() -> None:
    # Four wordings of one event that a lenient judge matched to four similar gold events.
    predictions = [
        "The central bank raises interest rates",
        "Central bank raises interest rates",
        "The central bank raises its interest rates",
        "central bank raises rates",
        "Parliament passes the budget",
    ]
    verdicts = [PredictionVerdict(gold_index=i) for i in range(4)] + [PredictionVerdict(gold_index=None)]
    naive = score_open_ended(verdicts, 5, "lexical")
    assert (naive.counts.tp, naive.precision) == (4, 0.8)
    counted = score_open_ended(verdicts, 5, "lexical", predictions=predictions)
    assert (counted.counts.tp, counted.counts.duplicates, counted.counts.fp) == (1, 3, 1)
    assert (counted.precision, counted.recall) == (0.5, 0.2)
    with pytest.raises(ValueError, match="4 predictions for 5 verdicts"):
        score_open_ended(verdicts, 5, "lexical", predictions=predictions[:4])
