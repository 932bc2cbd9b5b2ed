"""Fixtures of the reliability tests: servers of the test's own that it can crash and restart."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.servers import PostgresServer, RedisServer


@pytest.fixture
def own_directory() -> Iterator[Path]:
    """A directory the postgres user can enter (pytest's tmp_path lies under a private folder)."""
    directory = Path(tempfile.mkdtemp(prefix="hindsight-outage-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def crashable_redis(own_directory: Path) -> Iterator[RedisServer]:
    server = RedisServer(own_directory)
    server.start()
    try:
        yield server
    finally:
        server.crash()


@pytest.fixture
def stoppable_postgres(own_directory: Path) -> Iterator[PostgresServer]:
    server = PostgresServer(own_directory)
    server.start()
    try:
        yield server
    finally:
        server.destroy()
