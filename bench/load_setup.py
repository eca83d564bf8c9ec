"""Data for the load test (bench/README.md, "Load test").

    .venv/bin/python bench/load_setup.py

Needs PostgreSQL and Redis on 127.0.0.1. Drops and remakes the database
``reviewapp_load`` (Redis database 11), then, through the app's own paths:

- the released version, app-1.0: a generated 1M-answer run and its question
  set (scoring/synthetic/, as bench_app.py makes them; kept in
  bench/out/load/ for the next setup), uploaded over the API to a gunicorn
  and scored by a Celery worker; then a finished review of it: a 400-item
  sample read twice (``sample_draw``, ``sample_assign``) and every item
  judged (``judgement_submit``). Managers read this version's dashboard.
- the candidate, app-1.1: a 20,000-answer run on a set of its own, uploaded
  and scored the same way, and a 7,500-item sample read twice, 300 items per
  reviewer, of which each has judged the first 10. Reviewers work on this
  queue: a two-minute run takes about 60 items from each, so it lasts four.
- load-reviewer-01…50, load-manager-01…20 and load-lead, with the password
  in load_config.py.

Then ANALYZE, as autovacuum would have done by the time people log in (it is
off on this machine's PostgreSQL). Each step prints its time; every wait is
bounded, and the servers it starts are stopped whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import load_config as config

from scoring import synthetic

SCORING_TIMEOUT_SECONDS = 900
SETUP_PORT = config.PORT + 1
GENERATION_BATCH = 100_000


def step(message: str, started: float) -> float:
    now = time.perf_counter()
    print(f"{message} ({now - started:.1f} s)", flush=True)
    return now


def fresh_database(env: dict) -> None:
    """A new database, and with it an empty folder for the logs it stores."""
    shutil.rmtree(config.OUT / "data", ignore_errors=True)
    psql = ["-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run(["dropdb", *psql, "--if-exists", config.DATABASE], check=True, timeout=120)
    subprocess.run(["createdb", *psql, config.DATABASE], check=True, timeout=60)
    subprocess.run(
        ["redis-cli", "-n", config.REDIS_DB, "flushdb"], check=True, capture_output=True, timeout=30
    )
    config.manage(env, "migrate", "--verbosity", "0")


def generated(*, version: str, set_version: str, answers: int, seed: int) -> tuple[Path, Path]:
    """A question set of ``answers`` questions and a run of ``version`` that
    answers each once, written under bench/out/load/ and kept for next time.
    The run is written a batch of questions at a time, to keep memory low."""
    # The app reads the versions from a file's name too: the size goes in the folder's.
    folder = config.OUT / f"files-{answers}"
    folder.mkdir(parents=True, exist_ok=True)
    questions_path = folder / f"questions_set-{set_version}.jsonl"
    run_path = folder / f"answers_run_{version}_set-{set_version}.jsonl"
    if run_path.exists() and questions_path.exists():
        return questions_path, run_path
    print(f"generating {answers} questions and answers of {version}…", flush=True)
    questions = synthetic.generate_question_set(questions=answers, seed=seed, set_version=set_version)
    synthetic.write_jsonl(questions_path, questions, header={"set_version": set_version})
    partial = run_path.with_suffix(".partial")
    with open(partial, "w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps({"assistant_version": version, "set_version": set_version}) + "\n")
        for batch, first in enumerate(range(0, answers, GENERATION_BATCH)):
            part = questions[first : first + GENERATION_BATCH]
            rows = synthetic.generate_run(question_set=part, answers=len(part), seed=seed + 1 + batch)
            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    # Renamed only when whole, so a stopped setup never leaves half a run to reuse.
    partial.rename(run_path)
    return questions_path, run_path


def upload(env: dict, uploads: list[tuple[Path, Path]]) -> None:
    """Each question set and run over the API, as a pipeline sends them, and
    wait for the run's scores from a real worker."""
    config.manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; from reviewapp.core.roles import grant; "
        f"u, _ = get_user_model().objects.get_or_create(username={config.PIPELINE!r}); grant(u, 'lead')",
    )
    token = config.manage(env, "api_token", config.PIPELINE, "--name", "load-setup").strip()
    base = f"http://127.0.0.1:{SETUP_PORT}"
    log = open(config.OUT / "setup-servers.log", "w")  # noqa: SIM115 - closed below
    web = subprocess.Popen(
        [
            *(config.PYTHON, "-m", "gunicorn", "reviewapp.wsgi"),
            *("-w", "2", "-b", f"127.0.0.1:{SETUP_PORT}", "--timeout", "900"),
        ],
        cwd=config.ROOT,
        env=env,
        stdout=log,
        stderr=log,
    )
    worker = subprocess.Popen(
        [config.PYTHON, "-m", "celery", "-A", "reviewapp", "worker", "-c", "2", "--loglevel", "WARNING"],
        cwd=config.ROOT,
        env=env,
        stdout=log,
        stderr=log,
    )
    try:
        wait_for(f"{base}/login/", seconds=30)
        for questions_path, run_path in uploads:
            started = time.perf_counter()
            created = post_file(f"{base}/api/question-sets", token, questions_path)
            started = step(f"  set {created['version']}: {created['questions']} questions stored", started)
            run = post_file(f"{base}/api/runs", token, run_path)
            started = step(f"  run #{run['id']}: {run_path.stat().st_size / 1e6:.0f} MB uploaded", started)
            state = scored(base, token, run["id"])
            step(
                f"  run #{run['id']}: {state['answers']} answers of {state['assistant_version']} scored",
                started,
            )
    finally:
        for process in (web, worker):
            process.terminate()
        for process in (web, worker):
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def scored(base: str, token: str, run_id: int) -> dict:
    deadline = time.monotonic() + SCORING_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        request = urllib.request.Request(
            f"{base}/api/runs/{run_id}", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            state = json.loads(response.read())
        scorings = state["scorings"]
        if state["status"] in ("rejected", "failed") or (
            scorings and scorings[0]["status"] in ("done", "failed")
        ):
            if not scorings or scorings[0]["status"] != "done":
                raise SystemExit(f"run #{run_id} ended {state['status']}, scorings {scorings}")
            return state
        time.sleep(1)
    raise SystemExit(f"run #{run_id} was not scored within {SCORING_TIMEOUT_SECONDS} s")


def post_file(url: str, token: str, path: Path) -> dict:
    """Upload a file as a pipeline does (curl streams it from disk), within ten minutes."""
    done = subprocess.run(
        [
            *("curl", "-sS", "--fail-with-body", "--max-time", "600"),
            *("-H", f"Authorization: Bearer {token}", "-F", f"file=@{path}", url),
        ],
        capture_output=True,
        text=True,
        timeout=660,
    )
    if done.returncode != 0:
        raise SystemExit(f"uploading {path.name} failed: {done.stderr.strip()} {done.stdout.strip()}")
    return json.loads(done.stdout)


def wait_for(url: str, *, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s")


def people_and_reviews(*, released_items: int, queue_items: int, judged_each: int) -> None:
    """Users, the released version's finished review and the candidate's
    queue, through the app's services."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import transaction

    from reviewapp.core.roles import grant
    from reviewapp.models import Role, Run
    from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
    from reviewapp.review.services.samples import Frame, sample_assign, sample_draw

    started = time.perf_counter()
    User = get_user_model()
    # One hash for every account: hashing 71 passwords one by one takes most
    # of a minute, and these accounts exist only in this database.
    password = make_password(config.PASSWORD)
    with transaction.atomic():
        for names, role in (
            (config.REVIEWERS, Role.REVIEWER),
            (config.MANAGERS, Role.MANAGER),
            ([config.LEAD], Role.LEAD),
        ):
            for name in names:
                user, _ = User.objects.get_or_create(username=name)
                user.password = password
                user.save(update_fields=("password",))
                grant(user, role)
    started = step(f"{len(config.REVIEWERS)} reviewers, {len(config.MANAGERS)} managers and a lead", started)

    lead = User.objects.get(username=config.LEAD)
    reviewers = list(User.objects.filter(username__in=config.REVIEWERS))
    rng = random.Random(7)
    rubric = rubric_default()
    keys = list(rubric.questions.values_list("key", flat=True))

    def judge(assignments) -> int:
        made = 0
        for assignment in assignments:
            judgement_submit(
                assignment=assignment,
                author=assignment.reviewer,
                data=JudgementInput(
                    addresses_question=True,
                    rubric_answers={key: rng.choice(("yes", "yes", "yes", "no")) for key in keys},
                    grade=rng.choice(
                        ("resolved", "resolved", "resolved", "partially_resolved", "unresolved")
                    ),
                    # A reason for every outcome; a resolved one may carry one too.
                    note="checked against the records",
                ),
                submission_key=uuid.uuid4(),
            )
            made += 1
        return made

    for version, size, name, judged in (
        (config.ASSISTANT_VERSION, released_items, "Release review", None),
        (config.CANDIDATE_VERSION, queue_items, config.QUEUE_NAME, judged_each),
    ):
        run = Run.objects.get(assistant_version__label=version, status=Run.Status.STORED)
        sample = sample_draw(
            frame=Frame(run=run),
            size=size,
            strata_fields=("language",),
            seed=2026,
            rubric_version=rubric,
            readers_per_item=2,
            name=name,
            created_by=lead,
        )
        assignments = sample_assign(sample=sample, reviewers=reviewers, readers_per_item=2)
        chosen = [a for a in assignments if judged is None or a.order <= judged]
        made = judge(sorted(chosen, key=lambda a: (a.reviewer_id, a.order)))
        started = step(
            f"{version}: sample #{sample.id} of {sample.size} items from {sample.frame_size} answers, "
            f"{len(assignments)} assignments ({len(assignments) // len(reviewers)} per reviewer), "
            f"{made} judged",
            started,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--answers", type=int, default=1_000_000, help="the released version's run")
    parser.add_argument("--candidate-answers", type=int, default=20_000, help="the candidate's run")
    parser.add_argument("--released-items", type=int, default=400, help="items of the finished review")
    parser.add_argument("--queue-items", type=int, default=7500, help="items of the reviewers' queue")
    parser.add_argument("--judged-each", type=int, default=10, help="queue items each reviewer has judged")
    args = parser.parse_args()

    config.OUT.mkdir(parents=True, exist_ok=True)
    env = config.environment(production=False)
    started = time.perf_counter()
    fresh_database(env)
    started = step(f"database {config.DATABASE} made and migrated", started)
    released = generated(
        version=config.ASSISTANT_VERSION, set_version="load-released-1", answers=args.answers, seed=11
    )
    candidate = generated(
        version=config.CANDIDATE_VERSION,
        set_version="load-candidate-1",
        answers=args.candidate_answers,
        seed=21,
    )
    started = step("generated files ready (bench/out/load/)", started)
    upload(env, [released, candidate])
    os.environ.update(env)
    people_and_reviews(
        released_items=args.released_items, queue_items=args.queue_items, judged_each=args.judged_each
    )
    started = time.perf_counter()
    subprocess.run(
        ["vacuumdb", "-h", "127.0.0.1", "-U", "postgres", "--analyze", "--quiet", "-d", config.DATABASE],
        check=True,
        timeout=300,
    )
    step("vacuum and analyze", started)


if __name__ == "__main__":
    total = time.perf_counter()
    main()
    step("setup done", total)
