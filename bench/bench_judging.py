"""A judge run over a whole run, through the real stack, against a local model server.

    .venv/bin/python bench/bench_judging.py [--answers 10000] [--concurrency 16] [--delay-ms 50] [--workers 2]

Issue 13's speed target: judging throughput is bounded by the provider, never
by the app. With a local OpenAI-compatible server answering in 50 ms, 10,000
verdicts at concurrency 16 finish in under 60 s on two cores, and the run
page stays under 200 ms while they run.

Needs PostgreSQL and Redis on 127.0.0.1 (as bin/test does). It makes a fresh
database (reviewapp_bench_judging), a lead with a session and an API token,
uploads a generated question set and a run of N answers over the API and
waits for its scores. It then serves /v1/chat/completions from this process
(every request answered ``{"score": 4, …}`` after --delay-ms, counting the
requests and the most in flight at once), saves a judge version pointing at
it (provider openai, metric answer_relevance: one call per answer, the
--concurrency given, its key read from a variable only the workers have),
starts --workers Celery worker processes (``-P solo``) and gunicorn (2
workers), waits up to --quiet-wait seconds for the machine's other work to
calm down, times the run page once, and estimates and confirms the judge
run over the API (through the services when the API has no judge runs).
It measures:
- seconds from the confirmation to status done (the database's confirmed_at
  and finished_at) and as this script saw it, and verdicts a second;
- verdicts stored (must equal N, none with an error), requests the server
  answered (fewer than N when answers repeat a question and answer word for
  word: the response cache answers those) and the most in flight;
- the run page and the judge run page, each fetched once a second while
  the judge run works (median and max), and the run page before it started;
- where the CPU went (the workers, gunicorn, this process with the model
  server, the rest of the machine: PostgreSQL and any other work), and the
  database sessions and transactions the judge run opened.

Prints one line per figure and writes them to bench/out/judging.json.
Worker logs go to bench/out/judging-worker-<n>.log.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import synthetic  # noqa: E402

OUT = ROOT / "bench" / "out"
PORT = 8127
PYTHON = sys.executable
DATABASE = "reviewapp_bench_judging"
KEY_VARIABLE = "BENCH_JUDGE_API_KEY"
TARGET_SECONDS = 60
TARGET_PAGE_MS = 200
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- the model server ------------------------------------------------------


class ModelServer:
    """An OpenAI-compatible endpoint in this process: every chat completion is
    a relevance verdict, answered after ``delay_s``. Counts the requests it
    answered and the most it held at once. Keeps connections alive (HTTP/1.1)
    and queues up to 1024 connections, as a provider's front end would: a
    backlog of 5 (the socketserver default) drops connections under a burst
    and the client waits a second to try again, which would time the test
    server, not the app."""

    def __init__(self, *, delay_s: float):
        self.answered = 0
        self.in_flight = 0
        self.peak = 0
        self.first = self.last = None
        lock = threading.Lock()
        server = self
        body = json.dumps(
            {
                "id": "bench",
                "object": "chat.completion",
                "created": 0,
                "model": "bench-judge",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": '{"score": 4, "reason": "the answer addresses the question"}',
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 150, "completion_tokens": 14, "total_tokens": 164},
            }
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                with lock:
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                    if server.first is None:
                        server.first = time.perf_counter()
                try:
                    self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    time.sleep(delay_s)
                    if not self.path.rstrip("/").endswith("/chat/completions"):
                        self.send_error(404)
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    with lock:
                        server.answered += 1
                        server.last = time.perf_counter()
                finally:
                    with lock:
                        server.in_flight -= 1

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# -- the data --------------------------------------------------------------


def generated(answers: int) -> tuple[Path, Path, str]:
    OUT.mkdir(parents=True, exist_ok=True)
    label = f"judging-{answers}"
    questions_path = OUT / f"questions_set-{label}.jsonl"
    run_path = OUT / f"answers_run_app-1.0_set-{label}.jsonl"
    if not (run_path.exists() and questions_path.exists()):
        print(f"generating {answers} questions and answers…", flush=True)
        questions = synthetic.generate_question_set(questions=answers, seed=31, set_version=label)
        synthetic.write_jsonl(questions_path, questions, header={"set_version": label})
        rows = synthetic.generate_run(question_set=questions, answers=answers, seed=32)
        partial = run_path.with_suffix(".partial")
        synthetic.write_jsonl(partial, rows, header={"assistant_version": "app-1.0", "set_version": label})
        partial.rename(run_path)
    return questions_path, run_path, label


def environment() -> dict:
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/12",
        "REVIEWAPP_DATA_DIR": str(OUT / "data-judging"),
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        # The bench's provider listens on this host.
        "REVIEWAPP_JUDGE_BASE_URLS": "http://127.0.0.1",
        "REVIEWAPP_JUDGE_PRIVATE_ADDRESSES": "1",
    }


def manage(env: dict, *args: str) -> str:
    return subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


def shell(env: dict, code: str) -> dict:
    """Run ``code`` in the app's shell; its last line of output is JSON."""
    return json.loads(manage(env, "shell", "-c", code).strip().splitlines()[-1])


SESSION = """
import json
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from reviewapp.core.roles import grant
u, _ = User.objects.get_or_create(username="bench")
grant(u, "lead")
s = SessionStore()
s["_auth_user_id"] = str(u.pk)
s["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
s["_auth_user_hash"] = u.get_session_auth_hash()
s.create()
print(json.dumps({"session": s.session_key}))
"""

JUDGE = """
import json
from django.contrib.auth.models import User
from reviewapp.judges.services import judging
from reviewapp.judges.services import judge_versions
version = judge_versions.judge_version_save(
    name="bench judge", provider="openai", model="bench-judge", base_url={base_url!r},
    key_variable={key_variable!r}, metrics=["answer_relevance"], concurrency={concurrency},
    created_by=User.objects.get(username="bench"),
)
print(json.dumps({{"id": version.id}}))
"""

# Used only when the API has no judge runs: what the judge run page's confirm button does.
START_BY_SERVICES = """
import json
from django.contrib.auth.models import User
from reviewapp.models import JudgeVersion, Run
from reviewapp.judges.services import judging
user = User.objects.get(username="bench")
judge_run = judging.judge_run_estimate(
    judge_versions=[JudgeVersion.objects.get(id={version_id})],
    run=Run.objects.get(id={run_id}),
    created_by=user,
)
print(json.dumps({{"id": judge_run.id, "estimate": judge_run.estimate}}), flush=True)
judging.judge_run_confirm(judge_run=judge_run, draw_regrade=judging.regrade_draw)
print(json.dumps({{"id": judge_run.id, "estimate": judge_run.estimate}}))
"""

# What the run stored, read after it finished.
STORED = """
import json
from django.db.models import Avg, Count, Max, Min, Q
from reviewapp.models import JudgeChunk, JudgeResponse, JudgeRun, ModelVerdict
judge_run = JudgeRun.objects.get(id={judge_run_id})
verdicts = ModelVerdict.objects.filter(judge_run=judge_run)
figures = verdicts.aggregate(
    n=Count("id"), answers=Count("answer_id", distinct=True), errors=Count("id", filter=~Q(error="")),
    undefined=Count("id", filter=Q(score__isnull=True)), seconds_mean=Avg("seconds"),
    seconds_max=Max("seconds"), first=Min("created_at"), last=Max("created_at"),
)
chunks = judge_run.chunks.values("status").annotate(n=Count("id"))
print(json.dumps({{
    "status": judge_run.status, "error": judge_run.error,
    "confirm_to_done_s": (judge_run.finished_at - judge_run.confirmed_at).total_seconds()
        if judge_run.finished_at and judge_run.confirmed_at else None,
    "chunks": {{row["status"]: row["n"] for row in chunks}},
    "chunks_taken_twice": judge_run.chunks.filter(attempts__gt=1).count(),
    "verdicts": figures["n"], "answers": figures["answers"], "errors": figures["errors"],
    "undefined": figures["undefined"],
    "call_seconds_mean": figures["seconds_mean"], "call_seconds_max": figures["seconds_max"],
    "first_stored_after_confirm_s": (figures["first"] - judge_run.confirmed_at).total_seconds()
        if figures["first"] else None,
    "cached_responses": JudgeResponse.objects.count(),
    "verdicts_from_cache": verdicts.filter(completions__0__cached=True).count(),
    "regrade_sample": judge_run.regrade_sample_id,
}}))
"""


def api(url: str, token: str, *, file: Path | None = None, payload: dict | None = None) -> tuple[int, dict]:
    if file is not None:
        out = subprocess.run(
            ["curl", "-sS", "-H", f"Authorization: Bearer {token}", "-F", f"file=@{file}", url],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return 200, json.loads(out)
    headers = {"Authorization": f"Bearer {token}"}
    data = None
    if payload is not None:
        data = json.dumps(payload).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, {"detail": body.decode(errors="replace")[:300]}


# -- measuring -------------------------------------------------------------


def machine_busy_seconds() -> float:
    """Busy CPU seconds of the whole machine since boot, over every core (all but idle and iowait)."""
    values = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / CLOCK_TICKS


def process_seconds(pid: int) -> tuple[float, bytes]:
    """A process's own CPU seconds (user and system) and its command line."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return 0.0, b""
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, title


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


class CpuTracker:
    """CPU seconds used between start() and stop() by the Celery workers,
    gunicorn, this process (the model server and the page timer) and other
    work on the machine (every other process but this database's PostgreSQL
    backends). Processes are looked at twice a second, each one's last reading
    counting; PostgreSQL is what the machine used beyond all of those (the
    judge run's backends come and go with each call, too fast to be seen)."""

    def __init__(self, *, workers: list[int], web: int):
        self.workers = set(workers)
        self.web = web
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.kind: dict[int, str] = {}
        self.machine = 0.0
        self.own = 0.0

    def _kind(self, pid: int, title: bytes) -> str | None:
        if pid in self.workers:
            return "workers"
        if pid == self.web or pid in children(self.web):
            return "gunicorn"
        if pid == os.getpid():
            return None  # read from os.times(), which counts its threads
        if title.startswith(b"postgres: ") and f" {DATABASE} ".encode() in title:
            return None  # in the remainder
        return "other work"

    def look(self, *, starting: bool = False) -> None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            seconds, title = process_seconds(pid)
            if not title:
                continue
            if pid not in self.kind:
                kind = self._kind(pid, title)
                if kind is None:
                    continue
                self.kind[pid] = kind
                # A process born after start() counts from zero.
                self.first[pid] = seconds if starting else 0.0
            self.last[pid] = max(self.last.get(pid, 0.0), seconds)

    def start(self) -> None:
        self.look(starting=True)
        self.machine = machine_busy_seconds()
        self.own = sum(os.times()[:2])

    def stop(self) -> dict[str, float]:
        self.look()
        used = {"workers": 0.0, "gunicorn": 0.0, "bench (model server, page timer)": 0.0, "other work": 0.0}
        for pid, kind in self.kind.items():
            used[kind] += self.last[pid] - self.first[pid]
        used["bench (model server, page timer)"] = sum(os.times()[:2]) - self.own
        machine = machine_busy_seconds() - self.machine
        used["PostgreSQL (the rest)"] = max(0.0, machine - sum(used.values()))
        return {**{name: round(value, 1) for name, value in used.items()}, "machine": round(machine, 1)}


def quiet(seconds: float, *, threshold: float) -> float:
    """Wait (at most ``seconds``) until the machine uses less than
    ``threshold`` cores over a 3-second look; return the last look's cores."""
    deadline = time.monotonic() + seconds
    while True:
        before = machine_busy_seconds()
        time.sleep(3)
        busy = (machine_busy_seconds() - before) / 3
        if busy < threshold or time.monotonic() > deadline:
            return round(busy, 2)


class Database:
    """One connection of this script's own to the bench database: polling the
    judge run through it adds no request to the app and no session per poll."""

    def __init__(self):
        import psycopg

        self.connection = psycopg.connect(f"host=127.0.0.1 user=postgres dbname={DATABASE}", autocommit=True)

    def counters(self) -> dict:
        """Sessions opened, transactions and rows inserted in the bench database so far."""
        self.connection.execute("select pg_stat_clear_snapshot()")
        row = self.connection.execute(
            "select sessions, xact_commit + xact_rollback, tup_inserted, tup_fetched "
            "from pg_stat_database where datname = %s",
            (DATABASE,),
        ).fetchone()
        return dict(zip(("sessions", "transactions", "inserted", "fetched"), row, strict=True))

    def judge_run_state(self, judge_run_id: int) -> tuple[str, int, int]:
        return self.connection.execute(
            "select status, chunks_done, chunks_total from reviewapp_judgerun where id = %s", (judge_run_id,)
        ).fetchone()

    def close(self) -> None:
        self.connection.close()


def timed_get(url: str, cookie: str, repeat: int = 10) -> float:
    """Median milliseconds of ``repeat`` fetches of ``url``, after one to warm it."""
    times = []
    for _ in range(repeat + 1):
        request = urllib.request.Request(url, headers={"Cookie": cookie})
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times[1:]), 1)


class PageTimer:
    """Fetches each page once a second (one after the other) until stopped."""

    def __init__(self, urls: dict[str, str], cookie: str):
        self.urls = urls
        self.cookie = cookie
        self.times: dict[str, list[float]] = {name: [] for name in urls}
        self.failures: dict[str, list[str]] = {name: [] for name in urls}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            tick = time.perf_counter()
            for name, url in self.urls.items():
                request = urllib.request.Request(url, headers={"Cookie": self.cookie})
                start = time.perf_counter()
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        response.read()
                    self.times[name].append((time.perf_counter() - start) * 1000)
                except Exception as error:  # counted and shown
                    self.failures[name].append(f"{type(error).__name__}: {error}")
            self.stop.wait(max(0.0, 1.0 - (time.perf_counter() - tick)))

    def start(self) -> None:
        self.thread.start()

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(70)


def wait_for(url: str, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer in {seconds:.0f} s")


# -- the bench -------------------------------------------------------------


def bench(args) -> dict:
    questions_path, run_path, _ = generated(args.answers)
    env = environment()
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DATABASE], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", DATABASE], check=True)
    manage(env, "migrate", "--verbosity", "0")
    session = shell(env, SESSION)["session"]
    token = manage(env, "api_token", "bench").strip()
    subprocess.run(["redis-cli", "-n", "12", "flushdb"], check=True, capture_output=True)

    server = ModelServer(delay_s=args.delay_ms / 1000)
    version_id = shell(
        env,
        JUDGE.format(base_url=server.url, key_variable=KEY_VARIABLE, concurrency=args.concurrency),
    )["id"]

    # The key only the workers have: the judge version names the variable, never the key.
    worker_env = {**env, KEY_VARIABLE: "sk-bench-judging"}
    web = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "gunicorn",
            "reviewapp.wsgi",
            "-w",
            "2",
            "-b",
            f"127.0.0.1:{PORT}",
            "--timeout",
            "900",
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    workers = []
    for number in range(1, args.workers + 1):
        log = open(OUT / f"judging-worker-{number}.log", "w")  # noqa: SIM115 - closed with the worker
        workers.append(
            (
                subprocess.Popen(
                    [
                        PYTHON,
                        "-m",
                        "celery",
                        "-A",
                        "reviewapp",
                        "worker",
                        "-P",
                        "solo",
                        "-n",
                        f"bench-judging-{number}@%h",
                        "--loglevel",
                        "WARNING",
                    ],
                    cwd=ROOT,
                    env=worker_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                ),
                log,
            )
        )
    database = Database()

    def stop() -> None:
        web.terminate()
        for worker, _ in workers:
            worker.terminate()
        web.wait(30)
        for worker, log in workers:
            worker.wait(60)
            log.close()

    base = f"http://127.0.0.1:{PORT}"
    figures: dict = {
        "answers": args.answers,
        "concurrency": args.concurrency,
        "delay_ms": args.delay_ms,
        "workers": args.workers,
        "cores": os.cpu_count(),
    }
    try:
        wait_for(f"{base}/login/")
        _, created = api(f"{base}/api/question-sets", token, file=questions_path)
        print(f"question set of {created['questions']} questions stored", flush=True)
        _, run = api(f"{base}/api/runs", token, file=run_path)
        while True:
            _, state = api(f"{base}/api/runs/{run['id']}", token)
            scoring = state["scorings"][0]["status"] if state["scorings"] else None
            if state["status"] in ("rejected", "failed") or scoring == "failed":
                break
            if state["status"] == "stored" and scoring == "done":
                break
            time.sleep(0.5)
        if state["status"] != "stored" or scoring != "done":
            raise SystemExit(f"the run was not stored and scored: run {state['status']}, scoring {scoring}")
        print(f"run {run['id']} of {state['answers']} answers stored and scored", flush=True)

        # Other work on the machine slows every figure: wait for a quiet moment.
        figures["cores_busy_before"] = quiet(args.quiet_wait, threshold=0.25)
        # The run page with nothing running, to set its figure during the judge run against.
        figures["run_page_idle_ms"] = timed_get(f"{base}/runs/{run['id']}/", f"sessionid={session}")

        # Estimate, then confirm: over the API when it has judge runs.
        uses_api = False
        status, estimated = api(
            f"{base}/api/judge-runs",
            token,
            payload={"run_id": run["id"], "judge_versions": [version_id], "confirm": False},
        )
        if status == 201:
            uses_api = True
            judge_run_id = estimated["id"]
            estimate = estimated["estimate"]
        elif status not in (404, 405):
            raise SystemExit(f"POST /api/judge-runs answered {status}: {estimated}")
        print(f"judge run started through {'the API' if uses_api else 'the services'}", flush=True)

        counters0 = database.counters()
        tracker = CpuTracker(workers=[worker.pid for worker, _ in workers], web=web.pid)
        tracker.start()
        answered0 = server.answered
        started = time.perf_counter()
        if uses_api:
            status, confirmed = api(f"{base}/api/judge-runs/{judge_run_id}/confirm", token, payload={})
            if status != 200:
                raise SystemExit(f"confirm answered {status}: {confirmed}")
        else:
            started_by_services = shell(
                env, START_BY_SERVICES.format(version_id=version_id, run_id=run["id"])
            )
            judge_run_id = started_by_services["id"]
            estimate = started_by_services["estimate"]
        confirm_seconds = time.perf_counter() - started

        pages = {
            "run page": f"{base}/runs/{run['id']}/",
            "judge run page": f"{base}/judge-runs/{judge_run_id}/",
        }
        timer = PageTimer(pages, f"sessionid={session}")
        timer.start()
        last_print = last_look = 0.0
        while True:
            state, done, total = database.judge_run_state(judge_run_id)
            if state in ("done", "failed", "cancelled"):
                break
            now = time.perf_counter()
            if now - last_print >= 10:
                print(f"  {now - started:5.1f} s: {state}, {done} of {total} chunks", flush=True)
                last_print = now
            if now - last_look >= 0.5:
                tracker.look()
                last_look = now
            if now - started > args.timeout:
                print(f"gave up after {args.timeout} s", flush=True)
                break
            time.sleep(0.1)
        seen_done = time.perf_counter() - started
        timer.finish()
        cpu = tracker.stop()
        # Stopped before reading the database's counters: a process that exits
        # flushes its statistics, an idle one may hold them for 10 s.
        stop()
        counters1 = database.counters()

        stored = shell(env, STORED.format(judge_run_id=judge_run_id))
        elapsed = stored["confirm_to_done_s"] or seen_done
        figures.update(
            judge_run=judge_run_id,
            started_through="api" if uses_api else "services",
            estimate=estimate,
            status=stored["status"],
            error=stored["error"],
            confirm_request_s=round(confirm_seconds, 2),
            confirm_to_done_s=round(elapsed, 2),
            seen_done_s=round(seen_done, 2),
            verdicts=stored["verdicts"],
            verdicts_answers=stored["answers"],
            verdict_errors=stored["errors"],
            verdicts_undefined=stored["undefined"],
            verdicts_per_second=round(stored["verdicts"] / elapsed, 1) if elapsed else None,
            requests_answered=server.answered - answered0,
            peak_in_flight=server.peak,
            server_busy_s=round(server.last - server.first, 2) if server.first and server.last else None,
            first_verdict_stored_after_confirm_s=stored["first_stored_after_confirm_s"],
            call_seconds_mean=round(stored["call_seconds_mean"] or 0, 4),
            call_seconds_max=stored["call_seconds_max"],
            chunks=stored["chunks"],
            chunks_taken_twice=stored["chunks_taken_twice"],
            cached_responses=stored["cached_responses"],
            verdicts_from_cache=stored["verdicts_from_cache"],
            cpu_seconds=cpu,
            cores_busy=round(cpu["machine"] / (seen_done or 1), 2),
            cores_other_work=round(cpu["other work"] / (seen_done or 1), 2),
            database={name: counters1[name] - counters0[name] for name in counters0},
            pages={
                name: {
                    "fetches": len(times),
                    "median_ms": round(statistics.median(times), 1) if times else None,
                    "max_ms": round(max(times), 1) if times else None,
                    "failures": timer.failures[name][:5],
                    "failed": len(timer.failures[name]),
                }
                for name, times in timer.times.items()
            },
        )
        figures["met"] = {
            "all verdicts, no error": figures["verdicts"] == args.answers and not figures["verdict_errors"],
            f"under {TARGET_SECONDS} s": elapsed < TARGET_SECONDS,
            f"run page median under {TARGET_PAGE_MS} ms": (figures["pages"]["run page"]["median_ms"] or 1e9)
            < TARGET_PAGE_MS,
        }
    finally:
        stop()
        database.close()
        server.close()
    return figures


def report(figures: dict) -> None:
    pages = figures["pages"]
    cpu = figures["cpu_seconds"]
    database = figures["database"]
    lines = [
        f"judge run {figures['judge_run']} ({figures['started_through']}): {figures['status']}"
        + (f", {figures['error']}" if figures["error"] else ""),
        f"answers: {figures['answers']}, estimate {figures['estimate']}",
        f"confirm to done: {figures['confirm_to_done_s']:.1f} s "
        f"(target under {TARGET_SECONDS} s; seen by this script {figures['seen_done_s']:.1f} s, "
        f"the confirm request itself {figures['confirm_request_s']:.2f} s)",
        f"verdicts stored: {figures['verdicts']} on {figures['verdicts_answers']} answers, "
        f"{figures['verdict_errors']} with an error, {figures['verdicts_undefined']} without a score",
        f"verdicts per second: {figures['verdicts_per_second']}",
        f"requests the server answered: {figures['requests_answered']} "
        f"({figures['verdicts_from_cache']} verdicts came from the response cache: the same prompt again)",
        f"peak in flight: {figures['peak_in_flight']} "
        f"({figures['workers']} workers × concurrency {figures['concurrency']} = "
        f"{figures['workers'] * figures['concurrency']} at most)",
        f"server busy from first to last request: {figures['server_busy_s']} s; "
        f"first verdict stored {figures['first_verdict_stored_after_confirm_s']:.2f} s after confirming",
        f"time per call as the workers measured it: mean {figures['call_seconds_mean'] * 1000:.0f} ms, "
        f"max {figures['call_seconds_max'] * 1000:.0f} ms (server delay {figures['delay_ms']} ms)",
        f"chunks: {figures['chunks']}, taken more than once: {figures['chunks_taken_twice']}",
        *(
            f"{name}: median {page['median_ms']} ms, max {page['max_ms']} ms "
            f"({page['fetches']} fetches, {page['failed']} failed)"
            for name, page in pages.items()
        ),
        f"run page before the judge run, nothing running: median {figures['run_page_idle_ms']} ms (of 10)",
        "CPU seconds during the run: "
        + ", ".join(f"{name} {seconds}" for name, seconds in cpu.items() if name != "machine")
        + f" (the machine {cpu['machine']}: {figures['cores_busy']} of {figures['cores']} cores busy, "
        f"{figures['cores_other_work']} with other work; {figures['cores_busy_before']} busy before)",
        f"database during the run: {database['sessions']} sessions opened, "
        f"{database['transactions']} transactions, {database['inserted']} rows inserted",
        "targets: "
        + ", ".join(f"{name}: {'met' if met else 'MISSED'}" for name, met in figures["met"].items()),
        f"command: .venv/bin/python bench/bench_judging.py --answers {figures['answers']} "
        f"--concurrency {figures['concurrency']} --delay-ms {figures['delay_ms']} "
        f"--workers {figures['workers']}",
    ]
    for line in lines:
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16, help="the judge version's calls at once")
    parser.add_argument("--delay-ms", type=int, default=50, help="the model server's time to answer")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (-P solo each)")
    parser.add_argument("--timeout", type=float, default=900, help="give up waiting after this many seconds")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120,
        help="wait up to this many seconds for the machine to use under 0.25 cores before confirming",
    )
    args = parser.parse_args()
    if not 1 <= args.concurrency <= 64:
        parser.error("--concurrency is from 1 to 64 (a judge version's limit)")
    figures = bench(args)
    report(figures)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "judging.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"written to {(OUT / 'judging.json').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
