"""Upload to scores on the page, through the real stack, and page timings.

    .venv/bin/python bench/bench_app.py --answers 100000 [--answers 1000000] [--workers 2]
    .venv/bin/python bench/bench_app.py --answers 1000000 --repetitions 3 [--timeout-share 0.03]
    .venv/bin/python bench/bench_app.py --answers 1000000 --workers 2 --compare [--compare-repeat 5]

Needs PostgreSQL and Redis on 127.0.0.1 (as bin/test does). For each size
it makes a fresh database, starts gunicorn and a Celery worker, uploads a
generated question set and run over the API with curl, and measures:
- seconds from the end of the run's upload to its scores being on the page,
  and how they split into storing the answers, planning, checking the chunks
  and adding up (from the run's and the scoring's timestamps);
- the peak resident memory of each worker process while it worked;
- the version's dashboard, the run page and the findings list (filtered,
  deep pages), median of 10;
- with ``--compare``, after that: a second version's run of the same size on
  the same questions (another generated run, other outcomes) uploaded and
  scored the same way, the first version's dashboard asked for every half
  second meanwhile, then the compare page and ``/api/gate`` between the
  two versions: one request each before the planner has statistics on the
  new rows, then, after ANALYZE (autovacuum's part, off on this machine),
  the median of ``--compare-repeat`` requests each. This uses its own
  database, port and Redis database, so that it can run beside a plain run
  of this script.

``--answers`` counts lines. With ``--repetitions R`` each question is asked
R times, so 1,000,000 lines are 333,334 questions × 3 attempts (1,000,002
lines); the header declares R, and a share of attempts (``--timeout-share``,
0.03 by default when R > 1) time out. Every line logs timestamps and tool
calls, so the scoring also works out stable resolution and timing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import synthetic  # noqa: E402

OUT = ROOT / "bench" / "out"
PORT = 8123
# With --compare: its own port, broker database (and database and data
# folder, see environment), beside a plain run's.
COMPARE_PORT = 8124
COMPARE_REDIS_DB = 14
PYTHON = sys.executable
TIMEOUT_S = 600


@dataclass(frozen=True)
class Case:
    """One benchmarked run: its lines, attempts per question and timeouts."""

    answers: int
    repetitions: int = 1
    timeout_share: float = 0.0

    @property
    def questions(self) -> int:
        return math.ceil(self.answers / self.repetitions)

    @property
    def label(self) -> str:
        """The set version, and the name of everything made for this case."""
        if self.repetitions == 1 and not self.timeout_share:
            return f"app-{self.answers}"
        return f"app-{self.answers}x{self.repetitions}-t{self.timeout_share * 100:g}"

    def header(self, assistant_version: str = "app-1.0") -> dict:
        header = {"assistant_version": assistant_version, "set_version": self.label}
        if self.repetitions > 1:
            header |= {"repetitions": self.repetitions, "timeout_s": TIMEOUT_S}
        return header


# The second version of --compare, and how far its generator's seeds lie from the first's.
CANDIDATE = "app-1.1"
CANDIDATE_SEED_OFFSET = 500_000


# Questions generated at a time: a million lines built at once would hold
# several GB of dicts, for no difference in what the file holds.
GENERATION_BATCH = 50_000


def generated(case: Case) -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    questions_path = OUT / f"questions_set-{case.label}.jsonl"
    run_path = OUT / f"answers_run_app-1.0_set-{case.label}.jsonl"
    if run_path.exists() and questions_path.exists():
        return questions_path, run_path
    print(
        f"generating {case.questions} questions and {case.questions * case.repetitions} lines "
        f"({case.repetitions} attempts each)…",
        flush=True,
    )
    questions = synthetic.generate_question_set(questions=case.questions, seed=11, set_version=case.label)
    partial = _partial(questions_path)
    synthetic.write_jsonl(partial, questions, header={"set_version": case.label})
    partial.replace(questions_path)
    write_run(case, questions, run_path, assistant_version="app-1.0", seed=12)
    return questions_path, run_path


def _partial(path: Path) -> Path:
    # Written aside and renamed when whole, so a stopped run leaves no half
    # file to be taken for a finished one next time; named by process, so
    # that two runs of this script generating the same (seeded, identical)
    # file at once do not write into one another's.
    return path.with_suffix(f".{os.getpid()}.partial")


def generated_candidate(case: Case) -> Path:
    """The second version's run for --compare: the same questions (the set's
    generator is seeded), other seeds for the answers, so other outcomes."""
    run_path = OUT / f"answers_run_{CANDIDATE}_set-{case.label}.jsonl"
    if run_path.exists():
        return run_path
    print(f"generating {CANDIDATE}'s run on the same {case.questions} questions…", flush=True)
    questions = synthetic.generate_question_set(questions=case.questions, seed=11, set_version=case.label)
    write_run(case, questions, run_path, assistant_version=CANDIDATE, seed=12 + CANDIDATE_SEED_OFFSET)
    return run_path


def write_run(
    case: Case, questions: list[dict], run_path: Path, *, assistant_version: str, seed: int
) -> None:
    partial = _partial(run_path)
    with open(partial, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(json.dumps(case.header(assistant_version)) + "\n")
        for batch, first in enumerate(range(0, case.questions, GENERATION_BATCH)):
            part = questions[first : first + GENERATION_BATCH]
            rows = synthetic.generate_run(
                question_set=part,
                answers=len(part),
                seed=seed + 1000 * batch,
                repetitions=case.repetitions,
                timeout_share=case.timeout_share,
                timeout_s=TIMEOUT_S,
            )
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    partial.replace(run_path)


def environment(case: Case, *, compare: bool = False) -> dict:
    database = "reviewapp_bench_" + case.label.removeprefix("app-").replace("-", "_").replace(".", "_")
    suffix = "-compare" if compare else ""
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database}{suffix.replace('-', '_')}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{COMPARE_REDIS_DB if compare else 13}",
        "REVIEWAPP_DATA_DIR": str(OUT / f"data-{case.label}{suffix}"),
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }


def manage(env: dict, *args: str) -> str:
    return subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


# Printed by the app's own shell: where the time between upload and scores went.
STAGES = """
from reviewapp.models import Run
run = Run.objects.get(id={run_id})
scoring = run.scorings.get()
print(
    f"stages: storing the answers {{(run.stored_at - run.created_at).total_seconds():.1f}} s, "
    f"stored to planning {{(scoring.started_at - run.stored_at).total_seconds():.1f}} s "
    f"(queued after {{(scoring.queued_at - run.stored_at).total_seconds():.1f}} s), "
    f"planning to scores {{(scoring.finished_at - scoring.started_at).total_seconds():.1f}} s "
    f"({{scoring.chunks_total}} chunks)"
)
"""


def stages(env: dict, run_id: int) -> str:
    # The shell may first say what it imported; the figures are its last line.
    return manage(env, "shell", "-c", STAGES.format(run_id=run_id)).strip().splitlines()[-1]


def api(url: str, token: str, *, file: Path | None = None) -> dict:
    if file is not None:
        out = subprocess.run(
            ["curl", "-sS", "-H", f"Authorization: Bearer {token}", "-F", f"file=@{file}", url],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out)
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def worker_pids(parent: int) -> list[int]:
    children = Path(f"/proc/{parent}/task/{parent}/children")
    pids = [int(pid) for pid in children.read_text().split()] if children.exists() else []
    return [parent, *pids]


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def timed_get(url: str, cookie: str = "", repeat: int = 10, *, token: str = "") -> float:
    """The median time of ``repeat`` GETs of ``url``, in ms. A gate that does
    not pass answers 409 or 422 with its verdict: that is an answer too."""
    headers = {"Cookie": cookie} if cookie else {"Authorization": f"Bearer {token}"}
    times = []
    for _ in range(repeat):
        request = urllib.request.Request(url, headers=headers)
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                response.read()
        except urllib.error.HTTPError as error:
            if error.code not in (409, 422):
                raise
            error.read()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


class DashboardWatch:
    """GETs a page one after another, half a second apart, on a thread of
    its own while the block runs; ``str()`` gives the count, median, p95 and
    max of the times it took, and the errors."""

    def __init__(self, url: str, cookie: str):
        self.url, self.cookie, self.times, self.errors = url, cookie, [], []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self.done.is_set():
            try:
                self.times.append(timed_get(self.url, self.cookie, 1))
            except urllib.error.HTTPError as error:
                self.errors.append(error.code)
            self.done.wait(0.5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join(TIMEOUT_S)

    def __str__(self):
        times = sorted(self.times)
        errors = f"{len(self.errors)} errors {sorted(set(self.errors))}" if self.errors else "no error"
        if not times:
            return f"no request answered, {errors}"
        p95 = times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)]
        return (
            f"{len(times)} answered, median {statistics.median(times):.0f} ms, "
            f"p95 {p95:.0f} ms, max {times[-1]:.0f} ms; {errors}"
        )


@dataclass(frozen=True)
class Stack:
    """The app as started for one case: where to reach it and as whom."""

    base: str
    token: str
    cookie: str
    env: dict
    worker_pid: int


def upload_and_score(stack: Stack, case: Case, run_path: Path, workers: int) -> dict:
    """Upload ``run_path`` over the API and wait for its scores, printing the
    time from the end of the upload to scores on the page, its stages and the
    workers' peak memory. Returns the run as the API last showed it."""
    start = time.perf_counter()
    run = api(f"{stack.base}/api/runs", stack.token, file=run_path)
    uploaded = time.perf_counter()
    print(f"run of {run_path.stat().st_size / 1e6:.0f} MB uploaded in {uploaded - start:.1f} s")
    peaks: dict[int, float] = {}
    # When the scoring first showed 99 %: every chunk but the adding up done.
    last_chunk_done = None
    while True:
        for pid in worker_pids(stack.worker_pid):
            peaks[pid] = max(peaks.get(pid, 0.0), rss_mb(pid))
        state = api(f"{stack.base}/api/runs/{run['id']}", stack.token)
        if state["status"] in ("rejected", "failed") or (
            state["scorings"] and state["scorings"][0]["status"] in ("done", "failed")
        ):
            break
        if last_chunk_done is None and state["scorings"] and state["scorings"][0]["progress"] >= 99:
            last_chunk_done = time.perf_counter()
        time.sleep(0.25)
    done = time.perf_counter()
    scoring = state["scorings"][0] if state["scorings"] else {}
    print(
        f"{state['answers']} lines ({case.questions} questions × {case.repetitions} attempts): "
        f"{state['status']}, scoring {scoring.get('status')}: "
        f"{done - uploaded:.1f} s from the end of the upload to scores on the page "
        f"({workers} worker processes)"
    )
    print("peak worker memory (MB): " + ", ".join(f"{mb:.0f}" for mb in sorted(peaks.values())))
    print(stages(stack.env, run["id"]))
    if last_chunk_done is not None:
        print(f"of which adding up after the chunks (seen at 99 %): {done - last_chunk_done:.1f} s")
    return state


def bench(case: Case, workers: int, *, compare: bool = False, compare_repeat: int = 5) -> None:
    questions_path, run_path = generated(case)
    candidate_path = generated_candidate(case) if compare else None
    env = environment(case, compare=compare)
    port = COMPARE_PORT if compare else PORT
    redis_db = str(COMPARE_REDIS_DB if compare else 13)
    database = env["DATABASE_URL"].rsplit("/", 1)[1]
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", database], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", database], check=True)
    manage(env, "migrate", "--verbosity", "0")
    session = manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from django.contrib.sessions.backends.db import "
        "SessionStore; from reviewapp.core.roles import grant; "
        "u,_=User.objects.get_or_create(username='bench'); "
        "grant(u, 'lead'); s=SessionStore(); "
        "s['_auth_user_id']=str(u.pk); "
        "s['_auth_user_backend']='django.contrib.auth.backends.ModelBackend'; "
        "s['_auth_user_hash']=u.get_session_auth_hash(); s.create(); print(s.session_key)",
    ).split()[-1]
    # A token is issued only to an existing user with a role, so after the lead above.
    token = manage(env, "api_token", "bench").strip()
    subprocess.run(["redis-cli", "-n", redis_db, "flushdb"], check=True, capture_output=True)

    web = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "gunicorn",
            "reviewapp.wsgi",
            "-w",
            "2",
            "-b",
            f"127.0.0.1:{port}",
            "--timeout",
            "900",
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "reviewapp", "worker", "-c", str(workers), "--loglevel", "WARNING"],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    stack = Stack(base=base, token=token, cookie=f"sessionid={session}", env=env, worker_pid=worker.pid)
    try:
        time.sleep(4)
        start = time.perf_counter()
        created = api(f"{base}/api/question-sets", token, file=questions_path)
        print(
            f"question set of {created['questions']} questions stored in {time.perf_counter() - start:.1f} s"
        )

        state = upload_and_score(stack, case, run_path, workers)
        scoring = state["scorings"][0] if state["scorings"] else {}
        summary = scoring.get("timing", {}).get("all")
        if summary:
            e2e = summary["e2e"]["by_source"].get("timestamps", {})
            print(
                f"timing on the page: {summary['delivered']} of {summary['attempts']} attempts delivered, "
                f"{summary['failures']['counts'].get('timeout', 0)} timeouts, "
                f"E2E P50 {e2e.get('p50') or 0:.1f} s, P90 {e2e.get('p90') or 0:.1f} s, "
                f"max {e2e.get('max') or 0:.1f} s"
            )
        stable = scoring.get("stable", {}).get("all", {}).get("numeric_accuracy")
        if stable:
            print(
                f"stable resolution on the page (numeric accuracy): "
                f"{stable['stable']['k']} of {stable['stable']['n']} questions, {stable['distribution']}"
            )

        cookie = stack.cookie
        run_url = f"{base}/runs/{state['id']}/"
        for label, url in (
            ("version dashboard", f"{base}/versions/app-1.0/"),
            ("run page", run_url),
            ("findings, unsupported", run_url + "?kind=unsupported"),
            ("findings, language=fr, page 200", run_url + "?language=fr&page=200"),
            ("findings partial, citation", run_url + "?kind=citation&page=20"),
        ):
            print(f"{label}: {timed_get(url, cookie):.0f} ms (median of 10)")
        if candidate_path is not None:
            print(f"second version, {CANDIDATE}, on the same questions:")
            # The first version's dashboard, asked for while the second run is stored and scored.
            with DashboardWatch(f"{base}/versions/app-1.0/", cookie) as watch:
                upload_and_score(stack, case, candidate_path, workers)
            print(f"version dashboard of app-1.0 while the second run was stored and scored: {watch}")
            versions = {"baseline": "app-1.0", "candidate": CANDIDATE}
            compare_url = f"{base}/versions/compare/?" + urlencode({"set": case.label, **versions})
            gate_url = f"{base}/api/gate?" + urlencode({"set_version": case.label, **versions})
            print(
                "before the planner has statistics on the new rows (one request each): "
                f"compare page {timed_get(compare_url, cookie, 1):.0f} ms, "
                f"/api/gate {timed_get(gate_url, repeat=1, token=token):.0f} ms"
            )
            # What autovacuum does soon after a million rows arrive; it is off on
            # this machine's PostgreSQL, so the bench does it, as load_setup.py does.
            start = time.perf_counter()
            subprocess.run(
                ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", "ANALYZE", database], check=True
            )
            print(f"ANALYZE (autovacuum's part) in {time.perf_counter() - start:.1f} s; then:")
            print(
                f"compare page, app-1.0 against {CANDIDATE} ({case.answers} lines each): "
                f"{timed_get(compare_url, cookie, compare_repeat):.0f} ms (median of {compare_repeat})"
            )
            print(
                f"/api/gate, app-1.0 against {CANDIDATE}: "
                f"{timed_get(gate_url, repeat=compare_repeat, token=token):.0f} ms "
                f"(median of {compare_repeat})"
            )
    finally:
        web.terminate()
        worker.terminate()
        web.wait(30)
        worker.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, action="append", help="lines per run (default 100000)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--repetitions", type=int, default=1, help="attempts per question, declared in the header"
    )
    parser.add_argument(
        "--timeout-share",
        type=float,
        default=None,
        help="share of attempts that time out (default 0.03 with repetitions above 1, else 0)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help=f"then score a second version ({CANDIDATE}) of the same size on the same questions and "
        "time the compare page and /api/gate between the two (own database, port and Redis database)",
    )
    parser.add_argument(
        "--compare-repeat", type=int, default=5, help="requests timed for each of compare and gate (median)"
    )
    args = parser.parse_args()
    if args.compare_repeat < 1:
        parser.error("--compare-repeat must be 1 or more")
    if not 1 <= args.repetitions <= 100:
        parser.error("--repetitions must be from 1 to 100")
    timeout_share = args.timeout_share
    if timeout_share is None:
        timeout_share = 0.03 if args.repetitions > 1 else 0.0
    if not 0 <= timeout_share < 1:
        parser.error("--timeout-share must be from 0 to below 1")
    for answers in args.answers or [100_000]:
        bench(
            Case(answers, args.repetitions, timeout_share),
            args.workers,
            compare=args.compare,
            compare_repeat=args.compare_repeat,
        )


if __name__ == "__main__":
    main()
