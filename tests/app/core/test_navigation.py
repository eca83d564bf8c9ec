"""Every menu entry and every link on a menu's pages opens for the role that
sees it (issue 25, point 9): a manager was offered Upload and Import, which
answered 403."""

import re
from urllib.parse import urlsplit

from django.urls import reverse

from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, BaseTestCase, make_user

LINK = re.compile(r'<a\b[^>]*\bhref="([^"#]+)[^"]*"')


class MenuCrawlTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.admin = make_user("admin")
        logged_run = load_generated_run(answers=40, assistant="bot-1.0")
        sample = sample_draw(
            frame=Frame(run=logged_run), size=10, seed=3, rubric_version=rubric_default(), name="Read"
        )
        sample_assign(sample=sample, reviewers=[cls.reviewer, cls.lead], readers_per_item=1)

    def menu(self, html: str) -> list[str]:
        nav = re.search(r'<header class="top">.*?<nav>(.*?)</nav>', html, re.S).group(1)
        return LINK.findall(nav)

    def main(self, html: str) -> list[str]:
        return LINK.findall(html.split("<main>", 1)[1])

    def refused(self, username: str) -> list[str]:
        """The links this person is shown, on the menu and on each page it
        opens, that do not answer 200 for them."""
        self.client.login(username=username, password=PASSWORD)
        menu = self.menu(self.client.get(reverse("login")).content.decode())
        self.assertNotEqual(menu, [])
        refused, seen = [], set()
        for entry in menu:
            page = self.client.get(entry)
            if page.status_code != 200:
                refused.append(f"menu → {entry}: {page.status_code}")
                continue
            for link in self.main(page.content.decode()):
                url = link.replace("&amp;", "&")
                if not url.startswith("/") and not url.startswith("?"):
                    continue  # elsewhere on the web
                target = entry + url if url.startswith("?") else url
                if urlsplit(target).path in seen or target.startswith("/static/"):
                    continue
                seen.add(urlsplit(target).path)
                # A link may lead on (the review screen's start goes to the first item), not to the login.
                answer = self.client.get(target, follow=True)
                ends = answer.redirect_chain[-1][0] if answer.redirect_chain else target
                if answer.status_code != 200 or ends.startswith(reverse("login")):
                    refused.append(f"{entry} → {target}: {answer.status_code} at {ends}")
        return refused

    def test_a_reviewer_is_shown_only_links_that_open(self):
        self.assertEqual(self.refused("reviewer"), [])

    def test_a_lead_is_shown_only_links_that_open(self):
        self.assertEqual(self.refused("lead"), [])

    def test_a_manager_is_shown_only_links_that_open(self):
        self.assertEqual(self.refused("manager"), [])

    def test_an_admin_is_shown_only_links_that_open(self):
        self.assertEqual(self.refused("admin"), [])


class MenuShapeTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.admin = make_user("admin")

    def shape(self, username: str) -> tuple[list[str], list[str]]:
        """The menu's top line (links, and "More" for its <details>), and what "More" holds."""
        self.client.login(username=username, password=PASSWORD)
        html = self.client.get(reverse("login")).content.decode()
        nav = re.search(r'<header class="top">.*?<nav>(.*?)</nav>', html, re.S).group(1)
        more = re.search(r'<details class="more">\s*<summary>More</summary>(.*?)</details>', nav, re.S)
        top = nav.replace(more.group(0), '<a href="More">') if more else nav
        return LINK.findall(top), LINK.findall(more.group(1)) if more else []

    def test_a_reviewer_sees_their_two_queues_and_nothing_else(self):
        self.assertEqual(self.shape("reviewer"), (["/review/", "/pairs/"], []))

    def test_a_leads_menu_keeps_daily_pages_on_top_and_the_rest_under_more(self):
        top, more = self.shape("lead")
        self.assertEqual(
            top,
            ["/review/", "/lead/", "/", "/runs/upload/", "/versions/", "/versions/gate/", "/samples/",
             "/register/", "/agreement/", "More"],
        )  # fmt: skip
        self.assertEqual(
            more,
            ["/pairs/", "/paired/", "/runs/import/", "/sets/", "/rubrics/", "/judges/", "/severity/",
             "/tokens/", "/audit/"],
        )  # fmt: skip

    def test_a_managers_menu_holds_no_reader_page(self):
        top, more = self.shape("manager")
        self.assertEqual(
            top, ["/", "/versions/", "/versions/gate/", "/samples/", "/register/", "/agreement/", "More"]
        )
        self.assertEqual(more, ["/paired/", "/sets/", "/rubrics/", "/judges/", "/severity/", "/tokens/"])

    def test_the_reader_queue_links_to_the_comparisons_and_back(self):
        self.client.login(username="lead", password=PASSWORD)
        for page, other in (("review-queue", "paired-queue"), ("paired-queue", "review-queue")):
            main = self.client.get(reverse(page)).content.decode().split("<main>", 1)[1]
            self.assertIn(f'href="{reverse(other)}"', main)
