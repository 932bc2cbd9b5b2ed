"""The systemd units in deploy/systemd/ run exactly the processes the README's production section
lists, restart each of them whenever it exits, and pass systemd's own check of unit files."""

from __future__ import annotations

import getpass
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
QUEUES = ("ingest", "grade", "default", "deliver")


def _unit(name: str) -> str:
    return (UNITS / name).read_text()


def _exec_start(text: str) -> str:
    match = re.search(r"^ExecStart=(.+)$", text, re.M)
    assert match, "no ExecStart"
    return match.group(1)


def test_every_process_restarts_whenever_it_exits() -> None:
    for name in ("hindsight-web.service", "hindsight-worker@.service", "hindsight-beat.service"):
        text = _unit(name)
        assert re.search(r"^Restart=always$", text, re.M), name
        assert re.search(r"^StartLimitIntervalSec=0$", text, re.M), name  # never gives up
        assert "EnvironmentFile=/etc/hindsight/hindsight.env" in text, name
    wanted = re.search(r"^Wants=(.+)$", _unit("hindsight.target"), re.M)
    assert wanted is not None
    assert set(wanted.group(1).split()) == {
        "hindsight-web.service",
        "hindsight-beat.service",
        *(f"hindsight-worker@{queue}.service" for queue in QUEUES),
    }


def test_units_run_the_readme_production_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    production = readme.split("## Production", 1)[1].split("\n## ", 1)[0]
    web = _exec_start(_unit("hindsight-web.service")).replace("/opt/hindsight/", "")
    assert web in production
    worker = _exec_start(_unit("hindsight-worker@.service"))
    assert worker.startswith("/opt/hindsight/.venv/bin/celery -A config worker -Q %i -n %i@%%H")
    for queue in QUEUES:
        assert f".venv/bin/celery -A config worker -Q {queue}" in production, queue
    assert "--pool=threads" in (UNITS / "worker-deliver.env.example").read_text()
    assert _exec_start(_unit("hindsight-beat.service")).startswith("/opt/hindsight/.venv/bin/celery -A config beat")


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    user = getpass.getuser()
    environment = tmp_path / "hindsight.env"
    shutil.copy(UNITS / "hindsight.env.example", environment)
    for source in UNITS.glob("hindsight*"):
        if source.suffix not in {".service", ".target"}:
            continue
        text = (
            source.read_text()
            .replace("/opt/hindsight", str(ROOT))
            .replace("/etc/hindsight/hindsight.env", str(environment))
        )
        text = re.sub(r"^(User|Group)=hindsight$", rf"\1={user}", text, flags=re.M)
        (tmp_path / source.name).write_text(text)
    shutil.copy(tmp_path / "hindsight-worker@.service", tmp_path / "hindsight-worker@grade.service")
    units = [
        str(tmp_path / name)
        for name in (
            "hindsight-web.service",
            "hindsight-worker@grade.service",
            "hindsight-beat.service",
            "hindsight.target",
        )
    ]
    checked = subprocess.run([analyze, "verify", *units], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
