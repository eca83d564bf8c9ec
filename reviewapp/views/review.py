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

from reviewapp.lead import item_content
from reviewapp.models import Assignment, Judgement, Role, Sample
from reviewapp.roles import role_required
from reviewapp.services.review import JudgementInput, judgement_errors, judgement_submit, latest_judgement
from reviewapp.services.uploads import UploadRejected


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
        errors = judgement_errors(posted, assignment.item.sample.rubric_version)
        if not errors:
            try:
                judgement_submit(
                    assignment=assignment,
                    author=request.user,
                    data=posted,
                    submission_key=_submission_key(request.POST),
                )
            except UploadRejected as rejected:
                errors = {"form": " ".join(rejected.errors)}
        if not errors:
            following = _following(assignment)
            if following is None:
                return _go(request, reverse("review-queue") + f"?done={sample_id}", partial=False)
            return _go(
                request, reverse("review-item", args=[sample_id, following.alias]), following=following
            )
    context = _item_context(assignment, posted=posted, errors=errors)
    status = 400 if errors and not request.htmx else 200
    template = "review/item.html#review-screen" if request.htmx else "review/item.html"
    return render(request, template, context, status=status)


def _go(request, url: str, *, following=None, partial: bool = True):
    """After a save: the next item in place for htmx, a redirect otherwise."""
    if request.htmx and partial and following is not None:
        response = render(request, "review/item.html#review-screen", _item_context(following))
        return push_url(response, url)
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


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
    return JudgementInput(
        addresses_question=addresses,
        rubric_answers={
            name.removeprefix("q_"): value for name, value in data.items() if name.startswith("q_")
        },
        grade="" if data.get("grade") == "pending" else data.get("grade", ""),
        pending=data.get("grade") == "pending",
        borderline=bool(data.get("borderline")),
        note=data.get("note", ""),
        error_claim=data.get("error_claim", ""),
        error_evidence=data.get("error_evidence", ""),
        error_effect=data.get("error_effect", ""),
        error_kind=data.get("error_kind", ""),
    )


def _item_context(assignment: Assignment, *, posted: JudgementInput | None = None, errors=None) -> dict:
    item = assignment.item
    sample = item.sample
    mine = list(
        Assignment.objects.filter(item__sample=sample, reviewer=assignment.reviewer_id)
        .order_by("order")
        .values_list("alias", flat=True)
    )
    index = mine.index(assignment.alias)
    latest = latest_judgement(assignment)
    rubric = sample.rubric_version
    return {
        **item_content(item),
        "assignment": assignment,
        "sample": sample,
        "position": index + 1,
        "total": len(mine),
        "previous_alias": mine[index - 1] if index > 0 else None,
        "next_alias": mine[index + 1] if index + 1 < len(mine) else None,
        "rubric": rubric,
        "rubric_questions": list(rubric.questions.all()),
        "current": posted or _as_input(latest),
        "errors": errors or {},
        "history": list(assignment.judgements.order_by("-revision")),
        "submission_key": uuid.uuid4(),
        "grades": Judgement.Grade.choices,
        "error_kinds": Judgement.ErrorKind.choices,
    }


def _as_input(judgement: Judgement | None) -> JudgementInput | None:
    if judgement is None:
        return None
    return JudgementInput(
        addresses_question=judgement.addresses_question,
        rubric_answers=judgement.rubric_answers,
        grade=judgement.grade,
        pending=judgement.pending,
        borderline=judgement.borderline,
        note=judgement.note,
        error_claim=judgement.error_claim,
        error_evidence=judgement.error_evidence,
        error_effect=judgement.error_effect,
        error_kind=judgement.error_kind,
    )
