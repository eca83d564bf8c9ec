"""Time one scoring chunk of a run bench_app.py stored, or the adding up
of its scoring, in a transaction that is rolled back, so that it can be run
again and again on the same rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/reviewapp_bench_1000000 \
        .venv/bin/python bench/probe_chunk.py [--chunk 5] [--immediate] [--repeat 3] [--profile]
    ... bench/probe_chunk.py --finish [--repeat 3] [--profile]

It takes the chunk'th chunk of the first scoring with the most chunks,
removes its checks inside the transaction, checks it again as a worker does
(scoring.services._score_chunk) and prints the wall and CPU seconds of each
repeat, and the CPU its PostgreSQL backend used (read from /proc: run it
on the database's host). ``--immediate`` checks the foreign keys as each statement ends
(SET CONSTRAINTS ALL IMMEDIATE), so that what PostgreSQL would check at
commit is in the time; ``--profile`` prints where the CPU went. ``--finish``
times the adding up instead (scoring.services._finish, its scores removed
first), which the last chunk's task does.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django

django.setup()

from django.db import connection, transaction  # noqa: E402

from reviewapp.models import AnswerCheck, Score, Scoring, ScoringChunk  # noqa: E402
from reviewapp.scorings import services  # noqa: E402
from scoring.runner import gc_paused  # noqa: E402


def probe(chunk_index: int, *, immediate: bool, profile: bool) -> str:
    scoring = Scoring.objects.order_by("-chunks_total", "id").first()
    chunk = scoring.chunks.order_by("first_line")[chunk_index]
    with transaction.atomic():
        if immediate:
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        ScoringChunk.objects.filter(id=chunk.id).update(status=ScoringChunk.Status.SCORING)
        AnswerCheck.objects.filter(
            scoring=scoring,
            answer__run=scoring.run,
            answer__line_number__gte=chunk.first_line,
            answer__line_number__lte=chunk.last_line,
        ).delete()
        chunk.refresh_from_db()
        backend, wal = _backend_cpu(), _wal_bytes()
        wall, cpu = time.perf_counter(), time.process_time()
        profiler = cProfile.Profile() if profile else None
        with gc_paused():
            if profiler:
                profiler.enable()
            services._score_chunk(chunk, chunk.scoring, chunk.attempts)
            if profiler:
                profiler.disable()
        figures = (
            f"{time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU, "
            f"{_backend_cpu() - backend:.2f} s CPU in PostgreSQL, {(_wal_bytes() - wal) / 1e6:.1f} MB of WAL"
        )
        transaction.set_rollback(True)
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return f"chunk {chunk_index} (lines {chunk.first_line}-{chunk.last_line}): {figures}"


def _backend_cpu() -> float:
    """The CPU seconds this connection's PostgreSQL backend has used (on this host)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wal_bytes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")
        return int(cursor.fetchone()[0])


def probe_finish(*, profile: bool) -> str:
    scoring = Scoring.objects.select_related("run", "set_version").order_by("-chunks_total", "id").first()
    with transaction.atomic():
        Score.objects.filter(scoring=scoring).delete()
        wall, cpu = time.perf_counter(), time.process_time()
        profiler = cProfile.Profile() if profile else None
        if profiler:
            profiler.enable()
        services._finish(scoring)
        if profiler:
            profiler.disable()
        figures = f"{time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU"
        transaction.set_rollback(True)
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return f"adding up scoring {scoring.id} ({scoring.chunks_total} chunks): {figures}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk", type=int, default=5)
    parser.add_argument("--immediate", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--finish", action="store_true")
    args = parser.parse_args()
    for _ in range(args.repeat):
        if args.finish:
            print(probe_finish(profile=args.profile), flush=True)
        else:
            print(probe(args.chunk, immediate=args.immediate, profile=args.profile), flush=True)


if __name__ == "__main__":
    main()
