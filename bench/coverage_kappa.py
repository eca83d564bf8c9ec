"""Cohen's kappa's interval and the judge validation rule at the threshold
(issue 24, point 2).

Simulates holdouts of a judge whose true kappa with people equals the
validation threshold (0.6) over a grid of designs (items 30, 50, 65, 100;
people's pass rate 0.5, 0.7, 0.9; the judge passing as often as people, or
5 points more often), draws each holdout's 2 x 2 table (people x judge) from
the multinomial, and runs the app's own functions on it
(scoring.stats.agreement: kappa_with_interval and validation_missing, the
rule reviewapp.judges.validation applies, with JudgeVersion's default of 50
items). For each design it prints:

- the 95 % interval's coverage of the true kappa, over the holdouts where
  kappa is defined (target >= 0.93);
- how often its lower limit is above the true 0.6, the one-sided error the
  rule rests on (target <= 0.025);
- how often the judge is validated (target <= 0.025).

With ``--wald``, the same figures for what the app did before (issue 24,
point 2): statsmodels' large-sample interval, kept within -1 to 1, and the
rule without the minimum of each label, on the same holdouts.

    .venv/bin/python bench/coverage_kappa.py            # 4,000 holdouts a design
    .venv/bin/python bench/coverage_kappa.py --quick    # 200
    .venv/bin/python bench/coverage_kappa.py --wald     # and the former interval beside it

Fixed seeds; a table seen twice is computed once.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.stats.agreement import KAPPA_INTERVAL_METHOD, kappa_with_interval, validation_missing

THRESHOLD = 0.6
MIN_ITEMS = 50  # JudgeVersion.validation_min_items' default
ITEMS = (30, 50, 65, 100)
PASS_RATES = (0.5, 0.7, 0.9)
# How many points more often than people the judge passes.
LENIENCY = (0.0, 0.05)
HOLDOUTS, QUICK_HOLDOUTS = 4000, 200
SEED = 2024

INTERVAL = f"Cohen's kappa, 95 % interval ({KAPPA_INTERVAL_METHOD})"
LOWER = "kappa's lower limit above the true kappa"
VALIDATED = "judge validated at kappa = threshold"
WALD = "Wald, the former interval and rule"


def cells(people_pass: float, judge_pass: float, kappa: float) -> np.ndarray | None:
    """The 2 x 2 table's probabilities (people pass and judge pass, people
    pass and judge fail, people fail and judge pass, both fail) with these
    pass rates and this Cohen's kappa; None where no table has them."""
    chance = people_pass * judge_pass + (1 - people_pass) * (1 - judge_pass)
    observed = chance + kappa * (1 - chance)
    both_pass = (observed + people_pass + judge_pass - 1) / 2
    table = np.array(
        [both_pass, people_pass - both_pass, judge_pass - both_pass, 1 - people_pass - judge_pass + both_pass]
    )
    return table if np.all(table >= 0) else None


def wald_interval(matrix: list[list[int]]) -> tuple[float, float, float]:
    """The former interval: statsmodels' large-sample one, kept within -1 to 1."""
    from statsmodels.stats.inter_rater import cohens_kappa

    with np.errstate(divide="ignore", invalid="ignore"):
        result = cohens_kappa(np.array(matrix, dtype=float))
    return float(result.kappa), max(float(result.kappa_low), -1.0), min(float(result.kappa_upp), 1.0)


def simulate(
    items: int, people_pass: float, leniency: float, holdouts: int, seed: int, *, wald: bool = False
) -> dict | None:
    probabilities = cells(people_pass, people_pass + leniency, THRESHOLD)
    if probabilities is None:
        return None
    tables = np.random.default_rng(seed).multinomial(items, probabilities, size=holdouts)
    seen: dict[tuple[int, ...], tuple[float, float, float]] = {}
    covered = defined = above = validated = 0
    for table in tables:
        key = tuple(int(count) for count in table)
        if key not in seen:
            matrix = [[key[0], key[1]], [key[2], key[3]]]
            seen[key] = wald_interval(matrix) if wald else kappa_with_interval(matrix)
        kappa, low, high = seen[key]
        if np.isnan(kappa) or np.isnan(low) or np.isnan(high):
            continue
        defined += 1
        covered += low <= THRESHOLD <= high
        above += low > THRESHOLD
        missing = validation_missing(
            categories=("pass", "fail"),
            people=[key[0] + key[1], key[2] + key[3]],
            kappa_low=low,
            threshold=THRESHOLD,
            min_items=MIN_ITEMS,
        )
        if wald:
            # The former rule: enough items and the lower limit above the threshold.
            missing = [line for line in missing if not line.startswith("people's labels")]
        validated += not missing
    return {
        "coverage": covered / defined,
        "above": above / holdouts,
        "validated": validated / holdouts,
        "undefined": 1 - defined / holdouts,
    }


def rows(*, quick: bool = False, wald: bool = False) -> list[dict]:
    """Per design, the interval's coverage, its lower limit's one-sided error
    and the validation rate at the threshold, each with its target; with
    ``wald``, the former interval and rule's."""
    holdouts = QUICK_HOLDOUTS if quick else HOLDOUTS
    result = []
    designs = [(leniency, rate, items) for leniency in LENIENCY for rate in PASS_RATES for items in ITEMS]
    for number, (leniency, people_pass, items) in enumerate(designs):
        figures = simulate(items, people_pass, leniency, holdouts, SEED + number, wald=wald)
        if figures is None:
            continue
        judge = "judge as people" if not leniency else f"judge passes {leniency * 100:.0f} points more"
        design = f"items {items}, passes {people_pass:.1f}, {judge}, kappa {THRESHOLD}, {holdouts} holdouts"
        before = f" ({WALD})" if wald else ""
        result += [
            {
                "interval": INTERVAL if not wald else f"Cohen's kappa, 95 % interval ({WALD})",
                "design": design,
                "coverage": figures["coverage"],
                "target": ">= 0.93",
            },
            {
                "interval": LOWER + before,
                "design": design,
                "coverage": figures["above"],
                "target": "<= 0.025",
            },
            {
                "interval": VALIDATED + before,
                "design": design,
                "coverage": figures["validated"],
                "target": "<= 0.025",
            },
        ]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_HOLDOUTS} holdouts a design")
    parser.add_argument("--wald", action="store_true", help="the former interval and rule beside")
    arguments = parser.parse_args()
    start = time.perf_counter()
    table = rows(quick=arguments.quick)
    before = rows(quick=arguments.quick, wald=True) if arguments.wald else []
    by_design: dict[str, dict[str, float]] = {}
    for row in table:
        by_design.setdefault(row["design"], {})[row["interval"]] = row["coverage"]
    former: dict[str, list[float]] = {}
    for row in before:
        former.setdefault(row["design"], []).append(row["coverage"])
    rule = f"n >= {MIN_ITEMS}, people's labels vary, lower limit > {THRESHOLD}"
    print(f"interval: {INTERVAL}; validated: {rule}")
    columns = "coverage (>= 0.93) | lower limit above 0.6 (<= 0.025) | validated (<= 0.025)"
    extra = " | Wald before: coverage, lower limit above, validated" if before else ""
    print(f"| design | {columns}{extra} |")
    print("| --- | --- | --- | ---" + (" | ---" if before else "") + " |")
    for design, figures in by_design.items():
        line = f"| {design} | {figures[INTERVAL]:.3f} | {figures[LOWER]:.3f} | {figures[VALIDATED]:.3f}"
        if before:
            line += " | " + ", ".join(f"{figure:.3f}" for figure in former[design])
        print(line + " |")
    misses = [row for row in table if not _meets(row)]
    print(f"{len(misses)} of {len(table)} figures miss their target; {time.perf_counter() - start:.0f} s")


def _meets(row: dict) -> bool:
    sign, target = row["target"].split()
    return row["coverage"] >= float(target) if sign == ">=" else row["coverage"] <= float(target)


if __name__ == "__main__":
    main()
