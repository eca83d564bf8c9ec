"""The release gate, shared by the command and the API."""

from __future__ import annotations

from urllib.parse import urlencode

from reviewapp.core.errors import ApplicationError
from reviewapp.judges.selectors import judge_label
from reviewapp.judges.validation import judge_is_validated, judge_validation
from reviewapp.models import AssistantVersion, Judge, JudgeVersion, SetVersion
from reviewapp.versions.charts import difference_chart
from reviewapp.versions.comparison import compare_versions, judge_question_successes
from reviewapp.versions.records import Record, pooled_counts, record_timing, set_versions_of, version_record
from scoring.measures import FAILURE_MEASURES, MEASURES
from scoring.repeats import one_attempt_sentence
from scoring.stats import gate as gating
from scoring.stats.gate import DEFAULT_MARGIN_POINTS
from scoring.stats.paired import paired
from scoring.stats.rates import counted_rate

DEFAULT_MEASURES = ("numeric_accuracy", "citation_validity", "refusal_accuracy", "unsupported_answers")


class GateRefused(ApplicationError):
    """The gate cannot judge: an option is malformed, or a version or its
    scored run is missing. ``field`` names the option at fault, if one is."""

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message, status=422, field=field)


def parse_floors(items) -> dict[str, float]:
    """``["numeric_accuracy=0.9"]`` as ``{"numeric_accuracy": 0.9}``; refuses
    a malformed item, an unknown measure or a rate outside 0..1, naming it."""
    floors = {}
    for item in items or ():
        name, equals, value = item.partition("=")
        try:
            floors[name] = float(value)
        except ValueError:
            floors[name] = None
        if not equals or floors[name] is None:
            raise GateRefused(
                f"a floor is MEASURE=RATE with the rate as a share (numeric_accuracy=0.9), not {item!r}",
                field="floor",
            )
        if name not in MEASURES:
            raise GateRefused(f"floor {item!r}: unknown measure {name!r}", field="floor")
        if not 0 <= floors[name] <= 1:
            raise GateRefused(
                f"floor {item!r}: the rate is a share from 0 to 1 (0.9 for 90 %)", field="floor"
            )
    return floors


def check_points(value: float | None, *, field: str, upper: float = 100.0) -> float | None:
    """A margin or a drop in points, as a share; refuses values outside 0..upper."""
    if value is None:
        return None
    if not 0 <= value < upper or value != value:
        raise GateRefused(f"{field} is in points, from 0 to under {upper:g}; got {value:g}", field=field)
    return value / 100


def gate_run(
    *,
    baseline: str,
    candidate: str,
    set_version: str = "",
    measures=None,
    margin_points: float = DEFAULT_MARGIN_POINTS,
    max_drop_points: float | None = None,
    floors: dict[str, float] | None = None,
    max_p90_s: float | None = None,
    max_timeout_rate: float | None = None,
    judge: str = "",
    unequal_attempts: bool = False,
) -> dict:
    """Judge ``candidate`` against ``baseline`` on a set version (by default
    the latest one both have a scored run on). Margin and drop are in
    points; floors are shares. ``judge`` adds a validated judge's rubric
    grades as a paired measure (the judge's name, its latest version, or
    NAME:vN). Raises GateRefused when it cannot judge at all, and for a judge
    that is not validated against people: it can never be a gate measure."""
    unknown = sorted(set(measures or ()) - set(MEASURES))
    if unknown:
        raise GateRefused(
            f"unknown measure {', '.join(map(repr, unknown))}; use {', '.join(MEASURES)}", field="measure"
        )
    margin = check_points(margin_points, field="margin")
    max_drop = check_points(max_drop_points, field="max_drop", upper=100.000001)
    if max_p90_s is not None and not 0 < max_p90_s < 10**6:
        raise GateRefused(f"max_p90 is in seconds, above 0; got {max_p90_s:g}", field="max_p90")
    if max_timeout_rate is not None and not 0 <= max_timeout_rate <= 1:
        raise GateRefused(
            f"max_timeout_rate is a share from 0 to 1 (0.02 for 2 %); got {max_timeout_rate:g}",
            field="max_timeout_rate",
        )
    judge_version = _validated_judge(judge) if judge else None
    versions = {}
    for role, label in (("baseline", baseline), ("candidate", candidate)):
        found = AssistantVersion.objects.filter(label=label).first()
        if found is None:
            raise GateRefused(f"no assistant version {label!r} ({role})", field=role)
        versions[role] = found
    if set_version:
        chosen = SetVersion.objects.filter(version=set_version).first()
        if chosen is None:
            raise GateRefused(f"no set version {set_version!r}", field="set_version")
    else:
        shared = [
            s for s in set_versions_of(versions["candidate"])
            if s in set_versions_of(versions["baseline"])
        ]  # fmt: skip
        if not shared:
            raise GateRefused("the two versions have no set version in common", field="set_version")
        chosen = shared[0]
    records = {role: version_record(v, chosen) for role, v in versions.items()}
    for role, record in records.items():
        if not record:
            raise GateRefused(f"{versions[role].label} has no scored run on set {chosen.version}", field=role)
    return gate(
        records["baseline"],
        records["candidate"],
        measures=tuple(dict.fromkeys(measures or DEFAULT_MEASURES)),
        margin=margin,
        max_drop=max_drop,
        floors=floors,
        max_p90_s=max_p90_s,
        max_timeout_rate=max_timeout_rate,
        judge_version=judge_version,
        unequal_attempts=unequal_attempts,
    )


def _validated_judge(spec: str) -> JudgeVersion:
    name, _, number = spec.partition(":v")
    found = Judge.objects.filter(name=name).first()
    if found is None:
        raise GateRefused(f"no judge named {name!r}", field="judge")
    versions = found.versions.all()
    version = versions.filter(number=int(number)).first() if number.isdigit() else versions.first()
    if version is None:
        raise GateRefused(f"judge {name!r} has no version {number}", field="judge")
    if "rubric" not in version.metrics:
        raise GateRefused(
            f"{judge_label(version)} does not grade the rubric, so it gives no pass or fail", field="judge"
        )
    if not judge_is_validated(version):
        figures = judge_validation(judge_version=version)
        missing = (
            next((label.missing for label in figures.labels if label.label == "pass"), "") if figures else ""
        )
        raise GateRefused(
            f"{judge_label(version)} is not validated against people"
            + (f" ({missing})" if missing else " (no validation set drawn)")
            + ": an unvalidated judge can never be a gate measure",
            field="judge",
        )
    return version


def _success_rate(record: Record, measure: str):
    """The version's own success rate on all its questions, with its interval
    (for a failure measure, the share without the failure)."""
    counts = pooled_counts(record).get("all", {}).get(measure)
    if counts is None:
        return None
    return counted_rate(counts, complement=measure in FAILURE_MEASURES)


def gate(
    baseline: Record,
    candidate: Record,
    *,
    measures=DEFAULT_MEASURES,
    margin: float = gating.DEFAULT_MARGIN_POINTS / 100,
    max_drop: float | None = None,
    floors: dict[str, float] | None = None,
    max_p90_s: float | None = None,
    max_timeout_rate: float | None = None,
    judge_version: JudgeVersion | None = None,
    unequal_attempts: bool = False,
) -> dict:
    """Judge a candidate against a baseline as a non-inferiority decision on
    their common questions (see scoring.stats.gate). ``margin``, ``max_drop`` and
    ``floors`` are shares; ``max_p90_s`` holds the candidate's end-to-end P90
    and ``max_timeout_rate`` its timeout rate. Returns the JSON answer, with
    the verdict, its exit code and every measure's figures, each on all
    paired questions and on the subset both resolved in every attempt.

    When the two made a different number of attempts per question, a
    question must succeed more often in the one with more, so no measure is
    judged (cannot judge, exit 2) unless ``unequal_attempts`` asks for it;
    the figures are still given."""
    floors = floors or {}
    results = {}
    unlike = _unlike_attempts(baseline, candidate) if not unequal_attempts else ""
    for comparison in compare_versions(baseline, candidate, measures):
        floor = floors.get(comparison.measure)
        verdict = gating.judge_measure(
            comparison.paired,
            candidate_success=_success_rate(candidate, comparison.measure) if floor is not None else None,
            margin=margin,
            max_drop=max_drop,
            floor=floor,
        )
        if unlike:
            verdict = gating.MeasureVerdict(gating.CANNOT_JUDGE, [unlike])
        results[comparison.measure] = gating.measure_report(
            comparison.paired,
            verdict,
            label=comparison.label,
            baseline_all=comparison.baseline_all,
            candidate_all=comparison.candidate_all,
            margin=margin,
        )
        if floor is not None:
            results[comparison.measure]["floor"] = floor
        subset = comparison.resolved
        results[comparison.measure]["on_resolved_subset"] = {
            "n": subset.n,
            "table": [list(row) for row in subset.table],
            "difference_points": gating.in_points(subset.difference),
            "low_points": gating.in_points(subset.low),
            "high_points": gating.in_points(subset.high),
            "note": "the questions both versions resolved in every attempt; shown, not judged"
            + (
                "; 0 by construction on this measure: both versions succeed on every question of the "
                "subset (resolving it means that), so it compares nothing"
                if comparison.resolved_by_construction
                else ""
            ),
            "label": "by construction" if comparison.resolved_by_construction else "measured",
        }
    if judge_version is not None:
        judged = paired(
            judge_question_successes(baseline, judge_version),
            judge_question_successes(candidate, judge_version),
        )
        verdict = gating.judge_measure(judged, candidate_success=None, margin=margin, max_drop=max_drop)
        if unlike:
            verdict = gating.MeasureVerdict(gating.CANNOT_JUDGE, [unlike])
        results[f"judge:{judge_version.judge.name}"] = gating.measure_report(
            judged,
            verdict,
            label=f"graded resolved by {judge_label(judge_version)}, validated against people",
            baseline_all=None,
            candidate_all=None,
            margin=margin,
        )
    if max_p90_s is not None or max_timeout_rate is not None:
        base_timing = record_timing(baseline).get("all")
        cand_timing = record_timing(candidate).get("all")
        if max_p90_s is not None:
            results["e2e_p90"] = gating.judge_p90(cand_timing, base_timing, max_p90_s=max_p90_s)
        if max_timeout_rate is not None:
            results["timeout_rate"] = gating.judge_timeouts(
                cand_timing, base_timing, max_rate=max_timeout_rate
            )
    outcome = gating.overall({measure: entry["verdict"] for measure, entry in results.items()})
    return {
        "baseline": baseline.version.label,
        "candidate": candidate.version.label,
        "set_version": candidate.set_version.version,
        "runs": {
            "baseline": [run.id for run in baseline.used_runs],
            "candidate": [run.id for run in candidate.used_runs],
            "excluded": {
                "baseline": {run.id: run.excluded_reason for run in baseline.excluded},
                "candidate": {run.id: run.excluded_reason for run in candidate.excluded},
            },
        },
        "questions": "the tuning part of the set: sealed questions stay out of the gate",
        "attempts_per_question": {"baseline": baseline.repetitions, "candidate": candidate.repetitions},
        "one_attempt": _one_attempt(baseline, candidate),
        "verdict": outcome,
        "passed": outcome == gating.PASS,
        "exit_code": gating.EXIT_CODES[outcome],
        "margin_points": gating.in_points(margin),
        "max_drop_points": gating.in_points(max_drop),
        "alpha": gating.ALPHA,
        "bound": gating.BOUND,
        "multiplicity": gating.MULTIPLICITY,
        "measures": results,
        "not_judged": [m for m, e in results.items() if e["verdict"] == gating.CANNOT_JUDGE],
    }


def _one_attempt(baseline: Record, candidate: Record) -> str | None:
    """The one-attempt sentence naming the versions that asked each question
    once, or None when both repeated their attempts."""
    once = [record.version.label for record in (baseline, candidate) if record.repetitions == 1]
    if not once:
        return None
    who = "both versions" if len(once) == 2 else once[0]
    return one_attempt_sentence(figures="the gate's paired differences", who=who)


def _unlike_attempts(baseline: Record, candidate: Record) -> str:
    """Why two records with a different number of attempts per question
    are not judged; empty when they made as many."""
    if baseline.repetitions == candidate.repetitions:
        return ""
    return (
        f"not like for like: {candidate.version.label} made {candidate.repetitions} attempts per question "
        f"and {baseline.version.label} {baseline.repetitions}; a question must succeed in every attempt, so "
        "the one with more is held to a stricter test. Gate runs with as many attempts, or ask for it "
        "(unequal_attempts)"
    )


def gate_measures(answer: dict) -> list[dict]:
    """The gate answer's paired measures (automatic ones and a judge's), each
    with its key and its difference and interval as shares (None without
    pairs), in the answer's order."""
    rows = []
    for key, entry in answer["measures"].items():
        if "paired" not in entry:
            continue
        paired = entry["paired"]
        shares = {
            name: None if paired[f"{name}_points"] is None else paired[f"{name}_points"] / 100
            for name in ("difference", "low", "high")
        }
        rows.append({"key": key, **entry, **shares})
    return rows


def gate_limits(answer: dict) -> list[dict]:
    """The gate answer's limits on the candidate alone (P90, timeout rate)."""
    return [{"key": key, **entry} for key, entry in answer["measures"].items() if "paired" not in entry]


def gate_chart(answer: dict) -> dict:
    """The gate page's chart: each paired measure's difference and interval,
    with the margin the lower bound must clear."""
    rows = []
    for entry in gate_measures(answer):
        key = entry["key"]
        # A judge's label is a sentence; its name is enough beside a chart row.
        label = f"judge {key.removeprefix('judge:')}" if key.startswith("judge:") else entry["label"]
        rows.append(
            {
                "label": label,
                "n": entry["paired"]["n"],
                "difference": entry["difference"],
                "low": entry["low"],
                "high": entry["high"],
                "bound": None
                if entry["paired"]["bound_points"] is None
                else entry["paired"]["bound_points"] / 100,
                "outcome": entry["verdict"].replace(" ", "-"),
            }
        )
    return difference_chart(rows, margin=answer["margin_points"] / 100)


def _share(points: float | None) -> float | None:
    return None if points is None else points / 100


# The HTTP status the API gives each exit code of `manage.py gate`.
GATE_STATUS = {0: 200, 1: 409, 2: 422}


def gate_figures(answer: dict, options: dict) -> dict:
    """What the gate page shows beside a gate answer: the API's HTTP status for
    it, the paired measures, the limits, the chart and the API query asking
    the same (``options`` as the page's form cleaned them)."""
    return {
        "status": GATE_STATUS[answer["exit_code"]],
        "measures": gate_measures(answer),
        "limits": gate_limits(answer),
        "chart": gate_chart(answer),
        "api_query": gate_api_query(options),
    }


def refusal_field(refused) -> str:
    """The gate form's field a refusal belongs beside: the option gate_run
    names (the API's ``set_version`` is the page's ``set``)."""
    return {"set_version": "set"}.get(refused.field, refused.field) or "set"


def gate_api_query(options: dict) -> str:
    """The API's /gate query for the same question, for a pipeline to ask it."""
    pairs = [("baseline", options["baseline"]), ("candidate", options["candidate"])]
    if options["set"]:
        pairs.append(("set_version", options["set"]))
    pairs += [("measure", measure) for measure in options["measure"]]
    for name in ("margin", "max_drop", "max_p90", "max_timeout_rate"):
        if options[name] is not None:
            pairs.append((name, f"{options[name]:g}"))
    pairs += [("floor", floor) for floor in options["floor"]]
    if options["judge"]:
        pairs.append(("judge", options["judge"]))
    return urlencode(pairs)
