"""Every kind of source a staff member can add has a poller, so no source waits for one forever
(archive sources are imported from a file, never added or polled)."""

from __future__ import annotations

import pytest

from ingestion.models import Source
from ingestion.services.pollers import POLLERS

pytestmark = pytest.mark.dual_db


def test_every_source_kind_has_a_poller() -> None:
    assert set(POLLERS) == set(Source.Kind.values) - {Source.Kind.ARCHIVE}
