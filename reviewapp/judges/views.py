"""Model graders: judges, judge runs and their validation against people.

Leads and admins write; managers read; reviewers never reach any of it (a
model grade is never shown on a reader's screen)."""

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.judges import selectors, validation
from reviewapp.judges.forms import JudgeForm, JudgeRunForm
from reviewapp.judges.selectors import head_to_head, judge_run_counts, judge_run_verdicts, panel_figures
from reviewapp.judges.services import judge_versions, judging, validation_sets
from reviewapp.models import (
    Assignment,
    Judge,
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
    RubricVersion,
    Run,
    ValidationItem,
)
from reviewapp.review import defaults
from scoring.stats.agreement import KAPPA_INTERVAL_METHOD, MIN_EACH_LABEL

BUSY = (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING)


def _latest(judge: Judge) -> JudgeVersion | None:
    return judge.versions.select_related("rubric_version__rubric").order_by("-number").first()


# -- judges ----------------------------------------------------------------


@require_GET
@role_required(*READERS_OF_RUNS)
def judge_list(request):
    rows = []
    for judge in Judge.objects.all():
        latest = _latest(judge)
        rows.append({"judge": judge, "latest": latest, "frozen": latest is not None and latest.is_frozen})
    return render(request, "judges/list.html", {"rows": rows, "min_each_label": MIN_EACH_LABEL})


def _initial(version: JudgeVersion | None) -> dict:
    if version is None:
        default_rubric = (
            RubricVersion.objects.filter(rubric__name=defaults.RUBRIC_NAME).order_by("-number").first()
        )
        return {
            "provider": JudgeVersion.Provider.STAND_IN,
            "metrics": [JudgeVersion.RUBRIC],
            "rubric_version": default_rubric.id if default_rubric else None,
        }
    return {
        "provider": version.provider,
        "model": version.model,
        "base_url": version.base_url,
        "options": json.dumps(version.options) if version.options else "",
        "key_variable": version.key_variable,
        "max_tokens": version.max_tokens,
        "concurrency": version.concurrency,
        "metrics": version.metrics,
        "rubric_version": version.rubric_version_id,
        "validation_threshold": version.validation_threshold,
        "validation_min_items": version.validation_min_items,
    }


def _add_refusals(form: JudgeForm, rejected: ApplicationError) -> None:
    """Put each "field: message" of a refusal next to its field (else above the form)."""
    for error in rejected.errors:
        for part in error.split("; "):
            field, separator, message = part.partition(": ")
            if separator and field in form.fields:
                form.add_error(field, message)
            else:
                form.add_error(None, part)


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def judge_edit(request, judge_id: int | None = None):
    judge = get_object_or_404(Judge, id=judge_id) if judge_id else None
    latest = _latest(judge) if judge else None
    form = JudgeForm(request.POST or None, initial=_initial(latest), new=judge is None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            version = judge_versions.judge_version_save(
                judge=judge,
                name=data.get("name", ""),
                provider=data["provider"],
                model=data["model"],
                base_url=data["base_url"],
                options=data["options"],
                key_variable=data["key_variable"],
                max_tokens=data["max_tokens"],
                concurrency=data["concurrency"],
                metrics=data["metrics"],
                rubric_version=data["rubric_version"],
                validation_threshold=data["validation_threshold"],
                validation_min_items=data["validation_min_items"],
                created_by=request.user,
            )
        except ApplicationError as rejected:
            _add_refusals(form, rejected)
        else:
            messages.success(request, f"Saved as {version}.")
            return redirect("judge-list")
    return render(
        request,
        "judges/edit.html",
        {"judge": judge, "latest": latest, "frozen": latest is not None and latest.is_frozen, "form": form},
        status=400 if request.method == "POST" else 200,
    )


# -- judge runs ------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def judge_run_new(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("assistant_version", "set_version"), id=run_id)
    form = JudgeRunForm(request.POST or None, run=run)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            judge_run = judging.judge_run_estimate(
                judge_versions=list(form.cleaned_data["judge_versions"]),
                run=run,
                other_run=form.cleaned_data["other_run"],
                regrade_share=form.cleaned_data["regrade_share"] / 100,
                created_by=request.user,
            )
        except ApplicationError as rejected:
            errors = rejected.errors
        else:
            return redirect("judge-run-detail", judge_run_id=judge_run.id)
    return render(
        request,
        "judges/run_new.html",
        {"run": run, "form": form, "errors": errors},
        status=400 if request.method == "POST" else 200,
    )


def _figures(judge_run: JudgeRun, versions: list[JudgeVersion]) -> list[dict]:
    """The run's counts (selectors.judge_run_counts) by judge version, each with its trust title."""
    counts = judge_run_counts(judge_run)
    return [
        {
            "version": version,
            "label": selectors.judge_label(version),
            "title": validation.validation_title(version),
            "rows": [row for row in counts if row["judge_version"] == version.id],
        }
        for version in versions
    ]


@require_GET
@role_required(*READERS_OF_RUNS)
def judge_run_detail(request, judge_run_id: int):
    judge_run = get_object_or_404(
        JudgeRun.objects.select_related(
            "run__assistant_version", "run__set_version", "sample", "regrade_sample", "created_by"
        ),
        id=judge_run_id,
    )
    busy = judge_run.status in BUSY
    if request.htmx and request.htmx.target == "progress" and not busy:
        # The work is over: reload once so the figures and failures appear.
        return HttpResponseClientRefresh()
    versions = list(judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"))
    context = {
        "judge_run": judge_run,
        "busy": busy,
        "stuck": judging.judge_run_is_stuck(judge_run),
        "labels": [selectors.judge_label(version) for version in versions],
        "can_write": has_role(request.user, *WRITERS),
    }
    if request.htmx:
        return render(request, "judges/run.html#progress", context)
    failures = (
        ModelVerdict.objects.shown()
        .filter(judge_run=judge_run)
        .exclude(error="")
        .select_related("answer", "judge_version__judge")
        .order_by("answer_id", "judge_version_id", "metric")
    )
    context.update(
        figures=_figures(judge_run, versions),
        panel=panel_figures(judge_run),
        regrade=validation.regrade_agreement(judge_run) if judge_run.regrade_sample_id else None,
        # Drawn on confirmation but handed to nobody: the demo's 300 items sat unread (issue 25).
        regrade_unassigned=judge_run.regrade_sample_id is not None
        and not Assignment.objects.filter(item__sample_id=judge_run.regrade_sample_id).exists(),
        kappa_method=KAPPA_INTERVAL_METHOD,
        head_to_head=head_to_head(judge_run) if judge_run.other_run_id else [],
        failures=Paginator(failures, 50).get_page(request.GET.get("page")),
    )
    return render(request, "judges/run.html", context)


@require_POST
@role_required(*WRITERS)
def judge_run_confirm_view(request, judge_run_id: int):
    judge_run = get_object_or_404(JudgeRun, id=judge_run_id)
    if judge_run.status != JudgeRun.Status.ESTIMATED:
        messages.info(request, f"This judge run is {judge_run.status} already: nothing more was started.")
        return redirect("judge-run-detail", judge_run_id=judge_run.id)
    # The chunks and the regrade sample are made by a task: drawing them here
    # kept the browser waiting. A second confirmation racing this one changes nothing.
    judging.judge_run_queue(judge_run=judge_run)
    return redirect("judge-run-detail", judge_run_id=judge_run.id)


@require_POST
@role_required(*WRITERS)
def judge_run_cancel_view(request, judge_run_id: int):
    judge_run = get_object_or_404(JudgeRun, id=judge_run_id)
    judge_run = judging.judge_run_cancel(judge_run=judge_run)
    if judge_run.status != JudgeRun.Status.CANCELLED:
        messages.info(request, f"This judge run is {judge_run.status}: there is nothing to cancel.")
    return redirect("judge-run-detail", judge_run_id=judge_run.id)


@require_POST
@role_required(*WRITERS)
def judge_run_resume_view(request, judge_run_id: int):
    judge_run = get_object_or_404(JudgeRun, id=judge_run_id)
    if not judging.judge_run_resume(judge_run=judge_run):
        messages.info(request, "Only a judge run that failed, was cancelled or is stuck can be resumed.")
    return redirect("judge-run-detail", judge_run_id=judge_run.id)


def _verdict_lines(judge_run: JudgeRun):
    for verdict in judge_run_verdicts(judge_run):
        yield json.dumps(verdict, ensure_ascii=False, default=str) + "\n"


@require_GET
@role_required(*READERS_OF_RUNS)
def judge_run_export(request, judge_run_id: int):
    """Every verdict of a judge run, one JSON object a line, with its raw completion."""
    judge_run = get_object_or_404(JudgeRun, id=judge_run_id)
    response = StreamingHttpResponse(_verdict_lines(judge_run), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="judge-run-{judge_run.id}-verdicts.jsonl"'
    return response


# -- validation --------------------------------------------------------------


@require_GET
@role_required(*READERS_OF_RUNS)
def judge_validation(request, judge_id: int):
    judge = get_object_or_404(Judge, id=judge_id)
    versions = list(judge.versions.select_related("rubric_version__rubric").order_by("-number"))
    wanted = request.GET.get("version") or (str(versions[0].number) if versions else "")
    version = next((v for v in versions if str(v.number) == wanted), None)
    if version is None:
        raise Http404(f"{judge.name} has no version {wanted}.")
    split = "tuning" if request.GET.get("split") == "tuning" else "holdout"
    validation_set = judge.validation_sets.select_related("created_by").first()
    splits = dict(
        ValidationItem.objects.filter(validation_set=validation_set)
        .values("split")
        .annotate(count=Count("id"))
        .values_list("split", "count")
    )
    against_people = validation.judge_validation(
        judge_version=version, validation_set=validation_set, split=split
    )
    regrades = [
        (judge_run, validation.regrade_agreement(judge_run))
        for judge_run in version.judge_runs.filter(regrade_sample__isnull=False).select_related(
            "regrade_sample"
        )[:10]
    ]
    return render(
        request,
        "judges/validation.html",
        {
            "judge": judge,
            "versions": versions,
            "version": version,
            "label": selectors.judge_label(version),
            "validation_set": validation_set,
            "splits": splits,
            "split": split,
            "validation": against_people,
            "labels": [
                {
                    "figures": figures,
                    "categories": [category.replace("_", " ") for category in figures.categories],
                    "agreeing": figures.agreeing,
                }
                for figures in against_people.labels
            ],
            "regrades": [(judge_run, figures) for judge_run, figures in regrades if figures is not None],
            "can_write": has_role(request.user, *WRITERS),
            "kappa_method": KAPPA_INTERVAL_METHOD,
            "min_each_label": MIN_EACH_LABEL,
        },
    )


@require_POST
@role_required(*WRITERS)
def judge_validation_draw(request, judge_id: int):
    judge = get_object_or_404(Judge, id=judge_id)
    try:
        drawn = validation_sets.validation_set_draw(judge=judge, created_by=request.user)
    except ApplicationError as rejected:
        messages.error(request, f"No validation set was drawn: {rejected.errors[0]}")
    else:
        messages.success(request, f"Validation set drawn with seed {drawn.seed}.")
    return redirect("judge-validation", judge_id=judge.id)
