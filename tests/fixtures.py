"""Runs made from the seeded generator, stored as an upload would store them."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from reviewapp.judges.services import judge_versions, judging
from reviewapp.models import Answer, AssistantVersion, JudgeRun, JudgeVersion, Run
from reviewapp.review.services.review import rubric_default
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from reviewapp.scorings.services import scoring_request
from scoring import synthetic
from scoring.logfile import normalise_question


def load_generated_run(
    *, answers: int = 200, seed: int = 5, assistant: str = "bot-1.0", version: str = "gen-1"
) -> Run:
    """A stored and scored run of ``answers`` generated answers to a new set version."""
    questions = synthetic.generate_question_set(questions=answers, seed=seed, set_version=version)
    set_version_create(version=version, questions=[normalise_question(q) for q in questions])
    rows = synthetic.generate_run(question_set=questions, answers=answers, seed=seed + 1)
    upload = SimpleUploadedFile(
        f"answers_run_{assistant}_set-{version}.jsonl", "\n".join(map(json.dumps, rows)).encode()
    )
    # Run the queued ingestion and scoring now, as a worker would after commit.
    with TestCase.captureOnCommitCallbacks(execute=True):
        received = run_receive(upload=upload)
    return Run.objects.get(id=received.run.id)


def load_runs_with_attempts(
    *, version: str, questions: int, seed: int, attempts: dict[str, int]
) -> dict[str, Run]:
    """{assistant version: its stored and scored run} on a new set version of
    ``questions`` generated questions, all in the tuning part, each version
    asking every question as many times as ``attempts`` gives it (run seeds
    follow ``seed`` in order)."""
    question_set = synthetic.generate_question_set(questions=questions, seed=seed, set_version=version)
    for question in question_set:
        question["split"] = "tuning"
    set_version_create(version=version, questions=[normalise_question(q) for q in question_set])
    runs = {}
    for offset, (assistant, repetitions) in enumerate(attempts.items(), start=1):
        rows = synthetic.generate_run(
            question_set=question_set, answers=questions, seed=seed + offset, repetitions=repetitions
        )
        header = {"assistant_version": assistant, "set_version": version, "repetitions": repetitions}
        text = "\n".join(json.dumps(line, ensure_ascii=False) for line in [header, *rows]) + "\n"
        upload = SimpleUploadedFile(f"answers_run_{assistant}_set-{version}.jsonl", text.encode())
        with TestCase.captureOnCommitCallbacks(execute=True):
            received = run_receive(upload=upload)
        runs[assistant] = Run.objects.get(id=received.run.id)
    return runs


def bare_run(version: AssistantVersion, set_version, name: str, **fields) -> Run:
    """A run row with no file behind it, stored unless ``fields`` say otherwise."""
    return Run.objects.create(
        assistant_version=version,
        set_version=set_version,
        file_name=f"{name}.jsonl",
        stored_name=f"runs/{name}.jsonl",
        size_bytes=1,
        **{"status": Run.Status.STORED, **fields},
    )


def twin(run: Run, label: str, change=lambda text: text) -> Run:
    """A stored run of another assistant version on the same set, its answers changed by ``change``."""
    version, _ = AssistantVersion.objects.get_or_create(
        label=label, defaults={"assistant": run.assistant_version.assistant}
    )
    copy = bare_run(version, run.set_version, label)
    answers = []
    for answer in run.answers.all():
        record = answer.record
        record["answer"] = change(record.get("answer") or "")
        answers.append(
            Answer(
                run=copy,
                line_number=answer.line_number,
                question_id=answer.question_id,
                attempt=answer.attempt,
                status=answer.status,
                language=answer.language,
                declined=answer.declined,
                raw=json.dumps(record),
            )
        )
    Answer.objects.bulk_create(answers)
    Run.objects.filter(id=copy.id).update(answer_count=len(answers))
    with TestCase.captureOnCommitCallbacks(execute=True):
        scoring_request(run=copy, set_version=copy.set_version)
    return copy


def stand_in_version(**changes) -> JudgeVersion:
    """A judge version of the stand-in judge (rubric and faithfulness) unless ``changes`` say otherwise."""
    fields = {
        "name": "numbers",
        "provider": JudgeVersion.Provider.STAND_IN,
        "model": "",
        "metrics": ["rubric", "faithfulness"],
        "rubric_version": rubric_default(),
        # Threads open their own connections, which a TestCase's transaction
        # does not cover: test_services_judging's thread test runs them.
        "concurrency": 1,
    }
    fields.update(changes)
    return judge_versions.judge_version_save(**fields)


def run_to_end(judge_run: JudgeRun) -> JudgeRun:
    """Grade every chunk of a confirmed judge run here, as workers would."""
    for chunk_id in judge_run.chunks.values_list("id", flat=True):
        judging.judge_chunk_perform(chunk_id=chunk_id)
    judge_run.refresh_from_db()
    return judge_run
