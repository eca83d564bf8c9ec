"""Every interval the app shows, and the gate, against its target (issue 24).

    .venv/bin/python bench/coverage.py            # each simulation at its default size, about 7 minutes
    .venv/bin/python bench/coverage.py --quick    # small grids, under a minute

Runs the four coverage simulations (each also runs alone, with its own
table: coverage_rates.py, coverage_gate.py, coverage_kappa.py,
coverage_strata.py), all with fixed seeds and the app's own functions, and
prints for each figure the worst coverage (or, for a pass rate, the highest)
over its designs against the target, and how many designs miss it. The
corners that miss on purpose, and why, are in bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import coverage_gate
import coverage_kappa
import coverage_rates
import coverage_strata

SIMULATIONS = (coverage_rates, coverage_gate, coverage_kappa, coverage_strata)


def meets(row: dict) -> bool:
    direction, bound = row["target"].split()
    return row["coverage"] <= float(bound) if direction == "<=" else row["coverage"] >= float(bound)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each simulation's small grid")
    options = parser.parse_args()
    print(f"{'figure':58} {'target':>8} {'worst':>7} {'designs':>8} {'missed':>7}")
    for simulation in SIMULATIONS:
        started = time.perf_counter()
        table = simulation.rows(quick=options.quick)
        by_figure: dict[tuple[str, str], list[dict]] = {}
        for row in table:
            by_figure.setdefault((row["interval"], row["target"]), []).append(row)
        for (figure, target), own in by_figure.items():
            values = [row["coverage"] for row in own]
            worst = max(values) if target.startswith("<=") else min(values)
            missed = sum(not meets(row) for row in own)
            print(f"{figure[:58]:58} {target:>8} {worst:7.4f} {len(own):8} {missed:7}")
        print(f"  ({simulation.__name__}: {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
