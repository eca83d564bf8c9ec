"""The reviewer's screens: a queue of samples and the blinded review item.

Nothing here may show or embed what identifies the assistant, its version,
the run, timings, tool calls, automatic scores or other readers' work.
"""

import uuid

from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect, push_url

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import role_required
from reviewapp.models import Assignment, Judgement, Role, Sample
from reviewapp.review import defaults, guide
from reviewapp.review.selectors import REASONS, declined_answer, item_content, rubric_questions_for
from reviewapp.review.services import grading
from reviewapp.review.services.review import (
    JudgementInput,
    OutcomeRefused,
    judgement_assessment,
    judgement_submit,
)


@require_GET
@role_required(Role.REVIEWER, Role.LEAD, Role.ADMIN)
def review_queue(request):
    samples = (
        Sample.objects.filter(items__assignments__reviewer=request.user)
        .annotate(
            assigned=Count(
                "items__assignments", filter=Q(items__assignments__reviewer=request.user), distinct=True
            ),
            judged=Count(
                "items__assignments",
                filter=Q(
                    items__assignments__reviewer=request.user, items__assignments__judgements__isnull=False
                ),
                distinct=True,
            ),
        )
        .order_by("-created_at")
        .distinct()
    )
    return render(request, "review/queue.html", {"samples": samples})


@require_GET
@role_required(Role.REVIEWER, Role.LEAD, Role.ADMIN)
def review_start(request, sample_id: int):
    """The reader's next item to judge in a sample, else their first."""
    mine = Assignment.objects.filter(item__sample_id=sample_id, reviewer=request.user).order_by("order")
    target = mine.filter(judgements__isnull=True).first() or mine.first()
    if target is None:
        raise Http404("No items of this sample are assigned to you.")
    return redirect("review-item", sample_id=sample_id, alias=target.alias)


@require_http_methods(["GET", "POST"])
@role_required(Role.REVIEWER, Role.LEAD, Role.ADMIN)
def review_item(request, sample_id: int, alias: str):
    """One of the reader's items with the grading form. A POST saves the
    judgement and brings the reader's next open item (in place for htmx), or
    shows the form again with each refusal beside its field (400, or 200 for
    htmx, which swaps only a success)."""
    # Only the reader's own assignments resolve: another item's URL is a 404.
    assignment = get_object_or_404(
        Assignment.objects.select_related(
            "item__sample__rubric_version", "item__answer", "item__calibration"
        ),
        item__sample_id=sample_id,
        alias=alias,
        reviewer=request.user,
    )
    errors: dict[str, str] = {}
    posted = None
    if request.method == "POST":
        posted = _judgement_input(request.POST)
        try:
            judgement = judgement_submit(
                assignment=assignment,
                author=request.user,
                data=posted,
                submission_key=_submission_key(request.POST),
            )
        except OutcomeRefused as refused:
            errors = refused.fields
        except ApplicationError as rejected:
            errors = {"form": " ".join(rejected.errors)}
        else:
            saved = {
                "position": _position(assignment),
                "alias": assignment.alias,
                "outcome": judgement.outcome,
            }
            following = _following(assignment)
            if following is None:
                return _go(request, reverse("review-queue") + f"?done={sample_id}", partial=False)
            return _go(
                request,
                reverse("review-item", args=[sample_id, following.alias]),
                following=following,
                saved=saved,
            )
    saved = request.session.pop(SAVED_KEY, None) if request.method == "GET" else None
    context = _item_context(assignment, posted=posted, errors=errors, saved=saved)
    status = 400 if errors and not request.htmx else 200
    template = "review/item.html#review-screen" if request.htmx else "review/item.html"
    return render(request, template, context, status=status)


# Where a save's confirmation waits for the page the browser is sent to.
SAVED_KEY = "review_saved"


def _go(request, url: str, *, following=None, saved: dict | None = None, partial: bool = True):
    """After a save: the next item in place for htmx, a redirect otherwise;
    either way the next page confirms what was saved."""
    if request.htmx and partial and following is not None:
        response = render(request, "review/item.html#review-screen", _item_context(following, saved=saved))
        return push_url(response, url)
    if saved is not None:
        request.session[SAVED_KEY] = saved
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def _position(assignment: Assignment) -> int:
    """The assignment's place, from 1, among its reader's items of the sample."""
    return (
        Assignment.objects.filter(
            item__sample_id=assignment.item.sample_id,
            reviewer=assignment.reviewer_id,
            order__lt=assignment.order,
        ).count()
        + 1
    )


def _following(assignment: Assignment) -> Assignment | None:
    """The next item this reader has not judged, after this one, else before it."""
    mine = Assignment.objects.filter(
        item__sample_id=assignment.item.sample_id, reviewer=assignment.reviewer_id
    )
    open_items = mine.filter(judgements__isnull=True).exclude(id=assignment.id).order_by("order")
    return open_items.filter(order__gt=assignment.order).first() or open_items.first()


def _submission_key(data) -> uuid.UUID:
    try:
        return uuid.UUID(data.get("submission_key", ""))
    except ValueError:
        return uuid.uuid4()


def _judgement_input(data) -> JudgementInput:
    addresses = {"yes": True, "no": False}.get(data.get("addresses_question", ""))
    # The screen sends the metrics; a grade is read too, so that a form
    # opened before the metrics were asked still saves what it says.
    grade = data.get("grade", "")
    return JudgementInput(
        addresses_question=addresses,
        rubric_answers={
            name.removeprefix("q_"): value for name, value in data.items() if name.startswith("q_")
        },
        grade="" if grade == "pending" else grade,
        pending=grade == "pending",
        material_error=data.get("material_error", ""),
        correctness=data.get("correctness", ""),
        fulfilment=data.get("fulfilment", ""),
        needs_more_info=bool(data.get("needs_more_info")),
        borderline=bool(data.get("borderline")),
        note=data.get("note", ""),
        error_claim=data.get("error_claim", ""),
        error_evidence=data.get("error_evidence", ""),
        error_effect=data.get("error_effect", ""),
        error_kind=data.get("error_kind", ""),
    )


def _item_context(
    assignment: Assignment,
    *,
    posted: JudgementInput | None = None,
    errors: dict[str, str] | None = None,
    saved: dict | None = None,
) -> dict:
    item = assignment.item
    sample = item.sample
    mine = list(
        Assignment.objects.filter(item__sample=sample, reviewer=assignment.reviewer_id).order_by("order")
    )
    aliases = [a.alias for a in mine]
    index = aliases.index(assignment.alias)
    latest_by_assignment = {}
    for judgement in Judgement.objects.filter(assignment__in=mine).order_by("assignment_id", "revision"):
        latest_by_assignment[judgement.assignment_id] = judgement
    latest = latest_by_assignment.get(assignment.id)
    rubric = sample.rubric_version
    current = posted or _as_input(latest)
    errors = errors or {}
    return {
        **item_content(item),
        "assignment": assignment,
        "sample": sample,
        "position": index + 1,
        "total": len(mine),
        "previous_alias": aliases[index - 1] if index > 0 else None,
        "next_alias": aliases[index + 1] if index + 1 < len(mine) else None,
        # The reader's own items only, with their own latest outcome.
        "jump": [
            {
                "position": place,
                "alias": a.alias,
                "outcome": latest_by_assignment[a.id].outcome if a.id in latest_by_assignment else "",
                "current": a.id == assignment.id,
            }
            for place, a in enumerate(mine, start=1)
        ],
        "rubric": rubric,
        "rubric_questions": rubric_questions_for(rubric, declined=declined_answer(item)),
        "current": current,
        "errors": errors,
        # Messages no field shows (e.g. another reader's item).
        "form_errors": [message for field, message in errors.items() if field == "form"],
        "error_count": len(errors),
        "graded": judgement_assessment(current).graded if current else None,
        "saved": saved,
        "history": list(assignment.judgements.order_by("-revision")),
        "submission_key": uuid.uuid4(),
        "error_kinds": Judgement.ErrorKind.choices,
        **grading_screen_context(),
    }


def grading_screen_context() -> dict:
    """What the review and adjudication screens show alike: the choices of
    the material-error question and the metrics, the grade table (also read
    by the screens' script) and the grading rules of the guide."""
    return {
        "material_choices": Judgement.MaterialError.choices,
        # Each value with the grade keys that set it, shown beside it.
        "correctness_choices": [
            (value, label, grading.keys_setting(metric="correctness", value=value))
            for value, label in Judgement.Correctness.choices
        ],
        "fulfilment_choices": [
            (value, label, grading.keys_setting(metric="fulfilment", value=value))
            for value, label in Judgement.Fulfilment.choices
        ],
        "grade_rules_data": grading.rules_for_screen(),
        "grade_keys_data": grading.GRADE_KEYS,
        "needs_info_label": REASONS["needs_info"],
        "decline_rule": defaults.DECLINE_RULE,
        **guide_context(),
    }


def guide_context() -> dict:
    """What templates/review/grading_guide.html shows: the grade table, the
    rule for an answer off the question and the guide's sections."""
    return {
        "grade_rules": grading.GRADE_RULES,
        "off_question_rule": grading.OFF_QUESTION_RULE,
        "guide_sections": guide.SECTIONS,
    }


def _as_input(judgement: Judgement | None) -> JudgementInput | None:
    if judgement is None:
        return None
    return JudgementInput(
        addresses_question=judgement.addresses_question,
        rubric_answers=judgement.rubric_answers,
        grade=judgement.grade,
        pending=judgement.pending,
        material_error=judgement.material_error,
        correctness=judgement.correctness,
        fulfilment=judgement.fulfilment,
        needs_more_info=judgement.needs_more_info,
        borderline=judgement.borderline,
        note=judgement.note,
        error_claim=judgement.error_claim,
        error_evidence=judgement.error_evidence,
        error_effect=judgement.error_effect,
        error_kind=judgement.error_kind,
    )
