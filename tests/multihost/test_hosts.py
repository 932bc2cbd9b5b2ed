"""The platform on separate hosts, as docs/operations.md ("Running across hosts") lays it out, losing
hosts and links while agents submit, feeds are polled and questions resolve and are regraded:

- a grade host lost in the middle of a grading run (its link down, every process on it killed):
  the other grade host resumes within 60 seconds, and every forecast ends with exactly one grade;
- a web host lost: the other keeps answering through the load balancer, and every forecast an agent
  was told was accepted is stored, once;
- the worker hosts cut off from Redis for 30 seconds: they reconnect by themselves and finish what was
  running and what was queued meanwhile, while the API keeps answering with its documented codes;
- Redis restarted under beat: beat carries on sending its periodic tasks, never one twice.

Every host is a network namespace with its own address (tests/multihost/network.py); processes run
with the guide's environment and commands only (tests/multihost/cluster.py). The hosts and every
process on them are removed when the test ends, however it ends."""

from __future__ import annotations

import itertools
import json
import logging
import re
import shlex
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from django.conf import settings

from config.settings.base import lost_client_options
from tests.multihost import guide
from tests.multihost.cluster import TEST_ENVIRONMENT, WORKERS, Cluster, show_logs
from tests.multihost.network import unsupported
from tests.multihost.traffic import DOCUMENTED_OUTAGE_CODE, Agent

pytestmark = pytest.mark.hosts

CROWD = 2  # agents, each sending its crowd forecasts in batches of 1,000
PER_AGENT = {"grade-loss": 3000, "partition-running": 1000, "partition-queued": 1000}
RESUME_LIMIT = 60
PARTITION_SECONDS = 30
REDIS_DOWN_SECONDS = 5
# The aim is under five minutes (three and a half measured on a 2-core machine shared with other
# work); past this budget, with room for a heavier load, the test fails.
WHOLE_TEST_BUDGET = 480


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    reason = unsupported()
    if reason:
        pytest.skip(reason)
    directory = Path(tempfile.mkdtemp(prefix="hindsight-hosts-"))
    directory.chmod(0o755)
    previous = signal.signal(signal.SIGTERM, _interrupted)  # a stopped run cleans up too
    built = Cluster(directory)
    try:
        try:
            built.up()
        except BaseException:
            print(show_logs(directory))
            raise
        yield built
    finally:
        built.destroy()
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(directory, ignore_errors=True)


# -- reading the database ------------------------------------------------------------------------


def _question_ids(cluster: Cluster) -> dict[str, int]:
    return {ext: pk for pk, ext in cluster.sql("SELECT id, external_id FROM ingestion_question")}


def _grades(cluster: Cluster, question: int) -> tuple[int, int, int]:
    """(forecasts, current grades, all grades) of a question."""
    ((forecasts,),) = cluster.sql("SELECT count(*) FROM leaderboard_forecast WHERE question_id = %s", question)
    ((current, every),) = cluster.sql(
        "SELECT count(*) FILTER (WHERE g.is_current), count(*) FROM leaderboard_grade g"
        " JOIN leaderboard_forecast f ON f.id = g.forecast_id WHERE f.question_id = %s",
        question,
    )
    return forecasts, current, every


def _current(cluster: Cluster, question: int) -> int:
    return _grades(cluster, question)[1]


def _holder(cluster: Cluster, question: int) -> str:
    rows = cluster.sql(
        "SELECT claimed_by FROM leaderboard_questiongradingstate WHERE question_id = %s AND claimed_at IS NOT NULL",
        question,
    )
    return rows[0][0].split(":", 1)[0] if rows else ""


# -- setting the world up, as operators and agents do --------------------------------------------


def _questions_file(cluster: Cluster) -> Path:
    now = datetime.now(UTC)
    questions = [
        {
            "external_id": f"hosts-{name}",
            "title": f"Will the {name} question resolve yes?",
            "type": "binary",
            "track": "live",
            "open_at": (now - timedelta(days=1)).isoformat(),
            "close_at": (now + timedelta(days=30)).isoformat(),
            "resolution_criteria": "Resolves as the multi-host test decides.",
        }
        for name in ("traffic", *PER_AGENT)
    ]
    path = cluster.state("ops") / "questions.json"
    path.write_text(json.dumps(questions))
    return path


def _register_agents(cluster: Cluster, count: int) -> list[str]:
    """``create_agent`` for each agent (the first creates the team); their tokens."""

    return [
        cluster.command("create_agent", "--team", "Hosts", "--agent", f"hosts-{n}", "--cutoff", "2025-01-01")
        .strip()
        .splitlines()[-1]
        for n in range(count)
    ]


def _send_crowd(cluster: Cluster, tokens: list[str], question: int, per_agent: int) -> None:
    def send(token: str) -> None:
        import httpx

        with httpx.Client(base_url=cluster.base_url, headers={"Authorization": f"Token {token}"}, timeout=120) as c:
            for start in range(0, per_agent, 1000):
                items = [
                    {"question": question, "prediction": {"probability": 0.3 + (i % 5) / 10},
                     "idempotency_key": f"q{question}-{i}"}
                    for i in range(start, min(per_agent, start + 1000))
                ]  # fmt: skip
                response = c.post("/api/v1/forecasts/batch/", json=items)
                assert response.status_code == 200 and response.json()["created"] == len(items), response.text[:500]

    list(cluster.ops.map(send, tokens))


def _resolve(cluster: Cluster, name: str, outcome: str = "true") -> None:
    cluster.command("resolve_question", f"hosts-{name}", "--outcome", outcome)


# -- the faults ------------------------------------------------------------------------------------


def _lose_a_grade_host_mid_run(cluster: Cluster, question: int) -> dict[str, float]:
    total = _grades(cluster, question)[0]
    _resolve(cluster, "grade-loss")
    cluster.wait_until(lambda: 0 < _current(cluster, question) < total and _holder(cluster, question), timeout=60,
                       what="grading under way", interval=0.05)  # fmt: skip
    holder = _holder(cluster, question)
    assert holder in ("grade1", "grade2"), holder
    # The run may be lost in the middle of a transaction, whose locks stay until the server notices
    # the silent host; stand for it with a connection of that host, made with the platform's session
    # settings, holding the lock on the question's grading state that the next run must take.
    cluster.net.executor(holder).submit(_hold_grading_state, cluster.database_url, question).result()
    cluster.net.lose(holder)
    lost_at = time.monotonic()
    at_loss = _current(cluster, question)
    resumed = cluster.wait_until(lambda: _current(cluster, question) > at_loss, timeout=RESUME_LIMIT + 30,
                                 what=f"grading resumed after {holder} was lost")  # fmt: skip
    finished = cluster.wait_until(lambda: _current(cluster, question) == total, timeout=90,
                                  what="grading finished on the other grade host") + resumed  # fmt: skip
    forecasts, current, every = _grades(cluster, question)
    assert current == every == forecasts == total, (current, every, forecasts)  # none lost, none twice
    survivor = "grade2" if holder == "grade1" else "grade1"
    assert _graded_by(cluster, survivor), f"{survivor} never took the question over"
    print(f"grade host lost at {at_loss}/{total}: resumed {resumed:.1f}s, finished {finished:.1f}s after")
    assert resumed < RESUME_LIMIT
    del lost_at
    return {"resumed": resumed, "finished": finished}


def _hold_grading_state(database_url: str, question: int) -> psycopg.Connection[Any]:
    db = psycopg.connect(database_url, options=lost_client_options(), connect_timeout=10)
    db.execute("SELECT 1 FROM leaderboard_questiongradingstate WHERE question_id = %s FOR UPDATE", (question,))
    return db  # left open, transaction and all: its host is about to be lost


def _graded_by(cluster: Cluster, host: str) -> bool:
    return "graded question" in cluster.log(host).read_text()


def _lose_a_web_host(cluster: Cluster, agents: list[Agent]) -> float:
    time.sleep(2)
    cluster.net.lose("web1")
    lost_at = time.monotonic()
    time.sleep(12)  # past the balancer's fail_timeout: it tries web1 again once and passes it over again
    settled = lost_at + 3
    after = [a for agent in agents for a in agent.answers_between(settled, time.monotonic())]
    assert after, "no answer through the balancer after the web host was lost"
    assert all(a.status in (200, 201) for a in after), Counter(a.status for a in after)
    assert cluster.get("/").status_code == 200
    return lost_at


def _partition_workers_from_redis(cluster: Cluster, ids: dict[str, int], agents: list[Agent]) -> dict[str, float]:
    running, queued = ids["hosts-partition-running"], ids["hosts-partition-queued"]
    workers = [h for h in WORKERS if cluster.procs[h].poll() is None and cluster.net.pids(h)]
    pids = {h: cluster.procs[h].pid for h in workers}
    _resolve(cluster, "partition-running")
    cluster.wait_until(lambda: _current(cluster, running) > 0, timeout=60, what="grading under way", interval=0.05)
    cluster.net.cut(workers, ["redis"])
    cut_at = time.monotonic()
    _resolve(cluster, "partition-queued")  # sent to the grade queue while no worker reaches it
    time.sleep(max(0.0, PARTITION_SECONDS - (time.monotonic() - cut_at)))
    during = [a for agent in agents for a in agent.answers_between(cut_at, time.monotonic())]
    cluster.net.mend(workers, ["redis"])
    mended_at = time.monotonic()
    assert during, "no answer during the partition"
    # The web hosts still reach Redis: the API goes on accepting forecasts.
    assert all(a.status in (200, 201) for a in during), Counter((a.status, a.code) for a in during)
    total_running, total_queued = _grades(cluster, running)[0], _grades(cluster, queued)[0]
    finished = cluster.wait_until(
        lambda: _current(cluster, running) == total_running and _current(cluster, queued) == total_queued,
        timeout=120, what="grading finished after the partition",
    )  # fmt: skip
    for question in (running, queued):
        forecasts, current, every = _grades(cluster, question)
        assert current == every == forecasts, (question, current, every, forecasts)
    for host, pid in pids.items():  # nobody restarted them: they reconnected by themselves
        assert cluster.procs[host].pid == pid and cluster.procs[host].poll() is None, f"{host} exited"
    _ping_workers(cluster, workers)
    print(f"partition {PARTITION_SECONDS}s: queued grading done {finished:.1f}s after it ended")
    del mended_at
    return {"finished": finished}


def _check(cluster: Cluster, command: str) -> str:
    """One of the guide's health-check commands, run on the operator's host; its output."""
    argv = [guide.substituted(a, cluster.names("ops")) for a in shlex.split(command)]
    done = cluster.net.run("ops", argv, env=cluster.environment("ops"), cwd=guide.ROOT, timeout=60)
    return done.stdout or done.stderr


def _ping_workers(cluster: Cluster, hosts: list[str]) -> None:
    """The guide's worker health check, from the operator's host."""
    for host in hosts:
        kind = "grade" if host.startswith("grade") else host
        answer = _check(cluster, guide.health_checks()["a worker"].replace("grade@HOST", f"{kind}@{host}"))
        assert "pong" in answer, f"{host} does not answer the health check:\n{answer}"


def _every_health_check_passes(cluster: Cluster) -> None:
    checks = guide.health_checks()
    web = re.match(r"GET (\S+)` with `Host: (\S+)", checks["a web host"])
    assert web, checks["a web host"]
    headers = {"Host": guide.substituted(web.group(2), cluster.names("ops"))}
    for host in ("web1.internal", "web2.internal"):
        url = guide.substituted(web.group(1).replace("web1.internal", host), cluster.names("ops"))
        assert cluster.on_ops(httpx.get, url, headers=headers, timeout=30).status_code == 200, host
    assert "accepting connections" in _check(cluster, checks["PostgreSQL"])
    assert "PONG" in _check(cluster, checks["Redis"])
    _ping_workers(cluster, list(WORKERS))


BEAT_SEND = re.compile(r"^\[(\S+ \S+): INFO/MainProcess\] Scheduler: Sending due task (\S+) ", re.M)


def _beat_sends(cluster: Cluster) -> list[tuple[datetime, str]]:
    return [
        (datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f"), name)
        for stamp, name in BEAT_SEND.findall(cluster.log("beat").read_text())
    ]


def _restart_redis_under_beat(cluster: Cluster, agents: list[Agent], ids: dict[str, int]) -> None:
    """Redis stopped for a few seconds around one of beat's sends (the grading recovery, every 15 s)."""
    beat_pid = cluster.procs["beat"].pid
    sent = len(_beat_sends(cluster))
    cluster.wait_until(lambda: len(_beat_sends(cluster)) > sent, timeout=30, what="a send of beat")
    interval = settings.CELERY_BEAT_SCHEDULE["recover-abandoned-grading"]["schedule"].total_seconds()
    time.sleep(max(0.0, interval - REDIS_DOWN_SECONDS / 2 - 1))
    stopped_at = time.monotonic()
    before = len(_beat_sends(cluster))
    cluster.restart_redis(down_for=REDIS_DOWN_SECONDS)
    started_at = time.monotonic()
    _resolve(cluster, "grade-loss", outcome="false")  # a corrected outcome: everything is regraded
    cluster.wait_until(lambda: len(_beat_sends(cluster)) > before + 1, timeout=40,
                       what="beat sending after Redis came back")  # fmt: skip
    assert cluster.procs["beat"].poll() is None and cluster.procs["beat"].pid == beat_pid, "beat exited"
    question = ids["hosts-grade-loss"]
    total = _grades(cluster, question)[0]
    cluster.wait_until(lambda: _grades(cluster, question)[2] == 2 * total, timeout=90,
                       what="the regrade after Redis came back")  # fmt: skip
    forecasts, current, every = _grades(cluster, question)
    assert current == forecasts and every == 2 * forecasts, (current, every, forecasts)  # one version per resolution
    during = [a for agent in agents for a in agent.answers_between(stopped_at, started_at)]
    for attempt in during:  # the documented answers while Redis is down
        assert attempt.status in (200, 201) or (
            attempt.status == 503 and attempt.code == DOCUMENTED_OUTAGE_CODE and attempt.retry_after
        ), attempt


def _beat_never_sent_twice(cluster: Cluster) -> int:
    sends = _beat_sends(cluster)
    by_entry: dict[str, list[datetime]] = {}
    for at, name in sends:
        by_entry.setdefault(name, []).append(at)
    for name, times in by_entry.items():
        schedule = settings.CELERY_BEAT_SCHEDULE[name]["schedule"]
        if isinstance(schedule, timedelta):
            gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
            assert all(gap >= schedule - timedelta(seconds=1) for gap in gaps), (name, gaps)
    # Each task beat sent arrived at most once (the default worker runs the sweepers).
    received = re.findall(r"Task (leaderboard\.tasks\.recover_abandoned_grading)\[([0-9a-f-]+)\] received",
                          cluster.log("default").read_text())  # fmt: skip
    ids = [task_id for _, task_id in received]
    assert len(ids) == len(set(ids)), "a task was delivered twice"
    assert len(ids) <= len(by_entry.get("recover-abandoned-grading", []))
    return len(sends)


# -- the test ----------------------------------------------------------------------------------------


def test_the_platform_across_hosts_survives_lost_hosts_and_partitions(cluster: Cluster) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the agents' every request
    try:
        _scenario(cluster)
    except BaseException:
        print(show_logs(cluster.directory))
        raise


def _scenario(cluster: Cluster) -> None:
    started, up = cluster.created, cluster.up_seconds
    cluster.command("load_questions", str(_questions_file(cluster)))
    cluster.command("add_source", "rss", cluster.feed_url, "--name", "Recorded blog", "--interval", "1")
    tokens = _register_agents(cluster, CROWD + 2)
    ids = _question_ids(cluster)
    agents = [
        Agent(f"a{n}", token, ids["hosts-traffic"], cluster.base_url, cluster.net["ops"].namespace)
        for n, token in enumerate(tokens[CROWD:])
    ]
    _every_health_check_passes(cluster)
    for agent in agents:
        agent.start()
    for name, per_agent in PER_AGENT.items():
        _send_crowd(cluster, tokens[:CROWD], ids[f"hosts-{name}"], per_agent)

    web_lost_at = _lose_a_web_host(cluster, agents)
    grade_loss = _lose_a_grade_host_mid_run(cluster, ids["hosts-grade-loss"])
    partition = _partition_workers_from_redis(cluster, ids, agents)
    _restart_redis_under_beat(cluster, agents, ids)

    for agent in agents:
        agent.finish()
    # Nothing accepted is lost, nothing stored twice: every forecast answered 200/201 is there, once.
    accepted = {key for agent in agents for key in agent.accepted}
    stored = [key for (key,) in cluster.sql(
        "SELECT idempotency_key FROM leaderboard_forecast WHERE question_id = %s", ids["hosts-traffic"])]  # fmt: skip
    assert sorted(stored) == sorted(accepted)
    statuses = Counter(a.status for agent in agents for a in agent.attempts)
    cut_off = [a for agent in agents for a in agent.attempts if a.status not in (200, 201, 503)]
    # Only requests in flight to the lost web host may end without the API's answer.
    assert all(a.sent <= web_lost_at + 1 for a in cut_off), cut_off

    # Feeds were polled from the ingest host, and stored.
    ((articles,),) = cluster.sql("SELECT count(*) FROM ingestion_article")
    assert cluster.feed_requests() >= 1 and articles >= 1, (cluster.feed_requests(), articles)

    sends = _beat_never_sent_twice(cluster)
    # Every queue drained (the guide's queue-length check).
    for queue in ("ingest", "grade", "deliver", "default"):
        answer = _check(cluster, guide.queue_length_command().replace(" grade", f" {queue}"))
        assert answer.strip().splitlines()[-1] == "0", (queue, answer)

    wall = time.monotonic() - started
    print(
        f"hosts: up in {up:.0f}s; {dict(statuses)} answers to {len(accepted)} forecasts; "
        f"grade loss {grade_loss}; partition {partition}; beat sent {sends} tasks; whole test {wall:.0f}s"
    )
    assert wall < WHOLE_TEST_BUDGET


def test_every_process_is_configured_only_through_documented_variables() -> None:
    """What the guide's environment and this test add are all described in docs/configuration.md
    (PYTHONPATH, which only points at the checkout, in the README's production section); the cluster
    starts every process with nothing else but PATH, HOME and LANG."""
    described = (guide.ROOT / "docs" / "configuration.md").read_text()
    production = (guide.ROOT / "README.md").read_text().split("## Production", 1)[1]
    for name in [*guide.environment(), *TEST_ENVIRONMENT]:
        assert f"`{name}`" in described or (name == "PYTHONPATH" and "PYTHONPATH" in production), name
