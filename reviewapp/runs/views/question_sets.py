from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.core.uploads import limit_text
from reviewapp.models import SetVersion
from reviewapp.runs.forms import ProductionFrameForm, SetUploadForm
from reviewapp.runs.selectors import set_version_warnings, set_versions_warnings
from reviewapp.runs.services.question_sets import set_version_from_production_upload, set_version_upload


@require_http_methods(["GET", "POST"])
@role_required(*READERS_OF_RUNS)
def set_list(request):
    if request.method == "POST" and not has_role(request.user, *WRITERS):
        raise PermissionDenied("Only leads upload question sets.")
    form = SetUploadForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            set_version = set_version_upload(
                upload=form.cleaned_data["file"],
                version=form.cleaned_data["version"],
                set_name=form.cleaned_data["set_name"],
                created_by=request.user,
                qa_task=form.cleaned_data["qa_task"],
                qa_columns=form.cleaned_data["qa_columns"],
                language=form.cleaned_data["qa_language"] or "en",
                seal_seed=form.cleaned_data["seal_seed"],
            )
        except ApplicationError as rejected:
            errors, status = rejected.errors, rejected.status
        else:
            messages.success(request, f"Set version {set_version.version} created.")
            return redirect("set-detail", version=set_version.version)
    elif request.method == "POST":
        status = 400
    versions = list(SetVersion.objects.select_related("question_set", "based_on", "created_by"))
    return render(
        request,
        "sets/list.html",
        {
            "versions": versions,
            "warnings": set_versions_warnings(versions),
            "form": form,
            "errors": errors,
            "limit": limit_text(),
        },
        status=status,
    )


@require_GET
@role_required(*READERS_OF_RUNS)
def set_detail(request, version: str):
    if "\x00" in version:
        # No label holds NUL, and the database refuses to look one up.
        raise Http404("No such set version.")
    set_version = get_object_or_404(
        SetVersion.objects.select_related("question_set", "based_on"), version=version
    )
    questions = Paginator(set_version.questions.order_by("id"), 100).get_page(request.GET.get("page"))
    return render(
        request,
        "sets/detail.html",
        {"set_version": set_version, "questions": questions, "warnings": set_version_warnings(set_version)},
    )


@require_http_methods(["GET", "POST"])
@role_required(*WRITERS)
def set_from_production(request):
    """A seeded sample of production questions, drawn by the time each was
    asked, into a new set version."""
    form = ProductionFrameForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        fields = dict(form.cleaned_data)
        try:
            set_version = set_version_from_production_upload(
                upload=fields.pop("file"), created_by=request.user, **fields
            )
        except ApplicationError as rejected:
            errors = rejected.errors
        else:
            messages.success(request, f"Set version {set_version.version} created: {set_version.note}.")
            return redirect("set-detail", version=set_version.version)
    status = 400 if request.method == "POST" else 200
    return render(request, "sets/production.html", {"form": form, "errors": errors}, status=status)
