"""The version record: all runs of one assistant version on one set version,
linked as repeats, with the scorings that stand for them, their pooled counts,
stable resolution and timing. Every figure names the runs it uses."""

from dataclasses import dataclass

from reviewapp.models import (
    AssistantVersion,
    JudgeRun,
    Run,
    Scoring,
    SetVersion,
)
from reviewapp.scorings.selectors import (
    DEFAULT_SLICE_FIELDS,
    config_key,
    pooled_timing_columns,
    question_clusters,
    scoring_counts,
    stable_tallies,
    without_questions,
)
from scoring import timing
from scoring.measures import merge_slice_counts
from scoring.repeats import merge_tallies, repeat_figures, with_question_clusters

DEFAULT_KEY = config_key(options={}, slice_fields=DEFAULT_SLICE_FIELDS)


@dataclass
class Record:
    """A version's record on a set version (spec 004): every stored run of
    it there, linked as repeats and never replaced. Figures pool the runs
    counted (all but those excluded with a reason), or the one run chosen."""

    version: AssistantVersion
    set_version: SetVersion
    runs: list[Run]  # every stored run, oldest first
    scorings: list[Scoring]  # the default scorings whose figures are pooled
    chosen: Run | None = None

    def __bool__(self) -> bool:
        return bool(self.scorings)

    @property
    def used_runs(self) -> list[Run]:
        return [scoring.run for scoring in self.scorings]

    @property
    def excluded(self) -> list[Run]:
        return [run for run in self.runs if run.excluded_reason]

    @property
    def repetitions(self) -> int:
        """Attempts per question pooled over the runs used."""
        return sum(scoring.run.repetitions for scoring in self.scorings)

    @property
    def sources(self) -> str:
        """Which runs the figures come from, to say beside them."""
        ids = ", ".join(f"#{run.id}" for run in self.used_runs)
        if self.chosen is not None:
            return f"run {ids} alone, as chosen"
        return f"run{'s' if len(self.scorings) > 1 else ''} {ids}" + (
            " pooled as repeats" if len(self.scorings) > 1 else ""
        )


def version_record(
    assistant_version: AssistantVersion, set_version: SetVersion, *, run_id: int | None = None
) -> Record:
    """The version's record on the set version; with ``run_id``, that run's
    figures alone (excluded or not)."""
    runs = list(
        Run.objects.filter(
            assistant_version=assistant_version, set_version=set_version, status=Run.Status.STORED
        )
        .select_related("excluded_by")
        .order_by("created_at", "id")
    )
    chosen = next((run for run in runs if run.id == run_id), None) if run_id else None
    counted = [chosen] if chosen else [run for run in runs if not run.excluded_reason]
    scorings = list(
        Scoring.objects.filter(
            run__in=counted, set_version=set_version, config_key=DEFAULT_KEY, status=Scoring.Status.DONE
        )
        .select_related("run", "set_version")
        .order_by("run__created_at", "run_id")
    )
    return Record(assistant_version, set_version, runs, scorings, chosen)


def version_scoring(assistant_version: AssistantVersion, set_version: SetVersion) -> Scoring | None:
    """The latest scoring of the version's record (for exports)."""
    record = version_record(assistant_version, set_version)
    return record.scorings[-1] if record.scorings else None


def pooled_counts(record: Record) -> dict[str, dict[str, dict]]:
    """{slice: {measure: {k, n, clusters}}} summed over the record's scorings
    (tuning part). A question asked in several runs is one cluster over all
    of them, so pooled runs (and scores stored before cluster sums were
    kept) get their sums recounted over the questions' pooled attempts.
    A record whose runs are all still being scored has none."""
    if not record.scorings:
        return {}
    counts = merge_slice_counts(
        *(
            {slice_name: measures}
            for scoring in record.scorings
            for slice_name, measures in scoring_counts(scoring).items()
        )
    )
    stored = all("clusters" in measure for measures in counts.values() for measure in measures.values())
    if len(record.scorings) == 1 and stored:
        return counts
    slice_fields = DEFAULT_SLICE_FIELDS
    tallies = merge_tallies(stable_tallies(scoring, slice_fields=slice_fields) for scoring in record.scorings)
    clusters = question_clusters(record.scorings[0])  # one set version
    return with_question_clusters(counts, tallies, slice_fields=slice_fields, cluster_of=clusters)


def record_stable(record: Record) -> dict:
    """The stable resolution over every attempt the record holds: a run's own
    when there is one, else recounted over the pooled attempts."""
    if len(record.scorings) == 1:
        return record.scorings[0].stable
    if record.repetitions < 2:
        return {}
    tallies = merge_tallies(stable_tallies(scoring) for scoring in record.scorings)
    return repeat_figures(tallies, repetitions=record.repetitions, slice_fields=("language",))


def record_timing(record: Record) -> dict:
    """Spec 004's timing over the record's runs: a run's own summary when
    there is one, else recounted over the pooled answers ("all" only)."""
    if len(record.scorings) == 1:
        return record.scorings[0].timing
    table, question_ids = pooled_timing_columns(record.scorings)
    if not table.rows:
        return {}
    return {"all": without_questions(timing.timing_summary(table, question_ids=question_ids))}


def set_versions_of(assistant_version: AssistantVersion) -> list[SetVersion]:
    return list(
        SetVersion.objects.filter(runs__assistant_version=assistant_version, runs__status=Run.Status.STORED)
        .distinct()
        .order_by("-created_at")
    )


def judged_pairs(runs) -> list[tuple[int, int]]:
    """(judge run, judge version) pairs whose verdicts stand for the runs: for
    each run and judge version, its latest finished judge run only, so an
    answer graded twice by the same judge version counts once."""
    chosen: dict[tuple[int, int], int] = {}
    for judge_run in (
        JudgeRun.objects.filter(run__in=runs, status=JudgeRun.Status.DONE)
        .prefetch_related("judge_versions")
        .order_by("id")
    ):
        for version in judge_run.judge_versions.all():
            chosen[(judge_run.run_id, version.id)] = judge_run.id
    return sorted({(judge_run_id, version_id) for (_, version_id), judge_run_id in chosen.items()})
