"""Coverage of the rate intervals the app shows on clustered units (issue 24, point 1).

    .venv/bin/python bench/coverage_rates.py [--reps 4000] [--quick]

Two kinds of design, each simulated with a fixed seed:

- attempts: Q questions asked R times each. Each question has its own
  chance of success, drawn from a Beta distribution with mean p and
  intra-class correlation ICC (Beta(a, b) with a + b = 1/ICC - 1), so that
  some questions are nearly always right and some nearly always wrong, as in
  real repeated runs. The figure estimates p, the mean over questions.
- mean scores: a model grader's scores in [0, 1] (faithfulness and the
  like), each question with its own mean score and each attempt a draw
  around it; the figure is scoring.stats.means.score_mean's interval.
- numbers: A answers each holding 1 to 6 numbers (a skewed count, as real
  answers hold them), each number supported with a chance drawn per answer
  in the same way: unsupported numbers cluster in answers.

For each design it counts how often the interval contains the true rate:
the app's interval (scoring.stats.rates.rate with the units' ClusterSums,
what counted_rate gives every page) and, for comparison, plain Wilson on
the units as if they were independent (what the app showed before).
Target: the app's interval covers at least 0.93 wherever the design
applies. Corners where p is so close to 0 or 1 that a sample is likely to
hold no failure at all are reported too; the interval then falls back to
what clusters alike within would be worth (n^2 / sum n^2), which is
conservative.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.stats.means import score_mean
from scoring.stats.rates import ClusterSums, rate

SEED = 20241202
TARGET = 0.93


def _cluster_chances(rng, clusters: int, p: float, icc: float) -> np.ndarray:
    if icc == 0:
        return np.full(clusters, p)
    total = 1 / icc - 1
    return rng.beta(p * total, (1 - p) * total, size=clusters)


def _coverage(rng, sizes_of, p: float, icc: float, reps: int) -> tuple[float, float, float]:
    """(clustered coverage, plain Wilson coverage, mean effective n / n)."""
    clustered = plain = 0
    worth = 0.0
    for _ in range(reps):
        sizes = sizes_of(rng)
        chances = _cluster_chances(rng, len(sizes), p, icc)
        successes = rng.binomial(sizes, chances)
        k, n = int(successes.sum()), int(sizes.sum())
        figure = rate(k, n, clusters=ClusterSums.of(successes.tolist(), sizes.tolist()))
        clustered += figure.low <= p <= figure.high
        independent = rate(k, n)
        plain += independent.low <= p <= independent.high
        worth += (figure.effective_n or n) / n
    return clustered / reps, plain / reps, worth / reps


def attempt_designs(quick: bool):
    questions = (30, 100) if quick else (30, 100, 300)
    repeats = (1, 3) if quick else (1, 3, 5)
    iccs = (0.0, 0.3) if quick else (0.0, 0.1, 0.3, 0.6)
    shares = (0.5, 0.85) if quick else (0.5, 0.7, 0.85, 0.95)
    for q, r, icc, p in itertools.product(questions, repeats, iccs, shares):
        sizes = np.full(q, r)
        yield "attempts by question", f"Q={q} R={r} ICC={icc} p={p}", (lambda rng, s=sizes: s), p, icc


def number_designs(quick: bool):
    answers = (30, 100) if quick else (30, 100, 300)
    iccs = (0.0, 0.3) if quick else (0.0, 0.1, 0.3, 0.6)
    shares = (0.7, 0.9) if quick else (0.6, 0.8, 0.9)
    for a, icc, p in itertools.product(answers, iccs, shares):
        # 1 to 6 numbers an answer, most answers holding one or two.
        def sizes(rng, a=a):
            return np.minimum(1 + rng.poisson(1.2, size=a), 6)

        yield "numbers by answer", f"answers={a} ICC={icc} p={p}", sizes, p, icc


def _mean_coverage(rng, questions: int, repeats: int, mean: float, spread: float, reps: int) -> float:
    """How often score_mean's interval holds the true mean score: each
    question has its own mean score (Beta around ``mean``, ``spread`` its
    ICC-like share), each attempt's score a Beta draw around that."""
    held = 0
    clusters = np.repeat(np.arange(questions), repeats).tolist()
    for _ in range(reps):
        own = _cluster_chances(rng, questions, mean, spread)
        # An attempt's score in [0, 1] around its question's: Beta with a + b = 4.
        scores = rng.beta(np.repeat(own, repeats) * 4 + 1e-9, (1 - np.repeat(own, repeats)) * 4 + 1e-9)
        figure = score_mean(scores.tolist(), clusters)
        held += figure.low <= mean <= figure.high
    return held / reps


def mean_designs(quick: bool):
    questions = (30, 100) if quick else (30, 100, 300)
    repeats = (1, 3)
    spreads = (0.1, 0.5) if quick else (0.1, 0.3, 0.6)
    means = (0.5, 0.85) if quick else (0.5, 0.7, 0.85, 0.95)
    yield from itertools.product(questions, repeats, spreads, means)


def rows(*, quick: bool = False, reps: int | None = None) -> list[dict]:
    reps = reps or (400 if quick else 4000)
    rng = np.random.default_rng(SEED)
    result = []
    for interval, design, sizes, p, icc in [*attempt_designs(quick), *number_designs(quick)]:
        clustered, plain, worth = _coverage(rng, sizes, p, icc, reps)
        result.append(
            {
                "interval": interval,
                "design": design,
                "coverage": clustered,
                "target": f">= {TARGET}",
                "plain_wilson": plain,
                "effective_share": worth,
            }
        )
    for q, r, spread, mean in mean_designs(quick):
        result.append(
            {
                "interval": "model-grader mean score",
                "design": f"Q={q} R={r} spread={spread} mean={mean}",
                "coverage": _mean_coverage(rng, q, r, mean, spread, reps // 2),
                "target": f">= {TARGET}",
                "plain_wilson": float("nan"),
                "effective_share": float("nan"),
            }
        )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=None, help="simulated samples per design (4000)")
    parser.add_argument("--quick", action="store_true", help="a smaller grid and 400 samples per design")
    options = parser.parse_args()
    table = rows(quick=options.quick, reps=options.reps)
    print(f"{'interval':22} {'design':34} {'app':>6} {'Wilson':>7} {'eff/n':>6}")
    for row in table:
        flag = "" if row["coverage"] >= TARGET else "  < target"
        print(
            f"{row['interval']:22} {row['design']:34} {row['coverage']:6.3f} "
            f"{row['plain_wilson']:7.3f} {row['effective_share']:6.2f}{flag}"
        )
    for interval in dict.fromkeys(row["interval"] for row in table):
        own = [row for row in table if row["interval"] == interval]
        print(
            f"{interval}: app's interval covers {min(r['coverage'] for r in own):.3f} at worst "
            f"(plain Wilson {min(r['plain_wilson'] for r in own):.3f}) over {len(own)} designs"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
