"""Fixtures of the leaderboard tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from leaderboard.services.evidence import evidence_log_discard


@pytest.fixture
def isolated_evidence_log() -> Iterator[None]:
    """No access-log rows queued by an earlier test reach this one's database, nor this one's the next."""
    evidence_log_discard()
    yield
    evidence_log_discard()
