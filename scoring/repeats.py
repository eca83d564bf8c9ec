"""Repeated runs (spec 004, N = Q × R): stable resolution and intervals that
account for attempts of one question being alike.

Each question's attempts are tallied together: per measure, k and n summed
over its attempts and how many attempts passed. A question counts toward
the stable-resolution count of a measure only when every one of its R
attempts passed it; a question not run R times has failed the missing
attempts. Rates over attempts get an interval from the cluster-robust
variance (questions as clusters, statsmodels), shown as a Wilson interval
on the effective number of units it implies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.counts import COUNT_COLUMNS, FAILURE_MEASURES, MEASURES, AnswerCheck
from scoring.stats.rates import check_alpha, pin_edges, wilson_interval

CLUSTER_METHOD = "cluster-robust by question (statsmodels), Wilson on the effective n"


@dataclass
class QuestionTally:
    """One question's attempts: counts summed over them, and per measure how
    many attempts passed and how many the measure applied to."""

    fields: tuple
    attempts: int = 0
    counts: list[int] = field(default_factory=lambda: [0] * len(COUNT_COLUMNS))
    passed: list[int] = field(default_factory=lambda: [0] * len(MEASURES))
    applies: list[int] = field(default_factory=lambda: [0] * len(MEASURES))

    def add(self, counts: Sequence[int], *, answered: bool) -> None:
        """Add one attempt's counts (in COUNT_COLUMNS order)."""
        self.attempts += 1
        for index, value in enumerate(counts):
            self.counts[index] += value
        for index, measure in enumerate(MEASURES):
            k, n = counts[2 * index], counts[2 * index + 1]
            if measure in FAILURE_MEASURES or measure == "citation_validity":
                # An attempt passes when it answered and nothing it said failed.
                self.applies[index] += 1
                self.passed[index] += int(answered and (k == 0 if measure in FAILURE_MEASURES else k == n))
            elif n:
                self.applies[index] += 1
                self.passed[index] += int(k == n)

    def merge(self, other: QuestionTally) -> None:
        self.attempts += other.attempts
        for name in ("counts", "passed", "applies"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for index, value in enumerate(theirs):
                mine[index] += value


def tally(checks: Iterable[AnswerCheck], *, answered) -> dict[str, QuestionTally]:
    """Tally checks by question; ``answered(check)`` says whether an attempt
    produced an answer (a failed or not-run attempt did not)."""
    tallies: dict[str, QuestionTally] = {}
    for check in checks:
        entry = tallies.get(check.question_id)
        if entry is None:
            entry = tallies[check.question_id] = QuestionTally(fields=check.fields)
        entry.add(check.counts, answered=answered(check))
    return tallies


def merge_tallies(parts: Iterable[Mapping[str, QuestionTally]]) -> dict[str, QuestionTally]:
    merged: dict[str, QuestionTally] = {}
    for part in parts:
        for question_id, entry in part.items():
            if question_id in merged:
                merged[question_id].merge(entry)
            else:
                merged[question_id] = entry
    return merged


def repeat_figures(
    tallies: Mapping[str, QuestionTally],
    *,
    repetitions: int,
    slice_fields: Sequence[str],
    alpha: float = 0.05,
) -> dict[str, dict]:
    """Per slice ("all" and "field=value"), per measure: the stable count
    (questions whose every attempt passed, of questions the measure applies
    to), the distribution "passed in r of R" and the rate over attempts with
    its cluster-robust interval. Empty when R < 2: with single runs there is
    no stable resolution to report (spec 004)."""
    if repetitions < 2 or not tallies:
        return {}
    groups: dict[str, list[QuestionTally]] = {"all": list(tallies.values())}
    for position, name in enumerate(slice_fields):
        for entry in tallies.values():
            value = entry.fields[position] if position < len(entry.fields) else None
            if value is not None:
                groups.setdefault(f"{name}={value}", []).append(entry)
    return {
        slice_name: _measure_figures(entries, repetitions=repetitions, alpha=alpha)
        for slice_name, entries in sorted(groups.items(), key=lambda item: (item[0] != "all", item[0]))
    }


def _measure_figures(entries: list[QuestionTally], *, repetitions: int, alpha: float) -> dict:
    result = {}
    for index, measure in enumerate(MEASURES):
        applying = [e for e in entries if e.applies[index]]
        if not applying:
            continue
        distribution = dict.fromkeys(range(repetitions, -1, -1), 0)
        for entry in applying:
            distribution[min(entry.passed[index], repetitions)] += 1
        k = [e.counts[2 * index] for e in applying]
        n = [e.counts[2 * index + 1] for e in applying]
        result[measure] = {
            "stable": {"k": distribution[repetitions], "n": len(applying)},
            "distribution": {f"{r} of {repetitions}": count for r, count in distribution.items()},
            "over_attempts": clustered_rate(k, n, alpha=alpha) if sum(n) else None,
        }
    return result


def clustered_rate(k: Sequence[int], n: Sequence[int], *, alpha: float = 0.05) -> dict:
    """The rate Σk / Σn over clusters (questions) holding n_q units with k_q
    successes each, with an interval that allows for units of one cluster
    being alike: statsmodels' cluster-robust variance of the mean, turned
    into an effective number of units n_eff = p(1 − p) / variance (kept
    between the number of clusters and of units), then a Wilson interval on
    k_eff = p · n_eff of n_eff. Returns k, n, rate, low, high, clusters,
    effective_n and the method. Refuses (ValueError) a question with k
    outside 0..n, no units at all, and alpha outside (0, 1)."""
    # Imported here: only runs with repeated attempts need them.
    import numpy as np
    import statsmodels.api as sm

    check_alpha(alpha)
    for position, (k_q, n_q) in enumerate(zip(k, n, strict=True), start=1):
        if not 0 <= k_q <= n_q:
            raise ValueError(f"question {position} (counting from 1) has {k_q} successes of {n_q}")
    k, n = np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)
    if not n.sum():
        raise ValueError("a clustered rate needs at least one unit")
    keep = n > 0
    k, n = k[keep], n[keep]
    total_k, total_n, clusters = int(k.sum()), int(n.sum()), len(n)
    p = total_k / total_n
    groups = np.repeat(np.arange(clusters), n)
    # Units in cluster order: k_q successes then n_q − k_q failures.
    starts = np.repeat(np.cumsum(n) - n, n)
    y = ((np.arange(total_n) - starts) < np.repeat(k, n)).astype(float)
    effective = float(clusters)
    if 0 < p < 1 and clusters > 1:
        fit = sm.OLS(y, np.ones(total_n)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        variance = float(fit.bse[0]) ** 2
        if variance > 0:
            effective = p * (1 - p) / variance
    effective = min(max(effective, float(clusters)), float(total_n))
    low, high = wilson_interval(p * effective, effective, alpha=alpha)
    low, high = pin_edges(float(low), float(high), none=total_k == 0, all_=total_k == total_n)
    return {
        "k": total_k,
        "n": total_n,
        "rate": p,
        "low": low,
        "high": high,
        "clusters": clusters,
        "effective_n": round(effective, 2),
        "method": CLUSTER_METHOD,
    }
