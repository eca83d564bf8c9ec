"""The release gate, shared by the command and the API."""

from __future__ import annotations

from reviewapp import dashboard
from reviewapp.models import AssistantVersion, SetVersion
from scoring.measures import MEASURES

DEFAULT_MEASURES = ("numeric_accuracy", "citation_validity", "refusal_accuracy", "unsupported_answers")


class GateRefused(Exception):
    """The gate cannot judge: a version or its scored run is missing."""


def parse_floors(items) -> dict[str, float]:
    """``["numeric_accuracy=0.9"]`` as ``{"numeric_accuracy": 0.9}``."""
    floors = {}
    for item in items or ():
        name, _, value = item.partition("=")
        try:
            floors[name] = float(value)
        except ValueError as error:
            raise GateRefused(f"a floor is MEASURE=RATE, not {item!r}") from error
    return floors


def gate_run(
    *,
    baseline: str,
    candidate: str,
    set_version: str = "",
    measures=None,
    max_drop: float | None = None,
    floors: dict[str, float] | None = None,
) -> dict:
    """Judge ``candidate`` against ``baseline`` on a set version (by default
    the latest one both have a scored run on)."""
    versions = {}
    for role, label in (("baseline", baseline), ("candidate", candidate)):
        found = AssistantVersion.objects.filter(label=label).first()
        if found is None:
            raise GateRefused(f"no assistant version {label!r} ({role})")
        versions[role] = found
    unknown = set(measures or ()) - set(MEASURES) | set(floors or {}) - set(MEASURES)
    if unknown:
        raise GateRefused(f"unknown measures: {', '.join(sorted(unknown))}")
    if set_version:
        chosen = SetVersion.objects.filter(version=set_version).first()
        if chosen is None:
            raise GateRefused(f"no set version {set_version!r}")
    else:
        shared = [
            s for s in dashboard.set_versions_of(versions["candidate"])
            if s in dashboard.set_versions_of(versions["baseline"])
        ]  # fmt: skip
        if not shared:
            raise GateRefused("the two versions have no set version in common")
        chosen = shared[0]
    scorings = {role: dashboard.version_scoring(v, chosen) for role, v in versions.items()}
    for role, scoring in scorings.items():
        if scoring is None:
            raise GateRefused(f"{versions[role].label} has no scored run on set {chosen.version}")
    return dashboard.gate(
        scorings["baseline"],
        scorings["candidate"],
        measures=tuple(measures or DEFAULT_MEASURES),
        max_drop=max_drop,
        floors=floors,
    )
