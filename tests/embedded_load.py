"""Concurrent use of the embedded default, as the README's run command serves it.

``EmbeddedSite`` builds a tiny sample-world database with ``manage.py demo --no-serve`` (SQLite
file, in-process tasks, no Redis), adds a feed and a Polymarket-format market source served by a
local recorded-payload server, registers load agents, and starts ``manage.py demo`` again, which
reuses the database and serves it with its in-process periodic tasks (every task due every two
seconds here). ``drive`` then runs, all at once: agents submitting forecasts (single and batch),
opening replay sessions and reading evidence; people signing up and creating teams and agents;
readers of the public pages; and staff polling the sources from another process. Every 5xx,
failed request, failed poll and "database is locked" line in the server's log is an error.
"""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
LOCK_ERRORS = re.compile(r"database is locked|database table is locked|Traceback", re.IGNORECASE)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LoadResult:
    requests: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    polls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, response: httpx.Response | None, error: str = "") -> None:
        with self.lock:
            self.requests[kind] += 1
            if response is not None and response.status_code >= 500:
                self.errors.append(f"{kind}: {response.status_code} {response.text[:200]}")
            elif error:
                self.errors.append(f"{kind}: {error}")

    @property
    def total_errors(self) -> int:
        return len(self.errors) + len(self.server_errors)


class EmbeddedSite:
    """The run command's site on a fresh SQLite file under ``var``, from the code at ``root``."""

    def __init__(self, *, var: Path, root: Path = ROOT, python: str = sys.executable) -> None:
        self.var, self.root, self.python = var, root, python
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
        self.env.update(
            DATABASE_URL=f"sqlite:///{var / 'hindsight.sqlite3'}",
            HINDSIGHT_VAR_DIR=str(var),
            DJANGO_SETTINGS_MODULE="config.settings.dev",
            DJANGO_DEBUG="0",
            HINDSIGHT_FAST_BEAT="1",
            HINDSIGHT_ADMIN_PASSWORD="load-test-admin",
            PYTHONUNBUFFERED="1",
        )
        self.server: subprocess.Popen[bytes] | None = None
        self.log = var / "server.log"

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.python, "manage.py", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=check
        )

    def prepare(self, *, feed_url: str, market_url: str, agents: int) -> list[str]:
        """The tiny sample world, two sources due at once, and ``agents`` load agents' tokens."""
        self.manage("demo", "--size", "tiny", "--no-serve", "--addrport", f"127.0.0.1:{self.port}")
        self.manage("add_source", "rss", feed_url, "--name", "Load feed", "--interval", "1")
        self.manage("add_source", "polymarket", market_url, "--name", "Load market", "--interval", "1")
        return [
            self.manage("create_agent", "--team", f"Load {i}", "--agent", f"load-{i}", "--cutoff", "2024-06-01")
            .stdout.strip()
            .splitlines()[-1]
            for i in range(agents)
        ]

    def start(self) -> None:
        with open(self.log, "wb") as log:
            self.server = subprocess.Popen(
                [self.python, "manage.py", "demo", "--addrport", f"127.0.0.1:{self.port}"],
                cwd=self.root,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base_url + "/", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise RuntimeError(f"the site did not start: {self.log.read_text()[-2000:]}")

    def stop(self) -> list[str]:
        """Stop the server; the lines of its log that report a lock or a traceback."""
        if self.server is not None:
            os.killpg(self.server.pid, signal.SIGINT)
            try:
                self.server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()
        return [line for line in self.log.read_text(errors="replace").splitlines() if LOCK_ERRORS.search(line)]


def _agent_loop(site: EmbeddedSite, token: str, n: int, result: LoadResult, stop: threading.Event) -> None:
    headers = {"Authorization": f"Token {token}"}
    with httpx.Client(base_url=site.base_url + "/api/v1", headers=headers, timeout=60) as api:
        live = api.get("/questions/", params={"track": "live", "status": "open", "limit": 50}).json()["results"]
        replay = api.get("/questions/", params={"track": "replay", "status": "resolved", "limit": 50}).json()["results"]
        binary = [q for q in live if q["type"] == "binary"]
        replay = [q for q in replay if q["type"] == "binary" and not q["outcome_published_at"]]
        k = 0
        while not stop.is_set():
            k += 1
            step = k % 4
            try:
                if step == 0 and replay:
                    q = replay[k % len(replay)]
                    session = api.post("/replays/", json={"question": q["id"]})
                    result.record("replay session", session)
                    if session.status_code in (200, 201):
                        sid = session.json()["id"]
                        result.record(
                            "evidence search", api.get("/evidence/articles/", params={"q": "the", "session": sid})
                        )
                        body = {"question": q["id"], "session": sid, "prediction": {"probability": 0.4}}
                        result.record("forecast", api.post("/forecasts/", json=body))
                elif step == 1 and binary:
                    bodies = [
                        {"question": q["id"], "prediction": {"probability": round(random.random(), 3)},
                         "idempotency_key": f"load-{n}-{k}-{q['id']}"}
                        for q in binary[:5]
                    ]  # fmt: skip
                    result.record("forecast batch", api.post("/forecasts/batch/", json=bodies))
                elif binary:
                    q = binary[k % len(binary)]
                    body = {"question": q["id"], "prediction": {"probability": round(random.random(), 3)}}
                    result.record("forecast", api.post("/forecasts/", json=body))
                    result.record(
                        "evidence search", api.get("/evidence/articles/", params={"q": "the", "question": q["id"]})
                    )
            except httpx.HTTPError as exc:
                result.record("agent", None, f"{type(exc).__name__}: {exc}")


def _person_loop(site: EmbeddedSite, n: int, result: LoadResult, stop: threading.Event) -> None:
    k = 0
    while not stop.is_set():
        k += 1
        name = f"person{n}x{k}x{random.randrange(10**6)}"
        with httpx.Client(base_url=site.base_url, timeout=60, follow_redirects=True) as web:
            try:
                web.get("/signup/")
                password = "a-long-load-test-passphrase"
                signup = web.post("/signup/", data={
                    "username": name, "email": f"{name}@example.org", "password1": password, "password2": password,
                    "csrfmiddlewaretoken": web.cookies.get("csrftoken", ""),
                })  # fmt: skip
                result.record("signup", signup)
                web.get("/teams/new/")
                team = web.post(
                    "/teams/new/", data={"name": f"Team {name}", "csrfmiddlewaretoken": web.cookies["csrftoken"]}
                )
                result.record("create team", team)
                if team.status_code == 200 and "/teams/" in str(team.url):
                    slug = str(team.url).rstrip("/").rsplit("/", 1)[1]
                    agent = web.post(f"/teams/{slug}/agents/new/", data={
                        "name": f"Agent {name}", "model_name": "m", "knowledge_cutoff": "2024-06-01",
                        "csrfmiddlewaretoken": web.cookies["csrftoken"],
                    })  # fmt: skip
                    result.record("create agent", agent)
            except httpx.HTTPError as exc:
                result.record("person", None, f"{type(exc).__name__}: {exc}")


PAGES = ("/", "/leaderboard/", "/leaderboard/?track=replay", "/questions/", "/methods/", "/api/v1/leaderboard/")


def _reader_loop(site: EmbeddedSite, n: int, result: LoadResult, stop: threading.Event) -> None:
    with httpx.Client(base_url=site.base_url, timeout=60) as web:
        ids = [q["id"] for q in web.get("/api/v1/questions/", params={"limit": 20}).json()["results"]]
        pages = [*PAGES, *(f"/questions/{i}/" for i in ids), "/agents/reference-offline/"]
        k = n
        while not stop.is_set():
            k += 1
            try:
                result.record("page", web.get(pages[k % len(pages)]))
            except httpx.HTTPError as exc:
                result.record("page", None, f"{type(exc).__name__}: {exc}")


def _poll_loop(site: EmbeddedSite, result: LoadResult, stop: threading.Event) -> None:
    while not stop.is_set():
        done = site.manage("poll_sources", check=False)
        with result.lock:
            result.polls += 1
            if done.returncode != 0:
                result.errors.append(f"poll_sources exit {done.returncode}: {(done.stdout + done.stderr)[-300:]}")


def drive(site: EmbeddedSite, tokens: list[str], *, seconds: float, people: int = 2, readers: int = 3) -> LoadResult:
    """Run every kind of user at once for ``seconds``; returns what happened."""
    result = LoadResult()
    stop = threading.Event()
    loops: list[Callable[[], None]] = [
        *(lambda t=t, n=n: _agent_loop(site, t, n, result, stop) for n, t in enumerate(tokens)),
        *(lambda n=n: _person_loop(site, n, result, stop) for n in range(people)),
        *(lambda n=n: _reader_loop(site, n, result, stop) for n in range(readers)),
        lambda: _poll_loop(site, result, stop),
    ]
    with ThreadPoolExecutor(max_workers=len(loops)) as pool:
        futures = [pool.submit(loop) for loop in loops]
        time.sleep(seconds)
        stop.set()
        for future in futures:
            future.result()
    return result


def report(result: LoadResult) -> dict[str, Any]:
    return {
        "requests": sum(result.requests.values()),
        "by_kind": dict(result.requests),
        "polls": result.polls,
        "errors": result.total_errors,
        "first_errors": (result.errors + result.server_errors)[:5],
    }
