"""Celery finds tasks by name: messages already queued, and beat's schedule,
name them, so the names stay as they were while the code moves."""

from django.conf import settings
from django.test import SimpleTestCase

from reviewapp import tasks
from reviewapp.celery import app

NAMES = {
    "reviewapp.tasks.ingest_run_task",
    "reviewapp.tasks.plan_scoring_task",
    "reviewapp.tasks.score_chunk_task",
    "reviewapp.tasks.judge_chunk_task",
    "reviewapp.tasks.plan_judge_run_task",
    "reviewapp.tasks.sweep_work_task",
}


class TaskNameTests(SimpleTestCase):
    def test_it_registers_every_task_under_its_old_name(self):
        defined = {
            task.name
            for task in vars(tasks).values()
            if getattr(task, "name", "").startswith("reviewapp.") and callable(getattr(task, "delay", None))
        }
        self.assertEqual(defined, NAMES)
        self.assertLessEqual(NAMES, set(app.tasks))

    def test_it_schedules_the_sweep_by_a_registered_name(self):
        scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
        self.assertEqual(scheduled, {"reviewapp.tasks.sweep_work_task"})
