"""Reads of runs, their answers and set versions that pages, the API and exports share."""

from __future__ import annotations

from django.utils import timezone

from reviewapp.core.work import stale_before
from reviewapp.models import Answer, Question, Run, SetVersion
from scoring.declines import decline_warnings
from scoring.logfile import FOLLOW_UP_LABELS, follow_up_counts, follow_up_summary
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


def run_follow_up_counts(run: Run) -> dict:
    """How many of the run's attempts took follow-ups, and of them how many
    by protocol, ad hoc and resumed (scoring.logfile.follow_up_counts), with
    the line every page, the API and the CLI show for it as "summary"."""
    lists = Answer.objects.filter(run=run).exclude(follow_ups=[]).values_list("follow_ups", flat=True)
    counts = follow_up_counts(lists.iterator())
    return {**counts, "summary": follow_up_summary(counts)}


def answers_off_protocol(answer_ids) -> dict[int, list[str]]:
    """For each of ``answer_ids`` that took a follow-up outside the protocol,
    the labels of those it took ("ad hoc", "resumed"), so that a list of
    attempts says so beside each."""
    rows = Answer.objects.filter(id__in=answer_ids).exclude(follow_ups=[]).values_list("id", "follow_ups")
    labels = {}
    for answer_id, follow_ups in rows:
        kinds = {item["kind"] for item in follow_ups}
        if shown := [
            label for kind, label in FOLLOW_UP_LABELS.items() if kind != "protocol" and kind in kinds
        ]:
            labels[answer_id] = shown
    return labels


def answer_follow_ups(answer: Answer) -> list[dict]:
    """The attempt's follow-ups, in the order sent, each with the label of
    its kind ("by protocol", "ad hoc", "resumed") and, when it was logged as
    protocol but is not the declared one, "logged_kind"."""
    return [{**item, "label": FOLLOW_UP_LABELS[item["kind"]]} for item in answer.follow_ups]
