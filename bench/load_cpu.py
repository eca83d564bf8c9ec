"""Where the CPU goes during the load test's measured window, from /proc.

Two cores serve gunicorn, PostgreSQL and locust at once, and other work on
the machine competes with them; the split tells the figures apart from that.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def machine_ticks() -> int:
    """Busy CPU ticks of the whole machine since boot (all but idle and iowait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4]


def process_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime, stime


def server_processes(*, gunicorn_pid: int, database: str) -> list[int]:
    """Gunicorn's master and workers, and the PostgreSQL backends serving
    ``database`` (their process title names it)."""
    children = Path(f"/proc/{gunicorn_pid}/task/{gunicorn_pid}/children")
    pids = [gunicorn_pid, *(int(pid) for pid in children.read_text().split())] if children.exists() else []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"postgres: ") and f" {database} ".encode() in title:
            pids.append(int(entry.name))
    return pids


class Tracker:
    """CPU ticks used by gunicorn, by this database's PostgreSQL backends, by
    this process (locust) and by the whole machine between start() and stop().

    Backends come and go (Django closes a connection after CONN_MAX_AGE), so
    the processes are looked at every second and each one's last reading
    counts; a backend that ends loses at most its last second."""

    def __init__(self, *, gunicorn_pid: int, database: str):
        self.gunicorn_pid = gunicorn_pid
        self.database = database
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.kind: dict[int, str] = {}
        self.started: dict[str, int] = {}

    def look(self) -> None:
        for pid in server_processes(gunicorn_pid=self.gunicorn_pid, database=self.database):
            ticks = process_ticks(pid)
            if pid not in self.first:
                # A process born after start() counts from zero.
                self.first[pid] = 0 if self.started else ticks
                self.kind[pid] = "gunicorn" if pid in self._gunicorn() else "postgres"
            self.last[pid] = max(self.last.get(pid, 0), ticks)

    def _gunicorn(self) -> set[int]:
        children = Path(f"/proc/{self.gunicorn_pid}/task/{self.gunicorn_pid}/children")
        return (
            {self.gunicorn_pid, *(int(pid) for pid in children.read_text().split())}
            if children.exists()
            else set()
        )

    def start(self) -> None:
        self.look()
        self.started = {"locust": own_ticks(), "machine": machine_ticks()}

    def stop(self, seconds: float) -> dict[str, float]:
        """Cores each part used on average since start(); "other" is the rest
        of the machine (other people's work, the kernel)."""
        self.look()
        used = {"gunicorn": 0, "postgres": 0}
        for pid, kind in self.kind.items():
            used[kind] += self.last[pid] - self.first[pid]
        used["locust"] = own_ticks() - self.started["locust"]
        cores = {name: ticks / TICKS / seconds for name, ticks in used.items()}
        machine = (machine_ticks() - self.started["machine"]) / TICKS / seconds
        return {**cores, "other": max(0.0, machine - sum(cores.values())), "machine": machine}


def own_ticks() -> int:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return round((own.ru_utime + own.ru_stime) * TICKS)
