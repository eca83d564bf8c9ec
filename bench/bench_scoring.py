"""The scoring CLI against spec 000's reference script and the floor, side by side.

    .venv/bin/python bench/bench_scoring.py [--answers 100000] [--answers 1000000] [--rounds 5]
        [--shape simple] [--shape realistic]

For each shape and size, a generated run is written once to bench/out/ in
the combined form (no header line, as the reference script reads it) and as
a run log with its question set. Two shapes of answers to the same
synthetic question set (English, French and Spanish):

- simple: scoring.synthetic's generate_run, mostly one sentence with one
  figure and its year;
- realistic: scoring.synthetic.realistic, shaped like spec 000's running
  example: four to six numbers an answer, decimal commas, thousands grouped
  by spaces and commas, dates, "per 1,000" denominators, several citations,
  declines that still state the national figure.

Then, in interleaved rounds so that the machine's drift falls on all alike,
each of these runs in its own process and is timed end to end (interpreter
start included), with its peak resident memory:

- reference: ../shared/baselines/answer_scores.py on the combined form;
- floor: read the file, parse each line with orjson and make one regex
  pass over each answer (what no scorer can beat in Python; this script's
  own --floor);
- CLI, one worker and every core, on the combined form and with
  --questions, all with --json.

It prints the median of each, answers per second, the ratio to the
reference (higher is faster) and to the floor (how many times the floor's
time), and checks that the CLI's counts equal the reference's: every
slice's n and rate (to the two decimals the reference prints), and the
whole run's k where the reference's findings count it exactly.

First it times the CLI's start-up: a 10-line run of the first shape, end
to end, median of ten, wall and CPU. The scoring package is compiled to
bytecode first, as an installed package is, since this machine's
environment sets PYTHONDONTWRITEBYTECODE.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"
REFERENCE = ROOT.parent / "shared" / "baselines" / "answer_scores.py"
PYTHON = sys.executable
# The reference's columns, in the CLI's names.
REFERENCE_MEASURES = (
    "numeric_accuracy",
    "citation_validity",
    "refusal_accuracy",
    "answer_rate",
    "unsupported_numbers",
)
# The floor's one pass: digit runs with their separators, as a number reader must find them.
FLOOR_NUMBER = re.compile(r"\d+(?:[.,  ]\d+)*")
SHAPES = ("simple", "realistic")
# The reference's findings that each name one failure (numeric, citation,
# refusal) or one unsupported number: the whole run's k, exactly, where its
# table rounds the rate to two decimals.
REFERENCE_FINDINGS = {
    "numeric_accuracy": re.compile(r"^  \S+: expected \[.*\], answer gave \[", re.M),
    "citation_validity": re.compile(r"^  \S+: cited .*, which was not retrieved$", re.M),
    "refusal_accuracy": re.compile(r"^  \S+: should have declined, answered ", re.M),
    "unsupported_numbers": re.compile(r"^  \S+: number \S+ is not a retrieved value$", re.M),
}


def files(answers: int, shape: str = "simple") -> dict[str, Path]:
    """The run of ``answers`` answers of ``shape`` (SHAPES): combined form,
    run log and question set."""
    from scoring import synthetic
    from scoring.synthetic.realistic import generate_realistic_run

    OUT.mkdir(parents=True, exist_ok=True)
    # The simple runs keep the names they had before there were shapes.
    tag = str(answers) if shape == "simple" else f"{shape}-{answers}"
    label = f"bench-{tag}"
    paths = {
        "combined": OUT / f"combined-{tag}.jsonl",
        "run": OUT / f"answers_run_bench-1.0_set-{label}.jsonl",
        "questions": OUT / f"questions_set-{label}.jsonl",
    }
    if all(path.exists() for path in paths.values()):
        return paths
    questions = synthetic.generate_question_set(questions=answers, seed=2026, set_version=label)
    synthetic.write_jsonl(paths["questions"], questions, header={"set_version": label})
    generate = generate_realistic_run if shape == "realistic" else synthetic.generate_run
    rows = generate(question_set=questions, answers=answers, seed=2027)
    synthetic.write_jsonl(paths["run"], rows, header={"assistant_version": "bench-1.0", "set_version": label})
    with open(paths["combined"], "w") as out:
        for combined in synthetic.combined_form(questions, rows):
            out.write(json.dumps(combined) + "\n")
    return paths


def floor(path: Path) -> None:
    """Read, parse each line with orjson, one regex pass over each answer."""
    import orjson

    found = 0
    with open(path, "rb") as stream:
        for line in stream:
            record = orjson.loads(line)
            found += len(FLOOR_NUMBER.findall(record.get("answer") or ""))
    print(found)


def commands(paths: dict[str, Path]) -> dict[str, list[str]]:
    cli = [PYTHON, "-m", "scoring"]
    return {
        "reference script": [PYTHON, str(REFERENCE), str(paths["combined"])],
        "floor": [PYTHON, __file__, "--floor", str(paths["combined"])],
        "CLI, 1 worker, combined form": [*cli, str(paths["combined"]), "--json", "--workers", "1"],
        "CLI, every core, combined form": [*cli, str(paths["combined"]), "--json", "--workers", "0"],
        "CLI, 1 worker, --questions": [
            *cli, str(paths["run"]), "--questions", str(paths["questions"]), "--json", "--workers", "1",
        ],
        "CLI, every core, --questions": [
            *cli, str(paths["run"]), "--questions", str(paths["questions"]), "--json", "--workers", "0",
        ],
    }  # fmt: skip


def timed(command: list[str], output: Path) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of one run, its standard output
    written to ``output``: held here, a run's output (hundreds of MB of
    findings at 1M) would count in the next command's peak, whose process
    starts as a copy of this one."""
    start = time.perf_counter()
    with open(output, "wb") as stream:
        process = subprocess.Popen(command, cwd=ROOT, stdout=stream, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: the CLI found failures
        raise SystemExit(f"{' '.join(command)} failed")
    return wall, usage.ru_maxrss / 1024


def reference_table(output: str) -> dict[tuple[str, str], tuple[str, int]]:
    """{(slice, measure): (rate as printed, n)} from the reference's table."""
    table = {}
    for line in output.splitlines():
        cells = re.findall(r"(\d\.\d\d) \(n=(\d+)\)|(?<=\s)-(?=\s|$)", line)
        name = line.split(" ", 1)[0]
        if not (name == "all" or name.startswith("language=")) or len(cells) != len(REFERENCE_MEASURES):
            continue
        for measure, (value, n) in zip(REFERENCE_MEASURES, cells, strict=True):
            if value:
                table[(name, measure)] = (value, int(n))
    return table


def reference_whole_run_k(output: str, table: dict) -> dict[str, int]:
    """{measure: k} of the "all" slice, from the reference's findings and
    its table's n: a finding is a failure, or for unsupported numbers a success
    of the measure's k (the share of numbers that are unsupported)."""
    whole_run_k = {}
    for measure, finding in REFERENCE_FINDINGS.items():
        if ("all", measure) in table:
            listed = len(finding.findall(output))
            n = table[("all", measure)][1]
            whole_run_k[measure] = listed if measure == "unsupported_numbers" else n - listed
    return whole_run_k


def differences(reference: str, cli: str) -> list[str]:
    """Where the CLI's counts differ from the reference's, empty when none."""
    expected = reference_table(reference)
    slices = json.loads(cli)["slices"]
    found = []
    for (name, measure), (value, n) in expected.items():
        figure = slices.get(name, {}).get(measure)
        if figure is None:
            found.append(f"{name} {measure}: the CLI has no figure, the reference {value} (n={n})")
        elif figure["n"] != n or f"{figure['k'] / figure['n']:.2f}" != value:
            found.append(f"{name} {measure}: CLI {figure['k']}/{figure['n']}, reference {value} (n={n})")
    for measure, k in reference_whole_run_k(reference, expected).items():
        figure = slices.get("all", {}).get(measure)
        if figure is not None and figure["k"] != k:
            found.append(f"all {measure}: CLI k={figure['k']}, the reference's findings {k}")
    return found or ([] if expected else ["the reference printed no table"])


def make(answers: int, shape: str) -> dict[str, Path]:
    """The run's files, written by a child if missing: a process forked from
    a parent that holds a generated run counts the parent's pages in its own
    peak until it execs."""
    subprocess.run([PYTHON, __file__, "--make", str(answers), "--shape", shape], check=True)
    return files(answers, shape)


def bench(answers: int, rounds: int, shape: str) -> None:
    paths = make(answers, shape)
    runs = commands(paths)
    walls: dict[str, list[float]] = {name: [] for name in runs}
    peaks: dict[str, float] = dict.fromkeys(runs, 0.0)
    outputs = {name: OUT / f"output-{shape}-{answers}-{index}.txt" for index, name in enumerate(runs)}
    for _ in range(rounds):
        for name, command in runs.items():
            wall, peak = timed(command, outputs[name])
            walls[name].append(wall)
            peaks[name] = max(peaks[name], peak)
    medians = {name: statistics.median(times) for name, times in walls.items()}
    reference, lowest = medians["reference script"], medians["floor"]
    print(
        f"\n{answers:,} answers, {shape} shape, median of {rounds} interleaved rounds, {os.cpu_count()} cores"
    )
    print(f"{'':32}{'seconds':>9}{'answers/s':>12}{'x reference':>13}{'x floor':>9}{'peak MB':>9}")
    for name, seconds in medians.items():
        print(
            f"{name:32}{seconds:9.2f}{answers / seconds:12,.0f}{reference / seconds:13.2f}"
            f"{seconds / lowest:9.2f}{peaks[name]:9.0f}"
        )
    one, every = medians["CLI, 1 worker, combined form"], medians["CLI, every core, combined form"]
    print(f"every core over one worker (combined form): {one / every:.2f}x")
    for name in ("CLI, 1 worker, combined form", "CLI, 1 worker, --questions"):
        found = differences(outputs["reference script"].read_text(), outputs[name].read_text())
        print(f"counts of {name} against the reference: " + ("equal" if not found else "; ".join(found[:5])))


def startup(combined: Path, runs: int = 10) -> None:
    """The CLI on the first 10 lines of ``combined``: median wall and CPU seconds of ``runs``."""
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(ROOT / "scoring")], check=True)
    ten = OUT / "combined-10.jsonl"
    with open(combined, "rb") as source:
        ten.write_bytes(b"".join(next(source) for _ in range(10)))
    walls, cpus = [], []
    for _ in range(runs):
        start = time.perf_counter()
        process = subprocess.Popen(
            [PYTHON, "-m", "scoring", str(ten), "--json"], cwd=ROOT, stdout=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(process.pid, 0)
        walls.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit("the CLI failed on the 10-line run")
        cpus.append(usage.ru_utime + usage.ru_stime)
    print(
        f"CLI start-up, 10-line run, median of {runs}: {statistics.median(walls):.3f} s wall, "
        f"{statistics.median(cpus):.3f} s CPU"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, action="append", help="answers in a run (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        action="append",
        help="answers generated simply or shaped like spec 000's running example (repeatable; default both)",
    )
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--make", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    shapes = list(dict.fromkeys(args.shape or SHAPES))
    if args.make:
        for shape in shapes:
            files(args.make, shape)
        return
    if args.floor:
        floor(args.floor)
        return
    startup(make(100_000, shapes[0])["combined"])
    for shape in shapes:
        for answers in args.answers or [100_000, 1_000_000]:
            bench(answers, args.rounds, shape)


if __name__ == "__main__":
    main()
