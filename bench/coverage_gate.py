"""The release gate's false-pass rate at its margin, and the paired interval's coverage.

    .venv/bin/python bench/coverage_gate.py            # the full grid, about two minutes
    .venv/bin/python bench/coverage_gate.py --quick    # a few designs, seconds

Issue 24, point 4: a candidate whose true difference from the baseline is
exactly -margin (2 points) must pass the gate at most 2.5 % of the time (the
one-sided 97.5 % bound the gate promises), in every design: n paired
questions (50, 169, 400, 1,000), two-way discordance on top of the drop (0,
2, 10, 30 % of the questions: at 0 every discordant pair goes one way, the
baseline's), and the baseline's success rate (50 %, 85 %: how the concordant
pairs split, which moves Newcombe's interval). One point beyond the margin it
must pass less often still.

For each design the script draws paired tables (numpy, fixed seeds) and asks
the app's own functions, imported from scoring.stats.paired: the gate's
``noninferiority_bound`` (its decision is bound > -margin) and Newcombe's
interval, as the pages show it. Beside the simulated pass rate it gives the
exact pass chance of the bound's Tango part (``gate_pass_chance``, summed over
every table), which the gate's own pass rate cannot exceed, and the pass rate
of Newcombe's limit alone (the rule before this issue). The paired interval's
rows give how often Newcombe's two-sided 95 % interval holds the true
difference, over the same draws.

``rows(quick=True)`` runs four designs with fewer draws.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.stats.paired import (
    GATE_BOUND_METHOD,
    NEWCOMBE_METHOD,
    gate_pass_chance,
    newcombe_paired,
    noninferiority_bound,
)

MARGIN = 0.02
SIZES = (50, 169, 400, 1000)
EXTRA_DISCORDANCE = (0.0, 0.02, 0.1, 0.3)
BASELINE_RATES = (0.5, 0.85)
DRAWS, QUICK_DRAWS = 100_000, 2_000
# The exact sweep: the Tango part's pass chance at the margin over a wider grid.
SWEEP_SIZES = (30, 50, 100, 169, 250, 400, 700, 1000, 2000)
SWEEP_EXTRA = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9)
GATE_TARGET, COVERAGE_TARGET = 0.025, 0.93


def _cells(difference: float, extra: float, baseline_rate: float) -> list[float] | None:
    """Shares of [both succeed, only the baseline, only the candidate, both
    fail] for a true candidate - baseline ``difference`` (<= 0) with ``extra``
    discordance split evenly on top of it; None when the rates do not allow it."""
    only_baseline, only_candidate = extra / 2 - difference, extra / 2
    both = baseline_rate - only_baseline
    neither = 1 - both - only_baseline - only_candidate
    if min(both, neither) < 0:
        return None
    return [both, only_baseline, only_candidate, neither]


def _design(n: int, extra: float, baseline_rate: float, difference: float) -> str:
    discordance = extra - difference
    way = "all one way" if extra == 0 else f"{extra:.0%} two-way"
    return (
        f"n={n}, discordance {discordance:.0%} ({way}), baseline {baseline_rate:.0%}, "
        f"true difference {difference * 100:+.0f} points, margin {MARGIN * 100:.0f}"
    )


def _simulate(n: int, cells: list[float], difference: float, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    tables, counts = np.unique(rng.multinomial(n, cells, size=draws), axis=0, return_counts=True)
    gate_passes = newcombe_passes = covered = 0
    for (both, only_baseline, only_candidate, neither), count in zip(tables.tolist(), counts, strict=True):
        # The pages' interval for candidate - baseline: Newcombe's p1 is the
        # candidate's rate, as in scoring.stats.paired.paired_from_table.
        low, high = newcombe_paired(both, only_candidate, only_baseline, neither)
        covered += count * (low <= difference <= high)
        if low > -MARGIN:
            newcombe_passes += count
            # The gate's bound is never above Newcombe's lower limit, so only
            # tables that pass Newcombe's can pass the gate: ask it for those.
            if noninferiority_bound(((both, only_baseline), (only_candidate, neither))) > -MARGIN:
                gate_passes += count
    return {
        "gate": gate_passes / draws,
        "newcombe_alone": newcombe_passes / draws,
        "coverage": covered / draws,
        "distinct_tables": len(tables),
    }


def rows(*, quick: bool = False) -> list[dict]:
    """One row per design: the gate's pass rate at the margin and one point
    beyond it, then Newcombe's coverage at the margin's designs."""
    if quick:
        designs = [(n, extra, 0.5) for n in (169, 1000) for extra in (0.0, 0.1)]
    else:
        designs = [(n, extra, rate) for n in SIZES for extra in EXTRA_DISCORDANCE for rate in BASELINE_RATES]
    draws = QUICK_DRAWS if quick else DRAWS
    gate_rows, coverage_rows = [], []
    for index, (n, extra, rate) in enumerate(designs):
        for beyond, difference in enumerate((-MARGIN, -MARGIN - 0.01)):
            cells = _cells(difference, extra, rate)
            if cells is None:
                continue
            figures = _simulate(n, cells, difference, draws, seed=2400 + 10 * index + beyond)
            exact = gate_pass_chance(n, extra - difference, margin=MARGIN, difference=difference)
            gate_rows.append(
                {
                    "interval": f"release gate, pass rate ({GATE_BOUND_METHOD})",
                    "design": _design(n, extra, rate, difference),
                    "coverage": figures["gate"],
                    "target": f"<= {GATE_TARGET}",
                    "tango_part_exact": exact,
                    "newcombe_alone": figures["newcombe_alone"],
                    # What the bound costs: the (exact) chance that equal versions
                    # with the same discordance pass.
                    "pass_if_equal": gate_pass_chance(n, extra - difference, margin=MARGIN),
                    "draws": draws,
                }
            )
            if not beyond:
                # The same chance for the whole rule, Newcombe's limit included, simulated.
                equal = _cells(0.0, extra - difference, rate)
                if equal is not None:
                    simulated = _simulate(n, equal, 0.0, draws // 5, seed=4800 + index)["gate"]
                    gate_rows[-1]["pass_if_equal_simulated"] = simulated
                coverage_rows.append(
                    {
                        "interval": f"paired difference, {NEWCOMBE_METHOD}, two-sided 95 %",
                        "design": _design(n, extra, rate, difference),
                        "coverage": figures["coverage"],
                        "target": f">= {COVERAGE_TARGET}",
                        "draws": draws,
                    }
                )
    return gate_rows + coverage_rows + ([] if quick else [_sweep()])


def _sweep() -> dict:
    """The worst exact pass chance of the bound's Tango part at the margin
    over SWEEP_SIZES x SWEEP_EXTRA (the gate passes no more often)."""
    worst, where = 0.0, ""
    for n in SWEEP_SIZES:
        for extra in SWEEP_EXTRA:
            chance = gate_pass_chance(n, extra + MARGIN, margin=MARGIN, difference=-MARGIN)
            if chance > worst:
                worst, where = chance, f"n={n}, {extra:.1%} two-way"
    return {
        "interval": f"release gate, exact pass chance of the Tango part ({GATE_BOUND_METHOD}), worst",
        "design": (
            f"n {SWEEP_SIZES[0]}-{SWEEP_SIZES[-1]} ({len(SWEEP_SIZES)} sizes) x two-way discordance "
            f"{SWEEP_EXTRA[0]:.0%}-{SWEEP_EXTRA[-1]:.0%} ({len(SWEEP_EXTRA)} levels), true difference "
            f"-{MARGIN * 100:.0f} points, margin {MARGIN * 100:.0f}; worst at {where}"
        ),
        "coverage": worst,
        "target": f"<= {GATE_TARGET}",
        "draws": 0,
    }


def _meets(row: dict) -> bool:
    bound = float(row["target"].split()[1])
    return row["coverage"] <= bound if row["target"].startswith("<=") else row["coverage"] >= bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four designs, fewer draws")
    quick = parser.parse_args().quick
    started = time.perf_counter()
    table = rows(quick=quick)
    print(
        "| figure | design | pass rate or coverage | target | met | exact, Tango part | Newcombe alone "
        "| equal versions pass (exact, Tango part) | equal versions pass (simulated) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in table:
        extras = [
            f"{row[key]:.4f}" if key in row else ""
            for key in ("tango_part_exact", "newcombe_alone", "pass_if_equal", "pass_if_equal_simulated")
        ]
        if "tango_part_exact" in row:
            figure = "gate pass rate (simulated)"
        elif row["interval"].startswith("release gate"):
            figure = "gate, exact sweep (worst)"
        else:
            figure = "Newcombe 95 % coverage"
        print(
            f"| {figure} | {row['design']} | {row['coverage']:.4f} | {row['target']} | "
            f"{'yes' if _meets(row) else 'NO'} | {' | '.join(extras)} |"
        )
    missed = [row for row in table if not _meets(row)]
    print(
        f"\n{len(table)} rows, {len(missed)} off target; {table[0]['draws']:,} simulated tables a design; "
        f"{time.perf_counter() - started:.0f} s. Command: .venv/bin/python bench/coverage_gate.py"
        + (" --quick" if quick else "")
    )


if __name__ == "__main__":
    main()
