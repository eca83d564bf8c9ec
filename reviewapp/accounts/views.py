"""A person's own API tokens: list them, make one (its key shown once), revoke one;
and the audit trail of who changed what, for leads and admins."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviewapp.core import audit
from reviewapp.core.roles import API_USERS, SCOPE_PRESETS, SCOPES, WRITERS, role_required, scopes_for
from reviewapp.models import ApiToken, TokenRefused


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What the token is for, e.g. the nightly pipeline.")
    scopes = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, allowed: list[str], preset: str = "read", **kwargs):
        super().__init__(*args, **kwargs)
        # Only the scopes this person's role can use are offered; a preset
        # ticks some, by default the read ones: nothing that writes or spends.
        self.fields["scopes"].choices = [(name, f"{name}: {SCOPES[name].summary}") for name in allowed]
        _, ticked = SCOPE_PRESETS.get(preset, SCOPE_PRESETS["read"])
        self.fields["scopes"].initial = [name for name in ticked if name in allowed]
        if preset == "runtime":
            self.fields["name"].initial = "assistant runtime"
        self.fields["days"] = forms.IntegerField(
            label="Expires after (days)",
            min_value=1,
            max_value=settings.API_TOKEN_MAX_DAYS,
            initial=settings.API_TOKEN_DAYS,
        )


@require_http_methods(["GET", "POST"])
@role_required(*API_USERS)
def token_list(request):
    allowed = scopes_for(request.user)
    form = TokenForm(request.POST or None, allowed=allowed, preset=request.GET.get("preset", "read"))
    issued, key, status = None, "", 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                issued, key = ApiToken.issue(
                    user=request.user,
                    name=form.cleaned_data["name"],
                    scopes=form.cleaned_data["scopes"],
                    days=form.cleaned_data["days"],
                )
            except TokenRefused as refused:
                form.add_error(None, str(refused))
            else:
                status = 200
                form = TokenForm(allowed=allowed)
    tokens = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-id")
    response = render(
        request,
        "tokens/list.html",
        {
            "tokens": tokens,
            "form": form,
            "issued": issued,
            "key": key,
            "scopes": SCOPES,
            "presets": [
                (name, label)
                for name, (label, ticked) in SCOPE_PRESETS.items()
                if set(ticked) <= set(allowed)
            ],
        },
        status=status,
    )
    # The key appears in this one response: keep it out of every cache and history store.
    add_never_cache_headers(response)
    return response


@require_POST
@role_required(*API_USERS)
def token_revoke(request, token_id: int):
    # Only one's own tokens resolve: another person's token is a 404.
    token = get_object_or_404(ApiToken, id=token_id, user=request.user)
    token.revoke()
    messages.success(request, f"Token “{token.name}” is revoked: it no longer works.")
    return redirect("token-list")


AUDIT_ENTRIES_PER_PAGE = 50


@require_GET
@role_required(*WRITERS)
def audit_trail(request):
    """Who changed what and when, newest first, filtered by kind and person;
    ``?format=csv`` gives the same entries as CSV, one row per changed field."""
    kind, person = request.GET.get("kind", ""), request.GET.get("person", "")
    entries = audit.trail(kind=kind, person=person)
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="audit-trail.csv"'
        audit.write_csv(response, entries.iterator(chunk_size=2000))
        return response
    page = Paginator(entries, AUDIT_ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    rows = [(entry, audit.changes_of(entry)) for entry in page]
    return render(
        request,
        "audit/trail.html",
        {
            "page": page,
            "rows": rows,
            "kinds": audit.kinds(),
            "kind": kind,
            "person": person,
            "actions": audit.ACTIONS,
        },
    )
