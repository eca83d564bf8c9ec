"""The lead's workspace: the queue, adjudication, the material-error
register, agreement between readers, and calibration items."""

import json
import uuid
from datetime import datetime, time
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviewapp.core import csv_cells
from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.models import AnswerCheck, Finding, Judgement, Role, Sample, SampleItem
from reviewapp.review import queue
from reviewapp.review import selectors as lead
from reviewapp.review.calibration_patterns import PATTERNS
from reviewapp.review.forms import DateRangeForm
from reviewapp.review.services.adjudication import (
    Decision,
    DecisionConflict,
    adjudication_submit,
    calibration_add,
    calibration_patterns_issue,
    decision_assessment,
    material_error_raised,
)
from reviewapp.review.services.review import OutcomeRefused
from reviewapp.review.views.review import grading_screen_context
from reviewapp.scorings.selectors import check_numbers, marked_text
from scoring.stats.agreement import ALPHA_FLOOR


@require_GET
@role_required(Role.LEAD, Role.ADMIN)
def lead_queue(request):
    filters = {
        "reason": request.GET.get("reason", ""),
        "sample_id": _int(request.GET.get("sample")),
        "language": request.GET.get("language", ""),
        "reader_id": _int(request.GET.get("reader")),
    }
    entries = queue.lead_queue(**filters)
    return render(
        request,
        "lead/queue.html",
        {
            "entries": entries,
            "reasons": lead.REASONS.items(),
            "samples": Sample.objects.order_by("-created_at"),
            "readers": get_user_model().objects.filter(groups__name=Role.REVIEWER).order_by("username"),
            "filters": filters,
        },
    )


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@require_http_methods(["GET", "POST"])
@role_required(Role.LEAD, Role.ADMIN)
def adjudicate(request, item_id: int):
    item = get_object_or_404(
        SampleItem.objects.select_related(
            "sample__rubric_version",
            "answer__run__assistant_version",
            "answer__run__set_version",
            "calibration",
        ),
        id=item_id,
    )
    rubric_questions = list(item.sample.rubric_version.questions.all())
    filters = _adjudicate_filters(request.GET)
    errors: dict[str, str] = {}
    conflict = None
    decision = None
    if request.method == "POST":
        decision = _decision(request.POST, rubric_questions)
        try:
            key = uuid.UUID(request.POST.get("submission_key", ""))
        except ValueError:
            key = uuid.uuid4()
        try:
            adjudication = adjudication_submit(
                item=item,
                lead=request.user,
                decision=decision,
                submission_key=key,
                seen_revision=_int(request.POST.get("seen_revision")),
            )
        except DecisionConflict as changed:
            conflict = changed.latest
        except OutcomeRefused as refused:
            errors = refused.fields
        except ApplicationError as rejected:
            errors = {"form": " ".join(rejected.errors)}
        else:
            following = _next_in_queue(item, filters)
            messages.success(
                request,
                f"Decision recorded on item {item.position} of {item.sample.name}: {adjudication.outcome}."
                + (" Here is the next item in the queue." if following else " The queue is empty."),
            )
            if following is None:
                return redirect(reverse("lead-queue") + _query(filters))
            return redirect(reverse("adjudicate", args=[following.id]) + _query(filters))
    return render(
        request,
        "lead/adjudicate.html",
        _adjudicate_context(
            item, rubric_questions, filters=filters, posted=decision, errors=errors, conflict=conflict
        ),
        status=409 if conflict else (400 if errors else 200),
    )


# The lead queue's filters, carried from item to item while adjudicating.
QUEUE_FILTERS = {"reason": "reason", "sample": "sample_id", "language": "language", "reader": "reader_id"}


def _adjudicate_filters(query) -> dict:
    return {
        name: query.get(name, "")
        for name in QUEUE_FILTERS
        if query.get(name, "") and (name in ("reason", "language") or _int(query.get(name)) is not None)
    }


def _query(filters: dict) -> str:
    return f"?{urlencode(filters)}" if filters else ""


def _next_in_queue(item: SampleItem, filters: dict) -> SampleItem | None:
    """The queue's entry after ``item`` (oldest first, with the same filters),
    else the first other entry; None when nothing else waits."""
    entries = queue.lead_queue(
        **{
            QUEUE_FILTERS[name]: _int(value) if name in ("sample", "reader") else value
            for name, value in filters.items()
        }
    )
    others = [entry.item for entry in entries if entry.item.id != item.id]
    ids = [entry.item.id for entry in entries]
    if item.id in ids:
        after = [entry.item for entry in entries[ids.index(item.id) + 1 :]]
        return (after or others or [None])[0]
    return others[0] if others else None


def _adjudicate_context(
    item: SampleItem, rubric_questions, *, filters: dict, posted: Decision | None, errors: dict, conflict
) -> dict:
    judgements = lead.latest_judgements([item]).get(item.id, [])
    checks = []
    if item.answer_id:
        record = item.answer.record
        for check in AnswerCheck.objects.filter(answer=item.answer).select_related("scoring__set_version"):
            numbers = check_numbers(check, record)
            checks.append(
                {
                    "check": check,
                    # The legend names what was checked: years and ordinals are not.
                    "checked_numbers": [number for number in numbers if number["supported"] is not None],
                    "segments": marked_text(record.get("answer", ""), numbers),
                    "findings": Finding.objects.filter(scoring=check.scoring_id, answer=item.answer),
                }
            )
    history = list(item.adjudications.select_related("lead").order_by("-revision"))
    raised = material_error_raised(item)
    # Shown again as sent after a refusal or a conflict; else what the
    # readers agree on (or the latest decision) is filled in.
    current = posted or _prefilled(judgements, rubric_questions, latest=history[0] if history else None)
    following = _next_in_queue(item, filters)
    return {
        "item": item,
        **lead.item_content(item),
        "judgements": judgements,
        "rubric_questions": lead.rubric_questions_for(
            item.sample.rubric_version, declined=lead.declined_answer(item)
        ),
        "rows": _rubric_rows(rubric_questions, judgements),
        "agreed": _agreed_rubric(rubric_questions, judgements),
        "agreed_addresses": _agreed_addresses(judgements),
        "reasons": [lead.REASONS[r] for r in queue.item_reasons(item, judgements)],
        "checks": checks,
        "history": history,
        "errors": errors,
        "form_errors": [message for field, message in errors.items() if field == "form"],
        "error_count": len(errors),
        "error_kinds": Judgement.ErrorKind.choices,
        "submission_key": uuid.uuid4(),
        # The form carries the decision the lead saw, so that one made
        # meanwhile by someone else is shown instead of overwritten.
        "seen_revision": history[0].revision if history else 0,
        "settles_pending": bool(history) and history[0].pending,
        "conflict": conflict,
        "current": current,
        "graded": decision_assessment(current, raised=raised).graded,
        "raised": raised,
        "filters": filters,
        "query": _query(filters),
        "skip_url": (reverse("adjudicate", args=[following.id]) + _query(filters)) if following else "",
        **grading_screen_context(),
        # Plain words for what the lead does with a reader's material error.
        "material_choices": [("yes", "confirm it"), ("no", "dismiss it"), ("pending", "keep pending")]
        if raised
        else Judgement.MaterialError.choices,
        # A reader's pending is not a raised error (issue 25, point 14).
        "material_question": (
            "Material error raised:"
            if any(j.material_error == "yes" or j.grade == Judgement.Grade.MATERIAL_ERROR for j in judgements)
            else "Material error left pending:"
        )
        if raised
        else None,
    }


def _prefilled(judgements, rubric_questions, *, latest) -> Decision:
    """A decision form filled with the latest decision, else with what every
    reader agrees on: whether the answer addresses the question, each rubric
    answer and each metric; a material error is never confirmed for the lead,
    but the record of the first reader who raised one is copied to check."""
    if latest is not None:
        return Decision(
            reason="",
            addresses_question=latest.addresses_question,
            rubric_answers=dict(latest.rubric_answers or {}),
            material_error=latest.material_error,
            correctness=latest.correctness,
            fulfilment=latest.fulfilment,
            needs_more_info=latest.needs_more_info,
            error_claim=latest.error_claim,
            error_evidence=latest.error_evidence,
            error_effect=latest.error_effect,
            error_kind=latest.error_kind,
        )

    def agreed(values):
        values = set(values)
        return values.pop() if len(values) == 1 else None

    addresses = agreed(j.addresses_question for j in judgements)
    raiser = next((j for j in judgements if j.material_error in ("yes", "pending")), None)
    return Decision(
        reason="",
        addresses_question=True if addresses is None else addresses,
        rubric_answers=_agreed_rubric(rubric_questions, judgements),
        material_error="no" if judgements and agreed(j.material_error for j in judgements) == "no" else "",
        correctness=agreed(j.correctness for j in judgements) or "",
        fulfilment=agreed(j.fulfilment for j in judgements) or "",
        needs_more_info=any(j.needs_more_info for j in judgements),
        error_claim=raiser.error_claim if raiser else "",
        error_evidence=raiser.error_evidence if raiser else "",
        error_effect=raiser.error_effect if raiser else "",
        error_kind=raiser.error_kind if raiser else "",
    )


def _agreed_addresses(judgements) -> str:
    """Whether every reader answered question 0 alike: "yes" or "no", else ""."""
    values = {j.addresses_question for j in judgements}
    return ("yes" if values.pop() else "no") if len(values) == 1 else ""


def _agreed_rubric(rubric_questions, judgements) -> dict[str, str]:
    """The rubric answers every reader who answered the rubric gave alike."""
    answered = [j.rubric_answers or {} for j in judgements if j.addresses_question]
    agreed = {}
    for question in rubric_questions:
        values = {answers.get(question.key) for answers in answered}
        if answered and len(values) == 1 and None not in values:
            agreed[question.key] = values.pop()
    return agreed


def _rubric_rows(rubric_questions, judgements) -> list[tuple[str, list[str], bool]]:
    """(question, each reader's answer, whether they differ) per rubric question."""
    rows = []
    for question in rubric_questions:
        answers = [
            j.rubric_answers.get(question.key, "—") if j.addresses_question else "—" for j in judgements
        ]
        rows.append((question.text, answers, len(set(answers)) > 1))
    return rows


def _decision(data, rubric_questions) -> Decision:
    # The screen sends the metrics; a grade alone is still read, as before.
    grade = data.get("grade", "")
    return Decision(
        reason=data.get("reason", ""),
        addresses_question=data.get("addresses_question", "yes") == "yes",
        rubric_answers={
            q.key: data.get(f"q_{q.key}", "") for q in rubric_questions if data.get(f"q_{q.key}")
        },
        grade="" if grade == "pending" else grade,
        pending=grade == "pending",
        material_error=data.get("material_error", ""),
        correctness=data.get("correctness", ""),
        fulfilment=data.get("fulfilment", ""),
        needs_more_info=bool(data.get("needs_more_info")),
        settling_evidence=data.get("settling_evidence", ""),
        material_status=data.get("material_status", ""),
        error_claim=data.get("error_claim", ""),
        error_evidence=data.get("error_evidence", ""),
        error_effect=data.get("error_effect", ""),
        error_kind=data.get("error_kind", ""),
    )


# What a reader recorded of a material error, in the register's column order.
_RAISED_FIELDS = ("error_kind", "error_claim", "error_evidence", "error_effect")


@require_GET
@role_required(*READERS_OF_RUNS)
def material_register(request):
    """The latest confirmed or dismissed material error of each item, as a page
    or as CSV (``format=csv``). Each row carries ``raised``: the readers'
    claims, so that a dismissed error still shows what was claimed beside the
    lead's reason."""
    filters = {
        "status": request.GET.get("status", "confirmed"),
        "kind": request.GET.get("kind", ""),
        "version": request.GET.get("version", ""),
    }
    rows = lead.register(**filters)
    raised = _raised_by_readers(rows)
    for a in rows:
        a.raised = raised.get(a.item_id, [])
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="material-errors.csv"'
        writer = csv_cells.writer(response)
        writer.writerow(
            ["status", "kind", "claim", "evidence", "effect", "assistant_version", "question_id",
             "sample", "item", "decided_by", "decided_at", "reason",
             "raised_kind", "raised_claim", "raised_evidence", "raised_effect"]
        )  # fmt: skip
        for a in rows:
            answer = a.item.answer
            # Several readers' claims share a cell, one after the other.
            said = [" | ".join(getattr(j, field) for j in a.raised) for field in _RAISED_FIELDS]
            writer.writerow(
                [a.material_status, a.error_kind, a.error_claim, a.error_evidence, a.error_effect,
                 answer.run.assistant_version.label if answer else "calibration",
                 answer.question_id if answer else a.item.calibration.group,
                 a.item.sample_id, a.item.position, a.lead.get_username(), a.created_at.isoformat(), a.reason,
                 *said]
            )  # fmt: skip
        return response
    return render(
        request,
        "lead/register.html",
        {"rows": rows, "filters": filters, "kinds": Judgement.ErrorKind.choices},
    )


def _raised_by_readers(rows) -> dict[int, list[Judgement]]:
    """Per item of the register's rows, the readers' latest judgements that
    raised a material error (with a claim, evidence, effect or kind)."""
    latest = lead.latest_judgements([a.item for a in rows])
    return {
        item_id: [j for j in judgements if any(getattr(j, field) for field in _RAISED_FIELDS)]
        for item_id, judgements in latest.items()
    }


@require_GET
@role_required(*READERS_OF_RUNS)
def agreement_view(request, sample_id: int | None = None):
    date_errors: list[str] = []
    if sample_id is not None:
        samples = [get_object_or_404(Sample.objects.select_related("rubric_version"), id=sample_id)]
        title = samples[0].name
        date_from = date_to = None
    else:
        today = timezone.localdate()
        dates = DateRangeForm(request.GET)
        if not dates.is_valid():
            date_errors = [
                f"{'' if field == '__all__' else field + ': '}{message}"
                for field, messages in dates.errors.items()
                for message in messages
            ]
        date_from = dates.cleaned_data.get("from") or today.replace(day=1)
        date_to = dates.cleaned_data.get("to") or today
        if date_from > date_to:
            date_from, date_to = today.replace(day=1), today
        samples = lead.samples_between(
            timezone.make_aware(datetime.combine(date_from, time.min)),
            timezone.make_aware(datetime.combine(date_to, time.max)),
        )
        title = f"Samples drawn {date_from:%Y-%m-%d} to {date_to:%Y-%m-%d}"
    table = lead.agreement_table(samples)
    return render(
        request,
        "lead/agreement.html",
        {
            "title": title,
            "samples": samples,
            "table": table,
            "floor": ALPHA_FLOOR,
            "calibration": lead.calibration_results(samples),
            "date_from": date_from,
            "date_to": date_to,
            "date_errors": date_errors,
            "sample_id": sample_id,
        },
        status=400 if date_errors else 200,
    )


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def calibration_new(request, sample_id: int):
    sample = get_object_or_404(Sample, id=sample_id)
    errors: list[str] = []
    values = request.POST if request.method == "POST" else {}
    if request.method == "POST":
        try:
            evidence = [
                {
                    # A neutral id: the reader sees it on the review screen.
                    "id": values.get("record_id", "").strip() or "R1",
                    "label": values.get("record_label", "").strip(),
                    "values": [float(v) for v in values.get("record_values", "").split(",") if v.strip()],
                    "period": values.get("record_period", "").strip(),
                    "unit": values.get("record_unit", "").strip(),
                    "caveats": [c.strip() for c in values.get("record_caveats", "").split(",") if c.strip()],
                }
            ]
        except ValueError:
            errors = ["The record's values are numbers separated by commas."]
        if not errors:
            try:
                items = calibration_add(
                    sample=sample,
                    group=values.get("group", ""),
                    question=values.get("question", ""),
                    evidence=evidence,
                    variants={
                        form: values.get(f"answer_{form}", "")
                        for form in ("short", "long", "paragraph", "table")
                    },
                    parts=(values.get("answer_first_part", ""), values.get("answer_second_part", "")),
                    language=values.get("language", "en").strip() or "en",
                    created_by=request.user,
                )
            except ApplicationError as rejected:
                errors = rejected.errors
            else:
                messages.success(request, f"{len(items)} calibration items put into the sample.")
                return redirect("sample-detail", sample_id=sample.id)
    return _calibration_page(request, sample, errors=errors, values=values)


@require_POST
@role_required(*WRITERS)
def calibration_patterns_new(request, sample_id: int):
    sample = get_object_or_404(Sample, id=sample_id)
    try:
        items = calibration_patterns_issue(
            sample=sample, keys=request.POST.getlist("pattern"), created_by=request.user
        )
    except ApplicationError as rejected:
        return _calibration_page(request, sample, errors=rejected.errors, values={})
    messages.success(request, f"{len(items)} calibration items put into the sample.")
    return redirect("sample-detail", sample_id=sample.id)


def _calibration_page(request, sample: Sample, *, errors: list[str], values):
    return render(
        request,
        "lead/calibration.html",
        {
            "sample": sample,
            "errors": errors,
            "values": values,
            "patterns": PATTERNS,
            "chosen": request.POST.getlist("pattern"),
            "can_write": has_role(request.user, *WRITERS),
        },
        status=400 if errors else 200,
    )


@require_GET
@role_required(Role.LEAD, Role.ADMIN)
def reader_consistency(request):
    # A sample asked for by a wrong id is not found, rather than read as
    # "no reader has calibration items".
    sample = get_object_or_404(Sample, id=_int(request.GET["sample"])) if request.GET.get("sample") else None
    samples = [sample] if sample else Sample.objects.all()
    return render(
        request,
        "lead/consistency.html",
        {"readers": lead.reader_consistency(samples), "sample": sample},
    )


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)
