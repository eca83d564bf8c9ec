"""Runs made from the seeded generator, stored as an upload would store them."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from reviewapp.models import Run
from reviewapp.services.question_sets import set_version_create
from reviewapp.services.runs import run_receive
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
