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
        depth = int(model["max_depth"])
        # Every tree as a complete binary tree of ``depth`` levels in level order (node i's children
        # are 2i + 1 and 2i + 2): a leaf above the last level hands its value to every slot below
        # it, so that each level is one comparison per tree, whatever path a row took.
        width = 2**depth - 1
        self._feature = np.zeros((len(trees), max(width, 1)), dtype=np.intp)
        threshold = np.full((len(trees), max(width, 1)), np.inf)
        self._leaf_value = np.zeros((len(trees), 2**depth), dtype=np.float64)
        for t, tree in enumerate(trees):
            stack = [(0, 0, 0)]  # (node of the file, slot in the complete tree, level)
            while stack:
                node, slot, level = stack.pop()
                if tree["left"][node] < 0 or level == depth:
                    first = (slot + 1) * 2 ** (depth - level) - 1 - width  # its leftmost leaf slot
                    self._leaf_value[t, first : first + 2 ** (depth - level)] = tree["value"][node]
                    continue
                self._feature[t, slot], threshold[t, slot] = tree["feature"][node], tree["threshold"][node]
                stack += [(tree["left"][node], 2 * slot + 1, level + 1), (tree["right"][node], 2 * slot + 2, level + 1)]
        # The features are compared in single precision (as scikit-learn does); a float32 x is at
        # most a threshold t exactly when it is at most the largest float32 not above t.
        single = threshold.astype(np.float32)
        above = single.astype(np.float64) > threshold
        single[above] = np.nextafter(single[above], np.float32(-np.inf))
        self._threshold = single
        self._depth = depth
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
        x = np.asarray(features, dtype=np.float32).reshape(-1, len(FEATURE_NAMES))
        n, trees = x.shape[0], self._feature.shape[0]
        if n == 0:
            return np.zeros(0)
        columns = np.ascontiguousarray(x.T)  # (features, rows): a tree's test reads one whole row
        slot = np.zeros((trees, n), dtype=np.intp)  # each row's node within the current level
        for level in range(self._depth):
            first = 2**level - 1
            # Every node of the level tested on every row, then each row keeps its own node's answer.
            tests = np.stack(
                [columns[self._feature[:, i]] <= self._threshold[:, i, None] for i in range(first, 2 * first + 1)]
            )
            right = ~(tests[0] if level == 0 else np.take_along_axis(tests, slot[None], axis=0)[0])
            slot = 2 * slot + right
        # Summed over the trees in the order of the file (one row of leaves per tree).
        leaves = self._leaf_value[np.arange(trees)[:, None], slot]
        return np.asarray(self.init + self.learning_rate * leaves.sum(axis=0), dtype=np.float64)

    def probability(self, features: Sequence[Sequence[float]] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(1.0 / (1.0 + np.exp(-self.margin(features))), dtype=np.float64)


@functools.lru_cache(maxsize=1)
def learned_decision(path: Path = MODEL_PATH) -> LearnedDecision:
    """The shipped model, read once per process."""
    return LearnedDecision(json.loads(path.read_text(encoding="utf-8")))
