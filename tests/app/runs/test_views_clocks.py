"""The clocks a run log states (spec 004: across systems, skew and
precision; a missing value is never 0), kept with the run and shown beside
its timing with each event named by what was captured."""

from reviewapp.models import Run
from tests.app.runs.test_views_runs import UploadTestCase
from tests.helpers import example_answers, jsonl

HEADER = {"assistant_version": "bot-7", "set_version": "1.2"}


def timed_answers() -> list[dict]:
    answers = example_answers()
    for answer in answers:
        answer |= {
            "submitted_at": "2026-03-01T10:00:00Z",
            "startup_at": "2026-03-01T10:00:01.5Z",
            "first_progress_at": "2026-03-01T10:00:02Z",
            "received_at": "2026-03-01T10:00:09Z",
        }
    return answers


class RunClockTests(UploadTestCase):
    def test_it_keeps_the_clocks_the_header_states_and_shows_them_beside_the_timing(self):
        self.upload_set()
        header = HEADER | {"clock_skew_ms": 12, "clock_precision_ms": 1}
        self.upload_run(jsonl(header, *timed_answers()))
        run = Run.objects.get()
        run.refresh_from_db()
        self.assertEqual((run.status, run.clock_skew_ms, run.clock_precision_ms), ("stored", 12.0, 1.0))
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, '<p class="clocks">clocks: skew +12 ms, precision 1 ms</p>', html=False)
        # Startup and first progress each in their own row, by what was captured.
        self.assertContains(
            page,
            '<tr><th scope="row">startup (platform or agent initialised) − question submitted '
            '(not yet any progress)</th><td class="num">8</td><td class="num">1.50</td>'
            '<td class="num">1.50</td><td class="num">0</td></tr>',
            html=False,
        )
        self.assertContains(
            page,
            '<tr><th scope="row">first progress message − question submitted (not the final answer)</th>'
            '<td class="num">8</td><td class="num">2.00</td><td class="num">2.00</td><td class="num">0</td></tr>',
            html=False,
        )
        # Events no answer logged are named on one line, not drawn as empty rows.
        self.assertContains(page, "Not logged for any answer: ", html=False)
        self.assertContains(page, "first token − question submitted;", html=False)
        self.assertNotContains(page, '<th scope="row">first token', html=False)

    def test_it_says_an_unstated_clock_is_not_stated_never_0(self):
        self.upload_set()
        self.upload_run(jsonl(HEADER, *timed_answers()))
        run = Run.objects.get()
        self.assertEqual((run.status, run.clock_skew_ms, run.clock_precision_ms), ("stored", None, None))
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, '<p class="clocks">clock skew and precision not stated</p>', html=False)

    def test_it_rejects_a_bad_clock_statement_naming_the_header_field(self):
        self.upload_set()
        self.upload_run(jsonl(HEADER | {"clock_precision_ms": -1}, *timed_answers()))
        run = Run.objects.get()
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            run.line_errors,
            [
                {
                    "line": 1,
                    "field": "clock_precision_ms",
                    "message": "must be a number of milliseconds above 0, not -1",
                }
            ],
        )
