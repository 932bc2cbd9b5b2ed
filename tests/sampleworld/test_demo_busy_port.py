"""The run command on a port that another program holds: a clear error naming the address, and no
half-built demo left behind, so the next run (on a free port) builds the whole loop instead of
taking the half-built world for a finished one."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

from tests.embedded_load import EmbeddedSite


def test_a_busy_port_stops_the_demo_before_it_publishes_anything(tmp_path: Path) -> None:
    site = EmbeddedSite(var=tmp_path)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", site.port))
        holder.listen()
        result = site.manage(
            "demo", "--size", "tiny", "--no-serve", "--addrport", f"127.0.0.1:{site.port}", check=False
        )

    assert result.returncode != 0
    assert f"cannot serve on 127.0.0.1:{site.port}" in result.stderr
    with sqlite3.connect(tmp_path / "hindsight.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM ingestion_question").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM ingestion_source").fetchone() == (0,)

    again = site.manage("demo", "--size", "tiny", "--no-serve", "--addrport", f"127.0.0.1:{site.port}")
    assert "already in this database" not in again.stdout
    assert "Loop finished" in again.stdout and "Rebuilt standings" in again.stdout
