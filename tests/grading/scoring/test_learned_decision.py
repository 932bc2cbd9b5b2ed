"""The learned event-pair decision: the facts read from a sentence, the traps and rewrites generated
from real sentences, the pair features, and the shipped model file, which the training command
reproduces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grading.benchmarks import load_real_pairs, traps
from grading.scoring.event_features import FEATURE_NAMES, load_parser, pair_features, text_facts
from grading.scoring.guarded import KEPT_GUARDS
from grading.scoring.learned_decision import MODEL_PATH, LearnedDecision, learned_decision
from grading.scoring.numbers import read_numbers

ROOT = Path(__file__).resolve().parents[3]


def sentence(text: str):  # type: ignore[no-untyped-def]
    return next(iter(load_parser()(text).sents))


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Gold closes at US$4,644.56 per ounce", (4644.56,)),
        ("Der Kurs steigt auf 1.234,56 Euro", (1234.56,)),
        ("Inflation reaches 12.5%, up from 1,8 in May", (1.8, 12.5)),
        ("The Senate votes 18-5; five abstain", (5.0, 18.0)),
        ("$1.2bn ... 1,234,567 and 3.4.5 and ,,, and 9'000", (1.2, 9000.0, 1234567.0)),
        ("No figure at all", ()),
    ],
)
def test_the_features_read_numbers_in_every_common_form_and_in_words(text: str, numbers: tuple[float, ...]) -> None:
    assert read_numbers(text, words=True) == numbers


def test_the_facts_of_a_sentence_name_its_verb_roles_and_negation() -> None:
    facts = text_facts("The United States Senate confirms Pam Bondi as Attorney General.")
    assert facts.verb == "confirm" and not facts.negated
    assert {"senate"} <= facts.agent and {"pam", "bondi"} <= facts.patient
    assert text_facts("The United States Senate does not confirm Pam Bondi.").negated
    assert text_facts("No one is killed in an airstrike on a boat in the Pacific Ocean.").negated
    passive = text_facts("Pam Bondi is confirmed by the United States Senate.")
    assert {"senate"} <= passive.agent and {"pam", "bondi"} <= passive.patient
    failed = text_facts("Carlos Alcaraz fails to defeat Alexander Zverev in the semifinal.")
    assert (failed.verb, failed.governing) == ("defeat", "fail")
    assert text_facts("Gold closes at US$4,644.56 per ounce, up five dollars.").numbers == (5.0, 4644.56)


def test_only_the_first_sentence_is_read() -> None:
    title = "Solenne Energy agrees to buy Everin Aerospace in an all-share deal."
    assert text_facts(title) == text_facts(f"{title} Solenne Energy and Everin Aerospace boards agreed terms.")


def test_traps_are_generated_from_the_parse_and_wordnet() -> None:
    s = sentence("The United States Senate confirms Pam Bondi as Attorney General.")
    assert traps.negate(s) == "The United States Senate does not confirm Pam Bondi as Attorney General."
    assert traps.negate(s, seed=2) == "The United States Senate refuses to confirm Pam Bondi as Attorney General."
    assert traps.swap_roles(sentence("Apple sues Samsung over patents.")) == "Samsung sues Apple over patents."
    assert traps.sibling_institution(s) is not None and "Senate" not in traps.sibling_institution(s)
    rises = sentence("The number of deaths in the California wildfires rises to 16.")
    assert traps.antonym_verb(rises) == "The number of deaths in the California wildfires descends to 16."
    assert traps.past_tense(rises) == "The number of deaths in the California wildfires rose to 16."
    assert traps.change_number(rises.text) == "The number of deaths in the California wildfires rises to 40."
    assert traps.change_number("The 2026 budget passes") is None  # a year is not a quantity
    assert traps.negate(sentence("The talks were not held.")) is None
    stuffed = traps.stuff(["Drevia and Kastor sign the ceasefire in Solbad", "Envoy Ilse Maren mediates talks"], seed=1)
    assert stuffed is not None and " the " not in f" {stuffed} " and len(stuffed.split()) >= 9
    shorter = traps.drop_last_modifier(sentence("Chad closes its border with Sudan after clashes with militias."))
    assert shorter == "Chad closes its border with Sudan."


def test_pair_features_see_negation_antonyms_crossed_roles_and_numbers() -> None:
    lexicon = learned_decision().lexicon

    def features(forecast: str, reference: str) -> dict[str, float]:
        row = pair_features(
            text_facts(forecast), text_facts(reference), cosine=0.9, bm25_rs=0.8, token_f1=0.8, lexicon=lexicon
        )
        return dict(zip(FEATURE_NAMES, row, strict=True))

    reference = "Apple sues Samsung over patents in California."
    assert features("Apple does not sue Samsung over patents in California.", reference)["negation_differs"] == 1.0
    assert features("Samsung sues Apple over patents in California.", reference)["roles_crossed"] == 1.0
    assert features("Apple sues Samsung over patents in California.", reference)["roles_crossed"] == 0.0
    assert features("Oil prices fall 5%.", "Oil prices rise 5%.")["antonym_verbs"] == 1.0
    assert features("The premier quits.", "The premier resigns.")["verbs_share_sense"] == 1.0
    assert features("The premier travels.", "The premier resigns.")["verbs_share_sense"] == 0.0
    quantity = features("Oil prices rise 18%.", "Oil prices rise 2%.")
    assert (quantity["numbers_both"], quantity["numbers_shared"]) == (1.0, 0.0)


def test_the_model_file_is_trees_numpy_evaluates_like_scikit_learn() -> None:
    model = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    assert model["features"] == list(FEATURE_NAMES) and 0.0 < model["threshold"] < 1.0
    decision = LearnedDecision(model)
    saved = np.load(MODEL_PATH.with_name("event_matcher_training.npz"))
    p = decision.probability(saved["x"][:200])
    assert p.shape == (200,) and ((p >= 0) & (p <= 1)).all()
    assert decision.probability(np.zeros((0, len(FEATURE_NAMES)))).shape == (0,)


@pytest.mark.slow
def test_the_shipped_model_reproduces_from_the_training_command(tmp_path: Path) -> None:
    """The fit of the training command, on the feature matrix it saved, writes the shipped file
    byte for byte (parsing and embedding the training pairs again takes the full command)."""
    before = MODEL_PATH.read_bytes()
    try:
        subprocess.run([sys.executable, "bench/train_event_matcher.py", "--fit-only"], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        assert MODEL_PATH.read_bytes() == before
    finally:
        MODEL_PATH.write_bytes(before)


def test_the_guards_kept_are_those_that_beat_the_learned_decision_on_the_development_pairs() -> None:
    guards = learned_decision().training["cross_validation"]["guards_on_dev"]
    assert set(guards["kept"]) == KEPT_GUARDS
    assert guards["learned_with_kept_f1"] > guards["learned_alone_f1"]


def test_the_held_out_pairs_are_not_in_the_training_data() -> None:
    training = np.load(MODEL_PATH.with_name("event_matcher_training.npz"))
    held_out = {f"real:{p['story']}" for p in load_real_pairs("test")}
    assert held_out and not held_out & set(training["groups"].tolist())
    assert {f"real:{p['story']}" for p in load_real_pairs("dev")} <= set(training["groups"].tolist())
