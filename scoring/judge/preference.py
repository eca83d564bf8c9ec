"""Head to head: which of two answers each judge prefers, asked in both orders (spec 003).

Some models prefer whichever answer comes first. Each pair is asked once
with A first and once with B first; a judge whose verdict changes with the
order contributes a tie, and its position consistency (the share of pairs
it judged the same both ways) falls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from scoring.judge.evaluate import _judges, items_of
from scoring.judge.reports import write_document
from scoring.llm import check_cache_threads
from scoring.stats.rates import wilson_interval


@dataclass
class PreferenceEvaluation:
    names: tuple[str, str]
    # Per judge: wins, losses, ties (from the first name's side), errors, n,
    # position_consistency, win_rate (ties count half) and its Wilson interval.
    summary: dict[str, dict]
    rows: list[dict]
    judges: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "names": list(self.names),
            "summary": self.summary,
            "judges": self.judges,
            "usage": self.usage,
            "rows": self.rows,
        }

    def write(self, path: str | Path) -> None:
        """Write the report as YAML for .yaml and .yml, TOML for .toml (nulls left out), JSON otherwise."""
        write_document(path, self.as_dict())


def evaluate_preference(
    dataset: Iterable[Mapping],
    answers_a: Sequence[str],
    answers_b: Sequence[str],
    *,
    judges: Mapping,
    names: tuple[str, str] = ("a", "b"),
    on_error: str = "record",
    n_jobs: int = 1,
) -> PreferenceEvaluation:
    """Each judge's preference between ``answers_a`` and ``answers_b`` for every item, in both orders.

    Refuses (ValueError) answer lists whose length differs from the
    dataset's, no judge, and two identical names.
    """
    items = items_of(dataset)
    if not len(answers_a) == len(answers_b) == len(items):
        raise ValueError(
            f"the dataset has {len(items)} items but there are {len(answers_a)} and {len(answers_b)} answers"
        )
    if not judges:
        raise ValueError("preference needs at least one judge")
    if len(names) != 2 or names[0] == names[1]:
        raise ValueError(f"names are two different labels, not {names!r}")
    built = _judges(judges, on_error)
    if n_jobs > 1:
        for judge in built.values():
            check_cache_threads(judge.llm.cache)

    def judged(index: int) -> dict:
        item = items[index]
        # A judge sees a reference only when the item has exactly one.
        reference = item.references[0] if len(item.references) == 1 else None
        row: dict = {"id": item.id, "verdicts": {}, "errors": {}}
        for name, judge in built.items():
            result = judge.preference(item.question, answers_a[index], answers_b[index], reference=reference)
            if result.error:
                row["errors"][name] = result.error
            else:
                row["verdicts"][name] = {
                    "winner": result.details["winner"],
                    "consistent": result.details["consistent"],
                    "orders": result.verdict,
                }
        return row

    indexes = range(len(items))
    if n_jobs > 1:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            rows = list(pool.map(judged, indexes))
    else:
        rows = [judged(index) for index in indexes]
    summary = {name: _judge_summary(rows, name) for name in built}
    return PreferenceEvaluation(
        names=tuple(names),
        summary=summary,
        rows=rows,
        judges={name: judge.identity() for name, judge in built.items()},
        usage={name: judge.usage.as_dict() for name, judge in built.items()},
    )


def _judge_summary(rows: list[dict], name: str) -> dict:
    verdicts = [row["verdicts"][name] for row in rows if name in row["verdicts"]]
    return preference_summary(verdicts, errors=len(rows) - len(verdicts))


def preference_summary(verdicts: list[dict], *, errors: int = 0) -> dict:
    """One judge's wins, losses and ties (from the first answer's side), its
    position consistency and its win rate with a Wilson interval, from
    verdicts {"winner": "a" | "b" | "tie", "consistent": bool}."""
    wins = sum(verdict["winner"] == "a" for verdict in verdicts)
    losses = sum(verdict["winner"] == "b" for verdict in verdicts)
    ties = len(verdicts) - wins - losses
    consistent = sum(verdict["consistent"] for verdict in verdicts)
    n = len(verdicts)
    summary = {
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "errors": errors,
        "n": n,
        # Shown as k/n beside the share: the pairs whose verdict held when
        # the answers swapped places.
        "consistent": consistent,
        "position_consistency": consistent / n if n else None,
        "win_rate": None,
        "interval": None,
    }
    if n:
        # A tie is half a win, so a judge that cannot decide reads as 0.5.
        won = wins + ties / 2
        low, high = wilson_interval(won, n, alpha=0.05)
        summary.update(win_rate=won / n, interval=[float(low), float(high)])
    return summary
