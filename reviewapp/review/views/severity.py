"""Severity weights: leads set them, managers read them (spec 002)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import READERS_OF_RUNS, WRITERS, has_role, role_required
from reviewapp.models import SeverityWeights
from reviewapp.review.selectors import severity_in_force
from reviewapp.review.services.severity import severity_weights_save


@require_http_methods(["GET", "POST"])
@role_required(*READERS_OF_RUNS)
def severity_edit(request):
    can_write = has_role(request.user, *WRITERS)
    current = severity_in_force()
    if request.method == "POST":
        values = {name: request.POST.get(name, "") for name in ("field", "weights", "default_weight")}
    else:
        listed = (current.weights if current else {}).items()
        values = {
            "field": current.field if current else "stratum",
            "weights": "\n".join(f"{value} = {weight:g}" for value, weight in listed),
            "default_weight": f"{current.default_weight:g}" if current else "1",
        }
    error = ""
    if request.method == "POST":
        if not can_write:
            raise PermissionDenied("Only leads set severity weights.")
        try:
            default_weight = float(values["default_weight"])
        except ValueError:
            error = "default_weight: a number above 0"
        else:
            try:
                severity_weights_save(
                    field=values["field"],
                    weights_text=values["weights"],
                    default_weight=default_weight,
                    created_by=request.user,
                )
            except ApplicationError as rejected:
                error = str(rejected)
            else:
                messages.success(request, "The new severity weights are in force; the earlier ones are kept.")
                return redirect("severity")
    return render(
        request,
        "severity.html",
        {
            "current": current,
            "history": SeverityWeights.objects.select_related("created_by")[:20],
            "fields": SeverityWeights.Field.choices,
            "values": values,
            "error": error,
            "can_write": can_write,
        },
        status=400 if error else 200,
    )
