"""Inspect AI eval logs for the tests, the benchmark and the README examples,
made with Inspect's own classes and written by Inspect's own writer.

``inspect_sample`` builds one sample as an Inspect run records it;
``statistics_samples`` a run of realistic statistics questions with numeric
answers and their evidence under the metadata key "contexts";
``write_inspect_log`` writes either as a log, in one of the three layouts
Inspect produces:

- ``eval``: a finished .eval zip (header.json, summaries.json, samples/);
- ``journal``: a .eval zip whose run was interrupted: only the journal
  (_journal/start.json, _journal/summaries/N.json) and the samples flushed
  so far, no header.json;
- ``json``: a single JSON document.

Run as a script, it writes the README examples:

    .venv/bin/python -m tests.inspect_logs
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

MODEL = "openai/gpt-4o"
TASK = "inspect_evals/regional_statistics"
CREATED = datetime.fromisoformat("2025-03-01T09:00:00+00:00")
CONTEXTS_KEY = "contexts"
SCORER = "match"
LAYOUTS = ("eval", "journal", "json")

# (indicator, series id, unit as written after the value, base value)
_INDICATORS = (
    ("unemployment rate", "LBR_UNEMP_PCT", "%", 5.2),
    ("consumer price inflation", "CPI_INFL_PCT", "%", 3.4),
    ("under-five mortality rate", "HLTH_U5MR", " per 1,000 live births", 41.0),
    ("prevalence of undernourishment", "FS_UNDERNOURISH_PCT", "%", 7.6),
    ("net enrolment rate in primary education", "EDU_NER_PRIM_PCT", "%", 88.5),
    ("share of households with internet access", "ICT_HH_INET_PCT", "%", 62.3),
    ("urban population share", "POP_URBAN_PCT", "%", 54.8),
)
_REGIONS = (
    "the Northern region",
    "the Coastal region",
    "the Eastern region",
    "the capital district",
    "the country",
)
_YEARS = (2019, 2020, 2021, 2022, 2023, 2024)

# Where in each cycle of 20 samples a run goes wrong: a stated number the
# evidence does not hold, an error, and a token limit.
_CYCLE = 20
WRONG_AT, ERROR_AT, LIMIT_AT = 3, 4, 5
TOKEN_LIMIT = 1000


def _moment(offset_s: float) -> str:
    return (CREATED + timedelta(seconds=offset_s)).isoformat()


def inspect_sample(
    id: int | str,
    *,
    question: str,
    target: str | list[str],
    answer: str,
    epoch: int = 1,
    choices: list[str] | None = None,
    contexts: list[str] | None = None,
    metadata: dict | None = None,
    scores: dict | None = None,
    error: str | None = None,
    limit: tuple[str, float] | None = None,
    started_s: float = 0.0,
    total_time: float | None = 1.5,
    chat: bool = False,
    attach: bool = False,
):
    """One EvalSample as an Inspect run records it.

    ``contexts`` go to metadata["contexts"] beside ``metadata``. ``scores``
    maps a scorer name to (value, answer, explanation); by default one
    "match" score. ``choices`` are a multiple-choice question's options, as
    Inspect's multiple_choice datasets give them (the target then a letter
    or letters). ``error`` is the message of the error that halted the
    sample, ``limit`` the (type, value) of the limit that did. ``chat`` gives
    the input as chat messages (a system message, then the user's question in
    a content part); ``attach`` does too, with the question's text moved
    into the sample's attachments and referred to as attachment://<hash>, as
    Inspect condenses content (write such a sample with condense=False: the
    writer would put the text back)."""
    from inspect_ai.log import EvalError, EvalSample, EvalSampleLimit
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentText, ModelOutput
    from inspect_ai.scorer import Score

    attachments = {}
    text = question
    if attach:
        key = hashlib.md5(question.encode()).hexdigest()
        attachments[key] = question
        text = f"attachment://{key}"
    sample_input = text
    if chat or attach:
        sample_input = [
            ChatMessageSystem(content="Answer from the statistics you are given and cite the series."),
            ChatMessageUser(content=[ContentText(text=text)]),
        ]
    if scores is None and error is None:
        scores = {SCORER: ("C", answer, None)}
    sample_metadata = dict(metadata or {})
    if contexts is not None:
        sample_metadata[CONTEXTS_KEY] = contexts
    completed_s = started_s + (total_time or 0.0)
    return EvalSample(
        id=id,
        epoch=epoch,
        input=sample_input,
        choices=choices,
        target=target,
        output=ModelOutput.from_content(MODEL, answer) if answer else ModelOutput(model=MODEL),
        scores={
            name: Score(value=value, answer=given, explanation=explanation)
            for name, (value, given, explanation) in (scores or {}).items()
        }
        or None,
        metadata=sample_metadata,
        started_at=_moment(started_s),
        completed_at=_moment(completed_s),
        total_time=total_time,
        working_time=total_time,
        error=EvalError(message=error, traceback=f"Traceback: {error}", traceback_ansi=error)
        if error
        else None,
        limit=EvalSampleLimit(type=limit[0], limit=limit[1]) if limit else None,
        attachments=attachments,
    )


def statistics_question(index: int) -> dict:
    """The question, expected value, evidence and the answer the run gave for
    sample ``index`` (from 0) of ``statistics_samples``, as plain data: what
    a test expects the import to make of it."""
    name, series, unit, base = _INDICATORS[index % len(_INDICATORS)]
    region = _REGIONS[(index // len(_INDICATORS)) % len(_REGIONS)]
    year = _YEARS[index % len(_YEARS)]
    value = round(base + ((index * 37) % 90) / 10, 1)
    previous = round(value + (0.4 if index % 2 else -0.3), 1)
    contexts = [
        f"{series}: {name}, {region}, {year}: {value}{unit}.",
        f"{series}: {name}, {region}, {year - 1}: {previous}{unit}.",
    ]
    position = index % _CYCLE
    stated = round(value + 1.3, 1) if position == WRONG_AT else value
    answer = (
        f"The {name} in {region} was {stated}{unit} in {year}, "
        f"against {previous}{unit} in {year - 1} ({series})."
    )
    status = "error" if position == ERROR_AT else "limit" if position == LIMIT_AT else "ok"
    if status == "error":
        answer = ""
    elif status == "limit":
        answer = f"The {name} in {region}"
    return {
        "question": f"What was the {name} in {region} in {year}?",
        "target": f"{value}",
        "value": value,
        "previous": previous,
        "contexts": contexts,
        "answer": answer,
        "status": status,
        "right": status == "ok" and position != WRONG_AT,
        "series": series,
    }


def statistics_samples(count: int, *, epochs: int = 1) -> Iterator:
    """``count`` statistics questions, each asked ``epochs`` times, as
    EvalSamples with ids 1 to ``count``: mostly right answers, and in every
    20 one stated number the evidence does not hold, one error and one
    token limit (see statistics_question)."""
    for epoch in range(1, epochs + 1):
        for index in range(count):
            made = statistics_question(index)
            correct = made["right"]
            yield inspect_sample(
                index + 1,
                epoch=epoch,
                question=made["question"],
                target=made["target"],
                answer=made["answer"],
                contexts=made["contexts"],
                metadata={"series": made["series"]},
                scores=None
                if made["status"] == "error"
                else {SCORER: ("C" if correct else "I", made["answer"], None)},
                error="RateLimitError: Error code: 429 - rate limit exceeded"
                if made["status"] == "error"
                else None,
                limit=("token", TOKEN_LIMIT) if made["status"] == "limit" else None,
                started_s=index * 2.0 + (epoch - 1) * count * 2.0,
                total_time=round(1.2 + (index % 7) * 0.35, 2),
            )


def write_inspect_log(
    path: Path,
    *,
    samples: int | Iterable = 4,
    epochs: int = 1,
    layout: str = "eval",
    model: str = MODEL,
    task: str = TASK,
    task_version: int | str = 0,
    status: str = "success",
    sample_ids: list | None = None,
    condense: bool = True,
    logged_samples: int | None = None,
    time_limit: int | None = None,
) -> Path:
    """Write an Inspect eval log to ``path`` with Inspect's own writer and
    return ``path``.

    ``samples`` is a number of statistics_samples (each asked ``epochs``
    times) or the EvalSamples themselves. ``layout`` is one of LAYOUTS;
    "journal" leaves the log as an interrupted run does (status "started").
    ``sample_ids`` are the dataset's ids in the header (by default those of
    the samples), ``time_limit`` the plan's limit of seconds a sample. A
    finished log has results counting its planned samples, and
    ``logged_samples`` when a drained run logged fewer. With ``condense``
    false, a .eval log's samples are written as given, not condensed first
    (the .json writer never condenses)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalResults, EvalSpec, write_eval_log

    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if isinstance(samples, int):
        given = statistics_samples(samples, epochs=epochs)
        sample_ids = list(range(1, samples + 1)) if sample_ids is None else sample_ids
    else:
        given = list(samples)
        sample_ids = list(dict.fromkeys(sample.id for sample in given)) if sample_ids is None else sample_ids
    spec = EvalSpec(
        created=CREATED.isoformat(),
        task=task,
        task_version=task_version,
        task_id="task-1",
        run_id="run-1",
        eval_id="eval-1",
        dataset=EvalDataset(name=task.rsplit("/", 1)[-1], samples=len(sample_ids), sample_ids=sample_ids),
        model=model,
        config=EvalConfig(epochs=epochs, time_limit=time_limit),
    )
    planned = len(sample_ids) * epochs
    results = EvalResults(total_samples=planned, completed_samples=planned, logged_samples=logged_samples)
    path = Path(path)
    if layout == "json" or (
        layout == "eval" and condense and isinstance(given, list) and len(given) <= _WRITE_ONCE_MAX
    ):
        write_eval_log(EvalLog(eval=spec, status=status, results=results, samples=list(given)), path)
    else:
        finish = results if layout == "eval" else None
        asyncio.run(_record(path, spec, given, finish=finish, status=status, condense=condense))
    return path


# write_eval_log hands every sample to the recorder before it flushes once,
# and the recorder's buffer checks each new sample against all it holds: a
# large log is written through the recorder in flushes instead.
_WRITE_ONCE_MAX = 1000
_FLUSH_EVERY = 500


async def _record(path: Path, spec, samples: Iterable, *, finish, status: str, condense: bool) -> None:
    """Write ``samples`` with the .eval recorder that write_eval_log uses,
    flushing every _FLUSH_EVERY, and finish the log with the results
    ``finish``; without them, stop as a run that was interrupted does,
    leaving only the journal and the samples flushed."""
    from inspect_ai.log import EvalPlan, EvalStats
    from inspect_ai.log._condense import condense_sample
    from inspect_ai.log._recorders.eval import EvalRecorder

    recorder = EvalRecorder(str(path.parent))
    await recorder.log_init(spec, str(path), clean=True)
    await recorder.log_start(spec, EvalPlan())
    for count, sample in enumerate(samples, start=1):
        await recorder.log_sample(spec, condense_sample(sample) if condense else sample)
        if count % _FLUSH_EVERY == 0:
            await recorder.flush(spec)
    if finish is not None:
        await recorder.log_finish(spec, status, EvalStats(), finish, None)
    else:
        await recorder.flush(spec)
        await recorder.log_discard(spec, keep_destination=True)


EXAMPLES = Path(__file__).resolve().parents[1] / "reviewapp" / "demo" / "imports"


def write_examples(directory: Path = EXAMPLES) -> list[Path]:
    """The README's example logs: six statistics questions (three right
    answers, a number the evidence does not hold, an error and a token
    limit), as .eval and as .json."""
    directory.mkdir(parents=True, exist_ok=True)
    return [
        write_inspect_log(directory / f"inspect_example.{layout}", samples=6, layout=layout)
        for layout in ("eval", "json")
    ]


if __name__ == "__main__":
    for written in write_examples():
        print(written)
