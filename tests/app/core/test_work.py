"""Claims, leases and the sweep, with tasks run in-process."""

from datetime import timedelta
from unittest import mock

from django.db import OperationalError
from django.db.models import Q
from django.test import TestCase, TransactionTestCase, override_settings
from django.utils import timezone

from reviewapp import sweep
from reviewapp.core import work
from reviewapp.models import Assistant, AssistantVersion, QuestionSet, Run, Scoring, ScoringChunk, SetVersion
from reviewapp.runs.services.runs import run_ingest, run_retry
from reviewapp.scorings import selectors
from reviewapp.scorings.services import scoring_chunk_perform, scoring_retry
from tests.fixtures import bare_run, load_generated_run
from tests.helpers import PASSWORD, BaseTestCase, KeepsClassFiles, row_held

LONG_AGO = timedelta(hours=1)


def lone_run(name: str, status: str) -> Run:
    """A run row of its own set and version, with no file behind it."""
    set_version = SetVersion.objects.create(
        question_set=QuestionSet.objects.create(name=name), version=f"{name}-1"
    )
    version = AssistantVersion.objects.create(assistant=Assistant.objects.create(name="bot"), label="v")
    return bare_run(version, set_version, name, sha256=name, status=status)


class SweepTests(KeepsClassFiles, BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.run_obj = load_generated_run(answers=40)

    def stuck_run(self, **state) -> Run:
        """The stored run put back into a state a crash or an outage leaves."""
        self.run_obj.answers.all().delete()
        self.run_obj.scorings.all().delete()
        Run.objects.filter(id=self.run_obj.id).update(answer_count=0, stored_at=None, **state)
        return Run.objects.get(id=self.run_obj.id)

    def test_it_queues_a_run_the_broker_never_took(self):
        run = self.stuck_run(status="received", queued_at=None, attempts=0)
        with self.captureOnCommitCallbacks(execute=True):
            done = sweep.work_sweep()
        self.assertEqual(done["runs queued"], 1)
        run.refresh_from_db()
        self.assertEqual((run.status, run.answer_count, run.attempts), ("stored", 40, 1))
        self.assertIsNotNone(run.queued_at)

    def test_it_takes_up_an_ingest_whose_lease_ran_out(self):
        run = self.stuck_run(status="ingesting", lease_until=timezone.now() - LONG_AGO, attempts=1)
        with self.captureOnCommitCallbacks(execute=True):
            done = sweep.work_sweep()
        self.assertEqual(done["runs taken up again"], 1)
        run.refresh_from_db()
        self.assertEqual((run.status, run.answer_count, run.attempts), ("stored", 40, 2))

    def test_it_leaves_work_whose_lease_is_alive(self):
        run = self.stuck_run(status="ingesting", lease_until=timezone.now() + LONG_AGO, attempts=1)
        self.assertEqual(sweep.work_sweep(), {})
        self.assertIsNone(run_ingest(run_id=run.id))  # a redelivered task is a no-op
        run.refresh_from_db()
        self.assertEqual((run.status, run.attempts), ("ingesting", 1))

    @override_settings(WORK_MAX_ATTEMPTS=3)
    def test_it_fails_work_that_died_too_often_with_the_reason(self):
        run = self.stuck_run(status="ingesting", lease_until=timezone.now() - LONG_AGO, attempts=3)
        self.assertEqual(sweep.work_sweep()["runs failed"], 1)
        run.refresh_from_db()
        self.assertEqual(run.status, "failed")
        self.assertEqual(
            run.error,
            "the worker doing this stopped 3 times without finishing (killed, or out of memory?); "
            "see the worker's log, then try again",
        )
        self.assertEqual(run.attempts, 3)  # given up on, not queued a fourth time

    @override_settings(WORK_MAX_ATTEMPTS=3)
    def test_outages_do_not_count_toward_the_workers_that_stopped(self):
        # Five claims, four of them given back after a database outage: one stop.
        run = self.stuck_run(status="ingesting", lease_until=timezone.now() - LONG_AGO, attempts=5, outages=4)
        with self.captureOnCommitCallbacks(execute=True):
            done = sweep.work_sweep()
        self.assertEqual(done["runs taken up again"], 1)
        self.assertNotIn("runs failed", done)
        run.refresh_from_db()
        self.assertEqual((run.status, run.attempts, run.outages), ("stored", 6, 4))

    def test_when_the_broker_lost_its_messages_it_sends_all_waiting_work_again(self):
        # Queued a moment ago, so not stale: only a lost broker sends it again.
        run = self.stuck_run(status="received", queued_at=timezone.now(), attempts=0)
        self.assertEqual(sweep.work_sweep(), {})
        with self.captureOnCommitCallbacks(execute=True):
            done = sweep.work_sweep(messages_lost=True)
        self.assertEqual(done["runs queued"], 1)
        run.refresh_from_db()
        self.assertEqual(run.status, "stored")

    def test_it_takes_up_a_chunk_whose_worker_died_and_stores_it_once(self):
        scoring = self.run_obj.scorings.get()
        clean = {(s.slice, s.measure): (s.k, s.n) for s in scoring.scores.all()}
        checks = scoring.checks.count()
        # Undo the scoring to the moment its only chunk was claimed by a worker that died.
        for related in (scoring.checks, scoring.findings, scoring.scores):
            related.all().delete()
        Scoring.objects.filter(id=scoring.id).update(status="scoring", chunks_done=0, progress=0)
        chunk = scoring.chunks.get()
        ScoringChunk.objects.filter(id=chunk.id).update(
            status="scoring", lease_until=timezone.now() - LONG_AGO, attempts=1
        )
        with self.captureOnCommitCallbacks(execute=True):
            self.assertEqual(sweep.work_sweep()["chunks taken up again"], 1)
        scoring.refresh_from_db()
        self.assertEqual(scoring.status, "done")
        self.assertEqual({(s.slice, s.measure): (s.k, s.n) for s in scoring.scores.all()}, clean)
        self.assertEqual(scoring.checks.count(), checks)
        # The same message delivered again finds the chunk done.
        self.assertIsNone(
            work.claim(ScoringChunk, pk=chunk.id, waiting=work.Q(status="queued"), working="scoring")
        )

    def test_a_stuck_run_can_be_tried_again_from_its_page(self):
        run = self.stuck_run(status="received", queued_at=timezone.now() - LONG_AGO, attempts=2)
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, "No progress for 5 minutes or more")
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(f"/runs/{run.id}/retry/")
        run.refresh_from_db()
        self.assertEqual((run.status, run.attempts), ("stored", 1))

    def test_it_will_not_retry_a_run_that_is_moving(self):
        run = self.stuck_run(status="ingesting", lease_until=timezone.now() + LONG_AGO, attempts=1)
        self.assertFalse(run_retry(run=run))

    def test_a_run_given_back_after_outages_says_so(self):
        run = self.stuck_run(status="received", queued_at=timezone.now(), outages=2)
        self.client.login(username="lead", password=PASSWORD)
        self.assertContains(
            self.client.get(run.get_absolute_url()), "was away 2 times while this run was being stored"
        )

    def test_a_run_uploaded_a_moment_ago_while_the_broker_was_down_is_not_called_stuck(self):
        run = self.stuck_run(status="received", queued_at=None)
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, "waiting for the task queue (unreachable just now)")
        self.assertNotContains(page, "No progress for")
        Run.objects.filter(id=run.id).update(created_at=timezone.now() - LONG_AGO)
        self.assertContains(self.client.get(run.get_absolute_url()), "No progress for 5 minutes or more")

    def test_a_run_waiting_for_the_broker_says_so(self):
        run = self.stuck_run(status="received", queued_at=None)
        self.client.login(username="lead", password=PASSWORD)
        self.assertContains(
            self.client.get(run.get_absolute_url()), "waiting for the task queue (unreachable just now)"
        )


class StuckScoringTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.run_obj = load_generated_run(answers=30)

    def test_a_scoring_whose_plan_never_started_can_be_tried_again(self):
        scoring = self.run_obj.scorings.get()
        clean = {(s.slice, s.measure): (s.k, s.n) for s in scoring.scores.all()}
        for related in (scoring.checks, scoring.findings, scoring.scores, scoring.chunks):
            related.all().delete()
        Scoring.objects.filter(id=scoring.id).update(
            status="queued", chunks_total=0, chunks_done=0, queued_at=timezone.now() - LONG_AGO
        )
        scoring.refresh_from_db()
        self.assertTrue(selectors.scoring_is_stuck(scoring))
        with self.captureOnCommitCallbacks(execute=True):
            self.assertTrue(scoring_retry(scoring=scoring))
        scoring.refresh_from_db()
        self.assertEqual(scoring.status, "done")
        self.assertEqual({(s.slice, s.measure): (s.k, s.n) for s in scoring.scores.all()}, clean)

    def test_a_scoring_with_a_live_chunk_is_not_stuck(self):
        scoring = self.run_obj.scorings.get()
        Scoring.objects.filter(id=scoring.id).update(status="scoring")
        scoring.chunks.update(status="scoring", lease_until=timezone.now() + LONG_AGO)
        scoring.refresh_from_db()
        self.assertFalse(selectors.scoring_is_stuck(scoring))
        self.assertFalse(scoring_retry(scoring=scoring))


class TransientErrorAfterClaimTests(TransactionTestCase):
    """A database cut right after a chunk or run is claimed, before the work
    starts, gives the claim back for the task's retry, as a cut during the
    work does (found by tests/app/core/test_faults.py: the retry found the chunk still
    claimed and did nothing, and the scoring waited for the sweep)."""

    def setUp(self):
        set_version = SetVersion.objects.create(
            question_set=QuestionSet.objects.create(name="cut"), version="cut-1"
        )
        version = AssistantVersion.objects.create(assistant=Assistant.objects.create(name="bot"), label="v")
        self.run = bare_run(version, set_version, "cut", sha256="cut", status=Run.Status.RECEIVED)
        scoring = Scoring.objects.create(run=self.run, set_version=set_version, status=Scoring.Status.SCORING)
        self.chunk = ScoringChunk.objects.create(
            scoring=scoring, first_line=1, last_line=1, status=ScoringChunk.Status.QUEUED
        )

    def test_a_chunk_claimed_when_the_connection_is_cut_is_given_back(self):
        cut = OperationalError("terminating connection due to administrator command")
        with (
            mock.patch.object(ScoringChunk.objects, "select_related", side_effect=cut),
            self.assertRaises(OperationalError),
        ):
            scoring_chunk_perform(chunk_id=self.chunk.id)
        self.chunk.refresh_from_db()
        self.assertEqual(
            (self.chunk.status, self.chunk.lease_until, self.chunk.attempts), ("queued", None, 1)
        )

    def test_a_run_claimed_when_the_connection_is_cut_is_given_back(self):
        cut = OperationalError("terminating connection due to administrator command")
        with (
            mock.patch.object(Run.objects, "select_related", side_effect=cut),
            self.assertRaises(OperationalError),
        ):
            run_ingest(run_id=self.run.id)
        self.run.refresh_from_db()
        self.assertEqual((self.run.status, self.run.lease_until, self.run.attempts), ("received", None, 1))

    def test_a_claim_given_back_counts_an_outage_and_is_sent_again_by_the_next_sweep(self):
        run = self.run
        Run.objects.filter(id=run.id).update(queued_at=timezone.now())
        attempt = work.claim(Run, pk=run.id, waiting=Q(status="received"), working="ingesting")
        work.release(Run, pk=run.id, attempt=attempt, waiting="received")
        run.refresh_from_db()
        self.assertEqual((run.status, run.attempts, run.outages, run.queued_at), ("received", 1, 1, None))


class TransientErrorTests(TestCase):
    def test_psycopgs_own_errors_are_transient_as_djangos_are(self):
        import psycopg

        # What a terminated connection raises inside COPY, which Django does not wrap.
        self.assertTrue(work.is_transient(psycopg.errors.AdminShutdown("terminating connection")))
        self.assertTrue(work.is_transient(psycopg.OperationalError("server closed the connection")))
        self.assertTrue(work.is_transient(OperationalError("gone")))
        self.assertFalse(work.is_transient(psycopg.errors.UniqueViolation("duplicate key")))
        self.assertFalse(work.is_transient(ValueError("bad line")))

    def test_the_tasks_retry_psycopgs_own_errors(self):
        import psycopg

        from reviewapp.tasks import RETRY

        self.assertTrue(issubclass(psycopg.errors.AdminShutdown, RETRY["autoretry_for"]))


class LockedWorkTests(TransactionTestCase):
    """A claim skips a row another transaction holds instead of waiting
    behind it (issue 31, point 6: the sweep's message held a worker for as
    long as the adding-up query that held the row ran)."""

    def test_a_claim_on_a_row_a_transaction_holds_returns_at_once(self):
        import time

        from django.db import connection

        if connection.vendor != "postgresql":
            self.skipTest("row locks are PostgreSQL's")
        run = lone_run("l", Run.Status.INGESTING)
        Run.objects.filter(id=run.id).update(lease_until=timezone.now() - LONG_AGO, attempts=1)
        with row_held("reviewapp_run", run.id):
            started = time.monotonic()
            claimed = work.claim(Run, pk=run.id, waiting=Q(status="received"), working="ingesting")
            self.assertIsNone(claimed)
            self.assertLess(time.monotonic() - started, 2)
        self.assertEqual(work.claim(Run, pk=run.id, waiting=Q(status="received"), working="ingesting"), 2)

    def test_a_claim_waits_out_a_short_write_holding_the_row(self):
        # Seen at 1M answers under load: the sender marked a chunk queued just
        # as the worker that took its message claimed it; the claim skipped the
        # row and the chunk waited five minutes for the stale sweep.
        import threading

        from django.db import connection

        if connection.vendor != "postgresql":
            self.skipTest("row locks are PostgreSQL's")
        run = lone_run("w", Run.Status.RECEIVED)
        held, release = threading.Event(), threading.Event()

        def short_write():
            with row_held("reviewapp_run", run.id):
                held.set()
                release.wait(0.3)

        writer = threading.Thread(target=short_write)
        writer.start()
        held.wait(5)
        claimed = work.claim(Run, pk=run.id, waiting=Q(status="received"), working="ingesting")
        writer.join()
        self.assertEqual(claimed, 1)

    def test_a_chunk_is_claimed_while_its_scorings_row_is_held(self):
        # A worker finishing another chunk holds the scoring's row; the claim
        # locks the chunk's row alone (its default ordering joins the scoring).
        from django.db import connection

        if connection.vendor != "postgresql":
            self.skipTest("row locks are PostgreSQL's")
        run = lone_run("c", Run.Status.STORED)
        scoring = Scoring.objects.create(run=run, set_version=run.set_version, status=Scoring.Status.SCORING)
        chunk = ScoringChunk.objects.create(scoring=scoring, first_line=1, last_line=1, status="queued")
        with row_held("reviewapp_scoring", scoring.id):
            claimed = work.claim(ScoringChunk, pk=chunk.id, waiting=Q(status="queued"), working="scoring")
        self.assertEqual(claimed, 1)


class QueueOrderTests(TestCase):
    def test_work_is_marked_queued_before_its_message_is_out_and_unmarked_when_none_went(self):
        from reviewapp import tasks

        run = lone_run("o", Run.Status.RECEIVED)
        seen = []

        def publish(task, pk):
            # What a worker taking the message at once finds.
            seen.append(Run.objects.values_list("queued_at", flat=True).get(id=pk))
            return False  # the broker away

        with mock.patch.object(tasks, "send", publish):
            self.assertFalse(tasks.queue_ingest(run.id))
        self.assertIsNotNone(seen[0])
        run.refresh_from_db()
        self.assertIsNone(run.queued_at)  # the sweep sends it
