"""Reads of runs, their answers and set versions that pages, the API and exports share."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from reviewapp.core.work import stale_before
from reviewapp.models import Answer, Question, Run, SetVersion
from scoring.declines import decline_warnings
from scoring.logfile import FOLLOW_UP_LABELS, follow_up_counts, follow_up_summary
from scoring.timing import clock_statement, clocks_note, reply_policies_note, reply_policy_statement


def run_is_stuck(run: Run) -> bool:
    """Not done, and nothing has moved for WORK_STALE_SECONDS: waiting for a
    broker that never took it, or claimed by a worker whose lease ran out."""
    now = timezone.now()
    if run.status == Run.Status.RECEIVED:
        # Never handed to the broker (it was down, or the claim was given
        # back after an outage) counts from the upload, not from at once.
        return (run.queued_at or run.created_at) < stale_before(now)
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


# The repeated attempts a run page lists; a run that repeats more says how many.
ATTEMPT_LINKS_SHOWN = 100


def attempt_links(rerun: Run, *, question_id: str | None = None, answer: Answer | None = None) -> list[dict]:
    """The lines of ``rerun`` that repeat an attempt of the run it repeats,
    in log order (only ``answer``, or the lines of ``question_id``, when
    given), each as a dict of the re-run's ``answer`` and the ``original``
    attempt it repeats: ``run``, ``question_id``, ``attempt``, ``answer``
    (None when that attempt was not run) and ``status`` ("not run" then).
    Both receipts stay: the original is never replaced. At most
    ATTEMPT_LINKS_SHOWN + 1 lines, so a page can say there are more."""
    if rerun.repeats_id is None:
        return []
    lines = Answer.objects.filter(run=rerun, raw__contains='"repeats_attempt"').order_by("line_number")
    if answer is not None:
        lines = lines.filter(id=answer.id)
    if question_id is not None:
        lines = lines.filter(question_id=question_id)
    links = []
    for later in lines[: ATTEMPT_LINKS_SHOWN + 1]:
        attempt = later.record.get("repeats_attempt")
        if attempt is None:
            continue
        links.append({"answer": later, "question_id": later.question_id, "attempt": attempt})
    originals = {
        (a.question_id, a.attempt): a
        for a in Answer.objects.filter(
            run_id=rerun.repeats_id, question_id__in={link["question_id"] for link in links}
        ).only("id", "run_id", "question_id", "attempt", "status", "line_number")
    }
    for link in links:
        original = originals.get((link["question_id"], link["attempt"]))
        link["original"] = {
            "run_id": rerun.repeats_id,
            "answer": original,
            "status": original.get_status_display() if original else "not run",
        }
    return links


def repeated_attempts(run: Run) -> list[dict]:
    """attempt_links of every run that repeats ``run``, in run order: the
    attempts of ``run`` that were run again, and where."""
    return [link for later in run.repeated_by.order_by("id") for link in attempt_links(later)]


def answer_attempt_links(answer: Answer) -> dict:
    """What the answer page says of repeats: ``repeats``, the attempt this
    answer repeats (attempt_links' dict, or None), and ``repeated_by``, the
    lines of later runs that repeat this answer's attempt."""
    own = attempt_links(answer.run, answer=answer)
    repeated_by = [
        link
        for later in answer.run.repeated_by.order_by("id")
        for link in attempt_links(later, question_id=answer.question_id)
        if link["attempt"] == answer.attempt
    ]
    return {"repeats": own[0] if own else None, "repeated_by": repeated_by}


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
