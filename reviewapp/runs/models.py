"""Question sets and their versions, assistants and their versions, runs of logged
answers and the answers themselves, verbatim."""

from __future__ import annotations

import json
from functools import cached_property

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse


class QuestionSet(models.Model):
    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class SetVersion(models.Model):
    """One version of a question set: the judgement runs are scored against.

    Version labels are unique across the app because run logs name them alone
    ("set_version": "1.2").
    """

    question_set = models.ForeignKey(QuestionSet, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=100, unique=True)
    based_on = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="revisions"
    )
    source_name = models.CharField(max_length=255, blank=True)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"set {self.version}"


class Question(models.Model):
    class Behaviour(models.TextChoices):
        ANSWER = "answer"
        DECLINE = "decline"

    class Split(models.TextChoices):
        TUNING = "tuning"
        SEALED = "sealed"

    set_version = models.ForeignKey(SetVersion, on_delete=models.CASCADE, related_name="questions")
    question_id = models.CharField(max_length=200)
    language = models.CharField(max_length=20)
    question = models.TextField(blank=True)
    # A reference answer in words, for model graders that compare with one.
    reference = models.TextField(null=True, blank=True)
    expected_behaviour = models.CharField(max_length=10, choices=Behaviour.choices)
    expected_values = models.JSONField(default=list)
    expected_series = models.CharField(max_length=200, null=True, blank=True)
    expected_period = models.CharField(max_length=100, null=True, blank=True)
    expected_unit = models.CharField(max_length=200, null=True, blank=True)
    expected_caveats = models.JSONField(default=list)
    stratum = models.CharField(max_length=100, null=True, blank=True)
    # Questions sharing a passage or document name one cluster (scoring.logfile.fields).
    cluster = models.CharField(max_length=200, null=True, blank=True)
    split = models.CharField(max_length=10, choices=Split.choices, default=Split.TUNING)
    # The one follow-up every setup is sent when the question needs more from
    # the user, and the turns allowed: {"text", "max_turns"} (spec 004).
    follow_up = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ("set_version", "id")
        constraints = [
            models.UniqueConstraint(fields=("set_version", "question_id"), name="question_unique_in_version")
        ]

    def __str__(self) -> str:
        return self.question_id

    def as_scoring_dict(self) -> dict:
        return {
            "question_id": self.question_id,
            "language": self.language,
            "expected_behaviour": self.expected_behaviour,
            "expected_values": self.expected_values,
            "stratum": self.stratum,
            "split": self.split,
        }


class Assistant(models.Model):
    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class AssistantVersion(models.Model):
    """What is measured. The label is what logs say: "assistant-1.3"."""

    assistant = models.ForeignKey(Assistant, on_delete=models.PROTECT, related_name="versions")
    label = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return self.label


class Run(models.Model):
    """One uploaded log: the answers of an assistant version to a set version."""

    class Status(models.TextChoices):
        RECEIVED = "received"
        INGESTING = "ingesting"
        STORED = "stored"
        REJECTED = "rejected"
        FAILED = "failed"

    FINAL = (Status.STORED, Status.REJECTED, Status.FAILED)

    class Source(models.TextChoices):
        WEB = "web"
        API = "api"
        COMMAND = "command"

    assistant_version = models.ForeignKey(AssistantVersion, on_delete=models.PROTECT, related_name="runs")
    set_version = models.ForeignKey(SetVersion, on_delete=models.PROTECT, related_name="runs")
    file_name = models.CharField(max_length=255)
    # The tool and file a run was imported from ("Inspect AI eval log: x.eval");
    # empty for a run uploaded as this app's own log.
    imported_from = models.CharField(max_length=255, blank=True)
    # The imported tool's own scores over the run, by scorer (see
    # reviewapp.runs.services.imports.score_summary); never this app's measures.
    imported_scores = models.JSONField(default=dict, blank=True)
    # The log's name in the file store (reviewapp.core.files): runs/<sha256>.jsonl.
    stored_name = models.CharField(max_length=500)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.WEB)
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RECEIVED)
    progress = models.PositiveSmallIntegerField(default=0)
    answer_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    line_errors = models.JSONField(default=list, blank=True)
    line_error_count = models.PositiveIntegerField(default=0)
    stored_at = models.DateTimeField(null=True, blank=True)
    # The ingest's claim: a worker that dies stops renewing it, and the sweep
    # or a redelivered task takes the work up once it has run out.
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Claims given back after a database or file store outage: they do not count as attempts.
    outages = models.PositiveIntegerField(default=0)
    # When the work was last handed to the broker; None while it could not be.
    queued_at = models.DateTimeField(null=True, blank=True)
    # The plan the log's header declares (spec 004), stored at ingest: each
    # question asked this many times, each attempt stopped after timeout_s.
    repetitions = models.PositiveSmallIntegerField(default=1)
    timeout_s = models.PositiveIntegerField(default=600)
    # The clocks the header states (spec 004, across systems): the other
    # system's clock's offset from the tester's in ms (negative: behind) and
    # their precision; null when not stated, never 0.
    clock_skew_ms = models.FloatField(null=True, blank=True)
    clock_precision_ms = models.FloatField(null=True, blank=True)
    # The reply policy the header declares the assistant was called with
    # (spec 004, channel overhead); blank when not declared.
    reply_policy = models.CharField(
        max_length=10, blank=True, choices=[("direct", "direct"), ("channel", "channel")]
    )
    # The recorded choice to leave channel overhead out of E2E: when it was
    # made, and by whom; a time with nobody is the pipeline's, from the header.
    overhead_excluded_at = models.DateTimeField(null=True, blank=True)
    overhead_excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The earlier run this one repeats, as the header names it (a number or
    # a text), kept until it is linked to a run here.
    repeats_ref = models.CharField(max_length=200, blank=True)
    # The run this one repeats (spec 004: an extra run is linked to the
    # attempt it repeats, never put in its place). Runs of one assistant
    # version on one set version form that version's record either way.
    repeats = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="repeated_by"
    )
    # A run left out of its version's figures, always with the reason, and shown.
    excluded_reason = models.TextField(blank=True)
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    excluded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            # A file is held by one run; a rejected run holds nothing, so the
            # same file may be sent again once it has been fixed elsewhere.
            models.UniqueConstraint(
                fields=("sha256",), condition=~Q(status="rejected"), name="run_unique_file"
            )
        ]

    def __str__(self) -> str:
        return f"run {self.id}: {self.assistant_version} on {self.set_version}"

    def get_absolute_url(self) -> str:
        return reverse("run-detail", args=[self.id])

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL


class Answer(models.Model):
    """One logged line, an attempt at a question, kept verbatim in ``raw``; a
    few fields are copied out to be filtered on. A run with repetitions holds
    several attempts of each question."""

    class Status(models.TextChoices):
        # What became of the attempt (spec 004); only "ok" has an answer.
        OK = "ok", "answered"
        ERROR = "error", "error"
        TIMEOUT = "timeout", "timed out"
        CANCELLED = "cancelled", "cancelled"
        REFUSED_QUOTA = "refused_quota", "refused (quota)"

    # The unique constraints' indexes lead with the run: no index of its own,
    # one fewer to keep up for each of a million answers stored. No database
    # constraint either: PostgreSQL checks one at commit for every row (3 s
    # at the end of storing a million answers, while nothing else can go
    # on), and answers are only written by the run's ingest, which holds the
    # run, and removed with it (the ORM cascades).
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="answers", db_index=False, db_constraint=False
    )
    line_number = models.PositiveIntegerField()
    question_id = models.CharField(max_length=200)
    attempt = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OK)
    language = models.CharField(max_length=20)
    # False for an attempt without an answer: it declined nothing.
    declined = models.BooleanField()
    # The multi-turn protocol (scoring.logfile.followups): the turns taken and
    # each follow-up sent, labelled protocol, ad_hoc or resume against what
    # the question declares, and what did not fit it.
    turns = models.PositiveSmallIntegerField(default=1)
    follow_ups = models.JSONField(default=list, blank=True)
    follow_up_warnings = models.JSONField(default=list, blank=True)
    raw = models.TextField()

    class Meta:
        ordering = ("run", "line_number")
        constraints = [
            models.UniqueConstraint(fields=("run", "question_id", "attempt"), name="answer_unique_attempt"),
            models.UniqueConstraint(fields=("run", "line_number"), name="answer_unique_line"),
        ]
        indexes = [
            # The few attempts that took follow-ups, found without reading a
            # million rows each time a run page counts them (540 ms at 1M without).
            models.Index(fields=("run",), condition=~models.Q(follow_ups=[]), name="answer_with_follow_ups"),
        ]

    def __str__(self) -> str:
        return f"{self.question_id} (line {self.line_number})"

    @cached_property
    def record(self) -> dict:
        return json.loads(self.raw)
