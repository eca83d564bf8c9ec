"""Reads of runs, their answers and set versions that pages, the API and exports share."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from reviewapp.core.work import stale_before
from reviewapp.models import Question, Run, SetVersion
from scoring.declines import decline_warnings
from scoring.timing import clock_statement, clocks_note


def run_is_stuck(run: Run) -> bool:
    """Not done, and nothing has moved for WORK_STALE_SECONDS: waiting for a
    broker that never took it, or claimed by a worker whose lease ran out."""
    now = timezone.now()
    if run.status == Run.Status.RECEIVED:
        return run.queued_at is None or run.queued_at < stale_before(now)
    if run.status == Run.Status.INGESTING:
        return run.lease_until is not None and run.lease_until < now
    return False


def set_version_warnings(set_version: SetVersion) -> list[str]:
    """What a set version's figures cannot show, said wherever it is shown:
    no question expecting a decline (scoring.declines)."""
    declines = set_version.questions.filter(expected_behaviour=Question.Behaviour.DECLINE).exists()
    return decline_warnings(decline_questions=int(declines), what=f"set {set_version.version}")


def set_versions_warnings(set_versions) -> dict[int, list[str]]:
    """set_version_warnings of each of ``set_versions`` by id, counted in one
    query, for a page that lists many."""
    counted = SetVersion.objects.filter(id__in=[v.id for v in set_versions]).annotate(
        declines=Count("questions", filter=Q(questions__expected_behaviour=Question.Behaviour.DECLINE))
    )
    return {v.id: decline_warnings(decline_questions=v.declines, what=f"set {v.version}") for v in counted}


def runs_warnings(runs) -> list[str]:
    """run_warnings of each of ``runs``, each warning once, in order: what the
    figures of a version's runs together cannot show."""
    warnings: list[str] = []
    for run in runs:
        warnings.extend(w for w in run_warnings(run) if w not in warnings)
    return warnings


def run_warnings(run: Run) -> list[str]:
    """set_version_warnings of the run's set version and of each other set
    version it was scored against, each once."""
    versions = {run.set_version_id: run.set_version}
    for scoring in run.scorings.select_related("set_version").order_by("created_at", "id"):
        versions.setdefault(scoring.set_version_id, scoring.set_version)
    return [warning for set_version in versions.values() for warning in set_version_warnings(set_version)]


def run_clock(run: Run) -> dict:
    """The clocks a run's header stated, as {"skew_ms", "precision_ms"}
    (None where not stated, never 0)."""
    return {"skew_ms": run.clock_skew_ms, "precision_ms": run.clock_precision_ms}


def run_clock_statement(run: Run) -> str:
    """The run's clocks in words, as the CLI prints them (scoring.timing.clock_statement)."""
    return clock_statement(**run_clock(run))


def runs_clocks_note(runs) -> str | None:
    """A note when runs compared side by side state different clocks, or
    not every one states them (scoring.timing.clocks_note); None when alike."""
    return clocks_note([run_clock(run) for run in runs])
