from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files import File
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from reviewapp.core import broker, csv_cells
from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.core.uploads import limit_text
from reviewapp.models import Answer, Finding, Run, Scoring, SetVersion
from reviewapp.runs.forms import RescoreForm, RunExcludeForm, RunUploadForm, SealedOpenForm
from reviewapp.runs.selectors import (
    ATTEMPT_LINKS_SHOWN,
    answer_attempt_links,
    answer_follow_ups,
    answers_off_protocol,
    attempt_links,
    repeated_attempts,
    run_clock_statement,
    run_follow_up_counts,
    run_is_stuck,
    run_overhead_choice,
    run_reply_policy_statement,
    run_warnings,
)
from reviewapp.runs.services.imports import (
    RUN_LOG,
    AlreadyImported,
    pending_done,
    pending_drop,
    pending_file,
    pending_open,
    pending_store,
)
from reviewapp.runs.services.question_sets import RevisionToConfirm, set_version_from_findings
from reviewapp.runs.services.runs import run_exclude, run_include, run_overhead_choose, run_receive, run_retry
from reviewapp.scorings import selectors
from reviewapp.scorings.services import scoring_open_sealed, scoring_request, scoring_retry
from scoring.measures import Options
from scoring.stats.rates import INTERVAL_LABELS, INTERVAL_METHODS


@require_GET
@login_required
def home(request):
    if not has_role(request.user, *READERS_OF_RUNS):
        # Readers of samples only: their queue is their home.
        return redirect("review-queue")
    runs = Run.objects.select_related("assistant_version", "set_version", "uploaded_by")
    page = Paginator(runs, 50).get_page(request.GET.get("page"))
    return render(request, "runs/list.html", {"page": page})


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def run_upload(request):
    """The upload form; a taken file leads to its run. A refused one comes back
    with its errors and every other field as sent (400, or 413 past the limit)."""
    form = RunUploadForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    status = 200
    to_import = False
    if request.method == "POST" and form.is_valid() and form.cleaned_data["revise_set"]:
        # A revision is shown before anything is stored: the file waits.
        fields = {
            name: form.cleaned_data[name]
            for name in ("assistant_version", "set_version", "set_from_file", "set_name", "repeats")
        }
        try:
            pending = pending_store(
                form.cleaned_data["file"], user=request.user, file_format=RUN_LOG, fields=fields
            )
        except ApplicationError as rejected:
            errors, status = rejected.errors, rejected.status
        else:
            return _revision_step(request, pending, seen="")
    elif request.method == "POST" and form.is_valid():
        try:
            received = run_receive(
                upload=form.cleaned_data["file"],
                uploaded_by=request.user,
                assistant_version=form.cleaned_data["assistant_version"],
                set_version=form.cleaned_data["set_version"],
                set_from_file=form.cleaned_data["set_from_file"],
                set_name=form.cleaned_data["set_name"],
                repeats=form.cleaned_data["repeats"],
                seal_seed=form.cleaned_data["seal_seed"],
            )
        except ApplicationError as rejected:
            errors, status, to_import = rejected.errors, rejected.status, rejected.field == "import"
        else:
            if received.created:
                return redirect("run-detail", run_id=received.run.id)
            return _uploaded_before(request, received.run, form.cleaned_data)
    elif request.method == "POST":
        status = 400
    return render(
        request,
        "runs/upload.html",
        {
            "form": form,
            "errors": errors,
            "limit": limit_text(),
            "to_import": to_import,
            # In-process tasks answer the upload only once the run is stored and
            # scored, so the page says it will wait.
            "in_process": settings.CELERY_TASK_ALWAYS_EAGER,
        },
        status=status,
    )


def _uploaded_before(request, run: Run, typed: dict):
    """The run that holds a file sent again. Versions typed that differ from
    the run's were not applied: say so, and open its "Score again" form on
    the set version typed, when there is one (issue 25, point 5)."""
    differing = [
        f"{what} {typed[name]}"
        for name, what, held in (
            ("assistant_version", "assistant version", run.assistant_version.label),
            ("set_version", "set version", run.set_version.version),
        )
        if typed.get(name) and typed[name] != held
    ]
    held = f"{run.assistant_version.label} on set {run.set_version.version}"
    said = f"This file was uploaded before as run {run.id} ({held})"
    if not differing:
        messages.info(request, f"{said}; here it is.")
        return redirect("run-detail", run_id=run.id)
    messages.warning(
        request,
        f"{said}: the {' and '.join(differing)} you typed {'were' if len(differing) > 1 else 'was'} "
        "not applied, since a file is one run. To score its answers against another set version, "
        "score it again below; a run of another assistant version is another file.",
    )
    url = reverse("run-detail", args=[run.id])
    typed_set = typed.get("set_version")
    if (
        typed_set
        and typed_set != run.set_version.version
        and SetVersion.objects.filter(version=typed_set).exists()
    ):
        url += f"?{urlencode({'rescore': typed_set})}"
    return redirect(url)


@require_POST
@role_required(*WRITERS)
def run_upload_confirm(request):
    """The upload's second step when it revises a set: the revision as shown
    (``seen``) is stored with the run; a second click leads to the run."""
    try:
        pending = pending_open(request.POST.get("key", ""), user=request.user)
    except AlreadyImported as done:
        messages.info(request, "This upload was confirmed already; here is its run.")
        return redirect("run-detail", run_id=done.run_id)
    except ApplicationError as rejected:
        messages.error(request, rejected.errors[0])
        return redirect("run-upload")
    return _revision_step(request, pending, seen=request.POST.get("seen", ""))


def _revision_step(request, pending, *, seen: str):
    """Receive a pending run log that revises a set: the run when ``seen``
    is the revision as it stands, else the page saying what it would do."""
    fields = pending.fields
    try:
        with pending_file(pending) as path, open(path, "rb") as stream:
            received = run_receive(
                upload=File(stream, name=pending.name),
                uploaded_by=request.user,
                assistant_version=fields.get("assistant_version", ""),
                set_version=fields.get("set_version", ""),
                set_from_file=bool(fields.get("set_from_file")),
                set_name=fields.get("set_name", ""),
                revise_set=True,
                revision_seen=seen,
                repeats=fields.get("repeats"),
            )
    except RevisionToConfirm as shown:
        context = {
            "key": pending.key,
            "revision": shown.revision,
            "file_name": pending.name,
        }
        return render(request, "runs/upload_revision.html", context | {"fields": fields})
    except ApplicationError as rejected:
        pending_drop(pending)
        form = RunUploadForm(initial={**fields, "revise_set": True})
        context = {"form": form, "errors": rejected.errors, "limit": limit_text()}
        return render(request, "runs/upload.html", context, status=rejected.status)
    pending_done(pending, run_id=received.run.id)
    if not received.created:
        messages.info(request, "This file was uploaded before; here is the run that holds it.")
    return redirect("run-detail", run_id=received.run.id)


@require_GET
@role_required(*READERS_OF_RUNS)
def run_detail(request, run_id: int):
    """A run's status, scores and findings. htmx asks for the polled status
    (target "run-status") or the filtered findings (target "findings") alone."""
    run = get_object_or_404(
        Run.objects.select_related("assistant_version", "set_version", "uploaded_by"), id=run_id
    )
    scorings = list(run.scorings.select_related("set_version").order_by("created_at", "id"))
    for scoring in scorings:
        scoring.stuck = selectors.scoring_is_stuck(scoring)
    chosen = _chosen_scoring(request, scorings)
    family = request.GET.get("slices", "language")
    method = request.GET.get("interval", "wilson")
    if method not in INTERVAL_METHODS:
        method = "wilson"
    rescore_set = request.GET.get("rescore", "")
    if not SetVersion.objects.filter(version=rescore_set).exists():
        rescore_set = ""
    busy = not run.is_final or any(not s.is_final for s in scorings)
    context = {
        "run": run,
        # Nothing has looked for waiting work lately: neither beat nor any worker runs.
        "unswept": busy and broker.swept_recently() is False,
        "sweep_seconds": broker.heartbeat_seconds(),
        "progress": selectors.run_progress(run),
        "run_stuck": run_is_stuck(run),
        "warnings": run_warnings(run),
        "follow_ups": run_follow_up_counts(run),
        "attempt_links": attempt_links(run),
        "repeated_attempts": repeated_attempts(run),
        "attempt_links_shown": ATTEMPT_LINKS_SHOWN,
        "stale_minutes": settings.WORK_STALE_SECONDS // 60,
        "scorings": scorings,
        "chosen": chosen,
        "busy": busy,
        "denominators": {s.id: selectors.measure_denominators(s.options) for s in scorings},
        "tables": {
            s.id: selectors.score_table(s, family=family, method=method)
            for s in scorings
            if s.status == Scoring.Status.DONE
        },
        "sealed_tables": {
            s.id: selectors.score_table(s, family=family, method=method, sealed=True)
            for s in scorings
            if s.status == Scoring.Status.DONE and s.sealed_open
        },
        "sealed_form": SealedOpenForm(),
        "exclude_form": RunExcludeForm(),
        "attempts": {s.id: selectors.attempt_counts(s) for s in scorings if s.status == Scoring.Status.DONE},
        "timing": {s.id: selectors.timing_rows(s) for s in scorings if s.status == Scoring.Status.DONE},
        "clock": run_clock_statement(run),
        "reply_policy": run_reply_policy_statement(run),
        "overhead_choice": run_overhead_choice(run),
        "question_times": {
            s.id: selectors.question_times(s) for s in scorings if s.status == Scoring.Status.DONE
        },
        "question_times_shown": QUESTION_TIMES_SHOWN,
        "stable": {
            s.id: selectors.stable_rows(s, family=family) for s in scorings if s.status == Scoring.Status.DONE
        },
        "can_open_sealed": has_role(request.user, *WRITERS),
        "family": family,
        "method": method,
        "methods": INTERVAL_LABELS.items(),
        "families": selectors.slice_families(chosen) if chosen else ["language"],
        # ?rescore=SET (a file sent again with another set version) opens the form on it.
        "rescore_form": RescoreForm(initial={"set_version": rescore_set or run.set_version.version}),
        "rescore_open": bool(rescore_set),
    }
    if chosen is not None and chosen.status == Scoring.Status.DONE:
        kind = request.GET.get("kind", "")
        language = request.GET.get("language", "")
        question = request.GET.get("question", "").strip()
        findings = selectors.findings_page(chosen, kind=kind, language=language, question=question)
        page = Paginator(findings, 50).get_page(request.GET.get("page"))
        off_protocol = context["follow_ups"]["ad_hoc"] or context["follow_ups"]["resume"]
        context.update(
            findings=page,
            off_protocol=answers_off_protocol([f.answer_id for f in page]) if off_protocol else {},
            kinds=selectors.finding_kinds(chosen),
            languages=selectors.scoring_languages(chosen),
            kind=kind,
            language=language,
            question=question,
        )
    if request.htmx and request.htmx.target == "run-status":
        if not context["busy"]:
            # The work is done: reload once so the scores and findings appear.
            return HttpResponseClientRefresh()
        return render(request, "runs/detail.html#run-status", context)
    if request.htmx and request.htmx.target == "findings":
        return render(request, "runs/detail.html#findings", context)
    return render(request, "runs/detail.html", context)


# The slowest questions the run page lists; the export holds them all.
QUESTION_TIMES_SHOWN = 20


@require_GET
@role_required(*READERS_OF_RUNS)
def export_question_times(request, run_id: int, scoring_id: int):
    """Every question's median E2E over its attempts, slowest first, as CSV."""
    scoring = get_object_or_404(Scoring.objects.select_related("run"), id=scoring_id, run_id=run_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"question-times-run-{run_id}-scoring-{scoring_id}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv_cells.writer(response)
    writer.writerow(["run", "scoring", "e2e_source", "question_id", "median_s", "samples", "attempts"])
    for source, rows in selectors.question_times(scoring).items():
        for row in rows:
            figures = [row[key] for key in ("question_id", "median_s", "samples", "attempts")]
            writer.writerow([run_id, scoring_id, source, *figures])
    return response


def _chosen_scoring(request, scorings: list[Scoring]) -> Scoring | None:
    wanted = request.GET.get("scoring")
    for scoring in scorings:
        if str(scoring.id) == wanted:
            return scoring
    done = [s for s in scorings if s.status == Scoring.Status.DONE]
    return done[0] if done else (scorings[0] if scorings else None)


@require_POST
@role_required(*WRITERS)
def run_rescore(request, run_id: int):
    run = get_object_or_404(Run, id=run_id)
    form = RescoreForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
        messages.error(request, f"The scoring was not queued: {problems}")
        return redirect("run-detail", run_id=run.id)
    try:
        scoring = scoring_request(
            run=run,
            set_version=form.cleaned_data["set_version"],
            options=Options(
                rounding=form.cleaned_data["rounding"],
                scale_words=form.cleaned_data["scale_words"],
                distinct=form.cleaned_data["distinct"],
            ),
            extra_slices=form.cleaned_data["extra_slices"],
            requested_by=request.user,
        )
    except ApplicationError as rejected:
        messages.error(request, rejected.errors[0])
        return redirect("run-detail", run_id=run.id)
    return redirect(f"{run.get_absolute_url()}?scoring={scoring.id}")


@require_POST
@role_required(*WRITERS)
def run_retry_view(request, run_id: int):
    run = get_object_or_404(Run, id=run_id)
    if not run_retry(run=run):
        messages.info(
            request, "Only a run that failed, or has made no progress for a while, can be tried again."
        )
    return redirect("run-detail", run_id=run.id)


@require_POST
@role_required(*WRITERS)
def scoring_retry_view(request, run_id: int, scoring_id: int):
    scoring = get_object_or_404(Scoring, id=scoring_id, run_id=run_id)
    if not scoring_retry(scoring=scoring):
        messages.info(
            request, "Only a scoring that failed, or has made no progress for a while, can be tried again."
        )
    return redirect(f"{scoring.run.get_absolute_url()}?scoring={scoring.id}")


@require_POST
@role_required(*WRITERS)
def run_exclude_view(request, run_id: int):
    run = get_object_or_404(Run, id=run_id)
    if request.POST.get("include") == "1":
        run_include(run=run)
        messages.info(request, "The run counts in its version's figures again.")
        return redirect("run-detail", run_id=run.id)
    form = RunExcludeForm(request.POST)
    try:
        if not request.POST.get("reason", "").strip():
            raise ApplicationError(
                "say why the run is left out: the reason is shown beside it on the dashboard"
            )
        if not form.is_valid():
            raise ApplicationError(f"The run still counts: reason: {' '.join(form.errors['reason'])}")
        run_exclude(run=run, reason=form.cleaned_data["reason"], excluded_by=request.user)
    except ApplicationError as rejected:
        messages.error(request, rejected.errors[0])
    return redirect("run-detail", run_id=run.id)


@require_POST
@role_required(*WRITERS)
def run_overhead_view(request, run_id: int):
    """A lead records whether the run's E2E leaves channel overhead out."""
    run = get_object_or_404(Run, id=run_id)
    exclude = request.POST.get("exclude") == "1"
    run_overhead_choose(run=run, exclude=exclude, chosen_by=request.user)
    messages.info(
        request,
        "E2E now excludes the channel overhead." if exclude else "E2E now includes the channel overhead.",
    )
    return redirect("run-detail", run_id=run.id)


@require_POST
@role_required(*WRITERS)
def scoring_open_sealed_view(request, run_id: int, scoring_id: int):
    scoring = get_object_or_404(Scoring, id=scoring_id, run_id=run_id, status=Scoring.Status.DONE)
    form = SealedOpenForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The sealed part stays closed: say why it is opened.")
    else:
        try:
            scoring_open_sealed(scoring=scoring, opened_by=request.user, reason=form.cleaned_data["reason"])
        except ApplicationError as rejected:
            messages.error(request, rejected.errors[0])
    return redirect(f"{scoring.run.get_absolute_url()}?scoring={scoring.id}")


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def scoring_findings_into_set(request, run_id: int, scoring_id: int):
    """A scoring's findings of one kind as a batch for a new set version: GET
    lists each question with the expected answer to confirm, POST stores the
    ticked ones as one new version."""
    scoring = get_object_or_404(
        Scoring.objects.select_related("run", "set_version"), id=scoring_id, run_id=run_id
    )
    kind = request.POST.get("kind") or request.GET.get("kind") or ""
    if kind not in selectors.BATCH_KINDS:
        kind = selectors.BATCH_KINDS[0]
    rows = selectors.findings_for_set(scoring, kind=kind)
    errors: list[str] = []
    version = ""
    if request.method == "POST":
        version = request.POST.get("version", "")
        confirmed = [
            {
                "question_id": request.POST.get(f"q-{index}-id", ""),
                "expected_behaviour": request.POST.get(f"q-{index}-behaviour", ""),
                "expected_values": request.POST.get(f"q-{index}-values", ""),
            }
            for index in range(len(rows))
            if request.POST.get(f"q-{index}-include")
        ]
        try:
            created = set_version_from_findings(
                scoring=scoring, kind=kind, version=version, confirmed=confirmed, created_by=request.user
            )
        except ApplicationError as rejected:
            errors = rejected.errors
        else:
            messages.success(request, f"Set version {created.version} holds these questions now.")
            return redirect("set-detail", version=created.version)
    return render(
        request,
        "runs/findings_into_set.html",
        {
            "run": scoring.run,
            "scoring": scoring,
            "kind": kind,
            "kinds": [
                (value, label) for value, label in Finding.Kind.choices if value in selectors.BATCH_KINDS
            ],
            "rows": rows,
            "version": version,
            "errors": errors,
        },
        status=400 if errors else 200,
    )


@require_GET
@role_required(*READERS_OF_RUNS)
def answer_detail(request, run_id: int, answer_id: int):
    """One answer beside its question, evidence and checks; values are written
    as the answer's language writes numbers."""
    answer = get_object_or_404(
        Answer.objects.select_related("run__assistant_version", "run__set_version"),
        id=answer_id,
        run_id=run_id,
    )
    checks = list(answer.checks.select_related("scoring__set_version").order_by("scoring_id"))
    findings = list(Finding.objects.filter(answer=answer).order_by("scoring_id", "id"))
    record = answer.record
    question = selectors.answer_question(answer)
    return render(
        request,
        "runs/answer.html",
        {
            "answer": answer,
            "run": answer.run,
            "attempt_links": answer_attempt_links(answer),
            "record": record,
            "follow_ups": answer_follow_ups(answer),
            "evidence": selectors.answer_evidence(record, language=answer.language),
            "question": question,
            "expected_values": [
                {"text": selectors.shown_value(value, language=answer.language), "count": 1}
                for value in (question.expected_values if question else [])
            ],
            "checks": [
                {
                    "check": c,
                    "segments": selectors.marked_text(
                        record.get("answer", ""), selectors.check_numbers(c, record)
                    ),
                    "findings": selectors.grouped_findings(
                        f for f in findings if f.scoring_id == c.scoring_id
                    ),
                }
                for c in checks
            ],
            "inspect_scores": selectors.inspect_scores(record),
            "extra": selectors.extra_fields(record),
        },
    )
