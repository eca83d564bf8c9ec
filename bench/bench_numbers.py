"""extract_numbers on typical answers, against the same function at another commit.

    .venv/bin/python bench/bench_numbers.py [--against main] [--answers 20000] [--rounds 7]

The answers are the synthetic generator's (scoring/synthetic/: English,
French and Spanish, as bench_scoring.py's runs hold them), read once each
per round; with --against, scoring/numbers.py as it stands at that commit
(git show) is loaded beside the working tree's, and the two are timed in
interleaved rounds so that the machine's drift falls on both alike, each
round's time being this process's CPU time (other processes on the machine
count less than in wall time). It prints the best and median round of each, microseconds per answer and the
ratio (working tree over the other: above 1 is slower), overall and per
language, with and without scale words, and checks that both read the same numbers from every answer.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import numbers, synthetic  # noqa: E402


def answers(count: int, *, seed: int = 7) -> list[tuple[str, str]]:
    """``count`` (text, language) pairs from a generated run, declines left out."""
    questions = synthetic.generate_question_set(questions=count, seed=seed)
    run = synthetic.generate_run(question_set=questions, answers=count, seed=seed + 1)
    return [(row["answer"], row["language"]) for row in run if row.get("answer")]


def module_at(commit: str):
    """scoring/numbers.py as it stands at ``commit``, loaded as its own module."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:scoring/numbers.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "numbers_at_commit.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("numbers_at_commit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_round(module, texts: list[tuple[str, str]], scale_words: bool) -> float:
    extract = module.extract_numbers
    started = time.process_time()
    for text, language in texts:
        extract(text, language=language, scale_words=scale_words)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="a commit to time scoring/numbers.py at, beside the working tree's")
    parser.add_argument("--answers", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    texts = answers(args.answers)
    modules = {"working tree": numbers}
    if args.against:
        modules[args.against] = module_at(args.against)
        differ = sum(
            [n.readings for n in numbers.extract_numbers(text, language=language)]
            != [n.readings for n in modules[args.against].extract_numbers(text, language=language)]
            for text, language in texts
        )
        print(f"answers whose numbers differ from {args.against}: {differ} of {len(texts)}")
    print(f"{len(texts)} answers, {statistics.mean(len(t) for t, _ in texts):.0f} characters on average")
    by_language: dict[str, list[tuple[str, str]]] = {}
    for text, language in texts:
        by_language.setdefault(language, []).append((text, language))
    for scale_words in (False, True):
        # times[module][language]: one CPU time per round.
        times = {name: {language: [] for language in by_language} for name in modules}
        for _ in range(args.rounds):
            for name, module in modules.items():
                for language, subset in by_language.items():
                    times[name][language].append(one_round(module, subset, scale_words))
        print(f"scale_words={scale_words}, {args.rounds} interleaved rounds, CPU time:")
        for name, per_language in times.items():
            rounds = [sum(round_times) for round_times in zip(*per_language.values(), strict=True)]
            best, median = min(rounds), statistics.median(rounds)
            print(
                f"  {name:>14}: best {best * 1000:.1f} ms, median {median * 1000:.1f} ms,"
                f" {best / len(texts) * 1e6:.2f} us per answer"
            )
        if args.against:
            for language in ("all", *sorted(by_language)):
                if language == "all":
                    ours = [sum(r) for r in zip(*times["working tree"].values(), strict=True)]
                    theirs = [sum(r) for r in zip(*times[args.against].values(), strict=True)]
                else:
                    ours, theirs = times["working tree"][language], times[args.against][language]
                print(
                    f"  working tree / {args.against}, {language}: {min(ours) / min(theirs):.3f} (best),"
                    f" {statistics.median(ours) / statistics.median(theirs):.3f} (median)"
                )


if __name__ == "__main__":
    main()
