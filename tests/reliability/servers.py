"""Servers a test starts, kills and starts again itself: a Redis and a PostgreSQL on free loopback
ports (as scripts/with-services.sh starts the suite's own), so that an outage hits only this test."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import kombu.pools
import pytest
from celery import Celery


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, *, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


class RedisServer:
    """A Redis without persistence; ``crash`` kills it with SIGKILL, ``start`` brings it back on its port."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (scripts/test.sh installs it)")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen([self.binary, *args, "--dir", str(self.directory)], stdout=subprocess.DEVNULL)
        _wait_for_port(self.port)

    def crash(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _pg_binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[-3]))
    if not candidates:
        pytest.skip(f"PostgreSQL's {name} is not installed")
    return str(candidates[-1])


class PostgresServer:
    """A PostgreSQL cluster of the test's own; ``stop`` and ``start`` are real server stops and starts."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        # initdb and pg_ctl refuse to run as root.
        self.as_user: list[str] = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(directory, user="postgres")
        subprocess.run(
            [*self.as_user, _pg_binary("initdb"), "-D", str(directory / "pg"), "-U", "hindsight", "--auth=trust"],
            check=True,
            capture_output=True,
        )

    @property
    def url(self) -> str:
        return f"postgres://hindsight@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self.as_user, _pg_binary("pg_ctl"), "-D", str(self.directory / "pg"), *args],
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._ctl("-l", str(self.directory / "pg.log"), "-w", "-t", "60", "-o", options, "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        subprocess.run(
            [*self.as_user, _pg_binary("pg_ctl"), "-D", str(self.directory / "pg"), "-m", "immediate", "stop"],
            capture_output=True,
        )


@contextmanager
def broker_of(app: Celery, url: str) -> Iterator[None]:
    """Send this process's tasks to ``url`` until the block ends (the app's pools are rebuilt)."""

    def reset() -> None:
        # The app's connection and producer pools live in kombu's registry, keyed by broker URL: a
        # pool closed here must also leave the registry, or the next task sent to that URL (after
        # the block, the suite's own broker) would be handed the closed pool.
        kombu.pools.reset()
        app._pool = None
        app.amqp._producer_pool = None

    previous = app.conf.broker_url
    app.conf.broker_url = url
    reset()
    try:
        yield
    finally:
        app.conf.broker_url = previous
        reset()
