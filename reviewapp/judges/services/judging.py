"""Model graders in the app: judge versions, and grading a run or a sample with them.

A judge run is estimated first (calls and prompt tokens, before anything is
sent) and starts only when someone confirms that cost. It is cut into chunks
that any worker takes under a lease (reviewapp/services/work.py); a verdict
is stored once per (judge run, judge version, answer, metric), so a chunk
taken up again after its worker died asks only what is not stored yet, and
what it asked before comes from the response cache in the database.
Failures (an endpoint down, a key unset, a verdict that breaks the rules)
are stored as verdicts with their error: counted and listed, never dropped.

Model grades are never human grades: they live in ModelVerdict, apart from
judgements, and only leads and managers see them.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import (
    close_old_connections,
    connection,
    connections,
    transaction,
)
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from reviewapp import tasks
from reviewapp.core import work
from reviewapp.core.errors import ApplicationError
from reviewapp.judges.services.judge_versions import DatabaseCache, shared_llm_for
from reviewapp.models import (
    Answer,
    JudgeChunk,
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
    Question,
    Run,
    Sample,
)
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_draw
from scoring.judge import JudgeResult, LLMJudge, RubricQuestion
from scoring.judge import prompts as judge_prompts
from scoring.judge.evaluate import evidence_texts
from scoring.llm import LLMError, estimate_tokens

logger = logging.getLogger(__name__)


# -- what a judge reads ----------------------------------------------------


def _items(answers, set_version_id: int) -> list[dict]:
    """Each answer as a judge reads it: question text, answer, evidence, reference."""
    answers = list(answers)
    questions = {
        row["question_id"]: row
        for row in Question.objects.filter(
            set_version_id=set_version_id, question_id__in={answer.question_id for answer in answers}
        ).values("question_id", "question", "reference")
    }
    items = []
    for answer in answers:
        record = answer.record
        question = questions.get(answer.question_id, {})
        items.append(
            {
                "answer_id": answer.id,
                "question": question.get("question")
                or f"(question {answer.question_id}: no text in the set)",
                "reference": question.get("reference") or None,
                "answer": record.get("answer") or "",
                "contexts": evidence_texts(record),
            }
        )
    return items


def _rubric_questions(version: JudgeVersion) -> list[RubricQuestion]:
    if version.rubric_version_id is None:
        return []
    return [
        RubricQuestion(question.key, question.text, question.allows_na, question.na_rule)
        for question in version.rubric_version.questions.all()
    ]


def _needs(metric: str, item: dict) -> bool:
    """Whether ``item`` has the input ``metric`` reads (no call is made otherwise)."""
    has_reference = item["reference"] is not None
    if metric == "preference":
        return item.get("other_answer") is not None
    return {
        "faithfulness": bool(item["contexts"]),
        "context_precision": bool(item["contexts"]) and has_reference,
        "context_recall": bool(item["contexts"]) and has_reference,
        "answer_correctness": has_reference,
    }.get(metric, True)


def _ask(judge: LLMJudge, version: JudgeVersion, metric: str, item: dict, rubric: list) -> JudgeResult:
    question, answer, contexts, reference = (
        item["question"],
        item["answer"],
        item["contexts"],
        item["reference"],
    )
    if metric == "rubric":
        guidance = version.rubric_version.guidance if version.rubric_version_id else ""
        return judge.rubric(question, answer, contexts, rubric, guidance=guidance)
    if metric == "preference":
        return judge.preference(
            question, answer, item["other_answer"], reference=reference, contexts=contexts
        )
    if metric == "faithfulness":
        return judge.faithfulness(question, answer, contexts)
    if metric == "answer_relevance":
        return judge.answer_relevance(question, answer)
    if metric == "context_precision":
        return judge.context_precision(question, contexts, reference)
    if metric == "context_recall":
        return judge.context_recall(question, contexts, reference)
    if metric == "answer_correctness":
        return judge.answer_correctness(question, answer, reference)
    return judge.criteria_score(
        question, answer, "The answer is correct, complete and supported by the evidence."
    )


def _gradable(judge_run: JudgeRun):
    """The answers a judge run grades: a run's answered attempts, or a
    sample's answers; head to head, only those the other run also answered."""
    if judge_run.sample_id:
        answers = Answer.objects.filter(sample_items__sample_id=judge_run.sample_id)
    else:
        answers = Answer.objects.filter(run_id=judge_run.run_id)
    answers = answers.filter(status=Answer.Status.OK)
    if judge_run.other_run_id:
        answers = answers.filter(
            Exists(
                Answer.objects.filter(
                    run_id=judge_run.other_run_id,
                    question_id=OuterRef("question_id"),
                    attempt=OuterRef("attempt"),
                    status=Answer.Status.OK,
                )
            )
        )
    return answers.order_by("id")


def _other_answers(judge_run: JudgeRun, answers: list[Answer]) -> dict[int, Answer]:
    """Head to head: each answer's counterpart in the other run (same question and attempt)."""
    keys = {(answer.question_id, answer.attempt): answer.id for answer in answers}
    others = Answer.objects.filter(
        run_id=judge_run.other_run_id,
        status=Answer.Status.OK,
        question_id__in={question_id for question_id, _ in keys},
    )
    return {
        keys[(other.question_id, other.attempt)]: other
        for other in others
        if (other.question_id, other.attempt) in keys
    }


def _set_version_id(judge_run: JudgeRun) -> int:
    if judge_run.run_id:
        return judge_run.run.set_version_id
    sample = judge_run.sample
    return sample.run.set_version_id if sample.run_id else sample.items.first().answer.run.set_version_id


# -- judge runs ------------------------------------------------------------


def judge_run_estimate(
    *,
    judge_versions: list[JudgeVersion],
    run: Run | None = None,
    sample: Sample | None = None,
    other_run: Run | None = None,
    regrade_share: float = 0.10,
    created_by=None,
) -> JudgeRun:
    """A judge run waiting for its cost to be confirmed: the calls and the
    estimated prompt tokens of grading every answer with every judge version.
    With ``other_run`` it is head to head instead: each judge's preference
    between the two runs' answers to the same question and attempt, asked in
    both orders. Refuses a run that is not stored, no judge, both or neither
    of run and sample, and a head to head across set versions."""
    if (run is None) == (sample is None):
        raise ApplicationError("grade a run or a sample, one of them")
    if other_run is not None:
        if run is None or other_run.id == run.id:
            raise ApplicationError("head to head weighs one run against another run")
        if other_run.status != Run.Status.STORED:
            raise ApplicationError("the other run's answers are not stored yet")
        if other_run.set_version_id != run.set_version_id:
            raise ApplicationError("head to head needs two runs on the same set version")
    if not judge_versions:
        raise ApplicationError("choose at least one judge")
    if run is not None and run.status != Run.Status.STORED:
        raise ApplicationError("the run's answers are not stored yet")
    if not 0 < regrade_share <= 1:
        raise ApplicationError("the human regrade share is above 0 and at most 1")
    judge_run = JudgeRun(
        run=run, sample=sample, other_run=other_run, regrade_share=regrade_share, created_by=created_by
    )
    answers = _gradable(judge_run)
    if not answers.exists():
        raise ApplicationError(
            "the two runs answered no question in common" if other_run else "there is no answer to grade"
        )
    calls = tokens = 0
    set_version_id = run.set_version_id if run is not None else _set_version_id(judge_run)
    ids = list(answers.values_list("id", flat=True))
    for start in range(0, len(ids), 1000):
        for item in _items(Answer.objects.filter(id__in=ids[start : start + 1000]), set_version_id):
            texts = (item["question"], item["answer"], *item["contexts"], item["reference"])
            for version in judge_versions:
                if other_run is not None:
                    # Asked in both orders; the other answer is about as long.
                    calls += 2
                    tokens += 2 * estimate_tokens(
                        judge_prompts.SYSTEM,
                        judge_prompts.PREFERENCE,
                        item["question"],
                        item["answer"],
                        item["answer"],
                    )
                    continue
                for metric in version.metrics:
                    if _needs(metric, item):
                        calls += 1
                        tokens += estimate_tokens(
                            judge_prompts.SYSTEM, judge_prompts.TEMPLATES[metric], *texts
                        )
    judge_run.estimate = {"calls": calls, "prompt_tokens": tokens, "answers": len(ids)}
    with transaction.atomic():
        judge_run.save()
        judge_run.judge_versions.set(judge_versions)
    return judge_run


# Spec 002: a person re-reads a random share of a model grader's grades on
# every run, and never fewer than this many.
REGRADE_MINIMUM = 30


def regrade_draw(judge_run: JudgeRun, *, seed: int | None = None) -> Sample | None:
    """Draw the human regrade sample of a run's judge run: its share of the
    answers (at least REGRADE_MINIMUM, at most all), stratified by language,
    with a recorded seed, read blind on the usual screens. None for a judge
    run over a sample (people read that sample already) and for a head to
    head (people compare versions blind on the review screens instead)."""
    if judge_run.run_id is None or judge_run.other_run_id:
        return None
    total = judge_run.estimate.get("answers") or _gradable(judge_run).count()
    size = min(total, max(REGRADE_MINIMUM, math.ceil(judge_run.regrade_share * total)))
    rubric_versions = [
        version.rubric_version for version in judge_run.judge_versions.all() if version.rubric_version_id
    ]
    sample = sample_draw(
        frame=Frame(run=judge_run.run),
        size=size,
        strata_fields=("language",),
        seed=seed,
        rubric_version=rubric_versions[0] if rubric_versions else rubric_default(),
        name=f"Human regrade of judge run {judge_run.id} ({round(judge_run.regrade_share * 100)} %)",
        purpose=Sample.Purpose.JUDGE_REGRADE,
        created_by=judge_run.created_by,
    )
    JudgeRun.objects.filter(id=judge_run.id).update(regrade_sample=sample)
    return sample


def judge_run_confirm(*, judge_run: JudgeRun, draw_regrade=None) -> JudgeRun:
    """Start an estimated judge run here and now: cut it into chunks and
    queue them. A second confirmation changes nothing. ``draw_regrade(judge_run)``
    draws the human regrade sample (spec 002) in the same transaction. The
    page queues the same work instead (judge_run_queue), so as not to wait."""
    with transaction.atomic():
        if not _mark_confirmed(judge_run):
            judge_run.refresh_from_db()
            return judge_run
        _plan(judge_run, draw_regrade=draw_regrade)
    judge_run.refresh_from_db()
    return judge_run


def judge_run_queue(*, judge_run: JudgeRun) -> JudgeRun:
    """Confirm an estimated judge run and queue its planning (chunks, the
    human regrade sample, then the chunks' tasks) for a worker, so that the
    request answers at once. A second confirmation changes nothing."""
    with transaction.atomic():
        if _mark_confirmed(judge_run):
            judge_run_id = judge_run.id
            transaction.on_commit(lambda: tasks.queue_judge_plan(judge_run_id))
    judge_run.refresh_from_db()
    return judge_run


def judge_run_plan(*, judge_run_id: int) -> JudgeRun | None:
    """Cut a queued judge run into chunks, draw its human regrade sample and
    queue the chunks. None when there is nothing to plan (planned already,
    cancelled, or gone), so a repeated task is a no-op. The row stays locked
    until the plan commits: a second task waits, then finds it planned, and a
    planner that died holds nothing (its transaction is rolled back with its
    connection; the sweep queues the plan again). A regrade sample that
    cannot be drawn fails the run with the reason, before any chunk exists."""
    try:
        with transaction.atomic():
            locked = (
                JudgeRun.objects.select_for_update()
                .filter(id=judge_run_id, status=JudgeRun.Status.QUEUED, chunks_total=0)
                .first()
            )
            if locked is None or locked.chunks.exists():
                return None
            _plan(locked, draw_regrade=regrade_draw)
    except ApplicationError as rejected:
        JudgeRun.objects.filter(id=judge_run_id, status=JudgeRun.Status.QUEUED, chunks_total=0).update(
            status=JudgeRun.Status.FAILED,
            error=f"the human regrade sample could not be drawn: {rejected.errors[0]}",
            finished_at=timezone.now(),
        )
    return JudgeRun.objects.get(id=judge_run_id)


def _mark_confirmed(judge_run: JudgeRun) -> bool:
    return bool(
        JudgeRun.objects.filter(id=judge_run.id, status=JudgeRun.Status.ESTIMATED).update(
            status=JudgeRun.Status.QUEUED, confirmed_at=timezone.now()
        )
    )


def _plan(judge_run: JudgeRun, *, draw_regrade=None) -> None:
    """Inside the caller's transaction: chunks, the regrade sample, and the chunks queued on commit."""
    ids = list(_gradable(judge_run).values_list("id", flat=True))
    size = settings.JUDGE_CHUNK_ANSWERS
    chunks = JudgeChunk.objects.bulk_create(
        JudgeChunk(judge_run=judge_run, answer_ids=ids[start : start + size])
        for start in range(0, len(ids), size)
    )
    JudgeRun.objects.filter(id=judge_run.id).update(chunks_total=len(chunks))
    if draw_regrade is not None and judge_run.regrade_sample_id is None:
        draw_regrade(judge_run)
    chunk_ids = [chunk.id for chunk in chunks]
    transaction.on_commit(lambda: [tasks.queue_judge_chunk(chunk_id) for chunk_id in chunk_ids])


def judge_run_cancel(*, judge_run: JudgeRun) -> JudgeRun:
    """Stop a judge run: chunks not started never start, a chunk at work
    stops after the answer in hand; what was stored stays."""
    with transaction.atomic():
        cancelled = JudgeRun.objects.filter(
            id=judge_run.id,
            status__in=(JudgeRun.Status.ESTIMATED, JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING),
        ).update(status=JudgeRun.Status.CANCELLED, cancelled_at=timezone.now())
        if cancelled:
            judge_run.chunks.filter(status=JudgeChunk.Status.QUEUED).update(
                status=JudgeChunk.Status.CANCELLED
            )
    judge_run.refresh_from_db()
    return judge_run


def judge_run_resume(*, judge_run: JudgeRun) -> bool:
    """Queue again the chunks of a failed, cancelled or stuck judge run that
    are not done; what was stored is kept and not asked again. False when
    there is nothing to resume (done, or at work)."""
    with transaction.atomic():
        locked = JudgeRun.objects.select_for_update().get(id=judge_run.id)
        resumable = locked.status in (JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED)
        if not (resumable or judge_run_is_stuck(locked)):
            return False
        JudgeRun.objects.filter(id=judge_run.id).update(
            status=JudgeRun.Status.QUEUED, error="", cancelled_at=None, finished_at=None
        )
        if locked.chunks_total == 0:
            # Never planned (its planning died, or the regrade sample failed): plan it again.
            transaction.on_commit(lambda: tasks.queue_judge_plan(locked.id))
            return True
        chunks = judge_run.chunks.exclude(status=JudgeChunk.Status.DONE)
        chunk_ids = list(chunks.values_list("id", flat=True))
        chunks.update(status=JudgeChunk.Status.QUEUED, attempts=0, error="", lease_until=None)
        transaction.on_commit(lambda: [tasks.queue_judge_chunk(chunk_id) for chunk_id in chunk_ids])
    return True


def judge_chunk_perform(*, chunk_id: int) -> JudgeChunk | None:
    """Grade one chunk's answers with every judge version of its run and
    store each verdict once. None when the chunk was not there to take. A
    transient database error gives the claim back and is raised, for the
    task to retry; any other error fails the chunk and the run with the reason."""
    attempt = work.claim(
        JudgeChunk, pk=chunk_id, waiting=Q(status=JudgeChunk.Status.QUEUED), working=JudgeChunk.Status.RUNNING
    )
    if attempt is None:
        return None
    chunk = JudgeChunk.objects.select_related("judge_run").get(id=chunk_id)
    judge_run = chunk.judge_run
    JudgeRun.objects.filter(id=judge_run.id, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.RUNNING
    )
    try:
        with work.lease_kept(JudgeChunk, pk=chunk.id, attempt=attempt):
            finished = _grade_chunk(chunk, judge_run)
    except Exception as error:
        if work.is_transient(error):
            work.release(JudgeChunk, pk=chunk.id, attempt=attempt, waiting=JudgeChunk.Status.QUEUED)
            raise
        logger.exception("judge chunk %s failed", chunk.id)
        message = f"{type(error).__name__}: {error}"
        JudgeChunk.objects.filter(id=chunk.id).update(status=JudgeChunk.Status.FAILED, error=message)
        JudgeRun.objects.filter(id=judge_run.id).exclude(status=JudgeRun.Status.CANCELLED).update(
            status=JudgeRun.Status.FAILED, error=message, finished_at=timezone.now()
        )
        return chunk
    if finished:
        done = JudgeChunk.objects.filter(
            id=chunk.id, attempts=attempt, status=JudgeChunk.Status.RUNNING
        ).update(status=JudgeChunk.Status.DONE, lease_until=None)
        if done:
            JudgeRun.objects.filter(id=judge_run.id).update(chunks_done=F("chunks_done") + 1)
            _finish_if_done(judge_run.id)
    return chunk


def _grade_chunk(chunk: JudgeChunk, judge_run: JudgeRun) -> bool:
    """Ask what is not stored yet; False when the run was cancelled on the way."""
    versions = list(judge_run.judge_versions.select_related("judge", "rubric_version"))
    stored = set(
        ModelVerdict.objects.filter(judge_run=judge_run, answer_id__in=chunk.answer_ids).values_list(
            "judge_version_id", "answer_id", "metric"
        )
    )
    answers = list(Answer.objects.filter(id__in=chunk.answer_ids).order_by("id"))
    items = _items(answers, _set_version_id(judge_run))
    if judge_run.other_run_id:
        others = _other_answers(judge_run, answers)
        for item in items:
            other = others.get(item["answer_id"])
            item["other_answer_id"] = other.id if other else None
            item["other_answer"] = other.record.get("answer") or "" if other else None
            if other:
                # Both answers' evidence, so neither is judged against the other's retrieval alone.
                item["contexts"] = list(dict.fromkeys([*item["contexts"], *evidence_texts(other.record)]))
    # SQLite (the embedded default) takes one writer at a time: no threads
    # there; nor inside a transaction, whose rows the threads' own
    # connections could not see (a test's, or a caller's atomic block).
    threaded = connection.vendor == "postgresql" and not connection.in_atomic_block
    cache = DatabaseCache()
    cancelled = _CancelCheck(judge_run.id)
    for version in versions:
        rubric = _rubric_questions(version)
        try:
            llm = shared_llm_for(version, cache=cache)
            setup_error = None
        except (LLMError, ValueError) as error:
            llm, setup_error = None, str(error)
        judge = LLMJudge(llm, name=version.judge.name, on_error="record") if llm is not None else None
        metrics = ["preference"] if judge_run.other_run_id else version.metrics
        asks = [
            (item, metric)
            for item in items
            for metric in metrics
            if (version.id, item["answer_id"], metric) not in stored and _needs(metric, item)
        ]

        def grade(ask, version=version, judge=judge, rubric=rubric, setup_error=setup_error):
            item, metric = ask
            if cancelled():
                return None
            started = time.monotonic()
            if judge is None:
                result = JudgeResult(metric, error=setup_error)
            else:
                result = _ask(judge, version, metric, item, rubric)
            return _verdict(judge_run, version, item, result, time.monotonic() - started)

        if threaded and version.concurrency > 1 and len(asks) > 1:
            verdicts = list(_pool(version.concurrency).map(_in_pool_thread(grade), asks))
        else:
            verdicts = [grade(ask) for ask in asks]
        ModelVerdict.objects.bulk_create(
            [verdict for verdict in verdicts if verdict is not None], ignore_conflicts=True
        )
        if any(verdict is None for verdict in verdicts):
            return False
    return not _cancelled(judge_run.id)


# Pools that live as long as the worker, one per concurrency: their threads
# keep their database connections between calls and chunks (opening one per
# call cost more than the call; see bench/README.md).
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(size: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        pool = _POOLS.get(size)
        if pool is None:
            pool = _POOLS[size] = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"judge-{size}")
        return pool


def _in_pool_thread(function):
    """``function`` as a pool thread runs it: a connection the database dropped is closed
    first, and one that failed under it is closed, so the thread's next call opens a fresh one."""

    def wrapped(*args):
        close_old_connections()
        try:
            return function(*args)
        except Exception as error:
            if work.is_transient(error):
                connections.close_all()
            raise

    return wrapped


def shutdown_pools() -> None:
    """Stop the pools, each thread closing its own database connection first
    (a test database cannot be dropped while a connection is open)."""
    with _POOLS_LOCK:
        pools = dict(_POOLS)
        _POOLS.clear()
    for size, pool in pools.items():
        # One task a thread: each waits at the barrier until every thread holds one.
        barrier = threading.Barrier(size)

        def close(_, barrier=barrier):
            barrier.wait(timeout=30)
            connections.close_all()

        list(pool.map(close, range(size)))
        pool.shutdown(wait=True)


class _CancelCheck:
    """Whether the judge run was cancelled, asking the database at most once
    a second across a chunk's threads: a cancel still stops work within a
    second, without a query before every call."""

    def __init__(self, judge_run_id: int):
        self.judge_run_id = judge_run_id
        self.asked_at = -math.inf
        self.cancelled = False
        self.lock = threading.Lock()

    def __call__(self) -> bool:
        with self.lock:
            if not self.cancelled and time.monotonic() - self.asked_at >= 1.0:
                self.cancelled = _cancelled(self.judge_run_id)
                self.asked_at = time.monotonic()
            return self.cancelled


def _cancelled(judge_run_id: int) -> bool:
    return JudgeRun.objects.filter(id=judge_run_id, status=JudgeRun.Status.CANCELLED).exists()


def _verdict(judge_run: JudgeRun, version: JudgeVersion, item: dict, result: JudgeResult, seconds: float):
    completions = [completion.as_dict() for completion in result.completions]
    return ModelVerdict(
        judge_run=judge_run,
        judge_version=version,
        answer_id=item["answer_id"],
        other_answer_id=item.get("other_answer_id") if result.metric == "preference" else None,
        metric=result.metric,
        score=result.score if result.defined else None,
        labels=dict(result.details or {}, orders=result.verdict)
        if result.metric == "preference"
        else result.details or {},
        raw=completions[-1]["text"] if completions else "",
        completions=completions,
        prompt_hash=version.prompt_hash,
        error=result.error or "",
        undefined=result.undefined or "",
        seconds=round(seconds, 3),
    )


def _finish_if_done(judge_run_id: int) -> None:
    JudgeRun.objects.filter(
        id=judge_run_id, status=JudgeRun.Status.RUNNING, chunks_done__gte=F("chunks_total")
    ).update(status=JudgeRun.Status.DONE, finished_at=timezone.now())


def judge_run_is_stuck(judge_run: JudgeRun) -> bool:
    """Queued or running, with no chunk alive and nothing handed to the broker recently."""
    now = timezone.now()
    if judge_run.status not in (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING):
        return False
    if judge_run.chunks_total == 0:
        # Waiting for its planning: stuck once that was never handed over, or long ago.
        return judge_run.queued_at is None or judge_run.queued_at < work.stale_before(now)
    if judge_run.chunks.filter(status=JudgeChunk.Status.RUNNING, lease_until__gte=now).exists():
        return False
    return not judge_run.chunks.filter(queued_at__gte=work.stale_before(now)).exists()
