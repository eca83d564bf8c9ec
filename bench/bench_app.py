"""Upload to scores on the page, through the real stack, and page timings.

    .venv/bin/python bench/bench_app.py --answers 100000 [--answers 1000000] [--workers 2]

Needs PostgreSQL and Redis on 127.0.0.1 (as bin/test does). For each size
it makes a fresh database, starts gunicorn and a Celery worker, uploads a
generated question set and run over the API with curl, and measures:
- seconds from the end of the run's upload to its scores being on the page;
- the peak resident memory of each worker process while it worked;
- the version's dashboard, the run page and the findings list (filtered,
  deep pages), median of 10.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import synthetic  # noqa: E402

OUT = ROOT / "bench" / "out"
PORT = 8123
PYTHON = sys.executable


def generated(answers: int) -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    questions_path = OUT / f"questions_set-app-{answers}.jsonl"
    run_path = OUT / f"answers_run_app-1.0_set-app-{answers}.jsonl"
    if not run_path.exists():
        print(f"generating {answers} questions and answers…", flush=True)
        questions = synthetic.generate_question_set(questions=answers, seed=11, set_version=f"app-{answers}")
        synthetic.write_jsonl(questions_path, questions, header={"set_version": f"app-{answers}"})
        rows = synthetic.generate_run(question_set=questions, answers=answers, seed=12)
        del questions
        synthetic.write_jsonl(
            run_path, rows, header={"assistant_version": "app-1.0", "set_version": f"app-{answers}"}
        )
    return questions_path, run_path


def environment(answers: int) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/reviewapp_bench_{answers}",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/13",
        "REVIEWAPP_DATA_DIR": str(OUT / f"data-{answers}"),
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }


def manage(env: dict, *args: str) -> str:
    return subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout


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


def timed_get(url: str, cookie: str, repeat: int = 10) -> float:
    times = []
    for _ in range(repeat):
        request = urllib.request.Request(url, headers={"Cookie": cookie})
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench(answers: int, workers: int) -> None:
    questions_path, run_path = generated(answers)
    env = environment(answers)
    database = env["DATABASE_URL"].rsplit("/", 1)[1]
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", database], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", database], check=True)
    manage(env, "migrate", "--verbosity", "0")
    session = manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from django.contrib.sessions.backends.db import "
        "SessionStore; from reviewapp.roles import grant; u,_=User.objects.get_or_create(username='bench'); "
        "grant(u, 'lead'); s=SessionStore(); "
        "s['_auth_user_id']=str(u.pk); "
        "s['_auth_user_backend']='django.contrib.auth.backends.ModelBackend'; "
        "s['_auth_user_hash']=u.get_session_auth_hash(); s.create(); print(s.session_key)",
    ).split()[-1]
    # A token is issued only to an existing user with a role, so after the lead above.
    token = manage(env, "api_token", "bench").strip()
    subprocess.run(["redis-cli", "-n", "13", "flushdb"], check=True, capture_output=True)

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
    worker = subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "reviewapp", "worker", "-c", str(workers), "--loglevel", "WARNING"],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{PORT}"
    try:
        time.sleep(4)
        start = time.perf_counter()
        created = api(f"{base}/api/question-sets", token, file=questions_path)
        print(
            f"question set of {created['questions']} questions stored in {time.perf_counter() - start:.1f} s"
        )

        start = time.perf_counter()
        run = api(f"{base}/api/runs", token, file=run_path)
        uploaded = time.perf_counter()
        print(f"run of {run_path.stat().st_size / 1e6:.0f} MB uploaded in {uploaded - start:.1f} s")
        peaks: dict[int, float] = {}
        while True:
            for pid in worker_pids(worker.pid):
                peaks[pid] = max(peaks.get(pid, 0.0), rss_mb(pid))
            state = api(f"{base}/api/runs/{run['id']}", token)
            if state["status"] in ("rejected", "failed") or (
                state["scorings"] and state["scorings"][0]["status"] in ("done", "failed")
            ):
                break
            time.sleep(0.25)
        done = time.perf_counter()
        scoring = state["scorings"][0] if state["scorings"] else {}
        print(
            f"{answers} answers: {state['status']}, scoring {scoring.get('status')}: "
            f"{done - uploaded:.1f} s from the end of the upload to scores on the page "
            f"({workers} worker processes)"
        )
        print("peak worker memory (MB): " + ", ".join(f"{mb:.0f}" for mb in sorted(peaks.values())))

        cookie = f"sessionid={session}"
        run_url = f"{base}/runs/{run['id']}/"
        for label, url in (
            ("version dashboard", f"{base}/versions/app-1.0/"),
            ("run page", run_url),
            ("findings, unsupported", run_url + "?kind=unsupported"),
            ("findings, language=fr, page 200", run_url + "?language=fr&page=200"),
            ("findings partial, citation", run_url + "?kind=citation&page=20"),
        ):
            print(f"{label}: {timed_get(url, cookie):.0f} ms (median of 10)")
    finally:
        web.terminate()
        worker.terminate()
        web.wait(30)
        worker.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, action="append", help="run sizes (default 100000)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    for answers in args.answers or [100_000]:
        bench(answers, args.workers)


if __name__ == "__main__":
    main()
