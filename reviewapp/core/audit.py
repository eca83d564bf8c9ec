"""Who changed what, and when: django-auditlog's append-only log entries.

Rows saved one by one are logged by auditlog's signals, with the person
from its middleware (no one, for work done by a worker or a command).
Writes that bypass the signals (``QuerySet.update`` and ``bulk_create``,
used where a change touches many rows or must be fenced) call ``record``
with what changed. Nothing in the app edits or deletes an entry; the admin
site shows them read-only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from auditlog.models import LogEntry
from auditlog.registry import auditlog
from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from reviewapp.core import csv_cells

# What each audited model is called on the trail, and what of it is kept.
# Secrets (a token's hash) and bulky bookkeeping (a draw's strata table, a
# worker's claim columns) stay out.
AUDITED = {
    "review.Rubric": {},
    "review.RubricVersion": {},
    "review.RubricQuestion": {},
    "review.SeverityWeights": {},
    "review.Sample": {"exclude_fields": ["strata"]},
    "review.Adjudication": {},
    "runs.QuestionSet": {},
    "runs.SetVersion": {},
    "judges.JudgeVersion": {},
    "judges.ValidationSet": {},
    "paired.PairedSample": {"exclude_fields": ["strata"]},
    "paired.PairedDecision": {},
    "accounts.ApiToken": {"exclude_fields": ["key_hash", "last_used_at"]},
}
USER_FIELDS = ["username", "is_active", "is_staff", "is_superuser", "groups"]


def register_models() -> None:
    """Called once the app registry is ready (ReviewappConfig.ready)."""
    from django.apps import apps

    for label, options in AUDITED.items():
        model = apps.get_model("reviewapp", label.split(".", 1)[1])
        if not auditlog.contains(model):
            auditlog.register(model, **options)
    user = get_user_model()
    if not auditlog.contains(user):
        # Roles are groups: adding or removing one is logged as a change of "groups".
        auditlog.register(user, include_fields=USER_FIELDS, m2m_fields={"groups"})


def record(instance, changes: dict[str, tuple], *, action: int = LogEntry.Action.UPDATE) -> LogEntry:
    """Log a change made without a signal: ``changes`` maps a field, or a
    word for what was done ("assigned"), to its (before, after)."""
    return LogEntry.objects.log_create(
        instance,
        force_log=True,
        action=action,
        changes={field: [_text(before), _text(after)] for field, (before, after) in changes.items()},
    )


def _text(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, list | tuple | set):
        return ", ".join(map(str, value))
    return str(value)


ACTIONS = dict(LogEntry.Action.choices)


def trail(*, kind: str = "", person: str = "") -> QuerySet[LogEntry]:
    """Newest first; ``kind`` a model name as the page lists them, ``person`` a username."""
    entries = LogEntry.objects.select_related("actor", "content_type").order_by("-timestamp", "-id")
    if kind:
        entries = entries.filter(content_type__model=kind)
    if person:
        entries = entries.filter(actor__username=person)
    return entries


def kinds() -> list[tuple[str, str]]:
    """(model, its name) of every kind that has an entry, for the page's filter."""
    from django.contrib.contenttypes.models import ContentType

    used = LogEntry.objects.values_list("content_type", flat=True).distinct()
    return sorted(
        (ct.model, str(ct.model_class()._meta.verbose_name) if ct.model_class() else ct.model)
        for ct in ContentType.objects.filter(id__in=used)
    )


def changes_of(entry: LogEntry) -> list[tuple[str, str, str]]:
    """(field, before, after) of an entry; a many-to-many change reads as
    what was added (after) or removed (before)."""
    rows = []
    for field, change in (entry.changes_dict or {}).items():
        if isinstance(change, dict):  # many-to-many: {"type": "m2m", "operation": "add", "objects": [...]}
            objects = ", ".join(map(str, change.get("objects", [])))
            added = change.get("operation") == "add"
            rows.append((field, "" if added else objects, objects if added else ""))
        else:
            before, after = (*change, "", "")[:2]
            rows.append((field, str(before), str(after)))
    return rows


CSV_HEADER = ["when", "who", "action", "kind", "object id", "object", "field", "before", "after"]


def csv_rows(entries: Iterable[LogEntry]) -> Iterator[list[str]]:
    """One row per changed field (an entry with no field gives one row)."""
    for entry in entries:
        common = [
            entry.timestamp.isoformat(),
            entry.actor.get_username() if entry.actor else "(system)",
            ACTIONS.get(entry.action, str(entry.action)),
            entry.content_type.model,
            entry.object_pk,
            entry.object_repr,
        ]
        for field, before, after in changes_of(entry) or [("", "", "")]:
            yield [*common, field, before, after]


def write_csv(out, entries: Iterable[LogEntry]) -> None:
    writer = csv_cells.writer(out)
    writer.writerow(CSV_HEADER)
    writer.writerows(csv_rows(entries))
