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
from scoring.stats.rates import CLUSTER_METHOD, ClusterSums, check_alpha, rate


def one_attempt_sentence(*, figures: str = "these figures", who: str = "") -> str:
    """The sentence every page, the gate's answer and its command give where
    a figure rests on one attempt per question: ``figures`` names what rests
    on it, ``who`` the versions when not all of those compared do. Spec 004
    plans three attempts and reports no stable-resolution rate with one."""
    return (
        f"One attempt per question{f' ({who})' if who else ''}: {figures} rest on a single attempt at "
        "each question, so no stable-resolution rate is shown (it takes repeated attempts to tell a "
        "question answered right every time from one answered right once). Spec 004's default is "
        "three attempts per question."
    )


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


def _slice_groups(tallies: Mapping[str, QuestionTally], slice_fields: Sequence[str]) -> dict[str, list]:
    """The tallies of each slice: "all" and "field=value"."""
    groups: dict[str, list[QuestionTally]] = {"all": list(tallies.values())}
    for position, name in enumerate(slice_fields):
        for entry in tallies.values():
            value = entry.fields[position] if position < len(entry.fields) else None
            if value is not None:
                groups.setdefault(f"{name}={value}", []).append(entry)
    return groups


def with_question_clusters(
    slices: Mapping[str, Mapping[str, dict]],
    tallies: Mapping[str, QuestionTally],
    *,
    slice_fields: Sequence[str],
    cluster_of: Mapping[str, str] | None = None,
) -> dict[str, dict[str, dict]]:
    """The slice counts with each measure's cluster sums made over questions
    (all attempts of a question one cluster) from the tallies of the same
    answers; with ``cluster_of`` (question id to the cluster a question set
    names, such as a shared passage), the questions of one named cluster are
    one cluster together. The counts themselves are kept as they are."""
    cluster_of = cluster_of or {}
    key_of = {id(entry): cluster_of.get(question_id) or question_id for question_id, entry in tallies.items()}
    sums = {}
    for slice_name, entries in _slice_groups(tallies, slice_fields).items():
        for index, measure in enumerate(MEASURES):
            k: dict[str, int] = {}
            n: dict[str, int] = {}
            for entry in entries:
                key = key_of[id(entry)]
                k[key] = k.get(key, 0) + entry.counts[2 * index]
                n[key] = n.get(key, 0) + entry.counts[2 * index + 1]
            sums[slice_name, measure] = ClusterSums.of(list(k.values()), list(n.values())).as_dict()
    return {
        slice_name: {
            measure: {**counts, "clusters": sums[slice_name, measure]}
            if (slice_name, measure) in sums
            else counts
            for measure, counts in measures.items()
        }
        for slice_name, measures in slices.items()
    }


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
    groups = _slice_groups(tallies, slice_fields)
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
    successes each, with its cluster-robust interval (scoring.stats.rates:
    Wilson on the effective number of units). Returns k, n, rate, low, high,
    clusters, effective_n and the method. Refuses (ValueError) a question
    with k outside 0..n, no units at all, and alpha outside (0, 1)."""
    check_alpha(alpha)
    k, n = [int(value) for value in k], [int(value) for value in n]
    for position, (k_q, n_q) in enumerate(zip(k, n, strict=True), start=1):
        if not 0 <= k_q <= n_q:
            raise ValueError(f"question {position} (counting from 1) has {k_q} successes of {n_q}")
    if not sum(n):
        raise ValueError("a clustered rate needs at least one unit")
    sums = ClusterSums.of(k, n)
    figure = rate(sum(k), sum(n), alpha=alpha, clusters=sums)
    return {
        "k": figure.k,
        "n": figure.n,
        "rate": figure.value,
        "low": figure.low,
        "high": figure.high,
        "clusters": sums.clusters,
        "effective_n": figure.effective_n if figure.clustered else float(figure.n),
        "method": CLUSTER_METHOD,
    }
