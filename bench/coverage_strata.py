"""Coverage of the stratified interval (issue 24, point 3).

The dashboard shows a stratified sample's review outcomes "weighted by
strata" with the interval of ``scoring.stats.rates.stratified_rate``; the
rubric rates, "passes every rubric question" and the material-error rates
on settled items (plain and severity-weighted) of a stratified sample are
rates within a domain of the sample, with ``stratified_domain_rate``. This
simulates stratified samples from finite populations (hypergeometric draws,
so each stratum's finite-population correction is real), computes the
app's own interval on each, and counts how often it holds the population's
rate, over a grid:

- strata: 2, 5 or 10, with skewed sizes: W_h proportional to 1/h² (0.80 and
  0.20 with 2 strata; the largest 0.68 of 5, 0.65 of 10), or one stratum
  holding 98 % and the rest sharing 2 % equally;
- allocation: equal over those skewed strata, proportional (at least one
  item in each stratum, largest remainders), or one item per stratum (the
  sample is then as large as the strata are many: 2, 5, 10, 20 or 60);
- sample sizes 20, 60 and 200 (not for one item per stratum);
- true shares per stratum: 0.5, 0.9, 0.98 or 0.02 in every stratum; 0.98 in
  the largest and 0.5 elsewhere; 0.02 in the largest and 0.3 elsewhere; a
  spread from 0.05 to 0.95; 0.995 in the largest and 0.9 elsewhere; 1 in
  the largest and 0 elsewhere.

Three figures: an outcome's share of all sampled items (``stratified_rate``);
a rate within a domain, the items that answered a rubric question, each
item in it with chance 0.6 whatever its answer, so that the domain's size in
each stratum is random (``stratified_domain_rate``); and a severity-weighted
rate, every stratum but the largest weighing 3 (``stratified_domain_rate``
with multipliers), against the population's severity-weighted rate. The
domain and severity rows take the four hardest true shares of the outcome
rows, to keep the default run to a few minutes.

Fixed seeds; each design's draws are shared by nothing else. Run as a
script for the table (``--quick`` for the short grid, ``--summary`` for
each figure and allocation's lowest and median coverage only)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.stats.rates import stratified_domain_rate, stratified_rate

INTERVAL = "review outcome weighted by strata [95 %]"
DOMAIN_INTERVAL = "rubric rate weighted by strata [95 %]"
SEVERITY_INTERVAL = "material errors, severity-weighted, weighted by strata [95 %]"
ANSWERED = 0.6
SEVERITY = 3.0
# The true shares the domain and severity rows take.
HARD_SHARES = ("all 0.02", "0.98 largest, 0.5 rest", "spread 0.05-0.95", "0.995 largest, 0.9 rest")
TARGET = 0.93
POPULATION = 100_000

SHARES = {
    "all 0.5": lambda h: [0.5] * h,
    "all 0.9": lambda h: [0.9] * h,
    "all 0.98": lambda h: [0.98] * h,
    "all 0.02": lambda h: [0.02] * h,
    "0.98 largest, 0.5 rest": lambda h: [0.98] + [0.5] * (h - 1),
    "0.02 largest, 0.3 rest": lambda h: [0.02] + [0.3] * (h - 1),
    "spread 0.05-0.95": lambda h: list(np.linspace(0.05, 0.95, h)),
    "0.995 largest, 0.9 rest": lambda h: [0.995] + [0.9] * (h - 1),
    "1 largest, 0 rest": lambda h: [1.0] + [0.0] * (h - 1),
}


def skewed(strata: int) -> list[float]:
    """Stratum shares of the population proportional to 1/h²."""
    raw = np.array([1 / (h * h) for h in range(1, strata + 1)])
    return list(raw / raw.sum())


def dominant(strata: int) -> list[float]:
    """One stratum holding 98 % of the population, the rest 2 % between them."""
    return [0.98] + [0.02 / (strata - 1)] * (strata - 1)


SKEWS = {"1/h² sizes": skewed, "one stratum 98 %": dominant}


def allocation(weights: list[float], size: int, how: str) -> list[int]:
    """Items drawn from each stratum: equal (the remainder to the largest
    strata), proportional with at least one each (largest remainders), or
    one each."""
    strata = len(weights)
    if how == "one item per stratum":
        return [1] * strata
    if how == "equal":
        counts = [size // strata] * strata
        for h in range(size - sum(counts)):
            counts[h] += 1
        return counts
    shares = [w * size for w in weights]
    counts = [max(1, int(s)) for s in shares]
    order = sorted(range(strata), key=lambda h: shares[h] - int(shares[h]), reverse=True)
    for h in order:
        if sum(counts) >= size:
            break
        counts[h] += 1
    while sum(counts) > size:
        counts[counts.index(max(counts))] -= 1
    return counts


def coverage(weights, shares, drawn, *, reps: int, seed: int, figure: str = INTERVAL) -> tuple[float, float]:
    """How often the app's interval for ``figure`` holds the population's
    rate, and its mean width, over ``reps`` stratified samples."""
    populations = np.maximum(np.round(np.array(weights) * POPULATION).astype(int), np.array(drawn))
    successes = np.round(np.array(shares) * populations).astype(int)
    severity = np.array([1.0] + [SEVERITY] * (len(weights) - 1))
    if figure == SEVERITY_INTERVAL:
        truth = (severity * successes).sum() / (severity * populations).sum()
    else:
        truth = successes.sum() / populations.sum()
    rng = np.random.default_rng(seed)
    counts = np.stack(
        [
            rng.hypergeometric(successes[h], populations[h] - successes[h], drawn[h], size=reps)
            for h in range(len(weights))
        ],
        axis=1,
    )
    if figure == DOMAIN_INTERVAL:
        # Which items answered: d_h of n_h, and of the k_h successes, those among them.
        answered = rng.binomial(np.array(drawn), ANSWERED, size=(reps, len(weights)))
        counts = np.stack([rng.hypergeometric(counts, np.array(drawn) - counts, answered), answered], axis=2)
    seen: dict[tuple, tuple[float, float] | None] = {}
    held = 0
    width = 0.0
    shown = 0
    for row in counts:
        key = tuple(map(int, np.ravel(row)))
        if key not in seen:
            seen[key] = _interval(row, drawn, populations, severity, figure)
        if seen[key] is None:
            continue  # nobody answered: the page shows no rate
        low, high = seen[key]
        shown += 1
        held += low <= truth <= high
        width += high - low
    return held / shown, width / shown


def _interval(row, drawn, populations, severity, figure: str) -> tuple[float, float] | None:
    if figure == DOMAIN_INTERVAL:
        strata = [
            (int(k), int(d), int(n), int(N)) for (k, d), n, N in zip(row, drawn, populations, strict=True)
        ]
        if not any(d for _, d, _, _ in strata):
            return None
        result = stratified_domain_rate(strata)
    elif figure == SEVERITY_INTERVAL:
        strata = [(int(k), int(n), int(n), int(N)) for k, n, N in zip(row, drawn, populations, strict=True)]
        result = stratified_domain_rate(strata, multipliers=list(severity))
    else:
        result = stratified_rate(
            [(int(k), int(n), int(N)) for k, n, N in zip(row, drawn, populations, strict=True)]
        )
    return result.low, result.high


def designs(*, quick: bool):
    """(strata, skew, allocation, sample size) of the grid."""
    strata_counts = (2, 10) if quick else (2, 5, 10)
    sizes = (20, 200) if quick else (20, 60, 200)
    for strata in strata_counts:
        for skew in SKEWS:
            for how in ("equal", "proportional"):
                for size in sizes:
                    yield strata, skew, how, size
    for strata in (2, 10, 20) if quick else (2, 5, 10, 20, 60):
        for skew in SKEWS:
            yield strata, skew, "one item per stratum", strata


def rows(*, quick: bool = False) -> list[dict]:
    """One row per figure, design and true shares: the interval's name as the
    app shows it, the design, its coverage, the target, and the mean width."""
    reps = 400 if quick else 2000
    out = []
    for seed, (strata, skew, how, size) in enumerate(designs(quick=quick)):
        weights = SKEWS[skew](strata)
        drawn = allocation(weights, size, how)
        for figure in (INTERVAL, DOMAIN_INTERVAL, SEVERITY_INTERVAL):
            for offset, (name, shares_of) in enumerate(SHARES.items()):
                if figure != INTERVAL and name not in HARD_SHARES:
                    continue
                held, width = coverage(
                    weights, shares_of(strata), drawn, reps=reps, seed=1000 * seed + offset, figure=figure
                )
                out.append(
                    {
                        "interval": figure,
                        "design": f"{strata} strata ({skew}), {how}, n {sum(drawn)}, shares {name}",
                        "coverage": round(float(held), 4),
                        "target": f">= {TARGET}",
                        "width": round(float(width), 3),
                        "reps": reps,
                    }
                )
    return out


def summary(table: list[dict]) -> list[dict]:
    """For each figure and allocation: how many cells, the lowest coverage
    with its design, the median coverage and the mean width."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in table:
        allocation_of = row["design"].split(", ")[1]
        groups.setdefault((row["interval"], allocation_of), []).append(row)
    return [
        {
            "interval": figure,
            "allocation": how,
            "cells": len(mine),
            "lowest": min(mine, key=lambda row: row["coverage"]),
            "median": statistics.median(row["coverage"] for row in mine),
            "width": statistics.fmean(row["width"] for row in mine),
        }
        for (figure, how), mine in groups.items()
    ]


def print_summary(table: list[dict]) -> None:
    print("| figure | allocation | cells | lowest coverage (its design) | median | mean width | target |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for group in summary(table):
        lowest = group["lowest"]
        print(
            f"| {group['interval']} | {group['allocation']} | {group['cells']} | {lowest['coverage']:.3f} "
            f"({lowest['design']}) | {group['median']:.3f} | {group['width']:.3f} | {lowest['target']} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the short grid, 400 samples a cell")
    parser.add_argument(
        "--summary", action="store_true", help="by figure and allocation: lowest, median, width"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    table = rows(quick=args.quick)
    if args.summary:
        print_summary(table)
    else:
        print("| figure | design | coverage | mean width | target |")
        print("| --- | --- | --- | --- | --- |")
        for row in table:
            print(
                f"| {row['interval']} | {row['design']} | {row['coverage']:.3f} | {row['width']:.3f} "
                f"| {row['target']} |"
            )
    print()
    for figure in dict.fromkeys(row["interval"] for row in table):
        mine = [row for row in table if row["interval"] == figure]
        lowest = min(mine, key=lambda row: row["coverage"])
        below = sum(row["coverage"] < TARGET for row in mine)
        print(
            f"{figure}: {len(mine)} cells, {mine[0]['reps']} samples each; lowest coverage "
            f"{lowest['coverage']:.3f} ({lowest['design']}); {below} below {TARGET}"
        )
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
