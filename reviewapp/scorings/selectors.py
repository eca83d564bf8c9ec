"""Reads that pages and the API share."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

import msgspec
from django.db.models import Count, F, Q
from django.utils import formats, timezone

from reviewapp.core import progress
from reviewapp.core.work import stale_before
from reviewapp.models import Answer, AnswerCheck, Finding, Question, Run, Scoring, ScoringChunk
from reviewapp.runs.selectors import run_overhead_choice
from scoring import timing
from scoring.measures import (
    COUNT_COLUMNS,
    MEASURE_LABELS,
    MEASURES,
    NOT_APPLICABLE,
    Options,
    check_answer,
    denominator,
)
from scoring.repeats import QuestionTally, with_question_clusters
from scoring.stats.rates import Rate, counted_rate, rate

# Slices of the sealed split are stored under this prefix, apart from the tuning ones.
SEALED_PREFIX = "sealed:"

# What an empty cell means, so that a blank is never a mystery: a measure
# with no denominator does not apply, and is shown as n/a, never as 0 %.
EMPTY_REASONS = NOT_APPLICABLE


@dataclass(frozen=True)
class Cell:
    measure: str
    rate: Rate | None

    @property
    def empty_reason(self) -> str:
        return EMPTY_REASONS[self.measure]


@dataclass(frozen=True)
class SliceRow:
    slice: str
    cells: list[Cell]


def score_table(
    scoring: Scoring, *, family: str = "language", method: str = "wilson", sealed: bool = False
) -> list[SliceRow]:
    """One row for ``all`` and one per value of the ``family`` field, one
    cell per measure with k, n and its ``method`` interval. ``sealed`` reads
    the sealed part's slices instead, which only an opened scoring shows."""
    if sealed and not scoring.sealed_open:
        return []
    return pooled_table(scoring_counts(scoring, sealed=sealed), family=family, method=method)


def scoring_counts(scoring: Scoring, *, sealed: bool = False) -> dict[str, dict[str, dict]]:
    """{slice: {measure: {k, n, clusters}}} of the scoring's tuning part
    (with ``sealed``, of its sealed part, named without the prefix): the
    counts every figure of one scoring is made from (counted_rate). Scores
    stored before cluster sums were kept get them recounted from the checks."""
    counts: dict[str, dict[str, dict]] = {}
    complete = True
    for score in scoring.scores.all():
        if score.slice.startswith(SEALED_PREFIX) != sealed:
            continue
        entry = {"k": score.k, "n": score.n}
        if score.clusters:
            entry["clusters"] = score.clusters
        else:
            complete = False
        counts.setdefault(score.slice.removeprefix(SEALED_PREFIX), {})[score.measure] = entry
    if complete:
        return counts
    fields = clustered_slice_fields(scoring)
    tallies = stable_tallies(scoring, slice_fields=fields, sealed=sealed)
    return with_question_clusters(counts, tallies, slice_fields=fields, cluster_of=question_clusters(scoring))


def question_clusters(scoring: Scoring) -> dict[str, str]:
    """Question id to the cluster the set names for it, for those naming one."""
    return dict(
        Question.objects.filter(set_version_id=scoring.set_version_id, cluster__isnull=False)
        .exclude(cluster="")
        .values_list("question_id", "cluster")
    )


def clustered_slice_fields(scoring: Scoring) -> tuple[str, ...]:
    """The slice fields whose slices get cluster sums over questions: those
    of the scoring that are question fields."""
    return tuple(name for name in scoring.slice_fields or () if name in DEFAULT_SLICE_FIELDS)


def pooled_table(
    counts: dict[str, dict[str, dict]], *, family: str = "language", method: str = "wilson"
) -> list[SliceRow]:
    """The rows of ``counts`` ({slice: {measure: {k, n, clusters?}}}) for
    ``all`` and the family's slices, each cell with its interval."""
    names = ["all", *sorted(name for name in counts if name.startswith(f"{family}="))]
    return [
        SliceRow(
            name,
            [
                Cell(
                    m,
                    counted_rate(counts[name][m], method=method)
                    if counts[name].get(m, {}).get("n")
                    else None,
                )
                for m in MEASURES
            ],
        )
        for name in names
        if name in counts
    ]


def slice_families(scoring: Scoring) -> list[str]:
    """The fields this scoring was sliced by, in the order it was asked."""
    return list(scoring.slice_fields or ["language"])


def measure_denominators(options: dict | None = None) -> list[tuple[str, str, str]]:
    """(measure, label, what its n counts under the scoring's options)."""
    chosen = Options(**(options or {}))
    return [(m, MEASURE_LABELS[m], denominator(m, chosen)) for m in MEASURES]


def scores_as_dict(scoring: Scoring) -> dict:
    """{slice: {measure: {k, n, rate, low, high, effective_n, clusters}}} for
    the API, every slice; the sealed part's slices (named "sealed:…") only
    once it was opened."""
    parts = [("", scoring_counts(scoring))]
    if scoring.sealed_open:
        parts.append((SEALED_PREFIX, scoring_counts(scoring, sealed=True)))
    result: dict[str, dict] = {}
    for prefix, counts in parts:
        for slice_name, measures in counts.items():
            result[prefix + slice_name] = {
                measure: rate_as_dict(counted_rate(entry)) for measure, entry in measures.items()
            }
    return dict(sorted(result.items(), key=lambda item: (item[0] != "all", item[0])))


def rate_as_dict(r: Rate) -> dict:
    """A figure as the API and exports give it: k, n, the rate and its
    interval, and the effective n and clusters it was made on (null when
    its units are independent)."""
    return {
        "k": r.k,
        "n": r.n,
        "rate": r.value,
        "low": r.low,
        "high": r.high,
        "effective_n": r.effective_n,
        "clusters": r.clusters,
    }


def run_progress(run: Run) -> int:
    """How far the run is, 0 to 100, live while its answers are being stored."""
    if run.status == Run.Status.INGESTING:
        return progress.read("run", run.id, default=run.progress)
    return 100 if run.is_final else run.progress


def visible_findings(scoring: Scoring):
    """The scoring's findings; those of sealed questions once the part was opened."""
    findings = Finding.objects.filter(scoring=scoring)
    return findings if scoring.sealed_open else findings.filter(sealed=False)


def findings_page(scoring: Scoring, *, kind: str = "", language: str = "", question: str = ""):
    """The scoring's visible findings in log order, narrowed to one kind, one
    language and question ids holding ``question`` (any case) when given."""
    findings = visible_findings(scoring)
    if kind:
        findings = findings.filter(kind=kind)
    if language:
        findings = findings.filter(language=language)
    if question.strip():
        findings = findings.filter(question_id__icontains=question.strip())
    return findings.only(
        "id", "answer_id", "kind", "detail", "sealed", "line_number", "question_id", "language"
    ).order_by(F("line_number").asc(nulls_last=True), "id")


def grouped_findings(findings) -> list[dict]:
    """``findings`` with those of the same kind and detail made one, in the
    order first found, each as {"finding", "count"}: an answer that states
    the same unsupported figure three times is told once, three times."""
    groups: dict[tuple[str, str], dict] = {}
    for finding in findings:
        key = (finding.kind, finding.detail)
        if key in groups:
            groups[key]["count"] += 1
        else:
            groups[key] = {"finding": finding, "count": 1}
    return list(groups.values())


# The columns of a findings export, in order.
FINDINGS_EXPORT_FIELDS = ["line", "question_id", "language", "kind", "detail", "sealed_part"]


def findings_export(
    scoring: Scoring, *, kind: str = "", language: str = "", question: str = "", labels: bool = False
) -> Iterator[tuple]:
    """The rows (FINDINGS_EXPORT_FIELDS) of the scoring's visible findings,
    filtered as findings_page filters them, read in batches. With ``labels``
    each value is written as the run page shows it (the kind "wrong number",
    not "numeric"; the sealed part "yes" or "no"), for people reading a
    spreadsheet; without, as stored, for programs."""
    kind_labels = dict(Finding.Kind.choices)
    rows = (
        findings_page(scoring, kind=kind, language=language, question=question)
        .values_list("line_number", "question_id", "language", "kind", "detail", "sealed")
        .iterator(chunk_size=2000)
    )
    for line, question_id, row_language, row_kind, detail, sealed in rows:
        if labels:
            row_kind, sealed = kind_labels.get(row_kind, row_kind), "yes" if sealed else "no"
        yield (line, question_id, row_language, row_kind, detail, sealed)


def finding_kinds(scoring: Scoring) -> list[tuple[str, str, int]]:
    """(kind, label, count) for each kind of finding in the scoring."""
    counts = dict(visible_findings(scoring).order_by().values_list("kind").annotate(n=Count("id")))
    return [(kind, label, counts.get(kind, 0)) for kind, label in Finding.Kind.choices]


def scoring_languages(scoring: Scoring) -> list[str]:
    """The languages of the run, read off its slices rather than its answers."""
    prefix = "language="
    return sorted(
        {
            s.removeprefix(prefix)
            for s in scoring.scores.values_list("slice", flat=True)
            if s.startswith(prefix)
        }
    )


STANDARD_FIELDS = {
    "question_id",
    "language",
    "retrieved_ids",
    "retrieved_values",
    "answer",
    "cited_ids",
    "declined",
    "retrieved_records",
    # Shown in their own places: passages as evidence, another tool's scores apart.
    "retrieved_contexts",
    "inspect_scores",
    "lm_eval_scores",
}

# Where an imported tool's own scores are kept on a line, and how they are named.
IMPORTED_SCORES = {
    "inspect_scores": ("Inspect", "Inspect scorer"),
    "lm_eval_scores": ("lm-eval", "lm-eval metric"),
}


def answer_evidence(record: dict, *, language: str | None = None) -> dict:
    """The evidence an answer was shown: its records with values, period, unit
    and caveats when the log has them, else the retrieved ids and values.

    ``values`` stay as logged (numbers for the API and the judges); each
    ``shown_values`` is the same list as a reader should see it (shown_values),
    by ``language``, by default the record's own."""
    language = record.get("language", "") if language is None else language
    records = record.get("retrieved_records") or []
    described = {r.get("id") for r in records}
    cited = set(record.get("cited_ids") or [])
    bare_ids = [i for i in record.get("retrieved_ids") or [] if i not in described]
    # Passages of text (a Ragas or Inspect import's retrieved contexts).
    passages = [p for p in record.get("retrieved_contexts") or [] if isinstance(p, str)]
    return {
        "count": len(records) + len(bare_ids) + len(passages),
        "passages": passages,
        "records": [
            {
                "id": r.get("id"),
                "label": r.get("label"),
                "values": r.get("values") or [],
                "shown_values": shown_values(r.get("values") or [], language=language),
                "period": r.get("period"),
                "unit": r.get("unit"),
                "caveats": r.get("caveats") or [],
                "cited": r.get("id") in cited,
            }
            for r in records
        ],
        "bare_ids": bare_ids,
        "values": record.get("retrieved_values") or [],
        "shown_values": shown_values(record.get("retrieved_values") or [], language=language),
        "cited_ids": [
            {"id": i, "retrieved": i in set(record.get("retrieved_ids") or [])}
            for i in dict.fromkeys(record.get("cited_ids") or [])
        ],
    }


# (decimal mark, thousands separator) where the usual writing differs from
# Django's locale files, which give French and Spanish a full no-break space:
# French typesets a narrow one, and Spanish statistics group with a dot.
NUMBER_MARKS = {
    "en": (".", ","),
    "fr": (",", "\u202f"),
    "de": (",", "."),
    "es": (",", "."),
}
# A number a record wrote as text, which is shown with its digits as written.
_NUMBER_TEXT = re.compile(r"(?P<sign>[-+\u2212]?)(?P<whole>\d+)(?:\.(?P<fraction>\d+))?", re.ASCII)


def number_marks(language: str) -> tuple[str, str]:
    """(decimal mark, thousands separator) for a language code such as
    "fr" or "fr-CA"; Django's locale formats for languages NUMBER_MARKS does
    not name, and English marks for a language Django does not know."""
    base = (language or "en").replace("_", "-").split("-")[0].lower()
    if base in NUMBER_MARKS:
        return NUMBER_MARKS[base]
    decimal = formats.get_format("DECIMAL_SEPARATOR", lang=base, use_l10n=True)
    thousands = formats.get_format("THOUSAND_SEPARATOR", lang=base, use_l10n=True)
    return decimal, thousands


def shown_value(value, *, language: str = "en") -> str:
    """A logged value as a reader of ``language`` writes it, with no digit
    added or lost: 13157.0 as "13,157" (English) or "13\u202f157" (French),
    7.6 as "7.6" or "7,6", the text "7.60" as "7.60" or "7,60". A float is
    given in its shortest form, never in exponent notation; text that is not
    a plain number (and true, false or null) is shown as logged."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        # repr is the shortest text that reads back as the same float.
        text = str(int(value)) if value.is_integer() else format(Decimal(repr(value)), "f")
    elif isinstance(value, str):
        text = value.strip()
    else:
        return str(value)
    number = _NUMBER_TEXT.fullmatch(text)
    if number is None:
        return str(value)
    decimal_mark, thousands = number_marks(language)
    whole = number["whole"]
    if len(whole) > 3:
        head = len(whole) % 3 or 3
        whole = thousands.join([whole[:head], *(whole[i : i + 3] for i in range(head, len(whole), 3))])
    fraction = f"{decimal_mark}{number['fraction']}" if number["fraction"] is not None else ""
    return f"{number['sign']}{whole}{fraction}"


def shown_values(values, *, language: str = "en") -> list[dict]:
    """Each distinct value of ``values`` as shown_value writes it, in the order
    first logged, with how many times it was logged: [41, 41.0, 44] gives
    [{"text": "41", "count": 2}, {"text": "44", "count": 1}]. Values that
    read the same are one, since a reader could not tell them apart."""
    counts: dict[str, int] = {}
    for value in values:
        text = shown_value(value, language=language)
        counts[text] = counts.get(text, 0) + 1
    return [{"text": text, "count": count} for text, count in counts.items()]


def answer_question(answer: Answer):
    return answer.run.set_version.questions.filter(question_id=answer.question_id).first()


def check_numbers(check: AnswerCheck, record: dict) -> list[dict]:
    """Each number of the answer ``check`` checked (its logged line,
    ``record``), with what it matched: as stored with checks made before
    numbers were read again when shown, else read again by the scorer's own
    check (check_answer, with the scoring's options, against the question of
    the scoring's set version). Scoring a million answers wrote these a
    million times to show them one answer at a time."""
    if check.numbers is not None:
        return check.numbers
    scoring = check.scoring
    question = (
        Question.objects.filter(set_version_id=scoring.set_version_id, question_id=check.question_id)
        .values("question_id", "expected_behaviour", "expected_values")
        .first()
    )
    if question is None:
        return []
    checked = check_answer(record, question, slice_fields=(), options=Options(**scoring.options))
    return [number.as_dict() for number in checked.numbers]


def marked_text(text: str, numbers: list[dict]) -> list[dict]:
    """The answer text cut into plain parts and numbers, each number with
    whether it was supported and by which value."""
    segments, position = [], 0
    for number in sorted(numbers, key=lambda n: n["start"]):
        if number["start"] < position:
            continue
        segments.append({"text": text[position : number["start"]]})
        segments.append({"text": text[number["start"] : number["end"]], "number": number})
        position = number["end"]
    segments.append({"text": text[position:]})
    return [segment for segment in segments if segment["text"]]


def records_as_passages(record: dict) -> list[str]:
    """The evidence an answer was shown as passages of text: its logged
    passages, else one line per record ("ID: label, period, unit: values"),
    else its bare identifiers with the retrieved values."""
    given = record.get("retrieved_contexts")
    if given:
        return [str(passage) for passage in given]
    passages = []
    described = set()
    for r in record.get("retrieved_records") or []:
        described.add(r.get("id"))
        about = ", ".join(str(r[name]) for name in ("label", "period", "unit") if r.get(name))
        values = ", ".join(str(v) for v in r.get("values") or [])
        caveats = "".join(f" ({caveat})" for caveat in r.get("caveats") or [])
        passages.append(f"{r.get('id')}{': ' + about if about else ''}: {values}{caveats}")
    bare = [i for i in record.get("retrieved_ids") or [] if i not in described]
    if bare:
        values = ", ".join(str(v) for v in record.get("retrieved_values") or [])
        passages.append(f"{', '.join(bare)}: {values}")
    return passages


def inspect_scores(record: dict) -> list[dict]:
    """The scores the imported tool's own scorers gave the answer (Inspect's
    scorers, lm-eval's per-sample metrics): each {name, value, answer,
    explanation, tool, scorer}. They are another tool's grades, shown beside
    this app's checks and never counted in them."""
    found = []
    for key, (tool, scorer) in IMPORTED_SCORES.items():
        given = record.get(key)
        if not isinstance(given, dict):
            continue
        found += [
            {
                "name": name,
                "value": score.get("value") if isinstance(score, dict) else score,
                "answer": score.get("answer") if isinstance(score, dict) else None,
                "explanation": score.get("explanation") if isinstance(score, dict) else None,
                "tool": tool,
                "scorer": scorer,
            }
            for name, score in given.items()
        ]
    return found


def extra_fields(record: dict) -> dict:
    """Fields beyond recipe 4.1's (timings, tool calls), kept verbatim."""
    return {name: value for name, value in record.items() if name not in STANDARD_FIELDS}


@dataclass(frozen=True)
class AttemptCounts:
    """What N = Q × R is made of for a scoring's tuning part."""

    questions: int
    repetitions: int
    scored: int
    failed: int
    not_run: int

    @property
    def planned(self) -> int:
        return self.questions * self.repetitions


def attempt_counts(scoring: Scoring) -> AttemptCounts:
    """Questions, R, and the attempts scored, failed (no answer) and not run,
    so that a page can show scored + failed + not run = N: as counted when
    the scoring finished, or counted now for a scoring made before that."""
    if scoring.attempt_counts:
        return AttemptCounts(**scoring.attempt_counts)
    return count_attempts(scoring)


def count_attempts(scoring: Scoring) -> AttemptCounts:
    """attempt_counts, counted from the scoring's checks in one query."""
    totals = AnswerCheck.objects.filter(scoring=scoring, sealed=False).aggregate(
        scored=Count("id", filter=Q(answer__status="ok")),
        failed=Count("id", filter=Q(answer__isnull=False) & ~Q(answer__status="ok")),
        not_run=Count("id", filter=Q(answer__isnull=True)),
    )
    questions = scoring.set_version.questions.exclude(split="sealed").count()
    return AttemptCounts(questions=questions, repetitions=scoring.run.repetitions, **totals)


def stable_rows(scoring: Scoring, *, family: str = "language") -> list[dict]:
    """The stable-resolution figures of ``all`` and the family's slices, one
    row per slice and measure, each with its clustered rate as a Rate-like
    mapping."""
    rows = []
    for slice_name, measures in (scoring.stable or {}).items():
        if slice_name != "all" and not slice_name.startswith(f"{family}="):
            continue
        for measure in MEASURES:
            figure = measures.get(measure)
            if figure is None:
                continue
            rows.append(
                {
                    "slice": slice_name,
                    "measure": measure,
                    "label": MEASURE_LABELS[measure],
                    "stable": figure["stable"],
                    "stable_rate": rate(figure["stable"]["k"], figure["stable"]["n"]),
                    "distribution": figure["distribution"],
                    "over_attempts": figure["over_attempts"],
                }
            )
    return rows


def timing_rows(scoring: Scoring) -> list[dict]:
    """One row per slice of the scoring's timing summary, with the failures'
    rates as Rates (k of all attempts), ready for a table. E2E is shown as
    the run's recorded choice on channel overhead has it (timing.e2e_shown),
    with the overhead apart and what E2E does with it in words."""
    choice = run_overhead_choice(scoring.run)
    chosen_on = None if choice["chosen_at"] is None else f"{choice['chosen_at']:%Y-%m-%d}"
    rows = []
    for slice_name, summary in (scoring.timing or {}).items():
        failures = summary["failures"]
        rows.append(
            {
                "slice": slice_name,
                "e2e": timing.e2e_shown(summary, exclude_overhead=choice["excluded"]),
                "overhead": summary.get("overhead"),
                "overhead_statement": timing.overhead_statement(
                    summary, chosen_by=choice["chosen_by"], chosen_on=chosen_on
                ),
                "platform": summary["platform_e2e"],
                "failures": failures,
                "timeout_rate": timing.failure_rate(failures, status="timeout"),
                "failure_rate": timing.failure_rate(failures),
                "tool_calls": summary["tool_calls"],
                "events": summary.get("events", {}),
            }
        )
    return rows


def question_times(scoring: Scoring) -> dict[str, list[dict]]:
    """Each question's median E2E over its attempts in the tuning part, by
    E2E source, slowest first (timing.slowest_questions), channel overhead
    left out when the run's choice says so, with its samples
    of attempts: a failed or timed-out attempt is no sample. Empty for a run
    made once (a question's median would be its one time) or without timing;
    sealed questions stay out, as from every other figure of the run page.

    Read from the chunks' timing when asked, not kept in the scoring: a
    million answers' would make the scoring as large as its run."""
    if scoring.run.repetitions < 2:
        return {}
    table, question_ids = pooled_timing_columns([scoring])
    if not table.rows:
        return {}
    summary = timing.timing_summary(table, question_ids=question_ids)
    shown = timing.e2e_shown(summary, exclude_overhead=run_overhead_choice(scoring.run)["excluded"])
    return {
        source: timing.slowest_questions(block["per_question"])
        for source, block in shown["by_source"].items()
    }


class ChunkTiming:
    """The timing of a chunk's answers in the tuning part, as each chunk
    keeps it (ScoringChunk.timing): by language, its TimingColumns and each
    row's question id, in one msgpack document. Adding a scoring up, the
    run page and a version's pooled figures read these instead of every
    answer's figures."""

    def __init__(self):
        self.by_language: dict[str, tuple[list, list]] = {}

    def add(self, language: str, question_id: str, row: tuple) -> None:
        """One answer's timing, as timing.timing_row gives it (a tuple, not
        an AnswerTiming: a chunk keeps twenty thousand)."""
        rows, question_ids = self.by_language.setdefault(language, ([], []))
        rows.append(row)
        question_ids.append(question_id)

    def to_bytes(self) -> bytes:
        return msgspec.msgpack.encode(
            {
                language: [timing.TimingColumns.from_rows(rows).to_bytes(), question_ids]
                for language, (rows, question_ids) in self.by_language.items()
            }
        )

    @staticmethod
    def read(stored: bytes) -> dict[str, tuple[timing.TimingColumns, list[str]]]:
        return {
            language: (timing.TimingColumns.from_bytes(columns), question_ids)
            for language, (columns, question_ids) in msgspec.msgpack.decode(stored).items()
        }


def timing_columns(scoring: Scoring, chunks=None) -> dict[str, tuple[timing.TimingColumns, list[str]]]:
    """Each language's timing in the scoring's tuning part as columns, with
    the question id of each row, from its chunks (``chunks``, or read)."""
    if chunks is None:
        chunks = scoring.chunks.only("first_line", "last_line", "timing")
    by_language: dict[str, tuple[timing.TimingColumns, list[str]]] = {}
    for chunk in chunks:
        kept = _checked_timing(scoring, chunk) if chunk.timing is None else ChunkTiming.read(chunk.timing)
        for language, (columns, question_ids) in kept.items():
            table, ids = by_language.setdefault(language, (timing.TimingColumns(), []))
            table.extend(columns)
            ids.extend(question_ids)
    return by_language


def pooled_timing_columns(scorings) -> tuple[timing.TimingColumns, list[str]]:
    """The tuning parts' timing of ``scorings``, every language, as one table
    with the question id of each row."""
    table, question_ids = timing.TimingColumns(), []
    for scoring in scorings:
        for columns, ids in timing_columns(scoring).values():
            table.extend(columns)
            question_ids.extend(ids)
    return table, question_ids


def _checked_timing(scoring: Scoring, chunk: ScoringChunk) -> dict[str, tuple]:
    """A chunk's timing as a chunk checked before chunks kept it left it:
    in its checks' JSON."""
    rows = (
        AnswerCheck.objects.filter(
            scoring=scoring,
            sealed=False,
            answer__run_id=scoring.run_id,
            answer__line_number__gte=chunk.first_line,
            answer__line_number__lte=chunk.last_line,
        )
        .filter(timing__isnull=False)
        .exclude(timing={})
        .values_list("answer__language", "question_id", "timing")
        .iterator(chunk_size=20000)
    )
    by_language: dict[str, tuple[list, list]] = {}
    for language, question_id, logged in rows:
        timings, question_ids = by_language.setdefault(language, ([], []))
        timings.append(tuple(map(logged.get, timing.TIMING_NAMES)))
        question_ids.append(question_id)
    return {
        language: (timing.TimingColumns.from_rows(timings), question_ids)
        for language, (timings, question_ids) in by_language.items()
    }


# Slices of the sealed part are stored under this prefix: no page, export or
# gate that reads "all" or "language=…" can pick them up by accident.
SEALED_PREFIX = "sealed:"


def scoring_is_stuck(scoring: Scoring) -> bool:
    """As run_is_stuck, for a scoring: waiting unplanned, or no chunk of it
    alive and nothing handed to the broker recently."""
    now = timezone.now()
    if scoring.status not in (Scoring.Status.QUEUED, Scoring.Status.SCORING):
        return False
    if scoring.chunks.filter(status=ScoringChunk.Status.SCORING, lease_until__gte=now).exists():
        return False
    if scoring.status == Scoring.Status.SCORING and not scoring.chunks_total:
        return scoring.lease_until is not None and scoring.lease_until < now
    recent = stale_before(now)
    # Never handed to the broker (it was down) counts from the scoring's start.
    sent = scoring.chunks.filter(queued_at__gte=recent).exists() or (
        (scoring.queued_at or scoring.created_at) >= recent
    )
    return not sent


# Slices every scoring keeps, so that the run page can show any of them.
DEFAULT_SLICE_FIELDS = ("language", "stratum", "split")


def config_key(*, options: dict, slice_fields) -> str:
    switched_on = ",".join(sorted(name for name, value in options.items() if value))
    return f"options={switched_on};slices={','.join(slice_fields)}"


def stable_tallies(
    scoring: Scoring, *, slice_fields=("language",), sealed: bool = False
) -> dict[str, QuestionTally]:
    """Each tuning question's attempts in this scoring, tallied
    (scoring.repeats); with ``sealed``, the sealed part's."""
    fields = {
        row[0]: row[1:]
        for row in Question.objects.filter(set_version_id=scoring.set_version_id).values_list(
            "question_id", *slice_fields
        )
    }
    tallies: dict[str, QuestionTally] = {}
    rows = (
        AnswerCheck.objects.filter(scoring=scoring, sealed=sealed)
        .values_list("question_id", "answer__status", *COUNT_COLUMNS)
        .iterator(chunk_size=20000)
    )
    for question_id, status, *counts in rows:
        entry = tallies.get(question_id)
        if entry is None:
            entry = tallies[question_id] = QuestionTally(fields=fields.get(question_id, ()))
        entry.add(counts, answered=status == "ok")
    return tallies


def without_questions(summary: dict) -> dict:
    """A timing summary without its row per question: each question's median
    is kept as their summary only, or the scoring would be as large as its run."""
    for source in summary["e2e"]["by_source"].values():
        source.pop("per_question", None)
    return summary


# The kinds of finding a lead may put into a new set version as one batch:
# those that say the set's expected answer, or the assistant, was wrong.
BATCH_KINDS = (Finding.Kind.NUMERIC, Finding.Kind.REFUSAL, Finding.Kind.DECLINED, Finding.Kind.CITATION)


def findings_for_set(scoring: Scoring, *, kind: str) -> list[dict]:
    """The questions of the scoring's visible findings of ``kind`` (one of
    BATCH_KINDS), once each in log order, with the expected answer the
    scored set version holds for it, for a lead to confirm: dicts of
    question_id, language, question, expected_behaviour, expected_values,
    detail (the first finding's) and findings (how many)."""
    rows: dict[str, dict] = {}
    for finding in findings_page(scoring, kind=kind):
        row = rows.get(finding.question_id)
        if row is None:
            rows[finding.question_id] = {
                "question_id": finding.question_id,
                "language": finding.language,
                "detail": finding.detail,
                "findings": 1,
            }
        else:
            row["findings"] += 1
    held = Question.objects.filter(set_version_id=scoring.set_version_id, question_id__in=list(rows))
    for question in held.only("question_id", "question", "expected_behaviour", "expected_values"):
        rows[question.question_id].update(
            question=question.question,
            expected_behaviour=question.expected_behaviour,
            expected_values=list(question.expected_values),
        )
    for row in rows.values():
        row.setdefault("question", "")
        row.setdefault("expected_behaviour", "answer")
        row.setdefault("expected_values", [])
    return list(rows.values())
