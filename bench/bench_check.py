"""The number check's speed: the library, the view in process, and gunicorn under load.

    .venv/bin/python bench/bench_check.py [--seconds 10] [--connections 4] [--profile]

Targets (the number-check issue): POST /api/check on one typical answer (300
characters, 10 retrieved values) in under 5 ms p99 of server time; 1,000
requests a second sustained on two cores with gunicorn; a batch of 1,000
answers in under 100 ms.

Needs PostgreSQL on 127.0.0.1 (user postgres, no password). It makes a fresh
database, reviewapp_bench_check (dropped and remade), a lead "bench" and a
token holding only the check scope, then measures:

(a) the library: scoring.check.check_numbers and as_dict() on 1,000 typical
    answers, best of five passes;
(b) the view in this process, called as gunicorn calls it (Django's
    WSGIHandler, every middleware, production settings): the time of each of
    --requests single-answer requests, and of a 1,000-answer batch (--batches
    times); with --profile, cProfile of the single requests, written to
    bench/out/check-profile.txt;
(c) gunicorn, started as docker-compose.yml runs it but with 2 workers
    (`--workers 2`, sync workers unless --threads), on a free port, driven for
    --seconds by a load generator in its own process: --connections threads,
    each sending one typical answer after another over http.client (kept
    alive when the server keeps connections: sync workers close each one),
    as fast as answers come back or paced at --rate, after waiting up to
    --quiet-wait seconds for other work on the machine to calm down.
    It reports requests a second, the generator's and gunicorn's latency
    percentiles (gunicorn's own time per request from its access log,
    %(D)s), and the CPU each part took: gunicorn, PostgreSQL, the generator,
    and the rest of the machine. Two cores serve them all.

Typical answers are made from generated answers (scoring.synthetic): a
language's answers joined until they pass 230 characters (whole sentences,
so their figures stay as written; 297 characters on average), with their
retrieved values, filled up to ten with values from other answers. It
prints its figures at the end and writes them to bench/out/check.json.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import resource
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import load_cpu  # noqa: E402

from scoring import synthetic  # noqa: E402

OUT = ROOT / "bench" / "out"
DATABASE = "reviewapp_bench_check"
PYTHON = sys.executable
# Whole answers are joined until they pass this length: 297 characters on average.
JOIN_UNTIL_CHARACTERS = 230
TYPICAL_VALUES = 10
ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s"
TARGETS = {"single_p99_ms": 5.0, "requests_per_second": 1000.0, "batch_ms": 100.0}


def typical_answers(count: int, *, seed: int = 7) -> list[dict]:
    """``count`` request bodies of about 300 characters and 10 retrieved values each."""
    rng = random.Random(seed)
    questions = synthetic.generate_question_set(questions=count * 4, seed=seed)
    rows = [
        row
        for row in synthetic.generate_run(question_set=questions, answers=count * 4, seed=seed + 1)
        if row.get("answer")
    ]
    pool = [value for row in rows for value in row.get("retrieved_values") or ()]
    by_language: dict[str, list[dict]] = {}
    for row in rows:
        by_language.setdefault(row["language"], []).append(row)
    bodies = []
    while len(bodies) < count:
        language = rng.choice(sorted(by_language))
        parts, values = [], []
        while sum(len(part) + 1 for part in parts) < JOIN_UNTIL_CHARACTERS:
            row = rng.choice(by_language[language])
            parts.append(row["answer"])
            values += [value for value in row.get("retrieved_values") or () if value not in values]
        values = values[:TYPICAL_VALUES]
        while len(values) < TYPICAL_VALUES:
            values.append(rng.choice(pool))
        bodies.append({"answer": " ".join(parts), "language": language, "retrieved_values": values})
    return bodies


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {
        "p50": round(cuts[49], 3),
        "p95": round(cuts[94], 3),
        "p99": round(cuts[98], 3),
        "max": round(max(values), 3),
    }


def say(text: str) -> None:
    print(text, flush=True)


# -- (a) the library --------------------------------------------------------


def bench_library(bodies: list[dict]) -> dict:
    from scoring.check import check_numbers

    passes = []
    for _ in range(5):
        started = time.perf_counter()
        for body in bodies:
            check_numbers(
                body["answer"], retrieved_values=body["retrieved_values"], language=body["language"]
            ).as_dict()
        passes.append(time.perf_counter() - started)
    best = min(passes)
    numbers = sum(
        len(check_numbers(b["answer"], retrieved_values=b["retrieved_values"]).numbers) for b in bodies
    )
    return {
        "answers": len(bodies),
        "mean_characters": round(statistics.mean(len(b["answer"]) for b in bodies)),
        "numbers": numbers,
        "best_ms": round(best * 1000, 2),
        "median_ms": round(statistics.median(passes) * 1000, 2),
        "per_answer_us": round(best / len(bodies) * 1e6, 1),
    }


# -- set-up -------------------------------------------------------------------


def environment() -> dict[str, str]:
    """Production settings, as docker-compose.yml runs the app, on the bench's own database."""
    (OUT / "static-check").mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        "DJANGO_ENV": "production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_DEBUG": "0",
        "REVIEWAPP_DATA_DIR": str(OUT / "data-check"),
        "STATIC_ROOT": str(OUT / "static-check"),
        "LOG_LEVEL": "WARNING",
    }


def manage(env: dict, *args: str) -> str:
    return subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


def set_up(env: dict) -> str:
    """A fresh database with a lead and a check-only token; the token's key."""
    for command in ("dropdb", "createdb"):
        flags = ["--if-exists"] if command == "dropdb" else []
        subprocess.run([command, "-h", "127.0.0.1", "-U", "postgres", *flags, DATABASE], check=True)
    manage(env, "migrate", "--verbosity", "0")
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from reviewapp.core.roles import grant; "
        "grant(User.objects.create_user('bench'), 'lead')",
    )
    return manage(env, "api_token", "bench", "--scope", "check", "--name", "bench-check").strip()


# -- (b) the view, in process -------------------------------------------------


def bench_in_process(env: dict, key: str, bodies: list[dict], *, requests: int, batches: int, profile: bool):
    os.environ.update(env)
    import django

    django.setup()
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()

    def call(body: bytes) -> tuple[str, bytes]:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/api/check",
            "SCRIPT_NAME": "",
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_X_FORWARDED_PROTO": "https",
            "HTTP_AUTHORIZATION": f"Bearer {key}",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        status = []
        result = handler(environ, lambda line, headers, exc_info=None: status.append(line))
        content = b"".join(result)
        result.close()
        return status[0], content

    singles = [json.dumps(body).encode() for body in bodies]
    batch = json.dumps({"answers": bodies[:1000]}).encode()
    for body in singles[:200]:  # warm: the token is looked up once, caches fill
        status, content = call(body)
        assert status.startswith("200"), (status, content[:300])

    times = []
    for index in range(requests):
        started = time.perf_counter()
        status, _ = call(singles[index % len(singles)])
        times.append((time.perf_counter() - started) * 1000)
        assert status.startswith("200"), status
    batch_times = []
    for _ in range(batches):
        started = time.perf_counter()
        status, content = call(batch)
        batch_times.append((time.perf_counter() - started) * 1000)
        assert status.startswith("200"), status
    figures = {
        "single_ms": percentiles(times),
        "requests": requests,
        "batch_ms": {
            "median": round(statistics.median(batch_times), 1),
            "max": round(max(batch_times), 1),
            "each": [round(t, 1) for t in batch_times],
        },
        "batches": batches,
        "batch_request_bytes": len(batch),
        "batch_response_bytes": len(content),
    }
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for index in range(requests):
            call(singles[index % len(singles)])
        profiler.disable()
        path = OUT / "check-profile.txt"
        with open(path, "w") as f:
            stats = pstats.Stats(profiler, stream=f).strip_dirs()
            stats.sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(30)
        figures["profile"] = str(path.relative_to(ROOT))
    return figures


# -- (c) gunicorn under load --------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post(connection: http.client.HTTPConnection, body: bytes, key: str) -> int:
    connection.request(
        "POST",
        "/api/check",
        body,
        {
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "X-Forwarded-Proto": "https",
        },
    )
    response = connection.getresponse()
    response.read()
    return response.status


BARE_ANSWER = json.dumps(
    {"verdict": "no numbers", "numbers_counted": 0, "numbers_unsupported": 0, "numbers": []}
)


def bare_app(environ, start_response):
    """A WSGI app that reads the body and answers at once (--bare): what
    gunicorn and the connection cost without Django or the check."""
    environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response(
        "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(BARE_ANSWER)))]
    )
    return [BARE_ANSWER.encode()]


def generate(args) -> None:
    """The load generator (run as its own process): once its bodies are made it
    says "ready" and waits for a line on its input, then --connections threads
    send the bodies in turn until --seconds are up; prints a JSON summary."""
    key = os.environ["BENCH_CHECK_KEY"]
    bodies = [json.dumps(body).encode() for body in typical_answers(1000)]
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.perf_counter() + args.seconds
    results: list[tuple[list[float], int]] = []

    # With --rate, each thread keeps its own schedule (rate / connections a
    # second): behind it, a thread sends at once until it has caught up, and
    # a request's time runs from when it was due, so waiting counts.
    interval = args.connections / args.rate if args.rate else 0.0

    def work(offset: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        times, errors, index = [], 0, offset
        due = time.perf_counter() + interval * offset / args.connections
        while time.perf_counter() < deadline:
            if interval:
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                started, due = due, due + interval
            else:
                started = time.perf_counter()
            try:
                status = post(connection, bodies[index % len(bodies)], key)
            except (OSError, http.client.HTTPException):
                status = 0
                connection.close()
            times.append((time.perf_counter() - started) * 1000)
            errors += status != 200
            index += args.connections
        connection.close()
        results.append((times, errors))

    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    threads = [threading.Thread(target=work, args=(offset,)) for offset in range(args.connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    times = [t for part, _ in results for t in part]
    print(
        json.dumps(
            {
                "seconds": round(elapsed, 2),
                "requests": len(times),
                "errors": sum(errors for _, errors in results),
                "requests_per_second": round(len(times) / elapsed, 1),
                "latency_ms": percentiles(times),
                "cpu_seconds": round(
                    cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime, 2
                ),
            }
        )
    )


def quiet(seconds: float, *, threshold: float = 0.25) -> float:
    """Wait (at most ``seconds``) until the machine's other work takes less
    than ``threshold`` cores over a 3-second look; the last look's cores."""
    deadline = time.monotonic() + seconds
    while True:
        before = load_cpu.machine_ticks()
        time.sleep(3)
        busy = (load_cpu.machine_ticks() - before) / load_cpu.TICKS / 3
        if busy < threshold or time.monotonic() > deadline:
            return round(busy, 2)


def interrupt_ticks() -> int:
    """CPU ticks the whole machine spent on hardware and software interrupts since boot."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    return int(fields[5]) + int(fields[6])


def process_table() -> dict[int, tuple[int, str]]:
    """Every process's CPU ticks and command line (its first 60 characters)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            table[int(entry.name)] = (
                load_cpu.process_ticks(int(entry.name)),
                title.strip()[:60] or entry.name,
            )
    return table


def gunicorn_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children")
    return [master, *(int(pid) for pid in children.read_text().split())] if children.exists() else [master]


def bench_gunicorn(env: dict, key: str, args) -> dict:
    port = free_port()
    access_log = OUT / "check-access.log"
    access_log.unlink(missing_ok=True)
    app = ("--pythonpath", str(ROOT / "bench"), "bench_check:bare_app") if args.bare else ("reviewapp.wsgi",)
    command = [
        *(PYTHON, "-m", "gunicorn", *app, "--bind", f"127.0.0.1:{port}"),
        *("--workers", str(args.workers), "--timeout", "600"),
        *(("--threads", str(args.threads)) if args.threads > 1 else ()),
    ]
    if not args.no_access_log:
        command += ["--access-logfile", str(access_log), "--access-logformat", ACCESS_FORMAT]
    log = open(OUT / "check-gunicorn.log", "w")  # noqa: SIM115 - the process keeps it
    web = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    try:
        body = json.dumps(typical_answers(1)[0]).encode()
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                status = post(connection, body, key)
                connection.close()
                if status == 200:
                    break
                raise SystemExit(f"gunicorn answered {status}; see {OUT / 'check-gunicorn.log'}")
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("gunicorn did not answer within 30 s") from None
                time.sleep(0.3)
        # Warm each worker (its token cache, its database connection) before measuring.
        subprocess.run(
            [PYTHON, __file__, "--generate", "--port", str(port), "--seconds", "2",
             "--connections", str(args.connections)],
            env={**os.environ, "BENCH_CHECK_KEY": key}, check=True, capture_output=True, input=b"go\n",
        )  # fmt: skip
        generator = subprocess.Popen(
            [PYTHON, __file__, "--generate", "--port", str(port), "--seconds", str(args.seconds),
             "--connections", str(args.connections), "--rate", str(args.rate)],
            env={**os.environ, "BENCH_CHECK_KEY": key}, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        if generator.stdout.readline().strip() != "ready":
            raise SystemExit("the load generator did not start")
        figures_quiet = quiet(args.quiet_wait)
        offset = access_log.stat().st_size if access_log.exists() else 0
        server = {pid: load_cpu.process_ticks(pid) for pid in load_cpu.server_processes(
            gunicorn_pid=web.pid, database=DATABASE)}  # fmt: skip
        everyone_before = process_table()
        machine_before, kernel_before = load_cpu.machine_ticks(), interrupt_ticks()
        # The window: from "go" to the generator's summary, its own ticks taken by itself.
        output, _ = generator.communicate("go\n")
        machine = (load_cpu.machine_ticks() - machine_before) / load_cpu.TICKS
        kernel = (interrupt_ticks() - kernel_before) / load_cpu.TICKS
        everyone_after = process_table()
        if generator.returncode:
            raise SystemExit(f"the load generator failed ({generator.returncode})")
        figures = json.loads(output.strip().splitlines()[-1])
        after = {pid: load_cpu.process_ticks(pid) for pid in load_cpu.server_processes(
            gunicorn_pid=web.pid, database=DATABASE)}  # fmt: skip
        gunicorn_ticks = postgres_ticks = 0
        for pid, ticks in after.items():
            used = ticks - server.get(pid, 0) if pid in server else ticks
            if pid in gunicorn_pids(web.pid):
                gunicorn_ticks += used
            else:
                postgres_ticks += used
        seconds = figures["seconds"]
        gunicorn_cores = gunicorn_ticks / load_cpu.TICKS / seconds
        postgres_cores = postgres_ticks / load_cpu.TICKS / seconds
        generator_cores = figures["cpu_seconds"] / seconds
        ours = set(after) | {os.getpid(), generator.pid}
        others: dict[str, float] = {}
        for pid, (ticks, name) in everyone_after.items():
            if pid not in ours:
                used = ticks - everyone_before.get(pid, (0, ""))[0]
                others[name] = others.get(name, 0) + used / load_cpu.TICKS / seconds
        machine_cores = machine / seconds
        interrupt_cores = kernel / seconds
        figures["cores"] = {
            "gunicorn": round(gunicorn_cores, 2),
            "postgresql": round(postgres_cores, 2),
            "generator": round(generator_cores, 2),
            # Loopback TCP is handled partly in interrupt context, which no process is charged for.
            "interrupts": round(interrupt_cores, 2),
            # Everything else the machine did, processes that came and went in the window included.
            "other": round(
                max(machine_cores - gunicorn_cores - postgres_cores - generator_cores - interrupt_cores, 0), 2
            ),
            "machine": round(machine_cores, 2),
        }
        figures["busiest_other_processes"] = {
            name: round(cores, 2) for name, cores in sorted(others.items(), key=lambda item: -item[1])[:3]
        }
        figures["gunicorn_cpu_ms_per_request"] = round(
            gunicorn_ticks / load_cpu.TICKS / figures["requests"] * 1000, 3
        )
        if access_log.exists():
            with open(access_log) as f:
                f.seek(offset)
                server_ms = [
                    int(line.rsplit(" ", 1)[1]) / 1000 for line in f if line.startswith("POST /api/check")
                ]
            figures["server_ms"] = percentiles(server_ms) if len(server_ms) > 1 else {}
        figures.update(
            port=port, workers=args.workers, threads=args.threads, connections=args.connections,
            rate=args.rate, access_log=not args.no_access_log, other_cores_before=figures_quiet,
            app="a bare WSGI app" if args.bare else "the app",
        )  # fmt: skip
        return figures
    finally:
        web.terminate()
        try:
            web.wait(30)
        except subprocess.TimeoutExpired:
            web.kill()
        log.close()


def verdict(met: bool, missed: str = "MISSED") -> str:
    return ("was held" if missed == "was NOT held" else "met") if met else missed


def report(figures: dict) -> None:
    library, view, load = figures["library"], figures["in_process"], figures.get("gunicorn")
    say(
        f"(a) library: {library['answers']} typical answers ({library['mean_characters']} characters, "
        f"{library['numbers']} numbers) in {library['best_ms']} ms (best of 5; "
        f"median {library['median_ms']} ms): {library['per_answer_us']} µs an answer"
    )
    single, target = view["single_ms"], TARGETS["single_p99_ms"]
    say(
        f"(b) view in process, one typical answer, {view['requests']} requests: p50 {single['p50']} ms, "
        f"p95 {single['p95']} ms, p99 {single['p99']} ms, max {single['max']} ms "
        f"(target p99 < {target} ms: {verdict(single['p99'] < target)})"
    )
    batch, target = view["batch_ms"], TARGETS["batch_ms"]
    say(
        f"    batch of 1,000 answers ({view['batch_request_bytes']:,} bytes in, "
        f"{view['batch_response_bytes']:,} out), {view['batches']} times: median {batch['median']} ms, "
        f"max {batch['max']} ms (target < {target} ms: {verdict(batch['median'] < target)})"
    )
    if "profile" in view:
        say(f"    profile of the single requests: {view['profile']}")
    if load:
        cores = load["cores"]
        rate, target = load["requests_per_second"], TARGETS["requests_per_second"]
        workers = f"{load['workers']} workers" + (
            f" × {load['threads']} threads" if load["threads"] > 1 else " (sync)"
        )
        paced = f", paced at {load['rate']:,.0f}/s" if load["rate"] else ""
        say(
            f"(c) gunicorn serving {load['app']}, {workers}, {load['connections']} connections{paced}, "
            f"{load['seconds']} s: "
            f"{load['requests']:,} requests, {load['errors']} errors, {rate:,.0f} requests/s "
            + (
                f"(the pace {verdict(rate >= 0.99 * load['rate'], 'was NOT held')})"
                if load["rate"]
                else f"(target {target:,.0f}: {verdict(rate >= target, f'MISSED by {1 - rate / target:.0%}')})"  # noqa: E501
            )
        )
        latency = load["latency_ms"]
        say(
            f"    generator's latency: p50 {latency['p50']} ms, p95 {latency['p95']} ms, "
            f"p99 {latency['p99']} ms, max {latency['max']} ms"
        )
        if load.get("server_ms"):
            server = load["server_ms"]
            say(
                f"    gunicorn's own time (access log): p50 {server['p50']} ms, p95 {server['p95']} ms, "
                f"p99 {server['p99']} ms, max {server['max']} ms"
            )
        say(
            f"    cores: gunicorn {cores['gunicorn']}, PostgreSQL {cores['postgresql']}, "
            f"generator {cores['generator']}, interrupts {cores['interrupts']}, "
            f"other work {cores['other']} (machine {cores['machine']} of {os.cpu_count()}; "
            f"before the window {load['other_cores_before']}); "
            f"gunicorn CPU {load['gunicorn_cpu_ms_per_request']} ms a request"
        )
        busiest = ", ".join(f"{name!r} {used}" for name, used in load["busiest_other_processes"].items())
        say(f"    busiest other processes that lasted the window: {busiest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10, help="the load's measured window")
    parser.add_argument("--connections", type=int, default=4, help="the load generator's threads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn's worker processes")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (more than 1: gthread)")
    parser.add_argument("--requests", type=int, default=2000, help="single requests timed in process")
    parser.add_argument("--batches", type=int, default=20, help="1,000-answer batches timed in process")
    parser.add_argument("--profile", action="store_true", help="cProfile the in-process single requests")
    parser.add_argument("--no-access-log", action="store_true", help="gunicorn without its access log")
    parser.add_argument(
        "--rate", type=float, default=0, help="requests a second to send (0: as fast as the server answers)"
    )
    parser.add_argument(
        "--quiet-wait", type=float, default=60, help="seconds to wait for other work to calm down first"
    )
    parser.add_argument("--skip-load", action="store_true", help="only (a) and (b)")
    parser.add_argument(
        "--bare", action="store_true", help="load a bare WSGI app instead of the app: gunicorn's own cost"
    )
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(args)
        return

    OUT.mkdir(parents=True, exist_ok=True)
    bodies = typical_answers(1000)
    figures = {"cores": os.cpu_count(), "library": bench_library(bodies)}
    env = environment()
    key = set_up(env)
    if not args.skip_load:
        # Before Django is loaded here, so that this process stays light while the load runs.
        figures["gunicorn"] = bench_gunicorn(env, key, args)
    figures["in_process"] = bench_in_process(
        env, key, bodies, requests=args.requests, batches=args.batches, profile=args.profile
    )
    report(figures)
    (OUT / "check.json").write_text(json.dumps(figures, indent=2))
    say(f"figures in {(OUT / 'check.json').relative_to(ROOT)}")


if __name__ == "__main__":
    main()
