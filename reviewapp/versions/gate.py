"""The release gate, shared by the command and the API."""

from __future__ import annotations

from reviewapp.core.errors import ApplicationError
from reviewapp.models import AssistantVersion, Judge, JudgeVersion, SetVersion
from reviewapp.versions import selectors as dashboard
from scoring.gate import DEFAULT_MARGIN_POINTS
from scoring.measures import MEASURES

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
            s for s in dashboard.set_versions_of(versions["candidate"])
            if s in dashboard.set_versions_of(versions["baseline"])
        ]  # fmt: skip
        if not shared:
            raise GateRefused("the two versions have no set version in common", field="set_version")
        chosen = shared[0]
    records = {role: dashboard.version_record(v, chosen) for role, v in versions.items()}
    for role, record in records.items():
        if not record:
            raise GateRefused(f"{versions[role].label} has no scored run on set {chosen.version}", field=role)
    return dashboard.gate(
        records["baseline"],
        records["candidate"],
        measures=tuple(dict.fromkeys(measures or DEFAULT_MEASURES)),
        margin=margin,
        max_drop=max_drop,
        floors=floors,
        max_p90_s=max_p90_s,
        max_timeout_rate=max_timeout_rate,
        judge_version=judge_version,
    )


def _validated_judge(spec: str) -> JudgeVersion:
    from reviewapp.judges.selectors import judge_label
    from reviewapp.judges.services.validation import judge_is_validated, judge_validation

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
