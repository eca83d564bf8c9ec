"""Reads of runs, their answers and set versions that pages, the API and exports share."""

from __future__ import annotations

from django.utils import timezone

from reviewapp.core.work import stale_before
from reviewapp.models import Question, Run, SetVersion
from scoring.declines import decline_warnings
from scoring.timing import clock_statement, clocks_note, reply_policies_note, reply_policy_statement


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


# Who made the choice when nobody here did: the header's exclude_overhead.
PIPELINE = "the pipeline (the log's header)"


def run_overhead_choice(run: Run) -> dict:
    """The recorded choice to leave channel overhead out of the run's E2E:
    {"excluded", "chosen_by", "chosen_at"}, chosen_by the lead's user name or
    the pipeline, both None when not chosen (E2E then includes it)."""
    if run.overhead_excluded_at is None:
        return {"excluded": False, "chosen_by": None, "chosen_at": None}
    chooser = run.overhead_excluded_by
    return {
        "excluded": True,
        "chosen_by": chooser.get_username() if chooser else PIPELINE,
        "chosen_at": run.overhead_excluded_at,
    }


def run_reply_policy_statement(run: Run) -> str:
    """The reply policy the run was called with, in words, as the CLI prints it."""
    return reply_policy_statement(run.reply_policy or None)


def runs_reply_policies_note(runs) -> str | None:
    """A note when runs compared side by side were called with different
    reply policies (scoring.timing.reply_policies_note); None when alike."""
    return reply_policies_note([run.reply_policy or None for run in runs])
