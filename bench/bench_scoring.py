"""Time the scoring library and its CLI on a generated run.

    .venv/bin/python bench/bench_scoring.py [--answers 100000] [--reference]

Prints, for one core and for every core: the CLI's wall time (interpreter
start and imports included) and the library's throughput (reading,
validating and scoring the run, the question set already loaded). With
--reference it also times the slow pandas per-row scorer the tests keep.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import synthetic  # noqa: E402
from scoring.logfile import read_questions  # noqa: E402
from scoring.runner import score_file  # noqa: E402

OUT = ROOT / "bench" / "out"


def make_run(answers: int) -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    questions_path = OUT / f"questions_set-bench-{answers}.jsonl"
    run_path = OUT / f"answers_run_bench-1.0_set-bench-{answers}.jsonl"
    if not run_path.exists():
        questions = synthetic.generate_question_set(
            questions=answers, seed=2026, set_version=f"bench-{answers}"
        )
        rows = synthetic.generate_run(question_set=questions, answers=answers, seed=2027)
        synthetic.write_jsonl(questions_path, questions, header={"set_version": f"bench-{answers}"})
        synthetic.write_jsonl(
            run_path,
            rows,
            header={"assistant_version": "bench-1.0", "set_version": f"bench-{answers}"},
        )
    return run_path, questions_path


def best_of(runs: int, action) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference", action="store_true", help="also time the slow reference")
    args = parser.parse_args()

    run_path, questions_path = make_run(args.answers)
    size_mb = run_path.stat().st_size / 1e6
    questions = {q["question_id"]: q for q in read_questions(questions_path)}
    cores = os.cpu_count() or 1
    print(f"{args.answers} answers, {size_mb:.0f} MB, {cores} cores, Python {sys.version.split()[0]}")

    for workers in sorted({1, cores}):
        seconds = best_of(args.repeat, lambda w=workers: score_file(run_path, questions, workers=w))
        print(
            f"library, {workers} worker(s): {seconds:.2f} s, "
            f"{args.answers / seconds:,.0f} answers/s (best of {args.repeat})"
        )
        command = [
            sys.executable,
            "-m",
            "scoring",
            str(run_path),
            "--questions",
            str(questions_path),
            "--json",
            "--workers",
            str(workers),
        ]
        seconds = best_of(
            args.repeat,
            lambda c=command: subprocess.run(c, cwd=ROOT, check=True, stdout=subprocess.DEVNULL),
        )
        print(f"CLI, {workers} worker(s): {seconds:.2f} s wall, all included (best of {args.repeat})")

    if args.reference:
        sys.path.insert(0, str(ROOT / "tests"))
        import orjson

        from tests.reference_scorer import reference_score

        lines = run_path.read_bytes().splitlines()[1:]
        start = time.perf_counter()
        answers = [orjson.loads(line) for line in lines]
        reference_score(answers, questions)
        seconds = time.perf_counter() - start
        print(f"reference (pandas per row): {seconds:.2f} s, {args.answers / seconds:,.0f} answers/s")


if __name__ == "__main__":
    main()
