"""Leads' pages: drawing and assigning samples, reading judgements, rubrics."""

from datetime import datetime, time

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.models import Assignment, Question, Role, Rubric, Sample, SampleItem
from reviewapp.review import selectors as lead
from reviewapp.review.forms import AssignForm, FailureIntoSetForm, RubricForm, SampleDrawForm
from reviewapp.review.services.review import failure_into_set, rubric_save
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from reviewapp.review.views.review import guide_context


@require_GET
@role_required(*READERS_OF_RUNS)
def sample_list(request):
    samples = Sample.objects.select_related("run", "assistant_version", "created_by")
    return render(request, "samples/list.html", {"samples": samples})


def _day_bound(day, end: bool):
    if day is None:
        return None
    return timezone.make_aware(datetime.combine(day, time.max if end else time.min))


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def sample_new(request):
    initial = {"run": request.GET.get("run"), "size": 30, "min_per_stratum": 1}
    form = SampleDrawForm(request.POST or None, initial=initial)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        key = data["submission_key"]
        if key and (first := Sample.objects.filter(submission_key=key).first()):
            messages.info(request, "This sample was drawn by the first click on Draw; here it is.")
            return redirect("sample-detail", sample_id=first.id)
        try:
            sample = sample_draw(
                frame=Frame(
                    run=data["run"],
                    assistant_version=data["assistant_version"],
                    date_from=_day_bound(data["date_from"], end=False),
                    date_to=_day_bound(data["date_to"], end=True),
                ),
                size=data["size"],
                strata_fields=data["strata_fields"],
                allocation=data["allocation"],
                min_per_stratum=data["min_per_stratum"],
                seed=data["seed"],
                splits=data["splits"],
                sealed_reason=data["sealed_reason"],
                rubric_version=data["rubric_version"],
                name=data["name"],
                purpose=data["purpose"],
                created_by=request.user,
                submission_key=key,
            )
        except ApplicationError as rejected:
            errors = rejected.errors
        else:
            whole_frame = (
                f" (the frame holds only {sample.frame_size} answers, fewer than the {data['size']} "
                "asked for, so every one of them is drawn)"
                if sample.size < data["size"]
                else ""
            )
            messages.success(
                request,
                f"Sample drawn: {sample.size} items{whole_frame}, seed {sample.seed}. Assign it to readers.",
            )
            return redirect("sample-detail", sample_id=sample.id)
    status = 400 if request.method == "POST" else 200
    return render(request, "samples/new.html", {"form": form, "errors": errors}, status=status)


ITEMS_PER_PAGE = 50


@require_GET
@role_required(*READERS_OF_RUNS)
def sample_detail(request, sample_id: int):
    sample = get_object_or_404(
        Sample.objects.select_related(
            "run", "assistant_version", "rubric_version__rubric", "sealed_opened_by"
        ),
        id=sample_id,
    )
    # A regrade sample holds hundreds of items: a page of them at a time keeps
    # the strata and the assigning form in sight (issue 25, point 7).
    items = (
        sample.items.order_by("position")
        .select_related("answer", "calibration")
        .prefetch_related("assignments__reviewer", "assignments__judgements")
    )
    page = Paginator(items, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    rows = []
    for item in page:
        readers = []
        for assignment in item.assignments.all():
            judgements = sorted(assignment.judgements.all(), key=lambda j: j.revision)
            readers.append(
                {
                    "assignment": assignment,
                    "latest": judgements[-1] if judgements else None,
                    "revisions": len(judgements),
                }
            )
        rows.append({"item": item, "readers": readers})
    assigned = Assignment.objects.filter(item__sample=sample).exists()
    return render(
        request,
        "samples/detail.html",
        {
            "sample": sample,
            "rows": rows,
            "page": page,
            "assigned": assigned,
            "assign_form": AssignForm(initial={"readers_per_item": sample.readers_per_item}),
            "can_write": has_role(request.user, *WRITERS),
        },
    )


@require_POST
@role_required(*WRITERS)
def sample_assign_view(request, sample_id: int):
    sample = get_object_or_404(Sample, id=sample_id)
    form = AssignForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the readers and how many read each item.")
        return redirect("sample-detail", sample_id=sample.id)
    try:
        assignments = sample_assign(
            sample=sample,
            reviewers=list(form.cleaned_data["reviewers"]),
            readers_per_item=form.cleaned_data["readers_per_item"],
        )
    except ApplicationError as rejected:
        messages.error(request, rejected.errors[0])
    else:
        messages.success(request, f"{len(assignments)} assignments made.")
    return redirect("sample-detail", sample_id=sample.id)


@require_http_methods(["GET", "POST"])
@role_required(*READERS_OF_RUNS)
def sample_item(request, sample_id: int, position: int):
    item = get_object_or_404(
        SampleItem.objects.select_related(
            "sample", "calibration", "answer__run__assistant_version", "answer__run__set_version"
        ),
        sample_id=sample_id,
        position=position,
    )
    if item.calibration_id:
        return _calibration_item(request, item)
    answer = item.answer
    question = Question.objects.filter(
        set_version=answer.run.set_version, question_id=answer.question_id
    ).first()
    form = FailureIntoSetForm(
        request.POST or None,
        initial={
            "question": question.question if question else "",
            "expected_values": ", ".join(f"{v:g}" for v in (question.expected_values if question else [])),
            "expected_caveats": ", ".join(question.expected_caveats if question else []),
        },
    )
    errors: list[str] = []
    if request.method == "POST":
        if not has_role(request.user, *WRITERS):
            return render(request, "403.html", status=403)
        if form.is_valid():
            try:
                created = failure_into_set(
                    item=item,
                    version=form.cleaned_data["version"],
                    expected_values=form.cleaned_data["expected_values"],
                    expected_caveats=form.cleaned_data["expected_caveats"],
                    question_text=form.cleaned_data["question"],
                    created_by=request.user,
                )
            except ApplicationError as rejected:
                errors = rejected.errors
            else:
                messages.success(request, f"Set version {created.version} holds this question now.")
                return redirect("set-detail", version=created.version)
    assignments = item.assignments.select_related("reviewer").prefetch_related("judgements__author")
    return render(
        request,
        "samples/item.html",
        {
            "item": item,
            "answer": answer,
            "question": question,
            "assignments": assignments,
            "form": form,
            "errors": errors,
            "can_write": has_role(request.user, *WRITERS),
        },
        status=400 if errors or (request.method == "POST" and not form.is_valid()) else 200,
    )


def _calibration_item(request, item: SampleItem):
    """A calibration item has no logged answer and no question set behind
    it: the page shows what readers see and their judgements, and offers
    nothing to add to a set."""
    errors = ["A calibration item comes from no question set: there is nothing to add it to."]
    assignments = item.assignments.select_related("reviewer").prefetch_related("judgements__author")
    return render(
        request,
        "samples/item.html",
        {
            "item": item,
            **lead.item_content(item),
            "assignments": assignments,
            "errors": errors if request.method == "POST" else [],
            "can_write": False,
        },
        status=400 if request.method == "POST" else 200,
    )


@require_GET
@role_required(*READERS_OF_RUNS)
def rubric_list(request):
    rubrics = Rubric.objects.prefetch_related("versions__questions")
    return render(request, "rubrics/list.html", {"rubrics": rubrics, **guide_context()})


@require_http_methods(["GET", "POST"])
@role_required(Role.LEAD, Role.ADMIN)
def rubric_edit(request, rubric_id: int | None = None):
    rubric = get_object_or_404(Rubric, id=rubric_id) if rubric_id else None
    latest = rubric.versions.order_by("-number").first() if rubric else None
    initial = {}
    if latest is not None:
        initial = {
            "guidance": latest.guidance,
            "questions": "\n".join(
                " | ".join(filter(None, [q.key, q.text, q.na_rule])) for q in latest.questions.all()
            ),
            "awkward_cases": "\n".join(f"{c['case']} | {c['rule']}" for c in latest.awkward_cases),
        }
    form = RubricForm(request.POST or None, initial=initial)
    name = request.POST.get("name", "").strip() if rubric is None else rubric.name
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            version = rubric_save(
                rubric=rubric,
                name=name,
                guidance=form.cleaned_data["guidance"],
                awkward_cases=form.cleaned_data["awkward_cases"],
                questions=form.cleaned_data["questions"],
                created_by=request.user,
            )
        except ApplicationError as rejected:
            errors = rejected.errors
        else:
            messages.success(request, f"Saved as {version}.")
            return redirect("rubric-list")
    return render(
        request,
        "rubrics/edit.html",
        {"rubric": rubric, "latest": latest, "form": form, "errors": errors, "name": name},
        status=400 if request.method == "POST" else 200,
    )
