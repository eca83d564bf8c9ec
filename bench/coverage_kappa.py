"""Cohen's kappa's interval and the judge validation rule (issue 24, point 2).

Simulates holdouts of a judge against people and runs the app's own
functions on each (scoring.stats.agreement: kappa_with_interval and
validation_missing, the rule reviewapp.judges.validation applies, with
JudgeVersion's default of 50 items). Three grids:

- at the threshold: the pass label with a true kappa equal to the
  validation threshold (0.6), items 30, 50, 65, 100; people's pass rate
  0.5, 0.7, 0.9; the judge passing as often as people, or 5 points more
  often. Each holdout's 2 x 2 table (people x judge) is drawn from the
  multinomial;
- away from it: the pass label at true kappa 0.2, 0.4, 0.8, 0.9, 0.95 on
  30, 50 and 100 items, same pass rates, the judge as lenient as people;
- the grade (four categories, as the review outcome has): people's grades
  spread 55/25/12/8 % or 40/30/20/10 %, and a judge who gives people's grade
  with probability kappa and otherwise a grade drawn from the same spread,
  so its true Cohen's kappa is exactly kappa (0.4, 0.6, 0.8, 0.9), on 50
  and 100 items.

For each design it prints the 95 % interval's coverage of the true kappa,
over the holdouts where kappa is defined (target >= 0.93); where the true
kappa is at or below the threshold, how often the judge is validated
(target <= 0.025) and, at the threshold, how often the lower limit alone is
above it, the one-sided error the rule rests on (target <= 0.025); above
the threshold, how often the judge is validated (its power, no target).

With ``--wald``, the same figures at the threshold for what the app did
before (issue 24, point 2): statsmodels' large-sample interval, kept within
-1 to 1, and the rule without the minimum of each label, on the same
holdouts.

    .venv/bin/python bench/coverage_kappa.py            # 4,000 holdouts at the threshold, 2,000 elsewhere
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
AWAY_KAPPAS, AWAY_ITEMS = (0.2, 0.4, 0.8, 0.9, 0.95), (30, 50, 100)
GRADE_KAPPAS, GRADE_ITEMS = (0.4, 0.6, 0.8, 0.9), (50, 100)
GRADE_SPREADS = ((0.55, 0.25, 0.12, 0.08), (0.4, 0.3, 0.2, 0.1))
GRADES = ("resolved", "partly resolved", "unresolved", "harmful")
HOLDOUTS, AWAY_HOLDOUTS, QUICK_HOLDOUTS = 4000, 2000, 200
SEED = 2024

INTERVAL = f"Cohen's kappa, 95 % interval ({KAPPA_INTERVAL_METHOD})"
GRADE_INTERVAL = "Cohen's kappa on the grade (4 categories), 95 % interval"
LOWER = "kappa's lower limit above the true kappa"
VALIDATED = "judge validated at kappa <= threshold"
GRADE_VALIDATED = "judge's grade validated at kappa <= threshold"
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


def grade_cells(spread: tuple[float, ...], kappa: float) -> np.ndarray:
    """The k x k table's probabilities, row by row, when the judge gives
    people's grade with probability ``kappa`` and otherwise one drawn from
    people's own ``spread``: both raters then have that spread, observed
    agreement is kappa + (1 - kappa) * chance, so Cohen's kappa is kappa."""
    shares = np.array(spread)
    return (kappa * np.diag(shares) + (1 - kappa) * np.outer(shares, shares)).ravel()


def wald_interval(matrix: list[list[int]]) -> tuple[float, float, float]:
    """The former interval: statsmodels' large-sample one, kept within -1 to 1."""
    from statsmodels.stats.inter_rater import cohens_kappa

    with np.errstate(divide="ignore", invalid="ignore"):
        result = cohens_kappa(np.array(matrix, dtype=float))
    return float(result.kappa), max(float(result.kappa_low), -1.0), min(float(result.kappa_upp), 1.0)


def simulate(
    probabilities: np.ndarray,
    items: int,
    kappa: float,
    holdouts: int,
    seed: int,
    *,
    categories: tuple[str, ...] = ("pass", "fail"),
    wald: bool = False,
) -> dict:
    size = len(categories)
    tables = np.random.default_rng(seed).multinomial(items, probabilities, size=holdouts)
    seen: dict[tuple[int, ...], tuple[float, float, float]] = {}
    covered = defined = above = validated = 0
    for table in tables:
        key = tuple(int(count) for count in table)
        matrix = [list(key[row * size : (row + 1) * size]) for row in range(size)]
        if key not in seen:
            seen[key] = wald_interval(matrix) if wald else kappa_with_interval(matrix)
        estimate, low, high = seen[key]
        if np.isnan(estimate) or np.isnan(low) or np.isnan(high):
            continue
        defined += 1
        covered += low <= kappa <= high
        above += low > kappa
        missing = validation_missing(
            categories=categories,
            people=[sum(row) for row in matrix],
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


def designs(*, quick: bool = False) -> list[dict]:
    """Every design: its label, table probabilities, items, true kappa,
    holdouts and a description."""
    at, away = (QUICK_HOLDOUTS,) * 2 if quick else (HOLDOUTS, AWAY_HOLDOUTS)
    result = []
    for leniency in LENIENCY:
        for people_pass in PASS_RATES:
            for items in ITEMS:
                probabilities = cells(people_pass, people_pass + leniency, THRESHOLD)
                if probabilities is None:
                    continue
                judge = (
                    "judge as people" if not leniency else f"judge passes {leniency * 100:.0f} points more"
                )
                result.append(
                    dict(
                        label="pass",
                        probabilities=probabilities,
                        items=items,
                        kappa=THRESHOLD,
                        holdouts=at,
                        design=f"items {items}, passes {people_pass:.1f}, {judge}, kappa {THRESHOLD}",
                    )
                )
    for kappa in AWAY_KAPPAS:
        for people_pass in PASS_RATES:
            for items in AWAY_ITEMS:
                probabilities = cells(people_pass, people_pass, kappa)
                if probabilities is None:
                    continue
                result.append(
                    dict(
                        label="pass",
                        probabilities=probabilities,
                        items=items,
                        kappa=kappa,
                        holdouts=away,
                        design=f"items {items}, passes {people_pass:.1f}, judge as people, kappa {kappa}",
                    )
                )
    for kappa in GRADE_KAPPAS:
        for spread in GRADE_SPREADS:
            for items in GRADE_ITEMS:
                shares = "/".join(f"{share * 100:.0f}" for share in spread)
                result.append(
                    dict(
                        label="grade",
                        probabilities=grade_cells(spread, kappa),
                        items=items,
                        kappa=kappa,
                        holdouts=away,
                        design=f"grade, items {items}, grades {shares} %, kappa {kappa}",
                    )
                )
    return result


def rows(*, quick: bool = False, wald: bool = False, power: bool = False) -> list[dict]:
    """Per design, the interval's coverage, its lower limit's one-sided error
    at the threshold and the validation rate at or below it, each with its
    target; with ``power``, above the threshold, the validation rate too
    (interval "power", no target); with ``wald``, the former interval and
    rule's, at the threshold only."""
    result = []
    for number, design in enumerate(designs(quick=quick)):
        at_threshold = design["kappa"] == THRESHOLD and design["label"] == "pass"
        if wald and not at_threshold:
            continue
        grade = design["label"] == "grade"
        figures = simulate(
            design["probabilities"],
            design["items"],
            design["kappa"],
            design["holdouts"],
            SEED + number,
            categories=GRADES if grade else ("pass", "fail"),
            wald=wald,
        )
        name = f"{design['design']}, {design['holdouts']} holdouts"
        before = f" ({WALD})" if wald else ""
        interval = GRADE_INTERVAL if grade else INTERVAL
        result.append(
            {
                "interval": f"Cohen's kappa, 95 % interval ({WALD})" if wald else interval,
                "design": name,
                "coverage": figures["coverage"],
                "target": ">= 0.93",
            }
        )
        if at_threshold:
            result.append(
                {
                    "interval": LOWER + before,
                    "design": name,
                    "coverage": figures["above"],
                    "target": "<= 0.025",
                }
            )
        if design["kappa"] <= THRESHOLD:
            result.append(
                {
                    "interval": (GRADE_VALIDATED if grade else VALIDATED) + before,
                    "design": name,
                    "coverage": figures["validated"],
                    "target": "<= 0.025",
                }
            )
        else:
            result.append(
                {"interval": "power", "design": name, "coverage": figures["validated"], "target": ""}
            )
    return result if power else [row for row in result if row["target"]]


# The corner where coverage falls short of 0.93 (kappa 0.8 or more on few
# items): --sides says on which side the interval misses there.
CORNER = (
    ("pass", (0.9, 0.9, 0.95), 30, 0.95),
    ("pass", (0.9, 0.9, 0.9), 30, 0.9),
    ("grade", (0.55, 0.25, 0.12, 0.08), 50, 0.9),
    ("grade", (0.4, 0.3, 0.2, 0.1), 100, 0.9),
)


def miss_sides(holdouts: int = AWAY_HOLDOUTS) -> list[tuple[str, float, float]]:
    """For each corner design, how often the interval lies wholly below the
    true kappa and how often wholly above it."""
    result = []
    for number, (label, shape, items, kappa) in enumerate(CORNER):
        if label == "pass":
            probabilities, size = cells(shape[0], shape[1], shape[2]), 2
        else:
            probabilities, size = grade_cells(shape, kappa), 4
        tables = np.random.default_rng(SEED + 1000 + number).multinomial(items, probabilities, size=holdouts)
        seen: dict[tuple[int, ...], tuple[float, float, float]] = {}
        below = above = defined = 0
        for table in tables:
            key = tuple(int(count) for count in table)
            if key not in seen:
                seen[key] = kappa_with_interval(
                    [list(key[row * size : (row + 1) * size]) for row in range(size)]
                )
            estimate, low, high = seen[key]
            if np.isnan(estimate) or np.isnan(low):
                continue
            defined += 1
            below += high < kappa
            above += low > kappa
        result.append((f"{label}, items {items}, kappa {kappa}", below / defined, above / defined))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_HOLDOUTS} holdouts a design")
    parser.add_argument("--wald", action="store_true", help="the former interval and rule beside")
    parser.add_argument("--sides", action="store_true", help="where the corner's intervals miss, and stop")
    arguments = parser.parse_args()
    start = time.perf_counter()
    if arguments.sides:
        print("| corner design | interval wholly below the true kappa | wholly above it |")
        print("| --- | --- | --- |")
        for design, below, above in miss_sides(QUICK_HOLDOUTS if arguments.quick else AWAY_HOLDOUTS):
            print(f"| {design} | {below:.3f} | {above:.3f} |")
        return
    table = rows(quick=arguments.quick, power=True)
    before = rows(quick=arguments.quick, wald=True) if arguments.wald else []
    by_design: dict[str, dict[str, float]] = {}
    for row in table:
        by_design.setdefault(row["design"], {})[row["interval"]] = row["coverage"]
    former: dict[str, list[float]] = {}
    for row in before:
        former.setdefault(row["design"], []).append(row["coverage"])
    rule = f"n >= {MIN_ITEMS}, people's labels vary, lower limit > {THRESHOLD}"
    print(f"interval: {INTERVAL}; validated: {rule}")
    columns = (
        "coverage (>= 0.93) | lower limit above 0.6 (<= 0.025) | "
        "validated (<= 0.025 at or below 0.6; above it, power)"
    )
    extra = " | Wald before: coverage, lower limit above, validated" if before else ""
    print(f"| design | {columns}{extra} |")
    print("| --- | --- | --- | ---" + (" | ---" if before else "") + " |")
    for design, figures in by_design.items():
        coverage = figures.get(INTERVAL, figures.get(GRADE_INTERVAL))
        lower = f"{figures[LOWER]:.3f}" if LOWER in figures else "—"
        validated = next(figures[name] for name in (VALIDATED, GRADE_VALIDATED, "power") if name in figures)
        line = f"| {design} | {coverage:.3f} | {lower} | {validated:.3f}"
        if before:
            line += " | " + (
                ", ".join(f"{figure:.3f}" for figure in former[design]) if design in former else ""
            )
        print(line + " |")
    table = [row for row in table if row["target"]]
    misses = [row for row in table if not _meets(row)]
    print(f"{len(misses)} of {len(table)} figures miss their target; {time.perf_counter() - start:.0f} s")


def _meets(row: dict) -> bool:
    sign, target = row["target"].split()
    return row["coverage"] >= float(target) if sign == ">=" else row["coverage"] <= float(target)


if __name__ == "__main__":
    main()
