"""The import page: a file from another tool, previewed, then made a run."""

import contextlib

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import WRITERS, role_required
from reviewapp.core.uploads import limit_text
from reviewapp.models import AssistantVersion, QuestionSet, SetVersion
from reviewapp.runs.forms import ImportConfirmForm, ImportUploadForm
from reviewapp.runs.services.imports import (
    FIELD_LABELS,
    MAPPABLE,
    AlreadyImported,
    import_preview,
    import_receive,
    pending_done,
    pending_file,
    pending_open,
    pending_store,
)
from reviewapp.runs.services.question_sets import RevisionToConfirm
from scoring import imports
from scoring.imports import lm_eval
from scoring.imports.tabular import DERIVED, TABULAR_FORMATS

SUGGESTIONS = 200


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def run_import(request):
    """Step one: the file. A file taken goes straight to its preview."""
    form = ImportUploadForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            pending = pending_store(
                form.cleaned_data["file"], user=request.user, file_format=form.cleaned_data["format"]
            )
        except ApplicationError as rejected:
            errors, status = rejected.errors, rejected.status
        else:
            return _preview_page(request, pending, None)
    elif request.method == "POST":
        status = 400
    return render(
        request,
        "runs/import.html",
        {"form": form, "errors": errors, "limit": limit_text(), "formats": imports.FORMAT_LABELS},
        status=status,
    )


@require_POST
@role_required(*WRITERS)
def run_import_confirm(request):
    """Step two: the versions and mapping. "Update preview" shows the first
    samples again under the mapping as it now stands; "Import" converts the
    whole file and makes the run."""
    try:
        pending = pending_open(request.POST.get("key", ""), user=request.user)
    except AlreadyImported as done:
        # A second click on Import: the first made the run.
        messages.info(request, "This file was imported already; here is its run.")
        return redirect("run-detail", run_id=done.run_id)
    except ApplicationError as rejected:
        messages.error(request, rejected.errors[0])
        return redirect("run-import")
    return _preview_page(request, pending, request.POST)


def _preview_page(request, pending, data):
    mappable = MAPPABLE[pending.format]
    # The file's own suggestions and fields come from a first look with the
    # default mapping; the form then decides.
    errors: list[str] = []
    try:
        first = import_preview(pending, imports.ImportOptions())
    except ApplicationError as rejected:
        first, errors = None, rejected.errors
    form = ImportConfirmForm(
        data,
        mappable=mappable,
        fields=first.fields if first else (),
        labels=FIELD_LABELS,
        defaults=first.columns if first else None,
        derived=DERIVED
        if pending.format in TABULAR_FORMATS
        else lm_eval.DERIVED
        if pending.format == "lm-eval"
        else None,
        initial={
            "key": pending.key,
            "assistant_version": first.assistant_version if first else "",
            "set_version": first.set_version if first else "",
            "set_name": first.set_name if first else "",
            "set_from_file": not (
                first and first.set_version and SetVersion.objects.filter(version=first.set_version).exists()
            ),
            "language": "en",
        },
    )
    status = 200 if not errors else 400
    preview = first
    revision, revision_sentence = None, ""
    if data is not None and form.is_valid():
        options = imports.ImportOptions(
            assistant_version=form.cleaned_data["assistant_version"],
            set_version=form.cleaned_data["set_version"],
            set_name=form.cleaned_data["set_name"],
            language=form.cleaned_data["language"],
            columns=form.mapping(),
        )
        try:
            # Importing reads the whole file, which names every problem: no
            # second look at its start first.
            if data.get("action") != "import":
                preview = import_preview(pending, options)
            else:
                with pending_file(pending) as path:
                    received = import_receive(
                        path=path,
                        name=pending.name,
                        file_format=pending.format,
                        options=options,
                        set_from_file=form.cleaned_data["set_from_file"],
                        revise_set=form.cleaned_data["revise_set"],
                        revision_seen=form.cleaned_data["seen"],
                        uploaded_by=request.user,
                    )
                pending_done(pending, run_id=received.run.id)
                if not received.created:
                    messages.info(request, "This file was imported before; here is the run that holds it.")
                return redirect("run-detail", run_id=received.run.id)
        except RevisionToConfirm as shown:
            # Asked to revise a set: what it would do, before anything is stored.
            revision, revision_sentence = shown.revision, shown.revision.sentence(options.set_version)
        except ApplicationError as rejected:
            errors, status = rejected.errors, rejected.status
            if data.get("action") == "import":
                # Refused: show the first answers under the mapping that was sent.
                with contextlib.suppress(ApplicationError):
                    preview = import_preview(pending, options)
    elif data is not None:
        status = 400
    context = {
        "pending": pending,
        "format_label": imports.FORMAT_LABELS[pending.format],
        "form": form,
        "preview": preview,
        "errors": errors,
        "revision": revision,
        "revision_sentence": revision_sentence,
        "known_set_versions": SetVersion.objects.select_related("question_set").order_by("-id")[:SUGGESTIONS],
        "known_assistant_versions": AssistantVersion.objects.order_by("-created_at", "-id").values_list(
            "label", flat=True
        )[:SUGGESTIONS],
        "known_set_names": QuestionSet.objects.values_list("name", flat=True)[:SUGGESTIONS],
    }
    return render(request, "runs/import_preview.html", context, status=status)
