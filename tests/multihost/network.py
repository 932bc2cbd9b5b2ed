"""Hosts made of Linux network namespaces, for the multi-host test.

Every host is a network namespace with one interface (``eth0``) and its own address on a private
subnet; a veth pair joins it to a bridge that lives in a namespace of its own (the switch), so
nothing is added to the machine's own network and two runs cannot see each other. Each process
started on a host also gets its own host name (a UTS namespace), as on a separate machine.

A host is lost by taking its link down and killing every process in its namespace; a partition
between two groups of hosts is made with neighbour entries pointing at a hardware address no host
has, so packets between them vanish without an answer, as they do across a real partition, while
both groups keep talking to everyone else. Only ``ip`` (iproute2) is needed, no firewall.

Namespace names start with ``hindsight-mh-<pid>-<random>``; a run killed outright leaves its
namespaces behind, and the next run removes those whose pid no longer exists.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PREFIX = "hindsight-mh"
NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
# A locally administered hardware address that no interface has: frames sent to it are dropped.
NOWHERE_MAC = "02:00:00:00:00:00"


def _ip() -> str:
    found = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError("iproute2's ip is not installed (scripts/system-packages.sh installs it)")
    return found


def unsupported() -> str | None:
    """Why hosts cannot be made here (not root, no iproute2, no namespaces), or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    try:
        ip = _ip()
    except RuntimeError as exc:
        return str(exc)
    probe = f"{PREFIX}-{os.getpid()}-probe"
    made = subprocess.run([ip, "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"network namespaces are not available: {made.stderr.strip()}"
    subprocess.run([ip, "netns", "del", probe], capture_output=True)
    return None


@dataclass(frozen=True)
class Host:
    name: str
    namespace: str
    address: str


class Network:
    """Hosts on one private subnet, joined by a bridge; ``destroy`` removes everything it made."""

    def __init__(self, names: Sequence[str], *, subnet: str = "10.77.0") -> None:
        self.ip = _ip()
        self.run_id = f"{PREFIX}-{os.getpid()}-{secrets.token_hex(3)}"
        self.switch = f"{self.run_id}-switch"
        self.hosts = {name: Host(name, f"{self.run_id}-{name}", f"{subnet}.{10 + i}") for i, name in enumerate(names)}
        self.subnet = subnet
        self._made: list[str] = []
        self._executors: list[ThreadPoolExecutor] = []

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def _run(self, *args: str) -> None:
        done = subprocess.run([self.ip, *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")

    def up(self) -> None:
        remove_abandoned()
        self._run("netns", "add", self.switch)
        self._made.append(self.switch)
        self._run("-n", self.switch, "link", "add", "br0", "type", "bridge")
        self._run("-n", self.switch, "link", "set", "br0", "up")
        for host in self.hosts.values():
            self._run("netns", "add", host.namespace)
            self._made.append(host.namespace)
            port = f"p-{host.name}"[:15]
            self._run(
                "link", "add", "name", "eth0", "netns", host.namespace,
                "type", "veth", "peer", "name", port, "netns", self.switch,
            )  # fmt: skip
            self._run("-n", self.switch, "link", "set", port, "master", "br0")
            self._run("-n", self.switch, "link", "set", port, "up")
            self._run("-n", host.namespace, "link", "set", "lo", "up")
            self._run("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
            self._run("-n", host.namespace, "link", "set", "eth0", "up")

    # -- processes -----------------------------------------------------------------------------

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """``argv`` run on ``host``: in its network namespace, under its own host name."""
        h = self.hosts[host]
        script = 'hostname "$0" && exec "$@"'
        return [self.ip, "netns", "exec", h.namespace, "unshare", "--uts", "--", "sh", "-c", script, h.name, *argv]

    def spawn(
        self, host: str, argv: Sequence[str], *, env: Mapping[str, str], log: Path, cwd: Path
    ) -> subprocess.Popen[bytes]:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            return subprocess.Popen(
                self.command(host, argv), cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip

    def run(
        self, host: str, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(host, argv), cwd=cwd, env=dict(env), capture_output=True, text=True,
            timeout=timeout, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def pids(self, host: str) -> list[int]:
        return _namespace_pids(self.ip, self.hosts[host].namespace)

    def executor(self, host: str, workers: int = 1) -> ThreadPoolExecutor:
        """Threads of this process that live on ``host``: sockets they open are the host's."""
        pool = ThreadPoolExecutor(
            max_workers=workers, initializer=enter_namespace, initargs=(self.hosts[host].namespace,)
        )
        self._executors.append(pool)
        return pool

    # -- faults --------------------------------------------------------------------------------

    def lose(self, host: str) -> None:
        """The host is gone: its link goes down, then every process on it is killed."""
        self._run("-n", self.hosts[host].namespace, "link", "set", "eth0", "down")
        _kill_all(self.ip, self.hosts[host].namespace)

    def cut(self, group: Iterable[str], others: Iterable[str]) -> None:
        """Packets between the two groups vanish (both ways); each still reaches everyone else."""
        for namespace, address in self._pairs(group, others):
            self._run(
                "-n", namespace, "neigh", "replace", address, "lladdr", NOWHERE_MAC, "dev", "eth0", "nud", "permanent"
            )

    def mend(self, group: Iterable[str], others: Iterable[str]) -> None:
        for namespace, address in self._pairs(group, others):
            self._run("-n", namespace, "neigh", "del", address, "dev", "eth0")

    def _pairs(self, group: Iterable[str], others: Iterable[str]) -> Iterator[tuple[str, str]]:
        """(namespace, address it must not reach) for both directions between the groups."""
        others = list(others)
        for a in group:
            for b in others:
                yield self.hosts[a].namespace, self.hosts[b].address
                yield self.hosts[b].namespace, self.hosts[a].address

    # -- teardown ------------------------------------------------------------------------------

    def destroy(self) -> None:
        for pool in self._executors:
            pool.shutdown(wait=False, cancel_futures=True)
        _remove(self.ip, self._made)
        self._made = []


def enter_namespace(namespace: str) -> None:
    """Move the calling thread onto the host of this namespace (sockets it opens from now on are the host's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(NETNS_DIR / namespace, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"setns {namespace}: {os.strerror(errno)}")
    finally:
        os.close(fd)


def _namespace_pids(ip: str, namespace: str) -> list[int]:
    listed = subprocess.run([ip, "netns", "pids", namespace], capture_output=True, text=True)
    return [int(p) for p in listed.stdout.split()]


def _kill_all(ip: str, namespace: str) -> None:
    """SIGKILL every process in the namespace, until none is left (a dying parent may fork)."""
    deadline = time.monotonic() + 10
    while (pids := _namespace_pids(ip, namespace)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _remove(ip: str, namespaces: Iterable[str]) -> None:
    namespaces = list(namespaces)
    for namespace in namespaces:
        _kill_all(ip, namespace)
    for namespace in namespaces:
        subprocess.run([ip, "netns", "del", namespace], capture_output=True)


def remove_abandoned() -> None:
    """Namespaces (and their processes) left by runs of this test whose process no longer exists."""
    if not NETNS_DIR.is_dir():
        return
    pattern = re.compile(rf"^{re.escape(PREFIX)}-(\d+)-")
    stale = []
    for entry in NETNS_DIR.iterdir():
        match = pattern.match(entry.name)
        if match and not Path(f"/proc/{match.group(1)}").exists():
            stale.append(entry.name)
    if stale:
        _remove(_ip(), stale)
