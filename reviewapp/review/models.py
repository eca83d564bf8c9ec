"""Rubrics and their versions, frozen samples, assignments to readers, their
judgements and leads' adjudications, and severity weights."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviewapp.runs.models import Answer, AssistantVersion, Run


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
    # Prose: a rubric question of a few sentences is ordinary.
    text = models.CharField(max_length=1000)
    allows_na = models.BooleanField(default=False)
    na_rule = models.CharField(max_length=1000, blank=True)

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

    class Purpose(models.TextChoices):
        # What the sample was drawn for: a manager's review figures count the
        # samples drawn for review unless told otherwise, not the items a
        # judge is checked on (issue 25).
        REVIEW = "review", "drawn for review"
        JUDGE_REGRADE = "judge_regrade", "a judge's human regrade sample"
        JUDGE_VALIDATION = "judge_validation", "decided to validate a judge"

    name = models.CharField(max_length=200)
    purpose = models.CharField(max_length=20, choices=Purpose.choices, default=Purpose.REVIEW)
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
    # The draw form's one-time key: a second click finds the first draw.
    submission_key = models.UUIDField(unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return self.name


class CalibrationItem(models.Model):
    """A written item that tests the readers, not the assistant: the same
    facts in several forms (short, long, paragraph, table, or two parts in
    either order), or one graded variant of a spec 004 calibration pattern
    (review.calibration_patterns) with the grade it should get. Stored apart
    from the real questions and answers; never counted in a run's rates."""

    class Form(models.TextChoices):
        SHORT = "short"
        LONG = "long"
        PARAGRAPH = "paragraph"
        TABLE = "table"
        ORDERED = "ordered", "two parts in order"
        SWAPPED = "swapped", "the same two parts swapped"
        VARIANT = "variant", "a graded variant of a pattern"

    group = models.CharField(max_length=100)
    form = models.CharField(max_length=10, choices=Form.choices)
    language = models.CharField(max_length=20, default="en")
    question = models.TextField()
    answer = models.TextField()
    # Records as a log carries them: [{"id", "label", "values", "period", "unit", "caveats"}]
    evidence = models.JSONField(default=list)
    # The grade spec 004 expects (an Outcome.Grade value); empty when the
    # item only tests that its twin in another form gets the same grade.
    expected_grade = models.CharField(max_length=20, null=True, blank=True)
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


# The outcome grades in their order, for the figures that count them.
GRADES = tuple(Outcome.Grade.values)


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
