"""Writes a double click makes once: a row keyed by a one-time submission key."""

from __future__ import annotations

import uuid

from django.db import IntegrityError, transaction
from django.db.models import Max


def create_once(model, submission_key: uuid.UUID | None, create):
    """Run ``create`` in a transaction unless a row with this one-time key
    exists; when two requests race with the same key, the loser returns the
    winner's row. Without a key (a row made by a command or the API), just
    ``create`` in a transaction."""
    try:
        with transaction.atomic():
            return create()
    except IntegrityError:
        if submission_key is None:
            raise
        existing = model.objects.filter(submission_key=submission_key).first()
        if existing is None:
            raise
        return existing


def key_field():
    """The hidden one-time key of a form that creates something: a new one
    each time the form is shown, the posted one when it comes back."""
    from django import forms

    return forms.UUIDField(widget=forms.HiddenInput, required=False, initial=uuid.uuid4)


def next_revision(*, parent, revisions) -> int:
    """The next revision number among ``revisions`` (a queryset of the rows
    kept under ``parent``), with the parent's row locked so that two writes
    racing never take one number. Call inside a transaction."""
    type(parent).objects.select_for_update().get(pk=parent.pk)
    return (revisions.aggregate(n=Max("revision"))["n"] or 0) + 1
