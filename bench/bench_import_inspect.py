"""Time the import of an Inspect AI eval log into a run log.

    .venv/bin/python bench/bench_import_inspect.py [--samples 100000] [--rewrite]

Writes a finished .eval log of statistics questions once, with Inspect's
own writer (tests/inspect_logs.py), to bench/out/, and prints how long that
took; a later run reuses it unless --rewrite. Then converts it with
scoring.imports.inspect_log.convert in a child process and prints the wall
time of the conversion (imports excluded), samples per second and the
child's peak resident memory; the writer's peak is printed too. Both run in
child processes so that each peak is its own.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"


def child(*args: str) -> tuple[dict, int]:
    """Run this script with ``args`` in a child process: (the JSON it
    prints, its peak resident memory in KB)."""
    process = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(args)} failed with exit code {process.returncode}")
    return json.loads(output), usage.ru_maxrss


def write(log: Path, samples: int) -> None:
    from tests.inspect_logs import write_inspect_log

    start = time.perf_counter()
    write_inspect_log(log, samples=samples)
    print(json.dumps({"seconds": time.perf_counter() - start}))


def convert(log: Path, run: Path) -> None:
    import inspect_ai.log  # noqa: F401  (imported before the clock starts, as a worker has it)

    from scoring.imports import ImportOptions, inspect_log

    start = time.perf_counter()
    with open(run, "wb") as out:
        lines = inspect_log.convert(log, out, ImportOptions())
    print(json.dumps({"seconds": time.perf_counter() - start, "lines": lines}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000, help="samples in the log (default 100000)")
    parser.add_argument("--rewrite", action="store_true", help="write the log again even if it exists")
    parser.add_argument("--write", nargs=2, metavar=("LOG", "SAMPLES"), help=argparse.SUPPRESS)
    parser.add_argument("--convert", nargs=2, metavar=("LOG", "RUN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write(Path(args.write[0]), int(args.write[1]))
        return
    if args.convert:
        convert(Path(args.convert[0]), Path(args.convert[1]))
        return

    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / f"inspect_{args.samples}.eval"
    run = OUT / f"inspect_{args.samples}.jsonl"
    print(f"{args.samples:,} samples, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    if args.rewrite or not log.exists():
        written, peak = child("--write", str(log), str(args.samples))
        print(f"write (Inspect's writer): {written['seconds']:.1f} s, peak RSS {peak / 1024:,.0f} MB")
    else:
        print("write: reusing the log written before (--rewrite to write it again)")
    print(f"log: {log} ({log.stat().st_size / 1e6:,.1f} MB)")
    converted, peak = child("--convert", str(log), str(run))
    seconds = converted["seconds"]
    print(
        f"convert: {seconds:.1f} s, {converted['lines'] / seconds:,.0f} samples/s, "
        f"peak RSS {peak / 1024:,.0f} MB (the whole child process)"
    )
    print(f"run log: {run} ({converted['lines']:,} lines, {run.stat().st_size / 1e6:,.1f} MB)")


if __name__ == "__main__":
    main()
