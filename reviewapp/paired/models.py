"""Blinded comparison of two runs by people (issue 14, item 4).

A paired sample holds the same frozen questions answered by two runs on one
set version, "A" and "B". Each reader sees both answers of a pair side by
side under neutral labels, "Answer 1" and "Answer 2", in an order drawn for
that reader from the sample's seed; a share of pairs comes back later with
the answers' places swapped, to check that a reader's preference follows
the answer and not its place (spec 004's calibration).

Readers' judgements are stored as the reader saw them (answer 1, answer 2);
which run each place held is on the assignment, and only leads' pages turn
places back into runs. Imported at the end of reviewapp.models, so that
Django finds these models with the others.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

__all__ = [
    "PairedAssignment",
    "PairedDecision",
    "PairedGrade",
    "PairedItem",
    "PairedJudgement",
    "PairedSample",
]


class PairedGrade(models.TextChoices):
    """A reader's grade of one answer of a pair, or pending verification,
    which is not a grade: the pair is not settled while it stands."""

    RESOLVED = "resolved", "resolved"
    PARTIAL = "partially_resolved", "partially resolved"
    MATERIAL_ERROR = "material_error", "material error"
    UNRESOLVED = "unresolved", "unresolved"
    PENDING = "pending", "pending verification"


class PairedSample(models.Model):
    """A frozen, seeded draw of questions both runs answered (attempt 1),
    stratified by language (and the question's stratum when asked)."""

    name = models.CharField(max_length=200)
    set_version = models.ForeignKey("reviewapp.SetVersion", on_delete=models.PROTECT, related_name="+")
    run_a = models.ForeignKey("reviewapp.Run", on_delete=models.PROTECT, related_name="+")
    run_b = models.ForeignKey("reviewapp.Run", on_delete=models.PROTECT, related_name="+")
    # Questions of the set's tuning part that both runs answered in their first attempt.
    frame_size = models.PositiveIntegerField()
    size = models.PositiveIntegerField()
    strata_fields = models.JSONField(default=list)
    # {stratum: {"population": N_h, "drawn": n_h, "weight": N_h / n_h}}
    strata = models.JSONField(default=dict)
    # The draw, each reader's order, places, aliases and repeats all follow from it.
    seed = models.BigIntegerField()
    readers_per_item = models.PositiveSmallIntegerField(default=2)
    # The share of each reader's pairs shown again later with the places swapped.
    repeat_share = models.FloatField(default=0.10)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The draw form's one-time key: a second click finds the first draw.
    submission_key = models.UUIDField(unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            models.CheckConstraint(condition=~Q(run_a=F("run_b")), name="paired_sample_two_runs"),
        ]

    def __str__(self) -> str:
        return self.name


class PairedItem(models.Model):
    """One question of a paired sample with the two runs' answers to it."""

    paired_sample = models.ForeignKey(PairedSample, on_delete=models.CASCADE, related_name="items")
    question_id = models.CharField(max_length=200)
    answer_a = models.ForeignKey("reviewapp.Answer", on_delete=models.PROTECT, related_name="+")
    answer_b = models.ForeignKey("reviewapp.Answer", on_delete=models.PROTECT, related_name="+")
    stratum = models.CharField(max_length=300)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ("paired_sample", "position")
        constraints = [
            models.UniqueConstraint(
                fields=("paired_sample", "question_id"), name="paired_item_question_once"
            ),
            models.UniqueConstraint(fields=("paired_sample", "position"), name="paired_item_position_once"),
        ]

    def __str__(self) -> str:
        return f"pair {self.position} of {self.paired_sample}"


class PairedAssignment(models.Model):
    """One pair for one reader, under a random alias, at a place in the
    reader's shuffled order, with run A's answer shown first or second. A
    repeat is a second assignment of the same pair to the same reader, later
    in the order, with the places swapped."""

    item = models.ForeignKey(PairedItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="paired_assignments"
    )
    alias = models.CharField(max_length=8)
    order = models.PositiveIntegerField()
    # True: "Answer 1" on the reader's screen is run A's answer.
    a_is_first = models.BooleanField()
    repeat_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="repeat"
    )

    class Meta:
        ordering = ("reviewer", "order")
        constraints = [
            models.UniqueConstraint(fields=("reviewer", "alias"), name="paired_alias_unique_per_reader"),
            models.UniqueConstraint(
                fields=("item", "reviewer"),
                condition=Q(repeat_of__isnull=True),
                name="paired_assignment_one_per_reader",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.alias} for {self.reviewer}"


class PairedJudgement(models.Model):
    """One revision of one reader's judgement of a pair, in the places the
    reader saw. Never changed: an edit is a new revision."""

    class Better(models.TextChoices):
        FIRST = "1", "Answer 1"
        SECOND = "2", "Answer 2"
        EQUAL = "equal", "equal"

    assignment = models.ForeignKey(PairedAssignment, on_delete=models.PROTECT, related_name="judgements")
    revision = models.PositiveIntegerField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    grade_first = models.CharField(max_length=20, choices=PairedGrade.choices)
    note_first = models.TextField(blank=True)
    grade_second = models.CharField(max_length=20, choices=PairedGrade.choices)
    note_second = models.TextField(blank=True)
    better = models.CharField(max_length=5, choices=Better.choices)
    # The form's one-time key: a double submit makes one revision.
    submission_key = models.UUIDField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("assignment", "revision")
        constraints = [
            models.UniqueConstraint(fields=("assignment", "revision"), name="paired_judgement_revision"),
        ]

    def __str__(self) -> str:
        return f"revision {self.revision} of {self.assignment}"


class PairedDecision(models.Model):
    """A lead's decision on a pair the readers did not settle, in runs' terms
    (the lead's page is not blind), with the reason. Never changed: a new
    decision is the next revision."""

    class Better(models.TextChoices):
        A = "a", "A better"
        B = "b", "B better"
        EQUAL = "equal", "equal"

    item = models.ForeignKey(PairedItem, on_delete=models.PROTECT, related_name="decisions")
    revision = models.PositiveIntegerField()
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    grade_a = models.CharField(max_length=20, choices=PairedGrade.choices)
    grade_b = models.CharField(max_length=20, choices=PairedGrade.choices)
    better = models.CharField(max_length=5, choices=Better.choices)
    reason = models.TextField()
    submission_key = models.UUIDField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("item", "revision")
        constraints = [
            models.UniqueConstraint(fields=("item", "revision"), name="paired_decision_revision"),
        ]

    def __str__(self) -> str:
        return f"decision {self.revision} on {self.item}"
