"""The learned decision of the ``guarded`` matcher: gradient-boosted trees over the pair features of
:mod:`grading.scoring.event_features`, read from a small JSON file and evaluated with NumPy (pure;
no Django, no scikit-learn at run time).

The file (``data/event_matcher.json`` beside this module) is written by
``bench/train_event_matcher.py``, which generates traps and meaning-keeping rewrites from real
archive items, adds the development part of the real pairs, fits scikit-learn's
``GradientBoostingClassifier`` and exports its trees; the same command re-run on the same inputs
writes the same file. It also carries what two features read of WordNet 3.0 (Princeton University, WordNet 3.0
licence): the verb antonym pairs and each verb's first senses; and the training figures.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from grading.scoring.event_features import FEATURE_NAMES, Lexicon

__all__ = ["MODEL_PATH", "LearnedDecision", "learned_decision"]

MODEL_PATH: Final = Path(__file__).with_name("data") / "event_matcher.json"


class LearnedDecision:
    """Trees of one model file: ``probability(X)`` for a matrix of pair features."""

    def __init__(self, model: dict[str, Any]) -> None:
        if tuple(model["features"]) != FEATURE_NAMES:
            raise ValueError("the event matcher model was trained on other features: run bench/train_event_matcher.py")
        self.version: str = model["version"]
        self.threshold: float = float(model["threshold"])
        self.init: float = float(model["init"])
        self.learning_rate: float = float(model["learning_rate"])
        trees = model["trees"]
        width = max(len(t["feature"]) for t in trees)

        def stack(key: str, fill: float, dtype: Any) -> npt.NDArray[Any]:
            return np.array([t[key] + [fill] * (width - len(t[key])) for t in trees], dtype=dtype)

        self._feature = stack("feature", 0, np.int64)
        self._threshold = stack("threshold", 0.0, np.float64)
        self._left = stack("left", -1, np.int64)
        self._right = stack("right", -1, np.int64)
        self._value = stack("value", 0.0, np.float64)
        self._depth = int(model["max_depth"])
        self.trees, self.depth = len(trees), self._depth
        self.lexicon = self.lexicon_of(model)
        self.training: dict[str, Any] = model.get("training", {})

    @staticmethod
    def lexicon_of(model: dict[str, Any]) -> Lexicon:
        """The WordNet facts a model file carries, as the pair features read them."""
        return Lexicon(
            antonyms=frozenset(pair for a, b in model["antonyms"] for pair in ((a, b), (b, a))),
            senses={verb: frozenset(ids) for verb, ids in model["verb_senses"].items()},
        )

    def margin(self, features: Sequence[Sequence[float]] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The log-odds of "the same event" for each row of ``features``."""
        # As scikit-learn does: features compared in single precision with the thresholds.
        x = np.asarray(features, dtype=np.float32).astype(np.float64).reshape(-1, len(FEATURE_NAMES))
        n, trees = x.shape[0], self._feature.shape[0]
        if n == 0:
            return np.zeros(0)
        node = np.zeros((trees, n), dtype=np.int64)
        tree = np.arange(trees)[:, None]
        for _ in range(self._depth):
            left = self._left[tree, node]
            leaf = left < 0
            feature = self._feature[tree, node]
            go_left = x[np.arange(n)[None, :], feature] <= self._threshold[tree, node]
            node = np.where(leaf, node, np.where(go_left, left, self._right[tree, node]))
        return np.asarray(self.init + self.learning_rate * self._value[tree, node].sum(axis=0), dtype=np.float64)

    def probability(self, features: Sequence[Sequence[float]] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(1.0 / (1.0 + np.exp(-self.margin(features))), dtype=np.float64)


@functools.lru_cache(maxsize=1)
def learned_decision(path: Path = MODEL_PATH) -> LearnedDecision:
    """The shipped model, read once per process."""
    return LearnedDecision(json.loads(path.read_text(encoding="utf-8")))
