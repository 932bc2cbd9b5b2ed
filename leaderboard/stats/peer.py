"""Peer score (Metaculus): how much better an agent's log score is than the other agents' on a question.

For a question answered by N agents with natural-log scores l_1 … l_N, agent i's peer score is

    peer_i = 100 x (l_i - mean of l_k over the other N - 1 agents)

as Metaculus scales it (its peer score uses the natural log and a factor 100). Positive means better
than the field; the peer scores of all agents on one question sum to zero, so an easy question
gives nobody free points. A question answered by one agent has no peers and no peer score (NaN).
An agent's peer score in a view is the mean over its questions that have one.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

PEER_SCALE: Final = 100.0


def peer_scores(question: Any, log_score: Any) -> npt.NDArray[np.float64]:
    """Per record: the peer score of that record's agent on its question (NaN without peers).

    ``question`` holds one question id per record (one record per agent and question) and
    ``log_score`` the record's log score; NaN log scores take no part.
    """
    q = np.asarray(question, dtype=np.int64)
    score = np.asarray(log_score, dtype=np.float64)
    out = np.full(score.shape, np.nan)
    valid = ~np.isnan(score)
    if not valid.any():
        return out
    ids, inverse = np.unique(q[valid], return_inverse=True)
    totals = np.bincount(inverse, weights=score[valid], minlength=ids.size)
    counts = np.bincount(inverse, minlength=ids.size)
    others = counts[inverse] - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_of_others = (totals[inverse] - score[valid]) / others
    peer = PEER_SCALE * (score[valid] - mean_of_others)
    peer[others == 0] = np.nan
    out[valid] = peer
    return out
