"""The compare page notes when the runs compared were called with
different reply policies (spec 004, channel overhead)."""

from django.utils.html import escape

from reviewapp.models import Run
from tests.app.versions.test_views import ManagerPagesBase


class CompareReplyPolicyTests(ManagerPagesBase):
    def test_it_notes_runs_called_with_different_reply_policies_and_is_silent_when_alike(self):
        Run.objects.filter(id=self.base.id).update(reply_policy="channel")
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertContains(
            page,
            escape(
                "The runs compared were called with different reply policies (channel, not declared): an agent "
                "set up for a chat channel spends time on channel overhead that a direct call does not."
            ),
        )
        Run.objects.update(reply_policy="direct")
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertNotContains(page, "different reply policies")
