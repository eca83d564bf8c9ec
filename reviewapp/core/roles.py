"""Who may do what. Roles are Django groups; a superuser holds every role."""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied


class Role:
    """The groups people belong to; admins are superusers or in "admin"."""

    REVIEWER = "reviewer"
    LEAD = "lead"
    MANAGER = "manager"
    ADMIN = "admin"
    ALL = (REVIEWER, LEAD, MANAGER, ADMIN)


# Who reads the unblinded pages (runs, answers, samples) and who changes them.
READERS_OF_RUNS = (Role.LEAD, Role.MANAGER, Role.ADMIN)
WRITERS = (Role.LEAD, Role.ADMIN)


@dataclass(frozen=True)
class Scope:
    """What a pipeline token may be used for, and the roles whose tokens may hold it."""

    name: str
    summary: str
    roles: tuple[str, ...]


# An API operation needs its scope on the token and one of the scope's roles
# on the token's user, so a token never reaches more than its user's pages do.
SCOPES = {
    scope.name: scope
    for scope in (
        Scope("runs:write", "upload run logs", WRITERS),
        Scope("sets:write", "upload question set versions", WRITERS),
        Scope("runs:read", "read runs and their scores", READERS_OF_RUNS),
        Scope("gate:read", "ask the release gate", READERS_OF_RUNS),
        # Apart from runs:write: a judge run spends money at a model provider,
        # so a token that uploads runs does not also start judge runs.
        Scope("judges:write", "estimate, start and cancel judge runs (model graders)", WRITERS),
        # For an assistant's runtime, which calls it on every answer it shows:
        # a token that leaks from there reaches nothing stored. Leads and
        # admins, who wire pipelines, hold it; managers read and gate
        # releases, and the check reads nothing they could want.
        Scope("check", "check answers' numbers (POST /api/check) and nothing else", WRITERS),
    )
}
# The check stands alone on a token: a key kept in an assistant's runtime,
# which calls it on every answer shown, must reach nothing stored.
ALONE_SCOPE = "check"
# What the token page offers to tick at once; it ticks the read scopes by default.
SCOPE_PRESETS = {
    "read": ("read only", ("runs:read", "gate:read")),
    "pipeline": (
        "pipeline: upload runs and sets, read, gate",
        ("runs:write", "sets:write", "runs:read", "gate:read"),
    ),
    "runtime": ("runtime key: the number check alone", ("check",)),
}
# Whoever may hold at least one scope, and so manage tokens.
API_USERS = tuple(dict.fromkeys(role for scope in SCOPES.values() for role in scope.roles))


def has_role(user, *roles: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    names = getattr(user, "_role_names", None)
    if names is None:
        names = set(user.groups.values_list("name", flat=True))
        user._role_names = names
    return bool(names.intersection(roles))


def scopes_for(user) -> list[str]:
    """The scopes ``user``'s roles allow on a token, in the order of SCOPES; none for reviewers."""
    return [name for name, scope in SCOPES.items() if has_role(user, *scope.roles)]


def role_required(*roles: str):
    """Login first; then refuse (403) anyone without one of ``roles``."""

    def decorate(view):
        @wraps(view)
        @login_required
        def wrapped(request, *args, **kwargs):
            if not has_role(request.user, *roles):
                raise PermissionDenied("Your role does not give access to this page.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


def grant(user, *roles: str) -> None:
    for name in roles:
        group, _ = Group.objects.get_or_create(name=name)
        user.groups.add(group)
    user.__dict__.pop("_role_names", None)
