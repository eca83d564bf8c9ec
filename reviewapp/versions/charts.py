"""Reads for the managers' pages: which versions a set's page lists, the
compare page's verdict line and chart of paired differences, and what the
gate page shows beside a gate answer. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Max, Q

from reviewapp.models import AssistantVersion, Run, SetVersion
from scoring.stats.paired import Paired

# The difference chart's geometry, in SVG units of a 1000-wide viewBox: labels
# on the left, the plot in the middle (zero at its centre), figures on the right.
PLOT_LEFT = 250
PLOT_RIGHT = 790
ROW_HEIGHT = 24
FIRST_ROW = 66
# Half-widths of the chart's scale, in points: the smallest that holds every interval.
SCALES = (2, 5, 10, 20, 50, 100)


def set_versions_with_runs():
    """Set versions with at least one stored run, newest first (a set whose only
    runs were rejected or failed has nothing to show)."""
    return SetVersion.objects.filter(runs__status=Run.Status.STORED).distinct().order_by("-created_at", "-id")


def set_version_with_most_versions() -> SetVersion | None:
    """The set on which the most assistant versions have a stored run, the
    newest of those that tie; None before any run is stored."""
    stored = Q(runs__status=Run.Status.STORED)
    return (
        SetVersion.objects.filter(stored)
        .annotate(versions=Count("runs__assistant_version", filter=stored, distinct=True))
        .order_by("-versions", "-created_at", "-id")
        .first()
    )


@dataclass(frozen=True)
class VersionOnSet:
    """A version with stored runs on a set, how many attempts per question
    they made, and the last version before it there that made as many (the
    baseline its compare and gate links name), if any."""

    version: AssistantVersion
    stored_runs: int
    left_out_runs: int
    previous: AssistantVersion | None
    attempts: int = 1


def versions_on_set(set_version: SetVersion) -> list[VersionOnSet]:
    """The versions with a stored run on ``set_version``, newest first. A
    version whose runs there were all rejected or failed is left out: it has
    no figures to open. Each names the baseline a manager compares it with:
    the last version stored on the set before it with the same number of
    attempts per question, since with more attempts a question must succeed
    more often, and the two would not be alike (issue 25, point 2)."""
    stored = Q(runs__set_version=set_version, runs__status=Run.Status.STORED)
    versions = list(
        AssistantVersion.objects.filter(stored)
        .annotate(
            stored_runs=Count("runs", filter=stored, distinct=True),
            left_out_runs=Count("runs", filter=stored & ~Q(runs__excluded_reason=""), distinct=True),
            attempts=Max("runs__repetitions", filter=stored),
        )
        .select_related("assistant")
        .order_by("created_at", "id")
    )
    rows = [
        VersionOnSet(
            version,
            version.stored_runs,
            version.left_out_runs,
            next(
                (earlier for earlier in reversed(versions[:index]) if earlier.attempts == version.attempts),
                None,
            ),
            version.attempts,
        )
        for index, version in enumerate(versions)
    ]
    return rows[::-1]


def gate_versions():
    """Assistant versions the gate can be asked about: those with a stored run."""
    return (
        AssistantVersion.objects.filter(runs__status=Run.Status.STORED)
        .distinct()
        .order_by("-created_at", "-id")
    )


# -- the compare page ----------------------------------------------------------


@dataclass(frozen=True)
class CompareOutcome:
    """The measures' labels by what their paired 95 % interval shows."""

    better: list[str]
    worse: list[str]
    no_difference: list[str]
    not_compared: list[str]
    by_measure: dict[str, str]

    @property
    def sentence(self) -> str:
        """The verdict line: "better on 2 measures, worse on 1, no detectable
        difference on 3", and the measures with no paired question, if any."""
        text = (
            f"better on {_measures(len(self.better))}, worse on {len(self.worse)}, "
            f"no detectable difference on {len(self.no_difference)}"
        )
        if self.not_compared:
            text += f"; {len(self.not_compared)} not compared (no question both versions have it on)"
        return text

    @property
    def caution(self) -> str:
        """With several measures, that each interval is 95 % on its own: the
        more measures looked at, the likelier one shows a difference by
        chance alone. Empty with one measure or none."""
        compared = len(self.better) + len(self.worse) + len(self.no_difference)
        if compared < 2:
            return ""
        return (
            f"Each of these {compared} intervals is 95 % on its own: across {compared} measures, one "
            "showing a difference by chance alone is far likelier than 5 %, even between identical "
            "versions. The release gate judges every measure together."
        )


def _measures(count: int) -> str:
    return f"{count} measure{'' if count == 1 else 's'}"


def paired_outcome(result: Paired) -> str:
    """What one paired interval shows: "better" when candidate − baseline lies
    above zero, "worse" when below, "no_difference" when the interval holds
    zero, "not_compared" without pairs."""
    if not result.n:
        return "not_compared"
    if result.low > 0:
        return "better"
    if result.high < 0:
        return "worse"
    return "no_difference"


def compare_outcome(comparisons) -> CompareOutcome:
    """The verdict line of the compare page, from each measure's paired
    interval (candidate − baseline, positive is better for every measure)."""
    groups: dict[str, list[str]] = {"better": [], "worse": [], "no_difference": [], "not_compared": []}
    by_measure = {}
    for comparison in comparisons:
        outcome = paired_outcome(comparison.paired)
        groups[outcome].append(comparison.label)
        by_measure[comparison.measure] = outcome
    return CompareOutcome(**groups, by_measure=by_measure)


def compare_chart(comparisons) -> dict:
    """The compare page's chart: each measure's paired difference with its interval."""
    return difference_chart(
        [
            {"label": c.label, "n": c.paired.n, "difference": c.paired.difference, "low": c.paired.low,
             "high": c.paired.high, "outcome": paired_outcome(c.paired)}
            for c in comparisons
        ]
    )  # fmt: skip


def difference_chart(rows: list[dict], *, margin: float | None = None) -> dict:
    """SVG positions for rows of ``label``, ``n``, ``difference``, ``low`` and
    ``high`` (candidate − baseline as shares; None without pairs) on a scale
    symmetric about zero, in points. ``margin`` (a share) adds the gate's
    line at −margin, and a row's ``bound`` (the gate's lower bound, where it
    has one) a mark at it. Returns {} when no row has a figure."""
    figures = [row for row in rows if row["difference"] is not None]
    if not figures:
        return {}
    bounds = [abs(row["bound"]) for row in figures if row.get("bound") is not None]
    reach = max([abs(row[key]) for row in figures for key in ("low", "high")] + bounds + [margin or 0]) * 100
    half = next((scale for scale in SCALES if reach <= scale), SCALES[-1])
    middle = (PLOT_LEFT + PLOT_RIGHT) // 2

    def x(share: float) -> float:
        return middle + (share * 100 / half) * (PLOT_RIGHT - PLOT_LEFT) / 2

    placed = []
    for index, row in enumerate(rows):
        y = FIRST_ROW + ROW_HEIGHT * index
        entry = {**row, "y": y}
        if row["difference"] is not None:
            entry.update(x_low=x(row["low"]), x_high=x(row["high"]), x_point=x(row["difference"]))
            if row.get("bound") is not None:
                entry["x_bound"] = x(row["bound"])
        placed.append(entry)
    ticks = [-half, -half / 2, 0, half / 2, half]
    return {
        "rows": placed,
        "ticks": [{"label": f"{tick:+g}" if tick else "0", "x": x(tick / 100)} for tick in ticks],
        "zero": middle,
        "left": PLOT_LEFT,
        "right": PLOT_RIGHT,
        "margin": {"x": x(-margin), "label": f"−{margin * 100:g} margin"} if margin is not None else None,
        # The last row's half-height below it, and room for the margin's label.
        "bottom": FIRST_ROW + ROW_HEIGHT * (len(rows) - 1) + ROW_HEIGHT // 2,
        "height": FIRST_ROW + ROW_HEIGHT * (len(rows) - 1) + ROW_HEIGHT // 2 + 18,
    }


# -- the gate page -------------------------------------------------------------
