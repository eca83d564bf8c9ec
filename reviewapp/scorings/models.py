"""Scorings of a run against a set version: the work in chunks, each answer's
checks and findings, each question's outcomes, and the counts (k, n) per slice.

Counts are stored; rates and intervals are derived where shown."""

from __future__ import annotations

import functools

from django.conf import settings
from django.db import models

from reviewapp.runs.models import Answer, Run, SetVersion
from scoring.measures import FAILURE_MEASURES, MEASURES


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
    # Claims given back after a database or file store outage: they do not count as attempts.
    outages = models.PositiveIntegerField(default=0)
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
    """A range of a run's lines, checked by one task; its slice counts,
    timing and question outcomes are added up when the last chunk is done."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        SCORING = "scoring"
        DONE = "done"
        FAILED = "failed"

    scoring = models.ForeignKey(Scoring, on_delete=models.CASCADE, related_name="chunks")
    # Line numbers, first and last included: the run's (run, line) index
    # finds a range's answers, and a few dozen look-ups of it plan the
    # chunks of a million answers.
    first_line = models.PositiveIntegerField()
    last_line = models.PositiveIntegerField()
    # The answers it held, counted when it is checked.
    answers = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    slices = models.JSONField(default=dict, blank=True)
    unmatched_answers = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # The chunk's claim: see Run.lease_until.
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Claims given back after a database or file store outage: they do not count as attempts.
    outages = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    # The timing of its answers in the tuning part, by language, as
    # scoring.timing.TimingColumns.to_bytes writes each (msgpack); None for
    # a chunk checked before chunks kept their timing.
    timing = models.BinaryField(null=True, blank=True)

    class Meta:
        ordering = ("scoring", "first_line")

    def __str__(self) -> str:
        return f"lines {self.first_line}-{self.last_line} of scoring {self.scoring_id}"


class AnswerCheck(models.Model):
    """The checks of one answer in one scoring: k and n per measure."""

    # No index of its own: check_unique_answer (scoring, answer) leads with it,
    # and each index is written once a check, a million times a scoring. No
    # database constraint (see answer below): checks are written only by the
    # chunk that holds the scoring's lease, and the ORM cascades its removal.
    scoring = models.ForeignKey(
        Scoring, on_delete=models.CASCADE, related_name="checks", db_index=False, db_constraint=False
    )
    # None for a question the run did not answer ("not run"). No database
    # constraint: checking it at commit locked each answer's row (FOR KEY
    # SHARE), which rewrote every page of the answers a chunk read: a third
    # of a chunk's database time and 24 MB of WAL in 38 (bench/probe_chunk.py
    # --immediate). Checks are written only from the answers a chunk has just
    # read, answers are never changed, and the ORM cascades their removal.
    answer = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="checks", null=True, db_constraint=False
    )
    # Copied so that paired comparisons read one table.
    question_id = models.CharField(max_length=200, default="")
    sealed = models.BooleanField(default=False)
    # What the line says about time and tool calls (scoring.timing.AnswerTiming,
    # the figures it logged only), in checks stored before each chunk kept
    # its answers' timing as columns (ScoringChunk.timing); null since.
    timing = models.JSONField(null=True, blank=True)
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
    # Each number read with what it matched, in checks stored before they
    # were read again when shown (selectors.check_numbers); null since: four
    # fifths of the table's bytes, written a million times a scoring and
    # read for one answer at a time.
    numbers = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("scoring", "answer"), name="check_unique_answer")]

    def __str__(self) -> str:
        return f"checks of answer {self.answer_id} in scoring {self.scoring_id}"


class QuestionOutcome(models.Model):
    """One question's outcomes in one scoring's tuning part, over its
    attempts, written as each chunk is checked, so that pairing two
    versions reads one narrow row a question, not every check with its
    numbers and timing.

    ``outcomes`` holds two bits per measure (the i-th of MEASURES): bit i
    when the measure applies to one of the attempts (n > 0), bit 6 + i (6
    measures) when one of them fails it. Outcomes over several scorings are their bitwise
    OR, which one aggregate reads in the database."""

    # One row a question in each chunk that holds its attempts (and one for
    # the attempts not run), readers taking their bitwise OR as they do
    # over several scorings; not a unique constraint, whose index on the
    # question took a 1M answer scoring's outcomes from 2.7 s to 6 s to store.
    # No database constraint, as for AnswerCheck.scoring.
    scoring = models.ForeignKey(
        Scoring, on_delete=models.CASCADE, related_name="outcomes", db_constraint=False
    )
    question_id = models.CharField(max_length=200)
    outcomes = models.PositiveSmallIntegerField()

    def __str__(self) -> str:
        return f"outcomes of {self.question_id} in scoring {self.scoring_id}"

    @staticmethod
    def bits(index: int) -> tuple[int, int]:
        """The bits of the ``index``-th measure: it applies, and it fails."""
        return 1 << index, 1 << (len(MEASURES) + index)

    @staticmethod
    def of_counts(counts) -> int:
        """The outcomes of one check, from its counts (k and n of each
        measure in MEASURES' order, as COUNT_COLUMNS)."""
        # Checks share a few dozen sets of counts: each is worked out once.
        return _outcomes_of(tuple(counts))

    @classmethod
    def outcome(cls, outcomes: int, index: int) -> int | None:
        """The ``index``-th measure's outcome: 1 when every attempt it
        applies to succeeds, 0 when one fails, None when it applies to none."""
        applies, fails = cls.bits(index)
        if not outcomes & applies:
            return None
        return 0 if outcomes & fails else 1


@functools.lru_cache(maxsize=4096)
def _outcomes_of(counts: tuple[int, ...]) -> int:
    outcomes = 0
    for index, measure in enumerate(MEASURES):
        k, n = counts[2 * index], counts[2 * index + 1]
        if n:
            applies, fails = QuestionOutcome.bits(index)
            outcomes |= applies
            if (k > 0) if measure in FAILURE_MEASURES else (k < n):
                outcomes |= fails
    return outcomes


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

    # No index of its own: the three below lead with it; no database
    # constraint, as for AnswerCheck.scoring.
    scoring = models.ForeignKey(
        Scoring, on_delete=models.CASCADE, related_name="findings", db_index=False, db_constraint=False
    )
    # None for a question the run did not answer ("not run"). No database
    # constraint, as for AnswerCheck.answer.
    answer = models.ForeignKey(
        Answer, on_delete=models.CASCADE, related_name="findings", null=True, db_constraint=False
    )
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
    # How the n units fall into clusters (scoring.stats.rates.ClusterSums):
    # answers for numbers and citations, questions when attempts repeat. Null
    # on scores stored before intervals were clustered.
    clusters = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("scoring", "slice", "measure"), name="score_unique_slice_measure")
        ]

    def __str__(self) -> str:
        return f"{self.slice} {self.measure}: {self.k}/{self.n}"
