"""Judge versions and judge runs in the app, graded by the stand-in judge."""

from unittest import mock

from django.test import TestCase, TransactionTestCase, override_settings

from reviewapp.core.errors import ApplicationError
from reviewapp.judges.selectors import head_to_head, panel_figures
from reviewapp.judges.services import judge_versions, judging
from reviewapp.models import JudgeChunk, JudgeResponse, JudgeRun, ModelVerdict, Sample
from reviewapp.sweep import work_sweep
from tests.fixtures import load_generated_run, run_to_end, stand_in_version, twin
from tests.helpers import make_user


class JudgeVersionTests(TestCase):
    def test_it_writes_into_the_latest_version_until_it_has_graded(self):
        version = stand_in_version()
        again = judge_versions.judge_version_save(
            judge=version.judge, provider="stand-in", model="", metrics=["faithfulness"]
        )
        self.assertEqual((again.id, again.number, again.metrics), (version.id, 1, ["faithfulness"]))
        run = load_generated_run(answers=20)
        judge_run = judging.judge_run_estimate(judge_versions=[again], run=run)
        run_to_end(judging.judge_run_confirm(judge_run=judge_run))
        frozen = judge_versions.judge_version_save(
            judge=version.judge, provider="stand-in", model="", metrics=["answer_relevance"]
        )
        self.assertEqual(frozen.number, 2)
        again.refresh_from_db()
        self.assertEqual(again.metrics, ["faithfulness"])

    def test_it_refuses_a_stored_key_and_names_each_bad_field(self):
        with self.assertRaisesMessage(ApplicationError, "options: a key is never stored"):
            judge_versions.judge_version_save(
                name="x", provider="openai", model="m", options={"api_key": "sk-1"}, metrics=["faithfulness"]
            )
        with self.assertRaisesMessage(
            ApplicationError,
            "key_variable: the name of an environment variable: capitals, digits and _; "
            "metrics: preference: this judge grades faithfulness, answer_relevance, "
            "context_precision, context_recall, answer_correctness, rubric",
        ):
            judge_versions.judge_version_save(
                name="x", provider="openai", model="m", key_variable="sk-live-123", metrics=["preference"]
            )
        with self.assertRaisesMessage(ApplicationError, "rubric_version: choose the rubric version"):
            judge_versions.judge_version_save(name="x", provider="openai", model="m", metrics=["rubric"])


@override_settings(JUDGE_CHUNK_ANSWERS=50)  # several chunks from a small run
class JudgeRunTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.lead = make_user("lead", "lead")
        cls.logged_run = load_generated_run(answers=120)

    def test_it_estimates_before_anything_is_sent(self):
        version = stand_in_version()
        judge_run = judging.judge_run_estimate(
            judge_versions=[version], run=self.logged_run, created_by=self.lead
        )
        answered = self.logged_run.answers.filter(status="ok").count()
        with_evidence = sum(
            1
            for answer in self.logged_run.answers.filter(status="ok")
            if answer.record.get("retrieved_records")
        )
        self.assertEqual(judge_run.status, JudgeRun.Status.ESTIMATED)
        self.assertEqual(judge_run.estimate["answers"], answered)
        self.assertEqual(judge_run.estimate["calls"], answered + with_evidence)
        self.assertGreater(judge_run.estimate["prompt_tokens"], judge_run.estimate["calls"] * 100)
        self.assertFalse(ModelVerdict.objects.exists())
        self.assertFalse(JudgeChunk.objects.exists())

    def test_it_grades_every_answer_once_and_draws_a_regrade_sample(self):
        version = stand_in_version()
        judge_run = judging.judge_run_estimate(
            judge_versions=[version], run=self.logged_run, created_by=self.lead
        )
        with self.captureOnCommitCallbacks(execute=True):
            judge_run = judging.judge_run_confirm(judge_run=judge_run, draw_regrade=judging.regrade_draw)
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual(judge_run.chunks_total, 3)
        verdicts = ModelVerdict.objects.filter(judge_run=judge_run)
        self.assertEqual(verdicts.count(), judge_run.estimate["calls"])
        self.assertEqual(verdicts.exclude(error="").count(), 0)
        rubric = verdicts.filter(metric="rubric").first()
        self.assertEqual(set(rubric.labels), {"grade", "answers"})
        self.assertEqual(rubric.prompt_hash, version.prompt_hash)
        self.assertTrue(rubric.raw.startswith('{"answers": '))
        # Doing a chunk again stores nothing twice and asks nothing.
        chunk = judge_run.chunks.first()
        JudgeChunk.objects.filter(id=chunk.id).update(status=JudgeChunk.Status.QUEUED)
        responses = JudgeResponse.objects.count()
        judging.judge_chunk_perform(chunk_id=chunk.id)
        self.assertEqual(
            ModelVerdict.objects.filter(judge_run=judge_run).count(), judge_run.estimate["calls"]
        )
        self.assertEqual(JudgeResponse.objects.count(), responses)
        sample = judge_run.regrade_sample
        self.assertEqual(sample.size, 30)  # 10 % of 120 is 12, below the minimum of 30
        self.assertEqual(sample.strata_fields, ["language"])
        self.assertIsNotNone(sample.seed)
        self.assertEqual(Sample.objects.count(), 1)

    def test_a_confirmed_run_whose_planning_never_reached_a_worker_is_planned_by_the_sweep(self):
        judge_run = judging.judge_run_estimate(judge_versions=[stand_in_version()], run=self.logged_run)
        # Confirmed, but the commit that would queue the planning never came.
        judge_run = judging.judge_run_queue(judge_run=judge_run)
        self.assertEqual((judge_run.status, judge_run.queued_at), (JudgeRun.Status.QUEUED, None))
        self.assertTrue(judging.judge_run_is_stuck(judge_run))
        # The sweep plans it, then queues the chunks the plan made.
        swept = work_sweep()
        judge_run.refresh_from_db()
        self.assertEqual(swept, {"judge runs queued": 1, "judge chunks queued": judge_run.chunks_total})
        self.assertEqual(judge_run.chunks.count(), judge_run.chunks_total)
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual(Sample.objects.get().id, judge_run.regrade_sample_id)
        self.assertFalse(judging.judge_run_is_stuck(judge_run))
        # Planned once: a later sweep queues its chunks, never the plan again.
        self.assertNotIn("judge runs queued", work_sweep())
        self.assertEqual(Sample.objects.count(), 1)

    def test_a_regrade_that_cannot_be_drawn_fails_the_run_before_any_chunk_and_resumes(self):
        judge_run = judging.judge_run_queue(
            judge_run=judging.judge_run_estimate(judge_versions=[stand_in_version()], run=self.logged_run)
        )
        refusal = ApplicationError("no answer in this stratum")
        with mock.patch.object(judging, "regrade_draw", side_effect=refusal):
            judging.judge_run_plan(judge_run_id=judge_run.id)
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.FAILED)
        self.assertEqual(
            judge_run.error, "the human regrade sample could not be drawn: no answer in this stratum"
        )
        self.assertEqual((judge_run.chunks_total, JudgeChunk.objects.count()), (0, 0))
        with self.captureOnCommitCallbacks(execute=True):
            self.assertTrue(judging.judge_run_resume(judge_run=judge_run))
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual(Sample.objects.get().id, judge_run.regrade_sample_id)

    def test_a_second_run_is_answered_from_the_cache(self):
        version = stand_in_version(metrics=["faithfulness"])
        first = judging.judge_run_estimate(judge_versions=[version], run=self.logged_run)
        run_to_end(judging.judge_run_confirm(judge_run=first))
        cached = JudgeResponse.objects.count()
        second = run_to_end(
            judging.judge_run_confirm(
                judge_run=judging.judge_run_estimate(judge_versions=[version], run=self.logged_run)
            )
        )
        self.assertEqual(second.status, JudgeRun.Status.DONE)
        self.assertEqual(JudgeResponse.objects.count(), cached)
        completions = ModelVerdict.objects.filter(judge_run=second).values_list("completions", flat=True)
        self.assertTrue(all(completion[0]["cached"] for completion in completions))

    def test_it_records_each_failure_and_keeps_what_succeeded(self):
        broken = judge_versions.judge_version_save(
            name="unset key",
            provider="openai",
            model="m",
            key_variable="NO_SUCH_JUDGE_API_KEY",
            metrics=["answer_relevance"],
        )
        working = stand_in_version(metrics=["answer_relevance"])
        judge_run = judging.judge_run_estimate(judge_versions=[broken, working], run=self.logged_run)
        judge_run = run_to_end(judging.judge_run_confirm(judge_run=judge_run))
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        failed = ModelVerdict.objects.filter(judge_run=judge_run, judge_version=broken)
        self.assertEqual(failed.count(), judge_run.estimate["answers"])
        self.assertEqual(
            set(failed.values_list("error", flat=True)),
            {"the openai judge's key is read from NO_SUCH_JUDGE_API_KEY, which is not set"},
        )
        self.assertEqual(
            ModelVerdict.objects.filter(judge_run=judge_run, judge_version=working, error="").count(),
            judge_run.estimate["answers"],
        )

    def test_cancelling_stops_the_chunks_not_started_and_resuming_finishes_them(self):
        version = stand_in_version(metrics=["faithfulness"])
        judge_run = judging.judge_run_confirm(
            judge_run=judging.judge_run_estimate(judge_versions=[version], run=self.logged_run)
        )
        first = judge_run.chunks.first()
        judging.judge_chunk_perform(chunk_id=first.id)
        judging.judge_run_cancel(judge_run=judge_run)
        self.assertEqual(
            set(judge_run.chunks.exclude(id=first.id).values_list("status", flat=True)), {"cancelled"}
        )
        self.assertIsNone(judging.judge_chunk_perform(chunk_id=judge_run.chunks.last().id))
        stored = ModelVerdict.objects.filter(judge_run=judge_run).count()
        self.assertGreater(stored, 0)
        with self.captureOnCommitCallbacks(execute=True):
            self.assertTrue(judging.judge_run_resume(judge_run=judge_run))
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual(
            ModelVerdict.objects.filter(judge_run=judge_run).count(), judge_run.estimate["calls"]
        )

    def test_it_refuses_a_run_with_nothing_to_grade_and_no_judge(self):
        with self.assertRaisesMessage(ApplicationError, "choose at least one judge"):
            judging.judge_run_estimate(judge_versions=[], run=self.logged_run)
        with self.assertRaisesMessage(ApplicationError, "grade a run or a sample, one of them"):
            judging.judge_run_estimate(judge_versions=[stand_in_version()])


class JudgeRunThreadTests(TransactionTestCase):
    def test_threads_store_the_same_verdicts_as_one_thread(self):
        # The pool's threads keep their connections; they must close them before the database goes.
        self.addCleanup(judging.shutdown_pools)
        run = load_generated_run(answers=60)
        one = stand_in_version(name="one thread")
        four = stand_in_version(name="four threads", concurrency=4)
        results = {}
        for version in (one, four):
            judge_run = run_to_end(
                judging.judge_run_confirm(
                    judge_run=judging.judge_run_estimate(judge_versions=[version], run=run)
                )
            )
            self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
            results[version.concurrency] = sorted(
                ModelVerdict.objects.filter(judge_run=judge_run).values_list("answer_id", "metric", "score")
            )
        self.assertEqual(results[1], results[4])
        self.assertEqual(len(results[4]), judge_run.estimate["calls"])


class HeadToHeadTests(TestCase):
    def test_it_weighs_two_runs_answers_in_both_orders(self):
        first = load_generated_run(answers=40, seed=5, assistant="bot-1.0", version="h2h-1")
        second = load_generated_run(answers=40, seed=8, assistant="bot-2.0", version="h2h-2")
        version = stand_in_version()
        # The same questions on two set versions cannot be weighed; on one set version they can.
        with self.assertRaisesMessage(
            ApplicationError, "head to head needs two runs on the same set version"
        ):
            judging.judge_run_estimate(judge_versions=[version], run=first, other_run=second)
        # The twin states a figure no record holds wherever the first gave a year.
        other = twin(first, "bot-2.0", lambda text: text.replace("2024", "2024 (about 999.5)"))
        judge_run = judging.judge_run_estimate(judge_versions=[version], run=first, other_run=other)
        pairs = first.answers.filter(status="ok").count()
        self.assertEqual(judge_run.estimate["calls"], 2 * pairs)
        judge_run = run_to_end(judging.judge_run_confirm(judge_run=judge_run))
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        (row,) = head_to_head(judge_run)
        # The sealed part's pairs stay out until it is opened.
        sealed = first.set_version.questions.filter(split="sealed").values("question_id")
        pairs = first.answers.filter(status="ok").exclude(question_id__in=sealed).count()
        self.assertEqual(row["n"], pairs)
        self.assertEqual(
            (row["losses"], row["wins"] + row["ties"], row["position_consistency"]), (0, pairs, 1.0)
        )
        winners = {
            verdict.answer.record["answer"]: verdict.labels["winner"]
            for verdict in ModelVerdict.objects.shown().filter(judge_run=judge_run).select_related("answer")
        }
        # Only an answer the twin changed can win, and changed ones with a supported figure do.
        self.assertTrue(all("2024" in answer for answer, winner in winners.items() if winner == "a"))
        self.assertGreater(row["wins"], 0)
        self.assertEqual(row["wins"], sum(winner == "a" for winner in winners.values()))
        verdict = ModelVerdict.objects.filter(judge_run=judge_run).first()
        self.assertEqual(verdict.other_answer.run_id, other.id)
        self.assertEqual(len(verdict.completions), 2)


class PanelTests(TestCase):
    def test_it_gives_each_judge_the_panel_mean_and_alpha(self):
        run = load_generated_run(answers=40)
        one = stand_in_version(name="one", metrics=["faithfulness"])
        two = stand_in_version(name="two", metrics=["faithfulness", "answer_relevance"])
        judge_run = run_to_end(
            judging.judge_run_confirm(
                judge_run=judging.judge_run_estimate(judge_versions=[one, two], run=run)
            )
        )
        (figure,) = panel_figures(judge_run)
        self.assertEqual(figure["metric"], "faithfulness")
        self.assertEqual([judge["n"] for judge in figure["judges"]], [figure["items"], figure["items"]])
        self.assertEqual(figure["judges"][0]["mean"], figure["judges"][1]["mean"])
        self.assertEqual(figure["panel_mean"], figure["judges"][0]["mean"])
        # Two identical judges agree perfectly.
        self.assertEqual((figure["alpha"], figure["warning"]), (1.0, False))
