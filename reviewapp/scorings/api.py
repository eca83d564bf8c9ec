"""The API's scorings: a scoring's measures as counts with their intervals, and
`POST /api/check`, the number check at the moment an answer is shown."""

from __future__ import annotations

import contextlib
import gc
from typing import Literal

import orjson
from django.http import HttpResponse
from ninja import Field, Router, Schema, Status
from pydantic import ConfigDict, TypeAdapter

from reviewapp.accounts.auth import CHECK_TOKENS, TokenAuth
from reviewapp.core.api import UPLOAD_REFUSALS, _invalid
from scoring.check import MAX_ANSWER_BYTES, CheckInputError, check_numbers

router = Router()


class MeasureOut(Schema):
    k: int
    n: int
    rate: float
    low: float = Field(description="the 95 % interval's lower end, on the effective n when units cluster")
    high: float
    effective_n: float | None = Field(
        default=None,
        description="what the n units are worth as independent draws when they cluster (a question's "
        "attempts, an answer's numbers or citations), below n; null when they are independent",
    )
    clusters: int | None = Field(
        default=None, description="how many clusters (questions or answers) hold them"
    )


class ScoringOut(Schema):
    id: int
    set_version: str
    status: str
    progress: int
    error: str
    unmatched_answers: int
    not_run: int
    stable: dict = Field(
        default={},
        description="with repeated attempts (R >= 2), per slice and measure: the stable count (questions "
        "passing every attempt), the passed-in-r-of-R distribution and the rate over attempts with a "
        "cluster-robust interval; empty for single runs",
    )
    timing: dict = Field(
        default={},
        description="spec 004 timing per slice: end-to-end time (n, mean, P50, nearest-rank P90), platform "
        "E2E as a proxy, named events, failures with their waiting time, tool calls by unique id; with "
        "channel overhead logged, also e2e_without_overhead and the overhead by kind",
    )
    e2e: dict = Field(
        default={},
        description="per slice, the end-to-end time as shown: without channel overhead when the run's "
        "recorded choice excludes it, else as received",
    )
    options: dict[str, bool]
    slice_fields: list[str]
    scores: dict[str, dict[str, MeasureOut]]
    not_applicable: dict[str, str] = Field(
        default={},
        description="each measure that applies to no question or answer of the scoring, with why "
        "(numeric accuracy where no question has an expected number): read as n/a, not 0",
    )


CHECK_MAX_ANSWERS = 1000
# A batch's body, at most: 1,000 answers of 16 KB, about two seconds of work.
# Longer answers (up to MAX_ANSWER_BYTES each) go in smaller batches.
CHECK_MAX_BODY_BYTES = 16 * 1024 * 1024
_CHECK_FIELDS = ("answer", "language", "retrieved_values", "expected_values", "options")
_CHECK_REQUIRED = ("answer", "language", "retrieved_values")
_CHECK_OPTIONS = ("rounding", "scale_words")


class CheckOptionsIn(Schema):
    model_config = ConfigDict(extra="forbid")

    rounding: bool = Field(
        default=False, description="7.6 is also supported by 7.62: a value rounded to the figure's precision"
    )
    scale_words: bool = Field(default=False, description='"1.2 million" also reads as 1,200,000')


class CheckAnswerIn(Schema):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field(description="the answer's text, at most 100 KB (102,400 bytes) in UTF-8")
    language: str = Field(
        description='its language ("en", "fr"…; may be empty): where "." groups thousands ("1.250" in '
        "French, Spanish, German…)"
    )
    retrieved_values: list[float] = Field(description="the values of the records retrieved for the answer")
    expected_values: list[float] = Field(
        default=[], description="the question's expected values, when a question set gives them"
    )
    options: CheckOptionsIn = Field(
        default_factory=CheckOptionsIn, description="matching rules, off by default"
    )


class CheckBatchIn(Schema):
    model_config = ConfigDict(extra="forbid")

    answers: list[CheckAnswerIn] = Field(
        min_length=1, max_length=CHECK_MAX_ANSWERS, description="1 to 1,000 answers, checked in order"
    )


class CheckedNumberOut(Schema):
    text: str = Field(description="the number as written")
    start: int = Field(description="where it starts in the answer, in characters (Unicode code points)")
    end: int = Field(description="where it ends: answer[start:end] is the text")
    readings: list[float | None] = Field(
        description='every value it can mean ("1,234": 1234 and 1.234); null for one too large for a float'
    )
    year: bool = Field(description="a year (1900 to 2100, four digits): read, never counted")
    ordinal: bool = Field(
        default=False, description='an ordinal ("21st", "1º"): read, never counted as a stated figure'
    )
    counted: bool
    supported: bool | None = Field(description="null for a year")
    matched: float | None = Field(description="the retrieved or expected value that supports it")
    matched_in: Literal["retrieved", "expected"] | None


class CheckOut(Schema):
    verdict: Literal["supported", "unsupported", "no numbers"] = Field(
        description="unsupported when any counted number is; no numbers when none is counted"
    )
    numbers_counted: int = Field(description="n: the numbers stated, every occurrence, years left out")
    numbers_unsupported: int = Field(description="k: those no retrieved or expected value supports")
    numbers: list[CheckedNumberOut] = Field(description="every number read, years included, in order")


class CheckBatchOut(Schema):
    results: list[CheckOut] = Field(description="one per answer, in the order sent")
    answers_unsupported: int = Field(description="answers whose verdict is unsupported")


# Spec 000's running example, a03: 35 is unsupported, 2020 a year.
_CHECK_EXAMPLE = {
    "answer": "The under-five mortality rate was 35 per 1,000 live births in 2020 (HLTH_U5_MORT).",
    "language": "en",
    "retrieved_values": [41.0, 44.0],
}


def _inline_schema(adapter: TypeAdapter) -> dict:
    """The JSON schema with its definitions written in place, for a request
    body the view reads itself (ninja adds only what it parses to the
    schema's components)."""
    schema = adapter.json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)


def _check_field(prefix: str, field: str, message: str):
    return _invalid(prefix + field, f"{prefix}{field} {message}")


def _check_one(item, prefix: str):
    """One answer's result as a dict, or a 422 naming the field (under ``prefix``)."""
    if not isinstance(item, dict):
        return _invalid(prefix.rstrip("."), f"{prefix.rstrip('.')} must be an object")
    for name in item:
        if name not in _CHECK_FIELDS:
            return _check_field(prefix, name, f"is not a field: an answer has {', '.join(_CHECK_FIELDS)}")
    for name in _CHECK_REQUIRED:
        if name not in item:
            return _check_field(prefix, name, "is required")
    options = item.get("options", {})
    if not isinstance(options, dict):
        return _check_field(prefix, "options", "must be an object")
    for name in options:
        if name not in _CHECK_OPTIONS:
            return _check_field(
                prefix, f"options.{name}", f"is not an option: the options are {', '.join(_CHECK_OPTIONS)}"
            )
    try:
        result = check_numbers(
            item["answer"],
            retrieved_values=item["retrieved_values"],
            language=item["language"],
            expected_values=item.get("expected_values", ()),
            rounding=options.get("rounding", False),
            scale_words=options.get("scale_words", False),
            max_answer_bytes=MAX_ANSWER_BYTES,
        )
    except CheckInputError as refused:
        field = f"options.{refused.field}" if refused.field in _CHECK_OPTIONS else refused.field
        return _check_field(prefix, field, str(refused).removeprefix(refused.field + " "))
    return result.as_dict()


def _json(body: dict) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), content_type="application/json; charset=utf-8")


@router.post(
    "/check",
    response={200: CheckOut | CheckBatchOut, **UPLOAD_REFUSALS},
    summary="Check the numbers of answers before they are shown",
    auth=TokenAuth("check", cache=CHECK_TOKENS),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": _inline_schema(TypeAdapter(CheckAnswerIn | CheckBatchIn)),
                    "examples": {
                        "one answer": {"value": _CHECK_EXAMPLE},
                        "a batch": {
                            "value": {
                                "answers": [
                                    _CHECK_EXAMPLE,
                                    {
                                        "answer": "Le taux de chômage était de 7,3 % (LAB_UNEMP_RATE_Q).",
                                        "language": "fr",
                                        "retrieved_values": [7.3, 7.4],
                                        "options": {"rounding": True},
                                    },
                                ]
                            }
                        },
                    },
                }
            },
        }
    },
)
def check_answers(request):
    """Spec 000's unsupported-numbers test on answers about to be shown: each
    number of the answer is read (dates, "per 1,000" denominators and record
    identifiers are not numbers; years are read but not counted) and is
    supported when one of the retrieved values (or, if given, the expected
    values) matches it — the scorer's own test, so the counts equal the
    run's. Withhold or flag what is unsupported; `start` and `end` place each
    number in the text. Nothing is stored.

    Send one answer, or `{"answers": [...]}` with 1 to 1,000 of them. 422
    names the field (`answers[3].retrieved_values[2]`): a value that is not
    a number (true, false, strings and null are not), an answer over 100 KB,
    a missing or unknown field, an empty batch or one of over 1,000 answers.
    400 for a body that is not JSON; 413 for a body over 16 MB."""
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    if size > CHECK_MAX_BODY_BYTES:
        return Status(
            413,
            {
                "detail": "the request was refused",
                "errors": [
                    f"the body is larger than {CHECK_MAX_BODY_BYTES:,} bytes: send fewer answers per request"
                ],
            },
        )
    # read(), not .body: Django keeps bodies over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) out of .body.
    raw = request.read()
    with _collection_paused():
        return _check_body(raw)


@contextlib.contextmanager
def _collection_paused():
    """Keep Python's cyclic garbage collector out of one check.

    A batch makes and drops thousands of dicts and lists (none in a cycle:
    reference counting frees them). Collections during the batch move those
    still in use into the old generation, and every few batches that sets
    off a full collection of the whole process, Django's objects included:
    80 ms added to one batch in five (bench/README.md). The pause is the
    process's: in a threaded worker other requests go without collection for
    the milliseconds of a check too, which costs them nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _check_body(raw: bytes):
    """The response to a check's body: the results, or the refusal naming the field."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return Status(400, {"detail": "the body is not JSON", "errors": [str(error)]})
    if not isinstance(body, dict):
        message = 'the body must be an object: one answer, or {"answers": [...]}'
        return Status(422, {"detail": [{"type": "value_error", "loc": ["body", "payload"], "msg": message}]})
    if "answers" not in body:
        result = _check_one(body, "")
        return result if isinstance(result, Status) else _json(result)

    for name in body:
        if name != "answers":
            return _invalid(name, f'{name} is not a field: a batch is {{"answers": [...]}} alone')
    answers = body["answers"]
    if not isinstance(answers, list):
        return _invalid("answers", "answers must be a list of answers")
    if not answers:
        return _invalid("answers", "answers is empty: send 1 to 1,000 answers")
    if len(answers) > CHECK_MAX_ANSWERS:
        return _invalid(
            "answers",
            f"answers holds {len(answers):,} answers: send at most {CHECK_MAX_ANSWERS:,} per request",
        )
    results = []
    unsupported = 0
    for position, item in enumerate(answers):
        result = _check_one(item, f"answers[{position}].")
        if isinstance(result, Status):
            return result
        unsupported += result["verdict"] == "unsupported"
        results.append(orjson.dumps(result))  # written out at once, its dicts freed
    body = b'{"results":[%b],"answers_unsupported":%d}' % (b",".join(results), unsupported)
    return HttpResponse(body, content_type="application/json; charset=utf-8")
