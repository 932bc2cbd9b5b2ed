"""The platform spread over hosts as docs/operations.md ("Running across hosts") lays it out: a load
balancer, two web hosts, a host per worker group (two for grading), beat, PostgreSQL, Redis, a host
serving a recorded feed (the outside world) and the operator's host, from which agents and the test
itself talk to the rest. Every process gets the guide's environment and command, with the guide's
stand-in names replaced by this network's addresses; nothing else but what ``TEST_ENVIRONMENT``
adds, each for a reason given there."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg

from tests.multihost import guide
from tests.multihost.network import Network
from tests.reliability.servers import _pg_binary

ROOT = guide.ROOT
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FEED = ROOT / "tests" / "ingestion" / "fixtures" / "feeds" / "aws_blog_atom.xml"

# host -> the kind of host in the guide's table
HOSTS = {
    "lb": "lb",
    "web1": "web",
    "web2": "web",
    "ingest": "ingest",
    "grade1": "grade",
    "grade2": "grade",
    "deliver": "deliver",
    "default": "default",
    "beat": "beat",
    "db": "db",
    "redis": "redis",
    "feeds": "feeds",  # stands for the internet: the feeds and market APIs
    "ops": "ops",  # the operator's machine, and the agents'
}
WORKERS = ("ingest", "grade1", "grade2", "deliver", "default")

OPERATOR_SHELL = """
import io, json, sys
from django.core.management import call_command
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    out = io.StringIO()
    try:
        call_command(*json.loads(line), stdout=out, stderr=out)
        print(json.dumps({"ok": True, "out": out.getvalue()}), flush=True)
    except Exception as exc:
        print(json.dumps({"ok": False, "out": out.getvalue() + repr(exc)}), flush=True)
"""

# Added to the guide's environment, every one documented in docs/configuration.md.
TEST_ENVIRONMENT = {
    # The load balancer here speaks plain HTTP (in production it terminates TLS).
    "DJANGO_SECURE_SSL_REDIRECT": "0",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
    "DJANGO_SECURE_COOKIES": "0",
    # Small batches make one question's grading last long enough to lose its host midway.
    "HINDSIGHT_GRADING_BATCH_SIZE": "25",
}
# Sized to a 2-core machine shared with other work; the rest of each command is the guide's.
SIZES = {"web": 1, "ingest": 1, "grade": 1, "deliver": 4, "default": 1}


def _sized(argv: Sequence[str], size: int) -> list[str]:
    out = list(argv)
    for flag in ("--workers", "--concurrency"):
        if flag in out:
            out[out.index(flag) + 1] = str(size)
    return out


class Cluster:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.net = Network(list(HOSTS))
        self.secret = secrets.token_urlsafe(24)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ops = self.net.executor("ops", workers=8)
        self.created = time.monotonic()
        self.up_seconds = 0.0
        self.operator: subprocess.Popen[str] | None = None

    # -- names ---------------------------------------------------------------------------------

    def address(self, host: str) -> str:
        return self.net[host].address

    def state(self, host: str) -> Path:
        path = self.directory / host
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o777)
        return path

    def names(self, host: str) -> dict[str, str]:
        """The guide's stand-in names, as they are on ``host``."""
        return {
            "db.internal": self.address("db"),
            "redis.internal": self.address("redis"),
            "web1.internal": self.address("web1"),
            "web2.internal": self.address("web2"),
            "hindsight.example.org": self.address("lb"),
            "10.0.0.5": self.address("lb"),
            "10.0.0.0/24": f"{self.net.subnet}.0/24",
            "change-me": self.secret,
            "/opt/hindsight": str(ROOT),
            "/var/lib/hindsight": str(self.state(host)),
        }

    def environment(self, host: str) -> dict[str, str]:
        env = {
            "PATH": SYSTEM_PATH,
            "HOME": str(self.state(host)),
            "LANG": "C.UTF-8",
        }
        names = self.names(host)
        env.update({key: guide.substituted(value, names) for key, value in guide.environment().items()})
        env.update(TEST_ENVIRONMENT)
        return env

    @property
    def database_url(self) -> str:
        return guide.substituted(guide.environment()["DATABASE_URL"], self.names("ops")).replace(
            "postgres://", "postgresql://"
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.address('lb')}"

    # -- running things ------------------------------------------------------------------------

    def log(self, host: str) -> Path:
        return self.directory / "logs" / f"{host}.log"

    def spawn(self, host: str, argv: Sequence[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        argv = [guide.substituted(a, self.names(host)) for a in argv]
        proc = self.net.spawn(host, argv, env=env or self.environment(host), log=self.log(host), cwd=ROOT)
        self.procs[host] = proc
        return proc

    def manage(self, *args: str, host: str = "ops", timeout: float = 300) -> str:
        """A manage.py command on ``host`` with the guide's environment; its output."""
        argv = [str(ROOT / ".venv" / "bin" / "python"), "manage.py", *args]
        done = self.net.run(host, argv, env=self.environment(host), cwd=ROOT, timeout=timeout)
        assert done.returncode == 0, f"manage.py {' '.join(args)} on {host}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def start_operator(self) -> None:
        """An operator's ``manage.py shell`` on the operator's host, which runs the documented commands
        one at a time as they are sent (one Django start-up for them all, instead of one each)."""
        argv = [str(ROOT / ".venv" / "bin" / "python"), "manage.py", "shell", "-v", "0", "-c", OPERATOR_SHELL]
        with open(self.log("ops"), "a") as log:
            self.operator = subprocess.Popen(
                self.net.command("ops", argv), cwd=ROOT, env=self.environment("ops"), text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            )  # fmt: skip
        assert self.operator.stdout is not None
        first = self.operator.stdout.readline()
        assert first.strip() == '{"ready": true}', first

    def command(self, *args: str) -> str:
        """A manage.py command run by the operator's shell; its output (it must succeed)."""
        assert self.operator.stdin is not None and self.operator.stdout is not None
        self.operator.stdin.write(json.dumps(args) + "\n")
        self.operator.stdin.flush()
        answer = json.loads(self.operator.stdout.readline())
        assert answer["ok"], f"manage.py {' '.join(args)}: {answer['out']}"
        return str(answer["out"])

    def on_ops(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` in a thread on the operator's host (its sockets are that host's)."""
        return self.ops.submit(fn, *args, **kwargs).result()

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        def run() -> list[tuple[Any, ...]]:
            with psycopg.connect(self.database_url, connect_timeout=10) as db:
                return list(db.execute(query, params).fetchall())

        return self.on_ops(run)  # type: ignore[no-any-return]

    def wait_for_log(self, host: str, pattern: str, *, timeout: float = 120, after: int = 0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.log(host).read_text(errors="replace")[after:]):
                return
            proc = self.procs.get(host)
            if proc is not None and proc.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"{host}: no '{pattern}' in its log:\n{self.log(host).read_text()[-3000:]}")

    # -- bringing the platform up --------------------------------------------------------------

    def up(self) -> None:
        self.net.up()
        self._isolate()
        self._start_database()
        self._start_redis()
        self._start_feeds()
        setup = guide.setup_commands()
        # collectstatic on every web host, while migrate and rebuild_standings run once (operator's host)
        collected = [self.ops.submit(self.manage, *setup[-1][2:], host=web) for web in ("web1", "web2")]
        for argv in setup[:-1]:
            self.manage(*argv[2:])
        for done in collected:
            done.result()
        operator = self.ops.submit(self.start_operator)
        commands = guide.processes()
        for host in ("web1", "web2", *WORKERS, "beat"):
            kind = HOSTS[host]
            argv = _sized(commands[kind], SIZES.get(kind, 1))
            self.spawn(host, argv)
        self._start_load_balancer()
        for host in WORKERS:
            self.wait_for_log(host, r"@\S+ ready\.")
        self.wait_for_log("beat", r"beat: Starting")
        self.wait_until(lambda: self.get("/").status_code == 200, timeout=120, what="the site through the balancer")
        operator.result()
        self.up_seconds = time.monotonic() - self.created

    def _isolate(self) -> None:
        """Cut every host from what the guide says it does not need."""
        needs = guide.needs()
        for host, kind in HOSTS.items():
            if kind not in needs:
                continue
            if not needs[kind].postgres and host != "db":
                self.net.cut([host], ["db"])
            if not needs[kind].redis and host != "redis":
                self.net.cut([host], ["redis"])
            if not needs[kind].outbound:
                self.net.cut([host], ["feeds"])

    def _start_database(self) -> None:
        data = self.state("db") / "data"
        as_postgres = ["runuser", "-u", "postgres", "--"]
        subprocess.run(
            [*as_postgres, _pg_binary("initdb"), "-D", str(data), "-U", "postgres", "--auth-local=trust",
             "-E", "UTF8", "--locale=C.UTF-8"],
            check=True, capture_output=True,
        )  # fmt: skip
        settings, hba = guide.postgres_settings()
        with open(data / "pg_hba.conf", "a") as conf:
            conf.write(guide.substituted(hba, self.names("db")) + "\n")
        options = [f"-c{key}={value}" for key, value in settings.items()]
        # Test-only: the socket in the host's own folder; no fsync (the data dies with the test).
        options += [f"-cunix_socket_directories={self.state('db')}", "-cfsync=off"]
        self.spawn("db", [*as_postgres, _pg_binary("postgres"), "-D", str(data), *options], env={"PATH": SYSTEM_PATH})
        self.wait_for_log("db", "ready to accept connections", timeout=60)
        password = self.secret.replace("'", "''")
        for statement in (
            f"CREATE ROLE hindsight LOGIN PASSWORD '{password}'",
            "CREATE DATABASE hindsight OWNER hindsight",
        ):
            subprocess.run(
                [*as_postgres, _pg_binary("psql"), "-h", str(self.state("db")), "-d", "postgres", "-c", statement],
                check=True, capture_output=True,
            )  # fmt: skip

    def _start_redis(self) -> None:
        names = self.names("redis")
        args = [
            f"--{key} {guide.substituted(value, names)}".split(" ", 1) for key, value in guide.redis_settings().items()
        ]
        argv = [shutil.which("redis-server") or "redis-server", *[part for pair in args for part in pair]]
        self.redis_argv = [*argv, "--dir", str(self.state("redis"))]
        self.spawn("redis", self.redis_argv, env={"PATH": SYSTEM_PATH})
        self.wait_for_log("redis", "Ready to accept connections", timeout=30)

    def restart_redis(self, *, down_for: float) -> None:
        """Stop Redis as an operator would (it writes its append-only file) and start it again."""
        proc = self.procs["redis"]
        proc.terminate()
        proc.wait(timeout=30)
        time.sleep(down_for)
        mark = self.log("redis").stat().st_size
        self.spawn("redis", self.redis_argv, env={"PATH": SYSTEM_PATH})
        self.wait_for_log("redis", "Ready to accept connections", timeout=30, after=mark)

    def _start_feeds(self) -> None:
        served = self.state("feeds") / "www"
        served.mkdir()
        shutil.copy(FEED, served / "blog.xml")
        argv = [sys.executable, "-m", "http.server", "80", "--bind", self.address("feeds"), "--directory", str(served)]
        self.spawn("feeds", argv, env={"PATH": SYSTEM_PATH, "PYTHONUNBUFFERED": "1"})
        self.wait_for_log("feeds", "Serving HTTP", timeout=30)

    def feed_requests(self) -> int:
        return len(re.findall(r'"GET /blog\.xml HTTP', self.log("feeds").read_text()))

    @property
    def feed_url(self) -> str:
        return f"http://{self.address('feeds')}/blog.xml"

    def _start_load_balancer(self) -> None:
        prefix = self.state("lb")
        site = guide.substituted(guide.nginx_config(), self.names("lb"))
        conf = prefix / "nginx.conf"
        conf.write_text(
            "daemon off;\nworker_processes 1;\n"
            f"pid {prefix}/nginx.pid;\nerror_log {prefix}/error.log;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            f"access_log {prefix}/access.log;\n"
            f"client_body_temp_path {prefix}/body; proxy_temp_path {prefix}/proxy;\n"
            f"fastcgi_temp_path {prefix}/fastcgi; uwsgi_temp_path {prefix}/uwsgi; scgi_temp_path {prefix}/scgi;\n"
            f"{site}}}\n"
        )
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.spawn("lb", [nginx, "-p", str(prefix), "-c", str(conf)], env={"PATH": SYSTEM_PATH})

    # -- the client side -----------------------------------------------------------------------

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        def fetch() -> httpx.Response:
            return httpx.get(f"{self.base_url}{path}", timeout=30, **kwargs)

        return self.on_ops(fetch)  # type: ignore[no-any-return]

    def wait_until(self, predicate: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.5) -> float:
        """Seconds until ``predicate`` held; fails naming ``what`` after ``timeout``."""
        start = time.monotonic()
        while True:
            try:
                if predicate():
                    return time.monotonic() - start
            except (httpx.TransportError, psycopg.OperationalError):
                pass
            if time.monotonic() - start > timeout:
                raise AssertionError(f"{what}: not within {timeout}s")
            time.sleep(interval)

    def destroy(self) -> None:
        self.ops.shutdown(wait=False, cancel_futures=True)
        if self.operator is not None and self.operator.stdin is not None:
            self.operator.stdin.close()
        self.net.destroy()


@contextmanager
def running_cluster(directory: Path) -> Iterator[Cluster]:
    cluster = Cluster(directory)
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.destroy()


def show_logs(directory: Path) -> str:
    logs = sorted((directory / "logs").glob("*.log"))
    return "\n".join(f"==== {p.name}\n{p.read_text(errors='replace')[-2500:]}" for p in logs)


def environment_of_process(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


__all__ = ["HOSTS", "WORKERS", "Cluster", "environment_of_process", "os", "running_cluster", "show_logs"]
