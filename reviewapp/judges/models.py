"""Model graders: judges and their frozen versions, judge runs in chunks, verdicts
and raw responses, and the validation sets that check a judge against people."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef

from reviewapp.review.models import RubricVersion, Sample, SampleItem
from reviewapp.runs.models import Answer, Run


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
    # When its planning (chunks and regrade sample) was handed to the broker:
    # a confirmed run with no chunks whose planning is stale is queued again.
    queued_at = models.DateTimeField(null=True, blank=True)
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
    # Claims given back after a database or file store outage: they do not count as attempts.
    outages = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("judge_run", "id")

    def __str__(self) -> str:
        return f"chunk {self.id} of {self.judge_run}"


class VerdictQuerySet(models.QuerySet):
    def shown(self):
        """Without the verdicts on answers to sealed questions whose run has
        not had its sealed part opened (Scoring.sealed_opened_at): a model's
        grade must not tell what the automatic measures keep sealed."""
        from reviewapp.runs.models import Question
        from reviewapp.scorings.models import Scoring

        sealed = Question.objects.filter(
            set_version=OuterRef("answer__run__set_version"),
            question_id=OuterRef("answer__question_id"),
            split=Question.Split.SEALED,
        )
        opened = Scoring.objects.filter(
            run=OuterRef("answer__run"),
            set_version=OuterRef("answer__run__set_version"),
            sealed_opened_at__isnull=False,
        )
        return self.exclude(Exists(sealed) & ~Exists(opened))


class ModelVerdict(models.Model):
    """One judge version's verdict on one answer for one metric. A model
    grade, never a human one: stored apart from judgements, and never shown on
    a reader's screen before that reader has graded the item. Figures, pages
    and exports read ``ModelVerdict.objects.shown()``."""

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

    objects = VerdictQuerySet.as_manager()

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
