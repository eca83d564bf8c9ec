"""Importing an Inspect log against uploading the same answers as JSON Lines,
through the real stack.

    .venv/bin/python bench/bench_import_app.py [--samples 100000] [--workers 2]

Needs PostgreSQL and Redis on 127.0.0.1 (as bin/test does). Writes (once,
with Inspect's own writer; bench_import_inspect.py) a finished .eval log of
``--samples`` statistics questions, and converts it once into this app's run
log in the combined form: the same answers, evidence and expected values.
Then, on a fresh database with gunicorn and a Celery worker, it sends
(a) the run log to POST /api/runs, taking the set from the file, and
(b) the Inspect log to POST /api/imports, which converts it in the request,
and prints for each the seconds from the start of the request to the run's
scores on the page, and their ratio (issue 15's target: within 2x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_app  # noqa: E402
import bench_import_inspect  # noqa: E402

COLUMNS = "retrieved_contexts=contexts"


def curl(url: str, token: str, fields: dict[str, str]) -> dict:
    form = [part for name, value in fields.items() for part in ("-F", f"{name}={value}")]
    out = subprocess.run(
        ["curl", "-sS", "-H", f"Authorization: Bearer {token}", *form, url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def until_scored(base: str, token: str, run_id: int) -> dict:
    while True:
        state = bench_app.api(f"{base}/api/runs/{run_id}", token)
        if state["status"] in ("rejected", "failed") or (
            state["scorings"] and state["scorings"][0]["status"] in ("done", "failed")
        ):
            return state
        time.sleep(0.25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    bench_app.OUT.mkdir(parents=True, exist_ok=True)
    log = bench_app.OUT / f"inspect_{args.samples}.eval"
    if not log.exists():
        written, _ = bench_import_inspect.child("--write", str(log), str(args.samples))
        print(f"wrote the log with Inspect's writer in {written['seconds']:.0f} s")
    run_log = bench_app.OUT / f"inspect_{args.samples}_run.jsonl"
    from scoring import imports

    with open(run_log, "wb") as out:
        imports.convert(log, out, "inspect", imports.ImportOptions(columns=imports.parse_mapping([COLUMNS])))
    # The same answers under versions of their own, so the two runs do not meet.
    lines = run_log.read_bytes().split(b"\n", 1)
    header = json.loads(lines[0])
    header.update(assistant_version="jsonl-1.0", set_version=f"jsonl-{args.samples}")
    run_log.write_bytes(json.dumps(header).encode() + b"\n" + lines[1])
    print(
        f"{args.samples:,} samples: Inspect log {log.stat().st_size / 1e6:.0f} MB, "
        f"the same as a run log {run_log.stat().st_size / 1e6:.0f} MB"
    )

    case = bench_app.Case(answers=args.samples)
    env = bench_app.environment(case) | {
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/reviewapp_bench_import",
        "REVIEWAPP_DATA_DIR": str(bench_app.OUT / "data-import"),
    }
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", "reviewapp_bench_import"])
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", "reviewapp_bench_import"], check=True)
    bench_app.manage(env, "migrate", "--verbosity", "0")
    bench_app.manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from reviewapp.core.roles import grant; "
        "u,_=User.objects.get_or_create(username='bench'); grant(u, 'lead')",
    )
    token = bench_app.manage(env, "api_token", "bench").strip()
    subprocess.run(["redis-cli", "-n", "13", "flushdb"], check=True, capture_output=True)
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "reviewapp.wsgi", "-w", "2", "-b", f"127.0.0.1:{bench_app.PORT}",
         "--timeout", "900"],
        cwd=ROOT, env=env, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "-c", str(args.workers),
         "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{bench_app.PORT}"
    try:
        time.sleep(4)
        timings = {}
        for label, url, fields in (
            ("run log to POST /api/runs", f"{base}/api/runs",
             {"file": f"@{run_log}", "set_from_file": "true"}),
            (
                "Inspect log to POST /api/imports",
                f"{base}/api/imports",
                {"file": f"@{log}", "columns": COLUMNS, "assistant_version": "inspect-1.0",
                 "set_version": f"inspect-{args.samples}"},
            ),
        ):  # fmt: skip
            start = time.perf_counter()
            run = curl(url, token, fields)
            answered = time.perf_counter()
            if "id" not in run:
                raise SystemExit(f"{label}: refused: {run}")
            state = until_scored(base, token, run["id"])
            done = time.perf_counter()
            timings[label] = done - start
            scoring = state["scorings"][0]["status"] if state["scorings"] else "-"
            print(
                f"{label}: {state['answers']:,} answers {state['status']}, scoring {scoring}: "
                f"request {answered - start:.1f} s, "
                f"{done - start:.1f} s from the start of the request to scores on the page"
            )
        first, second = timings.values()
        print(f"import / upload: {second / first:.2f}x ({args.workers} worker processes, 2 gunicorn workers)")
    finally:
        web.terminate()
        worker.terminate()
        web.wait(30)
        worker.wait(60)


if __name__ == "__main__":
    main()
