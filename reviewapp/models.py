"""The data: question sets and their versions, assistants, runs of logged
answers, and the scorings of a run against a set version.

Counts (k, n) are stored; rates and intervals are derived where shown.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import timedelta
from functools import cached_property

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from scoring.measures import MEASURES


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
    split = models.CharField(max_length=10, choices=Split.choices, default=Split.TUNING)

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
    # reviewapp.services.imports.score_summary); never this app's measures.
    imported_scores = models.JSONField(default=dict, blank=True)
    file_path = models.CharField(max_length=500)
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
    # When the work was last handed to the broker; None while it could not be.
    queued_at = models.DateTimeField(null=True, blank=True)
    # The plan the log's header declares (spec 004), stored at ingest: each
    # question asked this many times, each attempt stopped after timeout_s.
    repetitions = models.PositiveSmallIntegerField(default=1)
    timeout_s = models.PositiveIntegerField(default=600)
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
    # one fewer to keep up for each of a million answers stored.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answers", db_index=False)
    line_number = models.PositiveIntegerField()
    question_id = models.CharField(max_length=200)
    attempt = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OK)
    language = models.CharField(max_length=20)
    # False for an attempt without an answer: it declined nothing.
    declined = models.BooleanField()
    raw = models.TextField()

    class Meta:
        ordering = ("run", "line_number")
        constraints = [
            models.UniqueConstraint(fields=("run", "question_id", "attempt"), name="answer_unique_attempt"),
            models.UniqueConstraint(fields=("run", "line_number"), name="answer_unique_line"),
        ]

    def __str__(self) -> str:
        return f"{self.question_id} (line {self.line_number})"

    @cached_property
    def record(self) -> dict:
        return json.loads(self.raw)


class Scoring(models.Model):
    """A run scored against one set version with given options and slices;
    a run can have several. The answers are checked in chunks, which workers
    share."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        SCORING = "scoring"
        DONE = "done"
        FAILED = "failed"

    FINAL = (Status.DONE, Status.FAILED)

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="scorings")
    set_version = models.ForeignKey(SetVersion, on_delete=models.PROTECT, related_name="scorings")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    # Answers whose question this set version does not hold: not scored.
    unmatched_answers = models.PositiveIntegerField(default=0)
    # Questions of the set version that the run holds no answer for: failures in N.
    not_run = models.PositiveIntegerField(default=0)
    # Answers to sealed questions: scored apart, and kept out of every figure
    # until a lead opens the sealed part, saying why.
    sealed_answers = models.PositiveIntegerField(default=0)
    sealed_opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sealed_opened_at = models.DateTimeField(null=True, blank=True)
    sealed_reason = models.TextField(blank=True)
    # With repeated attempts (R >= 2): per slice and measure, the stable
    # count, the passed-in-r-of-R distribution and the clustered rate.
    stable = models.JSONField(default=dict, blank=True)
    # Spec 004's timing summary of the tuning part, per slice (scoring.timing).
    timing = models.JSONField(default=dict, blank=True)
    # The tuning part's N = Q x R in parts: questions, repetitions, scored,
    # failed and not run (selectors.AttemptCounts), counted once at the end.
    attempt_counts = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True)
    slice_fields = models.JSONField(default=list)
    # The options and slices as one string, so that a scoring is made once.
    config_key = models.CharField(max_length=300, default="")
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    # The planning step's claim, as for a run's ingest.
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("created_at", "id")
        constraints = [
            models.UniqueConstraint(fields=("run", "set_version", "config_key"), name="scoring_unique_config")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} against {self.set_version}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL

    @property
    def sealed_open(self) -> bool:
        return self.sealed_opened_at is not None

    @property
    def seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class ScoringChunk(models.Model):
    """A range of a run's answers, checked by one task; its slice counts are
    added up when the last chunk is done."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        SCORING = "scoring"
        DONE = "done"
        FAILED = "failed"

    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="chunks")
    first_answer_id = models.BigIntegerField()
    last_answer_id = models.BigIntegerField()
    answers = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    slices = models.JSONField(default=dict, blank=True)
    unmatched_answers = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # The chunk's claim: see Run.lease_until.
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("scoring", "first_answer_id")

    def __str__(self) -> str:
        return f"answers {self.first_answer_id}-{self.last_answer_id} of scoring {self.scoring_id}"


class AnswerCheck(models.Model):
    """The checks of one answer in one scoring: k and n per measure, and the
    numbers read from the answer with what each matched."""

    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="checks")
    # None for a question the run did not answer ("not run").
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="checks", null=True)
    # Copied so that paired comparisons read one table.
    question_id = models.CharField(max_length=200, default="")
    sealed = models.BooleanField(default=False)
    # What the line says about time and tool calls (scoring.timing.AnswerTiming,
    # the figures it logged only), so that summaries need not parse the log again.
    timing = models.JSONField(default=dict, blank=True)
    numeric_accuracy_k = models.PositiveSmallIntegerField(default=0)
    numeric_accuracy_n = models.PositiveSmallIntegerField(default=0)
    citation_validity_k = models.PositiveSmallIntegerField(default=0)
    citation_validity_n = models.PositiveSmallIntegerField(default=0)
    refusal_accuracy_k = models.PositiveSmallIntegerField(default=0)
    refusal_accuracy_n = models.PositiveSmallIntegerField(default=0)
    answer_rate_k = models.PositiveSmallIntegerField(default=0)
    answer_rate_n = models.PositiveSmallIntegerField(default=0)
    unsupported_numbers_k = models.PositiveSmallIntegerField(default=0)
    unsupported_numbers_n = models.PositiveSmallIntegerField(default=0)
    unsupported_answers_k = models.PositiveSmallIntegerField(default=0)
    unsupported_answers_n = models.PositiveSmallIntegerField(default=0)
    numbers = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("scoring", "answer"), name="check_unique_answer")]

    def __str__(self) -> str:
        return f"checks of answer {self.answer_id} in scoring {self.scoring_id}"


class QuestionOutcome(models.Model):
    """One question's outcomes in one scoring's tuning part, over its
    attempts, written when the scoring is added up, so that pairing two
    versions reads one narrow row a question, not every check with its
    numbers and timing.

    ``outcomes`` holds two bits per measure (the i-th of MEASURES): bit i
    when the measure applies to one of the attempts (n > 0), bit 6 + i (6
    measures) when one of them fails it. Outcomes over several scorings are their bitwise
    OR, which one aggregate reads in the database."""

    # One row a question and scoring, as store_question_outcomes groups
    # them; not a unique constraint, whose index on the question took a 1M
    # answer scoring's outcomes from 2.7 s to 6 s to store.
    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="outcomes")
    question_id = models.CharField(max_length=200)
    outcomes = models.PositiveSmallIntegerField()

    def __str__(self) -> str:
        return f"outcomes of {self.question_id} in scoring {self.scoring_id}"

    @staticmethod
    def bits(index: int) -> tuple[int, int]:
        """The bits of the ``index``-th measure: it applies, and it fails."""
        return 1 << index, 1 << (len(MEASURES) + index)

    @classmethod
    def outcome(cls, outcomes: int, index: int) -> int | None:
        """The ``index``-th measure's outcome: 1 when every attempt it
        applies to succeeds, 0 when one fails, None when it applies to none."""
        applies, fails = cls.bits(index)
        if not outcomes & applies:
            return None
        return 0 if outcomes & fails else 1


class Finding(models.Model):
    """One failure of one answer on one measure, with its reason."""

    class Kind(models.TextChoices):
        NUMERIC = "numeric", "wrong number"
        UNSUPPORTED = "unsupported", "unsupported number"
        REFUSAL = "refusal", "should have declined"
        DECLINED = "declined", "should have answered"
        CITATION = "citation", "invalid citation"
        NOT_RUN = "not_run", "not run"
        FAILED = "failed", "failed attempt"

    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="findings")
    # None for a question the run did not answer ("not run").
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="findings", null=True)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    detail = models.TextField()
    sealed = models.BooleanField(default=False)
    # Copied from the answer so that a run's findings list and filters need
    # no join, however many answers the run has.
    line_number = models.PositiveIntegerField(null=True)
    question_id = models.CharField(max_length=200)
    language = models.CharField(max_length=20)

    class Meta:
        ordering = ("line_number", "id")
        indexes = [
            models.Index(fields=("scoring", "line_number"), name="finding_scoring_line"),
            models.Index(fields=("scoring", "kind", "line_number"), name="finding_kind_line"),
            models.Index(fields=("scoring", "language", "line_number"), name="finding_language_line"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class Score(models.Model):
    """Counts for one slice and one measure of a scoring."""

    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="scores")
    slice = models.CharField(max_length=200)
    measure = models.CharField(max_length=50)
    k = models.PositiveIntegerField()
    n = models.PositiveIntegerField()

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("scoring", "slice", "measure"), name="score_unique_slice_measure")
        ]

    def __str__(self) -> str:
        return f"{self.slice} {self.measure}: {self.k}/{self.n}"


def api_token_expiry():
    """When a token made now expires unless its maker chose otherwise."""
    return timezone.now() + timedelta(days=settings.API_TOKEN_DAYS)


class TokenRefused(ValueError):
    """A token that may not be issued; the message says why, in a sentence."""


class ApiToken(models.Model):
    """A pipeline's bearer token. Only its hash is stored; the token is shown once.

    It acts as its user, limited to its scopes, until it expires or is revoked."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(default=api_token_expiry)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @staticmethod
    def hash(key: str) -> str:
        # The key is 256 random bits, so a fast hash is as good as a slow one here.
        return hashlib.sha256(key.encode()).hexdigest()

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()

    @classmethod
    def find(cls, key: str) -> ApiToken | None:
        """The unrevoked, unexpired token of an active user with this key, else None."""
        return (
            cls.objects.select_related("user")
            .filter(
                key_hash=cls.hash(key),
                revoked_at__isnull=True,
                expires_at__gt=timezone.now(),
                user__is_active=True,
            )
            .first()
        )

    @classmethod
    def issue(
        cls, *, user, name: str, scopes: list[str] | None = None, days: int | None = None
    ) -> tuple[ApiToken, str]:
        """Make a token for ``user`` and return it with its key, which is not stored.

        ``scopes`` defaults to every scope the user's roles allow, ``days`` to
        API_TOKEN_DAYS. Raises TokenRefused for an inactive user, a user whose
        roles allow no scope (reviewers, people without a role), an unknown
        scope or one beyond the user's roles, and a lifetime outside 1 to
        API_TOKEN_MAX_DAYS days."""
        from reviewapp.roles import SCOPES, scopes_for

        username = user.get_username()
        if not user.is_active:
            raise TokenRefused(f"{username} is not active, so no token was made.")
        allowed = scopes_for(user)
        if not allowed:
            raise TokenRefused(
                f"{username} has no role that may use the API (lead, manager or admin), so no token was made."
            )
        chosen = allowed if scopes is None else list(dict.fromkeys(scopes))
        if not chosen:
            raise TokenRefused("Choose at least one scope.")
        unknown = [s for s in chosen if s not in SCOPES]
        if unknown:
            raise TokenRefused(f"Unknown scope {unknown[0]!r}: the scopes are {', '.join(SCOPES)}.")
        beyond = [s for s in chosen if s not in allowed]
        if beyond:
            raise TokenRefused(
                f"{username}'s role does not allow the scope {beyond[0]}; it allows {', '.join(allowed)}."
            )
        days = settings.API_TOKEN_DAYS if days is None else days
        if not 1 <= days <= settings.API_TOKEN_MAX_DAYS:
            raise TokenRefused(f"A token lasts from 1 to {settings.API_TOKEN_MAX_DAYS} days, not {days}.")
        key = secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            key_hash=cls.hash(key),
            scopes=chosen,
            expires_at=timezone.now() + timedelta(days=days),
        )
        return token, key

    def revoke(self) -> None:
        """Stop the token working from now on; revoking it again changes nothing."""
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=("revoked_at",))


class Role:
    """The groups people belong to; admins are superusers or in "admin"."""

    REVIEWER = "reviewer"
    LEAD = "lead"
    MANAGER = "manager"
    ADMIN = "admin"
    ALL = (REVIEWER, LEAD, MANAGER, ADMIN)


class Rubric(models.Model):
    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class RubricVersion(models.Model):
    """A written rubric: yes/no questions, guidance and the awkward-case rules
    decided before grading. Frozen once a judgement uses it: an edit then
    makes a new version."""

    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    guidance = models.TextField(blank=True)
    # [{"case": "a correct value for the wrong period", "rule": "..."}]
    awkward_cases = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("rubric", "-number")
        constraints = [models.UniqueConstraint(fields=("rubric", "number"), name="rubric_version_unique")]

    def __str__(self) -> str:
        return f"{self.rubric} v{self.number}"

    @property
    def is_frozen(self) -> bool:
        return Judgement.objects.filter(rubric_version=self).exists()


class RubricQuestion(models.Model):
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveSmallIntegerField()
    key = models.SlugField(max_length=40)
    text = models.CharField(max_length=300)
    allows_na = models.BooleanField(default=False)
    na_rule = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("rubric_version", "position")
        constraints = [models.UniqueConstraint(fields=("rubric_version", "key"), name="rubric_question_key")]

    def __str__(self) -> str:
        return self.text


class Sample(models.Model):
    """A frozen, seeded, stratified selection of answers for review."""

    class Allocation(models.TextChoices):
        PROPORTIONAL = "proportional", "proportional, with a minimum per stratum"
        EQUAL = "equal", "equal per stratum"

    name = models.CharField(max_length=200)
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.PROTECT, related_name="samples")
    assistant_version = models.ForeignKey(
        AssistantVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="samples"
    )
    frame_from = models.DateTimeField(null=True, blank=True)
    frame_to = models.DateTimeField(null=True, blank=True)
    frame_size = models.PositiveIntegerField()
    size = models.PositiveIntegerField()
    strata_fields = models.JSONField(default=list)
    allocation = models.CharField(max_length=20, choices=Allocation.choices)
    min_per_stratum = models.PositiveIntegerField(default=1)
    seed = models.BigIntegerField()
    # {stratum: {"population": N_h, "drawn": n_h, "weight": N_h / n_h}}
    strata = models.JSONField(default=dict)
    includes_sealed = models.BooleanField(default=False)
    sealed_opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sealed_opened_at = models.DateTimeField(null=True, blank=True)
    # Why the sealed part was opened, in the words of whoever opened it.
    sealed_reason = models.TextField(blank=True)
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="samples")
    readers_per_item = models.PositiveSmallIntegerField(default=1)
    alias_seed = models.BigIntegerField(null=True, blank=True)
    # The share of resolved items a lead spot-checks, drawn per item from the
    # sample's seed when the sample is drawn.
    spot_check_share = models.FloatField(default=0.10)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return self.name


class CalibrationItem(models.Model):
    """A written item that tests the readers, not the assistant: the same
    facts in several forms (short, long, paragraph, table). Stored apart from
    the real questions and answers; never counted in a run's rates."""

    class Form(models.TextChoices):
        SHORT = "short"
        LONG = "long"
        PARAGRAPH = "paragraph"
        TABLE = "table"

    group = models.CharField(max_length=100)
    form = models.CharField(max_length=10, choices=Form.choices)
    language = models.CharField(max_length=20, default="en")
    question = models.TextField()
    answer = models.TextField()
    # Records as a log carries them: [{"id", "label", "values", "period", "unit", "caveats"}]
    evidence = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("group", "form")

    def __str__(self) -> str:
        return f"calibration {self.group} ({self.form})"


class SampleItem(models.Model):
    """One item of a sample: a logged answer, or a calibration item."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="items")
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.PROTECT, related_name="sample_items"
    )
    calibration = models.ForeignKey(
        CalibrationItem, null=True, blank=True, on_delete=models.PROTECT, related_name="sample_items"
    )
    stratum = models.CharField(max_length=300)
    position = models.PositiveIntegerField()
    spot_check = models.BooleanField(default=False)

    class Meta:
        ordering = ("sample", "position")
        constraints = [models.UniqueConstraint(fields=("sample", "answer"), name="sample_item_unique")]

    def __str__(self) -> str:
        return f"item {self.position} of {self.sample}"


class Assignment(models.Model):
    """One sample item for one reader, under a random alias, at a place in
    the reader's own shuffled order."""

    item = models.ForeignKey(SampleItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments"
    )
    alias = models.CharField(max_length=8)
    order = models.PositiveIntegerField()

    class Meta:
        ordering = ("reviewer", "order")
        constraints = [
            models.UniqueConstraint(fields=("item", "reviewer"), name="assignment_one_per_reader"),
            models.UniqueConstraint(fields=("reviewer", "alias"), name="assignment_alias_unique_per_reader"),
        ]

    def __str__(self) -> str:
        return f"{self.alias} for {self.reviewer}"


class Outcome(models.Model):
    """What a reader judges and a lead decides alike: whether the answer
    addresses the question, the rubric answers, spec 004's material-error
    question (with the error's claim, evidence, effect and kind) and two
    primary metrics, and the grade that follows from them
    (services.grading.grade_from_metrics) or pending verification."""

    class Grade(models.TextChoices):
        RESOLVED = "resolved", "resolved"
        PARTIAL = "partially_resolved", "partially resolved"
        MATERIAL_ERROR = "material_error", "material error"
        UNRESOLVED = "unresolved", "unresolved"

    class ErrorKind(models.TextChoices):
        CONCLUSION = "wrong_conclusion", "the core conclusion is wrong"
        RECOMMENDATION = "wrong_recommendation", "a key recommendation leads the user wrong"
        FABRICATED = "fabricated_evidence", "deciding evidence is fabricated"
        UNVERIFIED = "unverified_live_fact", "an unverified live situation asserted as fact"
        MISSING_CONDITION = "missing_condition", "a necessary condition left out"

    class MaterialError(models.TextChoices):
        YES = "yes", "yes"
        NO = "no", "no"
        PENDING = "pending", "pending verification"

    class Correctness(models.TextChoices):
        CORRECT = "correct", "correct"
        MATERIAL_ERROR = "material_error", "material error"
        NO_CONCLUSION = "no_gradable_conclusion", "no gradable conclusion"
        PENDING = "pending", "pending verification"

    class Fulfilment(models.TextChoices):
        FULL = "full", "fully met"
        PARTIAL = "partial", "partly met"
        NOT_MET = "not_met", "not met"
        PENDING = "pending", "pending verification"

    created_at = models.DateTimeField(auto_now_add=True)
    addresses_question = models.BooleanField(default=True)
    # {question key: "yes" | "no" | "na"}; empty when the answer does not address the question
    rubric_answers = models.JSONField(default=dict, blank=True)
    grade = models.CharField(max_length=20, choices=Grade.choices, blank=True)
    # Pending verification: the deciding fact cannot be checked yet. Not a
    # grade, and never counted as a pass or a fail.
    pending = models.BooleanField(default=False)
    error_claim = models.TextField(blank=True)
    error_evidence = models.TextField(blank=True)
    error_effect = models.TextField(blank=True)
    error_kind = models.CharField(max_length=30, choices=ErrorKind.choices, blank=True)
    # Spec 004's separate material-error question and its two primary
    # metrics; the grade above follows from them. Blank on a judgement made
    # before they were asked where its old grade could not tell (migration 0018).
    material_error = models.CharField(max_length=10, choices=MaterialError.choices, blank=True)
    correctness = models.CharField(max_length=25, choices=Correctness.choices, blank=True)
    fulfilment = models.CharField(max_length=10, choices=Fulfilment.choices, blank=True)
    # An interaction state beside the grade, not a grade: the answer asks
    # the user for more information.
    needs_more_info = models.BooleanField(default=False)
    # The form's one-time key: a double submit makes one revision.
    submission_key = models.UUIDField(unique=True)

    class Meta:
        abstract = True

    @property
    def outcome(self) -> str:
        # Spec 004's grading order: a material error counts first, also on an
        # answer that does not address the question.
        if self.grade == self.Grade.MATERIAL_ERROR:
            return "material error" if self.addresses_question else "material error (off the question)"
        if self.pending:
            return "pending verification"
        if not self.addresses_question:
            return "does not address the question"
        return self.get_grade_display()


class Judgement(Outcome):
    """One revision of one reader's judgement of one item. Never changed:
    an edit is a new revision."""

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="judgements")
    revision = models.PositiveIntegerField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="+")
    borderline = models.BooleanField(default=False)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ("assignment", "revision")
        constraints = [
            models.UniqueConstraint(fields=("assignment", "revision"), name="judgement_revision"),
        ]

    def __str__(self) -> str:
        return f"revision {self.revision} of {self.assignment}"


class Adjudication(Outcome):
    """A lead's decision on an item, with the reason. Never changed: a new
    decision is the next revision. The readers' judgements stay as they were."""

    class MaterialStatus(models.TextChoices):
        NONE = "", "no material error raised"
        CONFIRMED = "confirmed"
        DISMISSED = "dismissed"

    item = models.ForeignKey(SampleItem, on_delete=models.PROTECT, related_name="adjudications")
    revision = models.PositiveIntegerField()
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    settling_evidence = models.TextField(blank=True)
    material_status = models.CharField(max_length=10, choices=MaterialStatus.choices, blank=True)

    class Meta:
        ordering = ("item", "revision")
        constraints = [
            models.UniqueConstraint(fields=("item", "revision"), name="adjudication_revision"),
        ]

    def __str__(self) -> str:
        return f"decision {self.revision} on {self.item}"


class Judge(models.Model):
    """A model grader a lead defined; what it is lives in its versions."""

    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class JudgeVersion(models.Model):
    """One version of a judge: the model, how it is called and what it grades.

    Frozen once it has graded anything: an edit then writes the next version.
    No secret is stored: ``key_variable`` names the environment variable that
    holds the key (the provider's default when blank)."""

    class Provider(models.TextChoices):
        OPENAI = "openai", "OpenAI or an OpenAI-compatible server"
        ANTHROPIC = "anthropic", "Anthropic"
        GEMINI = "gemini", "Google Gemini"
        STAND_IN = "stand-in", "stand-in (demo and tests: not a language model)"

    # The review rubric's questions, graded like a reader grades them.
    RUBRIC = "rubric"

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    provider = models.CharField(max_length=20, choices=Provider.choices)
    model = models.CharField(max_length=200)
    base_url = models.CharField(max_length=500, blank=True)
    options = models.JSONField(default=dict, blank=True)
    key_variable = models.CharField(max_length=100, blank=True)
    max_tokens = models.PositiveIntegerField(default=1024)
    # Calls in flight at once for this judge, across workers' threads.
    concurrency = models.PositiveSmallIntegerField(default=4)
    # Metric names of scoring.judge (faithfulness, …) or "rubric".
    metrics = models.JSONField(default=list)
    rubric_version = models.ForeignKey(
        RubricVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="judge_versions"
    )
    prompt_version = models.CharField(max_length=40)
    prompt_hash = models.CharField(max_length=64)
    # Validated for a label when kappa's lower bound is above the threshold
    # on at least the minimum number of holdout items.
    validation_threshold = models.FloatField(default=0.6)
    validation_min_items = models.PositiveIntegerField(default=50)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("judge", "-number")
        constraints = [models.UniqueConstraint(fields=("judge", "number"), name="judge_version_unique")]

    def __str__(self) -> str:
        return f"{self.judge} v{self.number}"

    @property
    def is_frozen(self) -> bool:
        return ModelVerdict.objects.filter(judge_version=self).exists()


class JudgeRun(models.Model):
    """A run's answers (or a sample's items) graded by a panel of judge versions."""

    class Status(models.TextChoices):
        ESTIMATED = "estimated", "waiting for confirmation of the cost"
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_runs")
    # Head to head: each answer of ``run`` against ``other_run``'s answer to
    # the same question and attempt, asked in both orders (spec 003).
    other_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.CASCADE, related_name="compared_judge_runs"
    )
    sample = models.ForeignKey(
        Sample, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_runs"
    )
    judge_versions = models.ManyToManyField(JudgeVersion, related_name="judge_runs")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ESTIMATED)
    # {"calls": …, "prompt_tokens": …, "items": …}: shown before anything is sent.
    estimate = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    # The human regrade sample drawn from the run (spec 002), with its share.
    regrade_sample = models.ForeignKey(
        Sample, null=True, blank=True, on_delete=models.SET_NULL, related_name="regraded_judge_runs"
    )
    regrade_share = models.FloatField(default=0.10)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"judge run {self.id}"

    @property
    def progress(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        return int(100 * self.chunks_done / self.chunks_total) if self.chunks_total else 0


class JudgeChunk(models.Model):
    """A slice of a judge run's answers that any worker can take, under a lease."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="chunks")
    answer_ids = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("judge_run", "id")

    def __str__(self) -> str:
        return f"chunk {self.id} of {self.judge_run}"


class ModelVerdict(models.Model):
    """One judge version's verdict on one answer for one metric. A model
    grade, never a human one: stored apart from judgements, and never shown on
    a reader's screen before that reader has graded the item."""

    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="verdicts")
    judge_version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="verdicts")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="model_verdicts")
    # For a preference: the other run's answer it was weighed against.
    other_answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    metric = models.CharField(max_length=40)
    score = models.FloatField(null=True, blank=True)
    # The parsed verdict (claims, rubric answers and grade, …).
    labels = models.JSONField(default=dict, blank=True)
    raw = models.TextField(blank=True)
    # [{"text", "prompt_tokens", "completion_tokens", "cached", "finish_reason"}]
    completions = models.JSONField(default=list, blank=True)
    prompt_hash = models.CharField(max_length=64)
    error = models.TextField(blank=True)
    undefined = models.CharField(max_length=200, blank=True)
    seconds = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("judge_run", "answer", "judge_version", "metric")
        constraints = [
            models.UniqueConstraint(
                fields=("judge_run", "judge_version", "answer", "metric"), name="model_verdict_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.judge_version} on answer {self.answer_id}: {self.metric}"


class JudgeResponse(models.Model):
    """The response cache: a completion kept by the hash of its request, so a
    re-run pays nothing for a request it made before (no key is in the hash)."""

    key = models.CharField(max_length=64, unique=True)
    value = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key[:12]


class ValidationSet(models.Model):
    """The items with a settled human outcome that a judge is validated on,
    drawn and frozen like a sample: a seeded split into tuning items (look at
    them freely) and holdout items (the only ones validation counts), so a
    judge cannot be tuned on the items that validate it."""

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="validation_sets")
    seed = models.BigIntegerField()
    holdout_share = models.FloatField(default=0.5)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"validation set {self.id} of {self.judge}"


class ValidationItem(models.Model):
    class Split(models.TextChoices):
        TUNING = "tuning"
        HOLDOUT = "holdout"

    validation_set = models.ForeignKey(ValidationSet, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(SampleItem, on_delete=models.PROTECT, related_name="validation_items")
    split = models.CharField(max_length=10, choices=Split.choices)

    class Meta:
        ordering = ("validation_set", "id")
        constraints = [
            models.UniqueConstraint(fields=("validation_set", "item"), name="validation_item_once")
        ]

    def __str__(self) -> str:
        return f"{self.split} item {self.item_id}"


class SeverityWeights(models.Model):
    """How much an error weighs by where the answer goes (spec 002): a weight
    per value of one field (the question's stratum, or the language). The
    latest row is in force; earlier ones stay as the record of what was used."""

    class Field(models.TextChoices):
        STRATUM = "stratum", "the question's stratum"
        LANGUAGE = "language", "the answer's language"

    field = models.CharField(max_length=20, choices=Field.choices)
    # {value: weight above 0}; values not listed weigh default_weight.
    weights = models.JSONField(default=dict)
    default_weight = models.FloatField(default=1.0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"severity weights by {self.field}"

    def weight_of(self, value: str | None) -> float:
        return float(self.weights.get(value or "", self.default_weight))


from reviewapp.paired_models import *  # noqa: E402,F403
