"""Issue 31, point 4: nothing of a rejected or abandoned upload stays on disk."""

import gzip
import os
import time

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase, override_settings

from reviewapp.core import files
from reviewapp.core.uploads import LEFTOVER_SECONDS, remove_leftovers
from reviewapp.models import Run
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question


class RejectedUploadTests(TestCase):
    def test_a_rejected_gzip_leaves_no_decompressed_log_behind(self):
        questions = synthetic.generate_question_set(questions=5, seed=3, set_version="left-1")
        set_version_create(version="left-1", questions=[normalise_question(q) for q in questions])
        # Compresses to a few kB; every line is refused (question_id must be a string).
        lines = b'{"question_id": 3, "answer": "' + b"x" * 2000 + b'"}\n'
        packed = gzip.compress(lines * 2000)
        upload = SimpleUploadedFile("answers_run_bot-1_set-left-1.jsonl.gz", packed)
        with self.captureOnCommitCallbacks(execute=True):
            run = run_receive(upload=upload).run
        run.refresh_from_db()
        self.assertEqual(run.status, Run.Status.REJECTED)
        self.assertFalse(files.exists(run.stored_name), "the rejected log is still in the store")
        self.assertEqual(list(files.storage().listdir("runs")[1]), [])


class LeftoverTests(TestCase):
    def test_what_a_killed_upload_left_is_removed_once_old_and_nothing_fresh(self):
        data = self.folder("data")
        with override_settings(DATA_DIR=data, FILE_UPLOAD_TEMP_DIR=str(self.folder("tmp"))):
            stale = [
                self.file(data / "runs" / "incoming-abc.part", age=LEFTOVER_SECONDS + 60),
                self.file(self.folder("tmp") / "tmpk3j2.upload.jsonl", age=LEFTOVER_SECONDS + 60),
            ]
            fresh = [
                self.file(data / "runs" / "incoming-def.part", age=60),
                self.file(self.folder("tmp") / "tmpz9.upload.jsonl", age=60),
                self.file(data / "runs" / f"{'a' * 64}.jsonl", age=LEFTOVER_SECONDS + 60),  # a stored log
            ]
            self.assertEqual(remove_leftovers(), 2)
        self.assertEqual([path.exists() for path in stale], [False, False])
        self.assertEqual([path.exists() for path in fresh], [True, True, True])

    def folder(self, name: str):
        path = self.base / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def file(self, path, *, age: float):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 10)
        then = time.time() - age
        os.utime(path, (then, then))
        return path

    def setUp(self):
        import tempfile
        from pathlib import Path

        self.base = Path(tempfile.mkdtemp(prefix="leftovers-"))
