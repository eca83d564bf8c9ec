"""Evaluating answers with text metrics and a panel of judges (spec 003).

``evaluate_answers`` scores each item's answer with the deterministic text
metrics first, then with every judge. A metric whose input an item lacks (no
answer, no contexts, not exactly one reference) is NaN for that item and
costs no call. With several judges each has its column ``<metric>/<judge>``
and ``<metric>`` is their mean; Krippendorff's alpha (interval level) says
whether the judges measure the same thing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import scoring.judge.prompts as prompts
from scoring.judge.methods import METRICS, JudgeResult, LLMJudge, context_texts
from scoring.judge.reports import read_document, without_nulls, write_document
from scoring.judge.text import TEXT_METRICS
from scoring.llm import check_cache_threads, estimate_tokens
from scoring.stats.agreement import ALPHA_FLOOR, krippendorff_alpha

NAN = float("nan")
DEFAULT_METRICS = ("faithfulness", "answer_relevance")
DEFAULT_TEXT_METRICS = ("exact_match", "token_f1")
# Preference is asked of pairs of answers, in evaluate_preference.
# the rubric needs a review rubric's questions: the app asks it per answer.
ANSWER_METRICS = tuple(metric for metric in METRICS if metric not in ("preference", "rubric"))


@dataclass(frozen=True)
class Item:
    id: str
    question: str
    references: tuple[str, ...]
    contexts: tuple[str, ...] | None
    answer: str | None


def items_of(dataset: Iterable[Mapping]) -> list[Item]:
    """The dataset's items; refuses (ValueError, naming the item) one without a question or a bad field."""
    items = []
    for index, record in enumerate(dataset):
        where = f"item {index + 1}"
        question = record.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f'{where} has no "question" text')
        reference = record.get("reference")
        if reference is None:
            references: tuple[str, ...] = ()
        elif isinstance(reference, str):
            references = (reference,)
        elif isinstance(reference, list | tuple) and all(isinstance(text, str) for text in reference):
            references = tuple(reference)
        else:
            raise ValueError(f'{where}: "reference" is a string or a list of strings')
        contexts = record.get("contexts")
        answer = record.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise ValueError(f'{where}: "answer" is a string')
        items.append(
            Item(
                id=str(record.get("id", index + 1)),
                question=question,
                references=references,
                contexts=None if contexts is None else tuple(context_texts(contexts)),
                answer=answer,
            )
        )
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        repeated = sorted({id_ for id_ in ids if ids.count(id_) > 1})
        raise ValueError(f"item ids must be unique; repeated: {', '.join(repeated[:5])}")
    return items


def evidence_texts(record: dict) -> list[str]:
    """The evidence an answer was shown, as texts a judge can read: the log's
    ``retrieved_contexts`` when it has them, else one text per retrieved
    record (label, id, period, unit, values, caveats), else the retrieved ids
    and values as one text."""
    given = record.get("retrieved_contexts")
    if isinstance(given, list) and all(isinstance(text, str) for text in given):
        return given
    records = record.get("retrieved_records")
    if isinstance(records, list) and records and all(isinstance(item, dict) for item in records):
        return [_record_text(item) for item in records]
    ids = record.get("retrieved_ids") or []
    values = record.get("retrieved_values") or []
    if not ids and not values:
        return []
    return [f"Retrieved records: {', '.join(ids) or 'none named'}. Values: {_values(values) or 'none'}."]


def _values(values) -> str:
    return ", ".join(f"{value:g}" if isinstance(value, float) else str(value) for value in values or ())


def _record_text(record: dict) -> str:
    named = " ".join(
        str(part) for part in (record.get("label"), f"({record['id']})" if record.get("id") else None) if part
    )
    details = [
        f"period {record['period']}" if record.get("period") else "",
        f"unit {record['unit']}" if record.get("unit") else "",
        f"values {_values(record.get('values'))}" if record.get("values") else "",
        f"caveats: {', '.join(map(str, record['caveats']))}" if record.get("caveats") else "",
    ]
    return f"{named or 'A record'}: " + "; ".join(detail for detail in details if detail) + "."


def _judges(judges: Mapping | None, on_error: str) -> dict[str, LLMJudge]:
    built = {}
    for name, model in (judges or {}).items():
        if "/" in name:
            raise ValueError(f'a judge\'s name cannot hold "/" (it separates metric and judge): "{name}"')
        built[name] = LLMJudge(
            model.llm if isinstance(model, LLMJudge) else model, name=name, on_error=on_error
        )
    return built


def _system_answer(system: Callable, item: Item) -> tuple[str, tuple[str, ...] | None]:
    given = system(item.question)
    contexts = item.contexts
    if isinstance(given, Mapping):
        if "contexts" in given:
            contexts = tuple(context_texts(given["contexts"]))
        given = given.get("answer")
    elif not isinstance(given, str) and hasattr(given, "answer"):
        given = given.answer
    if not isinstance(given, str):
        raise TypeError(f"the system returned {type(given).__name__}, not an answer's text")
    return given, contexts


def _inputs(metric: str, item: Item, answer: str | None, contexts) -> tuple[str, ...] | None:
    """The texts ``metric`` reads for this item, or None when the item lacks one (no call is made)."""
    # A judge sees a reference only when the item has exactly one; several
    # acceptable references go to the text metrics only.
    reference = item.references[0] if len(item.references) == 1 else None
    needs = {
        "faithfulness": (answer, contexts),
        "answer_relevance": (answer,),
        "context_precision": (contexts, reference),
        "context_recall": (contexts, reference),
        "answer_correctness": (answer, reference),
        "criteria_score": (answer,),
    }[metric]
    if any(not given for given in needs):
        return None
    texts = [item.question]
    for given in needs:
        texts.extend(given if isinstance(given, tuple) else (given,))
    return tuple(texts)


def _judge_call(judge: LLMJudge, metric: str, item: Item, answer: str | None, contexts, criteria, scale):
    """The judge's result, or None when the item lacks the metric's input (no call is made)."""
    if _inputs(metric, item, answer, contexts) is None:
        return None
    reference = item.references[0] if len(item.references) == 1 else None
    question = item.question
    if metric == "faithfulness":
        return judge.faithfulness(question, answer, list(contexts))
    if metric == "answer_relevance":
        return judge.answer_relevance(question, answer)
    if metric == "context_precision":
        return judge.context_precision(question, list(contexts), reference)
    if metric == "context_recall":
        return judge.context_recall(question, list(contexts), reference)
    if metric == "answer_correctness":
        return judge.answer_correctness(question, answer, reference)
    return judge.criteria_score(question, answer, criteria, scale=scale, contexts=contexts)


def estimate_cost(dataset: Iterable[Mapping], *, metrics: Sequence[str], judges: int) -> dict[str, int]:
    """The calls and (estimated) prompt tokens that judging stored answers would cost, before any call.

    Counts only the items that have each metric's input, as evaluate_answers
    calls them; tokens are estimated from the prompts' length (scoring.llm.estimate_tokens).
    """
    items = items_of(dataset)
    calls = tokens = 0
    for item in items:
        for metric in metrics:
            texts = _inputs(metric, item, item.answer, item.contexts)
            if texts is not None:
                calls += judges
                tokens += judges * estimate_tokens(prompts.SYSTEM, prompts.TEMPLATES[metric], *texts)
    return {"calls": calls, "prompt_tokens": tokens, "items": len(items)}


def evaluate_answers(
    system: Callable | None,
    dataset: Iterable[Mapping],
    *,
    judges: Mapping | None = None,
    metrics: Sequence[str] | None = None,
    text_metrics: Sequence[str] = DEFAULT_TEXT_METRICS,
    criteria: str | None = None,
    scale: int = 5,
    on_error: str = "record",
    n_jobs: int = 1,
    keep_verdicts: bool = False,
) -> AnswerEvaluation:
    """Score every item's answer: text metrics against references, then each judge.

    ``system(question)`` gives an answer (a string, a mapping with "answer"
    and optionally the "contexts" it retrieved, or an object with .answer);
    with ``system=None`` each item's stored "answer" is scored. Results stay
    in dataset order whatever ``n_jobs``. Refuses (ValueError) an unknown
    metric, criteria_score without criteria, and (CacheError) a judge's cache
    that works in one thread only when ``n_jobs`` > 1.
    """
    metrics = tuple(DEFAULT_METRICS if metrics is None else metrics)
    unknown = [name for name in metrics if name not in ANSWER_METRICS] + [
        name for name in text_metrics if name not in TEXT_METRICS
    ]
    if unknown:
        known = ", ".join((*TEXT_METRICS, *ANSWER_METRICS))
        raise ValueError(f"unknown metric {', '.join(unknown)}; the metrics are {known}")
    if "criteria_score" in metrics and not criteria:
        raise ValueError("criteria_score needs criteria= (the rubric the judge rates against)")
    items = items_of(dataset)
    built = _judges(judges, on_error)
    if n_jobs > 1:
        for judge in built.values():
            check_cache_threads(judge.llm.cache)

    def evaluate(item: Item) -> dict:
        row: dict = {"id": item.id, "question": item.question, "answer": item.answer, "errors": {}}
        answer, contexts = item.answer, item.contexts
        if system is not None:
            try:
                answer, contexts = _system_answer(system, item)
            except Exception as error:
                if on_error == "raise":
                    raise
                answer = None
                row["errors"]["system"] = f"{type(error).__name__}: {error}"
            row["answer"] = answer
        for name in text_metrics:
            row[name] = (
                TEXT_METRICS[name](answer, item.references) if answer is not None and item.references else NAN
            )
        for metric in metrics:
            scores = []
            for judge_name, judge in built.items():
                column = f"{metric}/{judge_name}"
                result = _judge_call(judge, metric, item, answer, contexts, criteria, scale)
                row[column] = NAN if result is None else result.score
                if result is not None:
                    _note(row, column, result, keep_verdicts)
                if not math.isnan(row[column]):
                    scores.append(row[column])
            if built:
                row[metric] = sum(scores) / len(scores) if scores else NAN
        return row

    if n_jobs > 1:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            rows = list(pool.map(evaluate, items))
    else:
        rows = [evaluate(item) for item in items]

    columns = list(text_metrics)
    for metric in metrics:
        columns.extend(f"{metric}/{name}" for name in built)
        if built:
            columns.append(metric)
    agreement = (
        {metric: _panel_alpha(rows, metric, list(built)) for metric in metrics} if len(built) > 1 else {}
    )
    return AnswerEvaluation(
        rows=rows,
        columns=columns,
        judges={name: judge.identity() for name, judge in built.items()},
        usage={name: judge.usage.as_dict() for name, judge in built.items()},
        agreement=agreement,
    )


def _note(row: dict, column: str, result: JudgeResult, keep_verdicts: bool) -> None:
    if result.error:
        row["errors"][column] = result.error
        raw = result.completions[-1].text if result.completions else None
        row.setdefault("raw", {})[column] = raw
    if result.undefined:
        row.setdefault("undefined", {})[column] = result.undefined
    if keep_verdicts:
        row.setdefault("verdicts", {})[column] = result.as_dict()


def _panel_alpha(rows: list[dict], metric: str, names: list[str]) -> dict:
    data = [[_or_none(row.get(f"{metric}/{name}")) for row in rows] for name in names]
    rated = sum(1 for column in zip(*data, strict=True) if sum(value is not None for value in column) >= 2)
    try:
        alpha = krippendorff_alpha(data, level="interval")
    except (ValueError, ZeroDivisionError) as error:
        return {"alpha": None, "items": rated, "note": f"not defined: {error}"}
    if alpha is None or math.isnan(alpha):
        return {"alpha": None, "items": rated, "note": "not defined: the judges' scores do not vary"}
    return {"alpha": alpha, "items": rated, "note": ""}


def _or_none(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _mean(values: Iterable) -> float:
    defined = [value for value in values if _or_none(value) is not None]
    return sum(defined) / len(defined) if defined else NAN


@dataclass
class MetricDelta:
    metric: str
    items: int
    this: float
    other: float
    delta: float
    p_value: float
    # "measured": computed on the items both reports scored; a judged metric
    # compared across different judges says so instead.
    basis: str = "measured"


@dataclass
class Comparison:
    metrics: list[MetricDelta]
    warnings: list[str] = field(default_factory=list)


@dataclass
class AnswerEvaluation:
    """A report: one row per item, the columns scored, judges' identities, usage and agreement."""

    rows: list[dict]
    columns: list[str]
    judges: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    agreement: dict = field(default_factory=dict)

    @property
    def metrics(self) -> dict[str, float]:
        """Each column's mean over the items where it is defined (NaN when none is)."""
        return {column: _mean(row.get(column) for row in self.rows) for column in self.columns}

    @property
    def coverage(self) -> dict[str, int]:
        """How many items have a defined value in each column."""
        return {
            column: sum(_or_none(row.get(column)) is not None for row in self.rows) for column in self.columns
        }

    @property
    def errors(self) -> dict[str, int]:
        """Failures per column (and "system"), whether or not the verdicts are kept."""
        counted: dict[str, int] = {}
        for row in self.rows:
            for column in row.get("errors", {}):
                counted[column] = counted.get(column, 0) + 1
        return counted

    @property
    def warnings(self) -> list[str]:
        return [
            f"{metric}: the judges' Krippendorff alpha is {figure['alpha']:.3f}, below {ALPHA_FLOOR}; "
            "they do not measure the same thing, so their mean should not be trusted"
            for metric, figure in self.agreement.items()
            if figure.get("alpha") is not None and figure["alpha"] < ALPHA_FLOOR
        ]

    def summary(self) -> dict:
        return {
            "metrics": {name: _or_none(value) for name, value in self.metrics.items()},
            "coverage": self.coverage,
            "errors": self.errors,
            "agreement": self.agreement,
            "warnings": self.warnings,
            "judges": self.judges,
            "usage": self.usage,
            "columns": self.columns,
            "items": len(self.rows),
        }

    def write(self, path: str | Path) -> None:
        """Write the report as JSON Lines (a summary line, then one row per item) for .jsonl,
        YAML for .yaml and .yml, TOML for .toml (nulls left out), JSON otherwise.

        Refuses (ValueError) a TOML report with a null inside a list (scoring.judge.reports).
        """
        path = Path(path)
        rows = [_json_row(row) for row in self.rows]
        if path.suffix == ".jsonl":
            lines = [json.dumps({"report": self.summary()}), *(json.dumps(row) for row in rows)]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        else:
            write_document(path, dict(self.summary(), rows=rows))

    @classmethod
    def read(cls, path: str | Path) -> AnswerEvaluation:
        """A report written by ``write``, read by the path's suffix as it was written.

        Refuses (ValueError) a file that is not one.
        """
        path = Path(path)
        try:
            if path.suffix == ".jsonl":
                text = path.read_text(encoding="utf-8")
                lines = [json.loads(line) for line in text.splitlines() if line.strip()]
                summary, rows = lines[0]["report"], lines[1:]
            else:
                summary = read_document(path)
                rows = summary["rows"]
            columns = summary["columns"]
            agreement = summary.get("agreement", {})
            # A TOML report leaves nulls out: an absent score is an undefined
            # one, and an absent alpha one that is not defined.
            rows = [{**row, **{column: NAN for column in columns if row.get(column) is None}} for row in rows]
            agreement = {metric: {"alpha": None, **figure} for metric, figure in agreement.items()}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
            raise ValueError(f"{path} is not an answer evaluation report ({error})") from None
        return cls(
            rows=rows,
            columns=columns,
            judges=summary.get("judges", {}),
            usage=summary.get("usage", {}),
            agreement=agreement,
        )

    def compare(self, other: AnswerEvaluation, *, resamples: int = 9999, seed: int = 0) -> Comparison:
        """Per-metric deltas (other minus this) on the items both scored, with a paired sign-flip test.

        The p-value is the two-sided permutation test of the mean paired
        difference (scipy.stats.permutation_test, signs flipped at random).
        """
        from scipy.stats import permutation_test

        theirs = {row["id"]: row for row in other.rows}
        warnings = []
        # A TOML report holds no null, so an absent key and a null are the same identity.
        same_judges = without_nulls(self.judges) == without_nulls(other.judges)
        if not same_judges:
            warnings.append("the reports were scored by different judges; compare judged metrics with care")
        deltas = []
        for column in self.columns:
            if column not in other.columns:
                continue
            pairs = [
                (row[column], theirs[row["id"]][column])
                for row in self.rows
                if row["id"] in theirs
                and _or_none(row.get(column)) is not None
                and _or_none(theirs[row["id"]].get(column)) is not None
            ]
            if not pairs:
                continue
            mine = np.array([pair[0] for pair in pairs], dtype=float)
            yours = np.array([pair[1] for pair in pairs], dtype=float)
            if np.array_equal(mine, yours):
                p_value = 1.0
            else:
                test = permutation_test(
                    (yours, mine),
                    lambda x, y: np.mean(x - y),
                    permutation_type="samples",
                    n_resamples=resamples,
                    alternative="two-sided",
                    random_state=seed,
                )
                p_value = float(test.pvalue)
            judged = "/" in column or column in METRICS
            basis = "measured" if not judged or same_judges else "judged by different judges"
            deltas.append(
                MetricDelta(
                    metric=column,
                    items=len(pairs),
                    this=float(mine.mean()),
                    other=float(yours.mean()),
                    delta=float(yours.mean() - mine.mean()),
                    p_value=p_value,
                    basis=basis,
                )
            )
        return Comparison(metrics=deltas, warnings=warnings)


def _json_row(row: dict) -> dict:
    return {key: _or_none(value) if isinstance(value, float) else value for key, value in row.items()}
