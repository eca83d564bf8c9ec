"""Blinded comparison of two runs by people: leads draw, assign, decide and
read the results (not blind: the runs are named); readers grade pairs.

The readers' screens (paired_queue, paired_start, paired_item) may show
nothing that tells the runs apart: no assistant version, run, file, set
name, the paired sample's name, which place holds which run, or whether a
pair is a repeat. Answers are "Answer 1" and "Answer 2".
"""

import uuid

from django.contrib import messages
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, push_url

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.models import Role
from reviewapp.paired.forms import PairedDrawForm
from reviewapp.paired.models import (
    PairedAssignment,
    PairedDecision,
    PairedGrade,
    PairedItem,
    PairedJudgement,
    PairedSample,
)
from reviewapp.paired.selectors import (
    DecisionInput,
    next_awaiting_lead,
    pair_content,
    pair_for_lead,
    paired_results,
)
from reviewapp.paired.services import (
    PairedInput,
    paired_assign,
    paired_decision_errors,
    paired_decision_submit,
    paired_draw,
    paired_judgement_errors,
    paired_judgement_submit,
)
from reviewapp.review.forms import AssignForm

READING_ROLES = (Role.REVIEWER, Role.LEAD, Role.ADMIN)


# ------------------------------------------------------------ leads' pages


@require_GET
@role_required(*READERS_OF_RUNS)
def paired_list(request):
    samples = PairedSample.objects.select_related(
        "run_a__assistant_version", "run_b__assistant_version", "set_version", "created_by"
    ).annotate(
        assigned=Count("items__assignments", distinct=True),
    )
    return render(
        request, "paired/list.html", {"samples": samples, "can_write": has_role(request.user, *WRITERS)}
    )


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def paired_new(request):
    form = PairedDrawForm(request.POST or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        key = data["submission_key"]
        if key and (first := PairedSample.objects.filter(submission_key=key).first()):
            messages.info(request, "This paired sample was drawn by the first click on Draw; here it is.")
            return redirect("paired-detail", paired_id=first.id)
        try:
            paired_sample = paired_draw(
                run_a=data["run_a"],
                run_b=data["run_b"],
                size=data["size"],
                strata_fields=("language", "stratum") if data["by_stratum"] else ("language",),
                seed=data["seed"],
                readers_per_item=data["readers_per_item"],
                repeat_share=data["repeat_percent"] / 100,
                name=data["name"],
                created_by=request.user,
                submission_key=key,
            )
        except ApplicationError as rejected:
            errors = rejected.errors
        else:
            messages.success(
                request,
                f"Paired sample drawn: {paired_sample.size} pairs of {paired_sample.frame_size} questions "
                f"both runs answered, seed {paired_sample.seed}. Assign it to readers.",
            )
            return redirect("paired-detail", paired_id=paired_sample.id)
    status = 400 if request.method == "POST" else 200
    return render(request, "paired/new.html", {"form": form, "errors": errors}, status=status)


@require_GET
@role_required(*READERS_OF_RUNS)
def paired_detail(request, paired_id: int):
    """The results page: runs named, figures on the settled pairs, the
    pairs awaiting a lead. Managers read it; leads also assign and decide."""
    paired_sample = get_object_or_404(
        PairedSample.objects.select_related(
            "run_a__assistant_version", "run_b__assistant_version", "set_version", "created_by"
        ),
        id=paired_id,
    )
    results = paired_results(paired_sample=paired_sample)
    assigned = any(state.assigned for state in results.states)
    can_write = has_role(request.user, *WRITERS)
    return render(
        request,
        "paired/detail.html",
        {
            "paired": paired_sample,
            "results": results,
            "assigned": assigned,
            "can_write": can_write,
            "assign_form": AssignForm(initial={"readers_per_item": paired_sample.readers_per_item})
            if can_write and not assigned
            else None,
        },
    )


@require_POST
@role_required(*WRITERS)
def paired_assign_view(request, paired_id: int):
    paired_sample = get_object_or_404(PairedSample, id=paired_id)
    form = AssignForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the readers and how many read each pair.")
        return redirect("paired-detail", paired_id=paired_sample.id)
    try:
        assignments = paired_assign(
            paired_sample=paired_sample,
            reviewers=list(form.cleaned_data["reviewers"]),
            readers_per_item=form.cleaned_data["readers_per_item"],
        )
    except ApplicationError as rejected:
        messages.error(request, rejected.errors[0])
    else:
        repeats = sum(a.repeat_of_id is not None for a in assignments)
        messages.success(request, f"{len(assignments)} assignments made, {repeats} of them repeats.")
    return redirect("paired-detail", paired_id=paired_sample.id)


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def paired_decide(request, paired_id: int, position: int):
    """A lead's decision on one pair, in runs' terms; then the next pair
    awaiting a lead, else the results."""
    item = get_object_or_404(
        PairedItem.objects.select_related(
            "paired_sample__run_a__assistant_version",
            "paired_sample__run_b__assistant_version",
            "answer_a",
            "answer_b",
        ),
        paired_sample_id=paired_id,
        position=position,
    )
    errors: dict[str, str] = {}
    posted = None
    if request.method == "POST":
        posted = DecisionInput(
            grade_a=request.POST.get("grade_a", ""),
            grade_b=request.POST.get("grade_b", ""),
            better=request.POST.get("better", ""),
            reason=request.POST.get("reason", ""),
        )
        errors = paired_decision_errors(posted)
        if not errors:
            paired_decision_submit(
                item=item, lead=request.user, data=posted, submission_key=_submission_key(request.POST)
            )
            messages.success(request, f"Pair {item.position} decided.")
            following = next_awaiting_lead(item=item)
            if following is None:
                return redirect("paired-detail", paired_id=paired_id)
            return redirect("paired-decide", paired_id=paired_id, position=following.position)
    shown = pair_for_lead(item=item)
    content = pair_content(item)
    return render(
        request,
        "paired/decide.html",
        {
            **content,
            "sides": [
                ("A", item.paired_sample.run_a, content["a"]),
                ("B", item.paired_sample.run_b, content["b"]),
            ],
            "item": item,
            "paired": item.paired_sample,
            "readings": shown.readings,
            "state": shown.state,
            "decisions": shown.decisions,
            "current": posted or shown.initial,
            "errors": errors,
            "grades": PairedGrade.choices,
            "preferences": PairedDecision.Better.choices,
            "submission_key": uuid.uuid4(),
        },
        status=400 if errors else 200,
    )


# ---------------------------------------------------------- readers' pages


@require_GET
@role_required(*READING_ROLES)
def paired_queue(request):
    mine = Q(items__assignments__reviewer=request.user)
    samples = (
        PairedSample.objects.filter(mine)
        .annotate(
            assigned=Count("items__assignments", filter=mine, distinct=True),
            judged=Count(
                "items__assignments",
                filter=mine & Q(items__assignments__judgements__isnull=False),
                distinct=True,
            ),
        )
        .order_by("-created_at")
        .distinct()
    )
    # Only ids, dates and counts reach the template: a sample's name may name the versions.
    rows = [
        {"id": s.id, "created_at": s.created_at, "assigned": s.assigned, "judged": s.judged} for s in samples
    ]
    return render(request, "paired/queue.html", {"rows": rows, "done": request.GET.get("done", "")})


@require_GET
@role_required(*READING_ROLES)
def paired_start(request, paired_id: int):
    """The reader's next pair to judge, else their first."""
    mine = PairedAssignment.objects.filter(item__paired_sample_id=paired_id, reviewer=request.user)
    target = mine.filter(judgements__isnull=True).order_by("order").first() or mine.order_by("order").first()
    if target is None:
        raise Http404("No pairs of this comparison are assigned to you.")
    return redirect("paired-item", paired_id=paired_id, pair_alias=target.alias)


@require_http_methods(["GET", "POST"])
@role_required(*READING_ROLES)
def paired_item(request, paired_id: int, pair_alias: str):
    # Only the reader's own assignments resolve: anyone else's alias is a 404.
    assignment = get_object_or_404(
        PairedAssignment.objects.select_related("item__paired_sample", "item__answer_a", "item__answer_b"),
        item__paired_sample_id=paired_id,
        alias=pair_alias,
        reviewer=request.user,
    )
    errors: dict[str, str] = {}
    posted = None
    if request.method == "POST":
        posted = _paired_input(request.POST)
        errors = paired_judgement_errors(posted)
        if not errors:
            paired_judgement_submit(
                assignment=assignment,
                author=request.user,
                data=posted,
                submission_key=_submission_key(request.POST),
            )
            following = _following(assignment)
            if following is None:
                return _go(request, reverse("paired-queue") + f"?done={paired_id}")
            url = reverse("paired-item", args=[paired_id, following.alias])
            if request.htmx:
                response = render(request, "paired/item.html#pair-screen", _screen(following, saved=True))
                return push_url(response, url)
            messages.success(request, "Saved. Here is your next pair.")
            return redirect(url)
    context = _screen(assignment, posted=posted, errors=errors)
    template = "paired/item.html#pair-screen" if request.htmx else "paired/item.html"
    return render(request, template, context, status=400 if errors and not request.htmx else 200)


def _go(request, url: str):
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def _following(assignment: PairedAssignment) -> PairedAssignment | None:
    """The reader's next pair without a judgement after this one, else before it."""
    open_pairs = (
        PairedAssignment.objects.filter(
            item__paired_sample_id=assignment.item.paired_sample_id,
            reviewer_id=assignment.reviewer_id,
            judgements__isnull=True,
        )
        .exclude(id=assignment.id)
        .order_by("order")
    )
    return open_pairs.filter(order__gt=assignment.order).first() or open_pairs.first()


def _submission_key(data) -> uuid.UUID:
    try:
        return uuid.UUID(data.get("submission_key", ""))
    except ValueError:
        return uuid.uuid4()


def _paired_input(data) -> PairedInput:
    return PairedInput(
        grade_first=data.get("grade_1", ""),
        note_first=data.get("note_1", ""),
        grade_second=data.get("grade_2", ""),
        note_second=data.get("note_2", ""),
        better=data.get("better", ""),
    )


def _screen(
    assignment: PairedAssignment,
    *,
    posted: PairedInput | None = None,
    errors: dict | None = None,
    saved: bool = False,
) -> dict:
    """The reader's screen: the pair in this reader's places, the reader's
    own latest judgement, and where the pair stands in their order."""
    item = assignment.item
    mine = list(
        PairedAssignment.objects.filter(
            item__paired_sample_id=item.paired_sample_id, reviewer_id=assignment.reviewer_id
        )
        .order_by("order")
        .values_list("alias", flat=True)
    )
    index = mine.index(assignment.alias)
    history = list(assignment.judgements.order_by("-revision"))
    latest = history[0] if history else None
    current = posted or (
        PairedInput(
            grade_first=latest.grade_first,
            note_first=latest.note_first,
            grade_second=latest.grade_second,
            note_second=latest.note_second,
            better=latest.better,
        )
        if latest
        else None
    )
    content = pair_content(item, a_is_first=assignment.a_is_first)
    errors = errors or {}
    return {
        "question_text": content["question_text"],
        "language": content["language"],
        "answers": [("1", content["first"]), ("2", content["second"])],
        "grading": [
            {
                "place": place,
                "grade": getattr(current, f"grade_{name}", ""),
                "note": getattr(current, f"note_{name}", ""),
                "grade_error": errors.get(f"grade_{place}"),
                "note_error": errors.get(f"note_{place}"),
            }
            for place, name in (("1", "first"), ("2", "second"))
        ],
        "alias": assignment.alias,
        "paired_id": item.paired_sample_id,
        "drawn": item.paired_sample.created_at,
        "position": index + 1,
        "total": len(mine),
        "previous_alias": mine[index - 1] if index > 0 else None,
        "next_alias": mine[index + 1] if index + 1 < len(mine) else None,
        "current": current,
        "errors": errors,
        "saved": saved,
        "history": history,
        "latest": latest,
        "grades": PairedGrade.choices,
        "preferences": PairedJudgement.Better.choices,
        "submission_key": uuid.uuid4(),
    }
