"""The compare page notes when the runs compared came from different
clocks, or not every one states its clocks (spec 004)."""

from django.utils.html import escape

from reviewapp.models import Run
from tests.app.versions.test_views import ManagerPagesBase


class CompareClockTests(ManagerPagesBase):
    def state(self, run: Run, skew_ms, precision_ms) -> None:
        Run.objects.filter(id=run.id).update(clock_skew_ms=skew_ms, clock_precision_ms=precision_ms)

    def test_it_notes_runs_that_do_not_state_their_clocks(self):
        self.state(self.base, 12, 1)
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertContains(
            page,
            escape(
                "Not every run compared states its clocks (clocks: skew +12 ms, precision 1 ms; "
                "clock skew and precision not stated)"
            ),
        )

    def test_it_notes_runs_from_different_clocks_and_is_silent_when_alike(self):
        self.state(self.base, 12, 1)
        self.state(self.declining, 40, 1)
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertContains(page, "The runs compared came from different clocks")
        self.state(self.declining, 12, 1)
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertNotContains(page, "different clocks")
        self.assertNotContains(page, "states its clocks")
