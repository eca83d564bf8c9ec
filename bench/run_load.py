"""The load test: 50 reviewers, then 20 managers, against gunicorn and PostgreSQL.

    .venv/bin/python bench/load_setup.py        # once, about 4 minutes (5.5 the first time)
    .venv/bin/python bench/run_load.py          # about 5 minutes

Starts gunicorn on 127.0.0.1 with the production settings docker-compose.yml
uses (DJANGO_ENV=production, DEBUG off, a secret key, static files collected
and served by whitenoise, 3 sync workers), then runs bench/locustfile.py
headless twice, each for a fixed measured window after every simulated user
has logged in:

- reviewers: 50 users each submitting a judgement and getting their next item
  back (one htmx POST), pausing --think-min to --think-max seconds between;
- managers: 20 users reading the 1M-answer version's dashboard, same pauses.

For each it reports locust's figures (response time on loopback, from its CSV
stats) beside gunicorn's own request time from its access log, and checks
them against the targets of issue 10: p95 under 100 ms for submit → next item
with no error, p95 under 300 ms for the dashboard. Files go to bench/out/load/.
Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load_config as config
import load_cpu

# When the response was logged, method, path, status, and microseconds taken.
ACCESS_FORMAT = "%(t)s %(m)s %(U)s %(s)s %(D)s"
# Cores of other work above which a window's figures are flagged as taken on a shared machine.
SHARED_CORES = 0.25


@dataclass(frozen=True)
class Scenario:
    name: str
    user_class: str
    users: int
    request: str  # the row of locust's stats that the target is about
    access_line: re.Pattern  # the same requests in gunicorn's access log
    target_ms: float


SCENARIOS = (
    Scenario(
        "reviewers",
        "ReviewerUser",
        len(config.REVIEWERS),
        config.SUBMIT,
        re.compile(r"^\[([^\]]+)\] POST /review/\d+/[^/ ]+/ "),
        100,
    ),
    Scenario(
        "managers",
        "ManagerUser",
        len(config.MANAGERS),
        config.DASHBOARD,
        re.compile(rf"^\[([^\]]+)\] GET /versions/{re.escape(config.ASSISTANT_VERSION)}/ "),
        300,
    ),
)


def state(env: dict) -> dict:
    """What the queue and the version hold now: the fewest open items any
    reviewer has left, and the judgements the dashboard counts."""
    out = config.manage(
        env,
        "shell",
        "-c",
        "import json; from django.db.models import Count; "
        "from reviewapp.models import Assignment, Judgement, Answer; "
        f"left = Assignment.objects.filter(reviewer__username__in={config.REVIEWERS!r}, "
        f"item__sample__name={config.QUEUE_NAME!r}, "
        "judgements__isnull=True).values('reviewer').annotate(n=Count('id')); "
        f"version = {config.ASSISTANT_VERSION!r}; "
        "print(json.dumps({"
        "'fewest_open_items': min((row['n'] for row in left), default=0), "
        "'reviewers_with_items': len(left), "
        "'judgements': Judgement.objects.filter("
        "assignment__item__sample__assistant_version__label=version).count(), "
        "'answers': Answer.objects.filter(run__assistant_version__label=version).count()}))",
    )
    return json.loads(out.strip().splitlines()[-1])


def start_gunicorn(env: dict, *, workers: int, threads: int, access_log: Path) -> subprocess.Popen:
    log = open(config.OUT / "gunicorn.log", "w")  # noqa: SIM115 - the process keeps it
    command = [
        *(config.PYTHON, "-m", "gunicorn", "reviewapp.wsgi", "--bind", f"127.0.0.1:{config.PORT}"),
        *("--workers", str(workers), "--threads", str(threads), "--timeout", "600"),
        *("--access-logfile", str(access_log), "--access-logformat", ACCESS_FORMAT),
    ]
    web = subprocess.Popen(command, cwd=config.ROOT, env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    request = urllib.request.Request(f"{config.HOST}/login/", headers={"X-Forwarded-Proto": "https"})
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status == 200:
                    return web
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    stop(web)
    raise SystemExit(f"gunicorn did not answer within 30 s; see {config.OUT / 'gunicorn.log'}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def quiet(seconds: float, *, threshold: float) -> float:
    """Wait (at most ``seconds``) until the machine's other work uses less than
    ``threshold`` cores over a 3-second look; return the last look's cores."""
    deadline = time.monotonic() + seconds
    while True:
        busy_before = load_cpu.machine_ticks()
        time.sleep(3)
        busy = (load_cpu.machine_ticks() - busy_before) / load_cpu.TICKS / 3
        if busy < threshold or time.monotonic() > deadline:
            return busy


def run_scenario(scenario: Scenario, args, web: subprocess.Popen, access_log: Path) -> dict:
    prefix = config.OUT / scenario.name
    summary_file = Path(f"{prefix}-summary.json")
    summary_file.unlink(missing_ok=True)
    offset = access_log.stat().st_size if access_log.exists() else 0
    command = [
        *(config.PYTHON, "-m", "locust", "-f", str(config.ROOT / "bench" / "locustfile.py"), "--headless"),
        *("--host", config.HOST, "--users", str(scenario.users), "--spawn-rate", str(scenario.users)),
        # A bound on the whole run, logins included; the measured window
        # closes it earlier.
        *("--run-time", f"{int(args.measure_seconds + 120)}s", "--stop-timeout", "5"),
        *("--csv", str(prefix), "--only-summary", "--loglevel", "WARNING"),
        *("--measure-seconds", str(args.measure_seconds), "--summary-file", str(summary_file)),
        *("--think-min", str(args.think_min), "--think-max", str(args.think_max)),
        *("--server-pid", str(web.pid)),
        scenario.user_class,
    ]
    idle_before = quiet(args.quiet_wait, threshold=SHARED_CORES)
    started = time.perf_counter()
    with open(f"{prefix}-locust.log", "w") as log:
        subprocess.run(
            command,
            cwd=config.ROOT / "bench",
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=args.measure_seconds + 180,
            check=False,
        )
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    row = locust_row(Path(f"{prefix}_stats.csv"), scenario.request)
    window = (summary.get("window_start") or 0.0, summary.get("window_seconds", 0.0))
    server_ms = server_times(access_log, offset, scenario.access_line, window=window)
    return {
        "scenario": scenario.name,
        "users": scenario.users,
        "logged_in": summary.get("logged_in", 0),
        "window_seconds": summary.get("window_seconds", 0.0),
        "measure_seconds": args.measure_seconds,
        "wall_seconds": time.perf_counter() - started,
        "machine_busy_before": idle_before,
        "cores": summary.get("cores", {}),
        "login_failures": summary.get("login_failures", []),
        "not_ready": summary.get("not_ready", []),
        "requests": int(row.get("Request Count", 0)),
        # Failed requests of the window, whatever their kind (the target's own
        # row counts them too, so they are taken from the failures file alone).
        "failures": failures(Path(f"{prefix}_failures.csv")),
        "rps": float(row.get("Requests/s", 0) or 0),
        "locust_ms": {p: float(row.get(f"{p}%", "nan") or "nan") for p in ("50", "95", "99")}
        | {"max": float(row.get("Max Response Time", "nan") or "nan")},
        "server_ms": percentiles(server_ms),
        "server_requests": len(server_ms),
        "target_ms": scenario.target_ms,
    }


def locust_row(stats: Path, name: str) -> dict:
    if not stats.exists():
        return {}
    with open(stats, newline="", encoding="utf-8") as f:
        return next((row for row in csv.DictReader(f) if row["Name"] == name), {})


def failures(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, newline="", encoding="utf-8") as f:
        return sum(int(row["Occurrences"]) for row in csv.DictReader(f))


def server_times(
    access_log: Path, offset: int, pattern: re.Pattern, *, window: tuple[float, float]
) -> list[float]:
    """Gunicorn's time, in ms, for each matching request logged after
    ``offset`` within the measured window (the log has whole seconds)."""
    start, seconds = window
    times = []
    with open(access_log, encoding="utf-8") as f:
        f.seek(offset)
        for line in f:
            match = pattern.match(line)
            if match is None:
                continue
            logged = datetime.strptime(match[1], "%d/%b/%Y:%H:%M:%S %z").timestamp()
            if int(start) <= logged <= start + seconds + 1:
                times.append(int(line.rsplit(" ", 1)[1]) / 1000)
    return times


def percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"50": cuts[49], "95": cuts[94], "99": cuts[98], "max": max(values)}


def verdict(result: dict) -> list[str]:
    """Why the scenario missed its target; empty when it met it."""
    problems = []
    if result["logged_in"] < result["users"]:
        problems.append(f"only {result['logged_in']} of {result['users']} users logged in")
    if result["requests"] == 0:
        problems.append("no request was measured")
    elif result["window_seconds"] < 0.95 * result["measure_seconds"]:
        problems.append(f"the window was cut to {result['window_seconds']:.0f} s")
    if result["not_ready"]:
        problems.append(f"{len(result['not_ready'])} users found nothing to do")
    if result["failures"]:
        problems.append(f"{result['failures']} errors")
    if not result["locust_ms"]["95"] < result["target_ms"]:
        problems.append(f"p95 {result['locust_ms']['95']:.0f} ms is not under {result['target_ms']:.0f} ms")
    return problems


def report(results: list[dict], args, before: dict) -> str:
    lines = [
        "command: .venv/bin/python bench/run_load.py " + " ".join(sys.argv[1:]),
        f"gunicorn: {args.workers} workers, "
        + ("sync" if args.threads == 1 else f"gthread with {args.threads} threads each")
        + ", --timeout 600, production settings; "
        + f"think time {args.think_min:g}–{args.think_max:g} s; measured window {args.measure_seconds:g} s",
        f"data: {before['answers']} answers in {config.ASSISTANT_VERSION}, "
        f"{before['judgements']} judgements before the run, "
        f"fewest open items of a reviewer {before['fewest_open_items']}",
        "",
        "| scenario | requests | errors | req/s | p50 / p95 / p99 / max, locust (ms) "
        "| p50 / p95 / p99 / max, gunicorn (ms) | cores: gunicorn / postgres / locust / other | target |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for result in results:
        problems = verdict(result)
        locust = " / ".join(f"{result['locust_ms'][p]:.0f}" for p in ("50", "95", "99", "max"))
        server = (
            " / ".join(f"{result['server_ms'][p]:.1f}" for p in ("50", "95", "99", "max"))
            if result["server_ms"]
            else "n/a"
        )
        errors = result["failures"] + len(result["login_failures"]) + len(result["not_ready"])
        outcome = "met" if not problems else "MISSED: " + "; ".join(problems)
        split = result["cores"]
        cores = (
            " / ".join(f"{split[part]:.2f}" for part in ("gunicorn", "postgres", "locust", "other"))
            if split
            else "n/a"
        )
        lines.append(
            f"| {result['users']} {result['scenario']} | {result['requests']} | {errors} "
            f"| {result['rps']:.1f} | {locust} | {server} | {cores} "
            f"| p95 < {result['target_ms']:.0f} ms: {outcome} |"
        )
    shared = [r for r in results if r["cores"].get("other", 0) > SHARED_CORES]
    for result in shared:
        lines.append(
            f"\nNote: other work on the machine used {result['cores']['other']:.2f} cores during the "
            f"{result['scenario']} window; its figures are slower than on a quiet machine."
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--measure-seconds", type=float, default=120)
    parser.add_argument("--think-min", type=float, default=1.0)
    parser.add_argument("--think-max", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (docker-compose.yml: 3)")
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60,
        help="wait up to this many seconds for other work on the machine to stop before each scenario",
    )
    parser.add_argument("--only", choices=[s.name for s in SCENARIOS], help="run one scenario")
    args = parser.parse_args()

    config.OUT.mkdir(parents=True, exist_ok=True)
    plain = config.environment(production=False)
    # As docker-compose.yml starts web: migrations first, or a database set up
    # before the latest migration would answer 500s.
    config.manage(plain, "migrate", "--noinput", "--verbosity", "0")
    before = state(plain)
    # What one reviewer submits in the window at the mean pause, with room to spare.
    needed = int(1.5 * args.measure_seconds / ((args.think_min + args.think_max) / 2 + 0.05)) + 1
    if args.only != "managers" and (
        before["reviewers_with_items"] < len(config.REVIEWERS) or before["fewest_open_items"] < needed
    ):
        raise SystemExit(
            f"a reviewer has {before['fewest_open_items']} open items and may need {needed}: "
            "run bench/load_setup.py first"
        )

    env = config.environment(production=True)
    config.manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    access_log = config.OUT / "access.log"
    access_log.unlink(missing_ok=True)
    web = start_gunicorn(env, workers=args.workers, threads=args.threads, access_log=access_log)
    results = []
    try:
        for scenario in SCENARIOS:
            if args.only and scenario.name != args.only:
                continue
            print(
                f"{scenario.name}: {scenario.users} users, {args.measure_seconds:g} s measured…", flush=True
            )
            results.append(run_scenario(scenario, args, web, access_log))
    finally:
        stop(web)

    text = report(results, args, before)
    print(text)
    (config.OUT / "results.md").write_text(text + "\n")
    (config.OUT / "results.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    sys.exit(1 if any(verdict(result) for result in results) else 0)


if __name__ == "__main__":
    main()
