"""The managers' pages: compare (candidate and baseline named, swap, signs,
verdict line, chart), the gate in the browser, the menus per role, the
versions page's set and left-out versions, the favicon and the demo's address."""

import json
import re
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import SimpleTestCase, TestCase
from django.urls import reverse
from django.utils.html import escape

from reviewapp.management.commands.demo import address_url
from reviewapp.models import ApiToken, AssistantVersion, Question, Run
from reviewapp.runs.services.runs import run_receive
from reviewapp.versions.charts import CompareOutcome, compare_outcome
from reviewapp.versions.gate import GateRefused, gate_run, refusal_field
from scoring.stats.gate import BOUND, DEFAULT_MARGIN_POINTS, MULTIPLICITY, WORSE
from scoring.stats.paired import paired
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, BaseTestCase, make_user

SET = "mgr-1"
DECLINED = {"declined": True, "answer": "I cannot answer this.", "cited_ids": []}


def upload_variant(base: Run, label: str, change) -> Run:
    """The base run's lines, changed by ``change``, stored and scored as version ``label``'s run."""
    rows = [change(json.loads(answer.raw)) for answer in base.answers.order_by("line_number")]
    upload = SimpleUploadedFile(
        f"answers_run_{label}_set-{base.set_version.version}.jsonl", "\n".join(map(json.dumps, rows)).encode()
    )
    with TestCase.captureOnCommitCallbacks(execute=True):
        received = run_receive(upload=upload)
    return Run.objects.get(id=received.run.id)


def unfinished_run(label: str, status: str, digest: str) -> Run:
    """A run of version ``label`` on SET that ended ``status`` (rejected or failed): no answers, no figures."""
    base = AssistantVersion.objects.get(label="bot-1.0")
    version, _ = AssistantVersion.objects.get_or_create(label=label, defaults={"assistant": base.assistant})
    return Run.objects.create(
        assistant_version=version,
        set_version=Run.objects.get(assistant_version=base).set_version,
        file_name=f"{label}.jsonl",
        stored_name=f"runs/{label}.jsonl",
        size_bytes=1,
        sha256=digest * 64,
        status=status,
    )


class ManagerPagesBase(BaseTestCase):
    """bot-1.0, and on the same questions bot-2.0 (declines every question
    expecting a refusal, so better there, and forty expecting an answer, so
    worse on numeric accuracy and answer rate) and bot-0.9 (adds an
    unsupported number to every answer it gives)."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.base = load_generated_run(answers=300, assistant="bot-1.0", version=SET)
        questions = Question.objects.filter(set_version=cls.base.set_version)
        declines = set(questions.filter(expected_behaviour="decline").values_list("question_id", flat=True))
        answerable = questions.filter(expected_behaviour="answer", split="tuning").order_by("question_id")
        dropped = declines | set(answerable.values_list("question_id", flat=True)[:40])
        cls.declining = upload_variant(
            cls.base, "bot-2.0", lambda row: {**row, **DECLINED} if row["question_id"] in dropped else row
        )
        cls.padded = upload_variant(
            cls.base,
            "bot-0.9",
            lambda row: row if row.get("declined") else {**row, "answer": f"{row['answer']} Also 987654."},
        )

    def setUp(self):
        self.client.login(username="manager", password=PASSWORD)

    def compare(self, candidate: str, baseline: str):
        return self.client.get(
            reverse("version-compare"), {"set": SET, "baseline": baseline, "candidate": candidate}
        )


class ComparePageTests(ManagerPagesBase):
    def test_it_names_the_candidate_first_and_the_baseline_second(self):
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertContains(
            page,
            '<h1><span class="role-tag">candidate</span> bot-2.0 <span class="muted">vs</span> '
            '<span class="role-tag">baseline</span> bot-1.0 <span class="muted">on set</span> mgr-1</h1>',
            html=True,
        )
        self.assertContains(page, "<title>bot-2.0 (candidate) vs bot-1.0 (baseline) · Answer review</title>")
        html = page.content.decode()
        # Columns in the title's order: the candidate's figures, then the baseline's.
        self.assertLess(html.index("bot-2.0 on all"), html.index("bot-1.0 on all"))
        self.assertContains(page, "<th>both ok · only candidate · only baseline · neither</th>", html=True)
        self.assertContains(page, page.context["outcome"].caution)
        self.assertIn("intervals is 95 % on its own", page.context["outcome"].caution)
        numeric = next(c for c in page.context["comparisons"] if c.measure == "numeric_accuracy")
        (both, only_baseline), (only_candidate, neither) = numeric.paired.table
        self.assertEqual((only_candidate, only_baseline), (0, 34))
        self.assertContains(page, f"<td>{both} · 0 · 34 · {neither}</td>", html=True)

    def test_it_says_the_resolved_subset_compares_nothing_where_resolving_decides_the_measure(self):
        # A question both resolved in every attempt has the right number (or the
        # refusal) every time, and so an answer: on numeric accuracy, refusal
        # accuracy and answer rate both versions succeed on every question of
        # the subset, and its difference is 0 by construction, not measured.
        page = self.compare("bot-2.0", "bot-1.0")
        by_construction = [c for c in page.context["comparisons"] if c.resolved_by_construction]
        self.assertEqual(
            [c.measure for c in by_construction], ["numeric_accuracy", "refusal_accuracy", "answer_rate"]
        )
        for comparison in by_construction:
            (_both, only_baseline), (only_candidate, neither) = comparison.resolved.table
            self.assertEqual((only_baseline, only_candidate, neither), (0, 0, 0))
        subset_rows = [
            row.split("</tr>")[0] for row in page.content.decode().split('<tr class="subset">')[1:]
        ]
        constructed = [row for row in subset_rows if "0 by construction" in row]
        self.assertEqual(len(constructed), 3)
        self.assertTrue(
            all('<span class="tag">measured</span>' not in row.split("</tr>")[0] for row in constructed)
        )
        self.assertContains(
            page,
            "0 by construction: both versions succeed on every question of this subset (resolving it "
            "means that), so it compares nothing on this measure",
            count=3,
        )

    def test_it_labels_the_direction_of_a_difference_whose_interval_holds_zero_untested(self):
        # bot-1.1 declines two questions bot-1.0 answered right: -2 of 167 points
        # on numeric accuracy and answer rate, an interval holding 0. Its sign
        # points lower without showing it: an untested direction (spec 004).
        questions = Question.objects.filter(set_version=self.base.set_version)
        two = set(
            questions.filter(expected_behaviour="answer", split="tuning")
            .order_by("question_id")
            .values_list("question_id", flat=True)[:2]
        )
        upload_variant(
            self.base, "bot-1.1", lambda row: {**row, **DECLINED} if row["question_id"] in two else row
        )
        page = self.compare("bot-1.1", "bot-1.0")
        comparisons = {c.measure: c for c in page.context["comparisons"]}
        untested = sorted(m for m, c in comparisons.items() if c.untested_direction)
        self.assertEqual(untested, ["answer_rate", "numeric_accuracy"])
        numeric = comparisons["numeric_accuracy"].paired
        self.assertEqual((numeric.table[0][1], numeric.table[1][0]), (2, 0))
        self.assertTrue(numeric.low < 0 < numeric.high)
        self.assertEqual(page.context["outcome"].by_measure["numeric_accuracy"], "no_difference")
        # The subset of questions both resolved drops the two: nothing untested there.
        self.assertFalse(any(c.resolved_untested_direction for c in comparisons.values()))
        self.assertContains(page, 'lower: <span class="tag">untested direction</span>', count=2)
        # The three labels of spec 004, each said once as the page uses it.
        self.assertContains(page, "<em>measured</em>: worked out from these runs")
        self.assertContains(page, "<em>conditional estimate</em>: holds only under the assumption")
        self.assertContains(
            page, "<em>untested direction</em>: the sign of a difference whose interval holds 0"
        )
        # A difference shown (or of exactly 0) is not a direction left untested.
        shown = self.compare("bot-2.0", "bot-1.0")
        self.assertFalse(any(c.untested_direction for c in shown.context["comparisons"]))
        self.assertNotContains(shown, '<span class="tag">untested direction</span>')

    def test_the_version_page_you_come_from_is_the_candidate(self):
        page = self.client.get(reverse("version-dashboard", args=["bot-2.0"]), {"set": SET})
        self.assertContains(page, '<input type="hidden" name="candidate" value="bot-2.0">', html=True)

    def test_its_swap_link_exchanges_candidate_and_baseline_and_flips_every_sign(self):
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertContains(page, 'href="?set=mgr-1&amp;baseline=bot-2.0&amp;candidate=bot-1.0"')
        swapped = self.compare("bot-1.0", "bot-2.0")
        self.assertEqual(
            (swapped.context["candidate"].label, swapped.context["baseline"].label), ("bot-1.0", "bot-2.0")
        )
        before = {c.measure: c.paired.difference for c in page.context["comparisons"]}
        after = {c.measure: c.paired.difference for c in swapped.context["comparisons"]}
        self.assertEqual(after, {measure: -difference for measure, difference in before.items()})

    def test_it_signs_every_difference_so_that_plus_is_better(self):
        # bot-0.9 adds an unsupported number to each answer: fewer is better, and the sign says so.
        page = self.compare("bot-1.0", "bot-0.9")
        answers = next(c for c in page.context["comparisons"] if c.measure == "unsupported_answers")
        self.assertLess(answers.candidate_all.value, answers.baseline_all.value)  # lower share unsupported
        self.assertGreater(answers.paired.low, 0)
        self.assertEqual(page.context["outcome"].by_measure["unsupported_answers"], "better")
        self.assertContains(page, "<strong>+ is better</strong> for every measure", html=False)
        self.assertContains(page, '<span class="denominator">+ is better</span>', count=1)
        reverse_page = self.compare("bot-0.9", "bot-1.0")
        self.assertEqual(reverse_page.context["outcome"].by_measure["unsupported_answers"], "worse")

    def test_it_states_the_verdict_line_from_the_paired_intervals(self):
        page = self.compare("bot-2.0", "bot-1.0")
        outcome = page.context["outcome"]
        self.assertEqual(outcome.better, ["refusal accuracy"])
        self.assertEqual(outcome.worse, ["numeric accuracy", "answer rate when expected"])
        self.assertEqual(
            outcome.no_difference,
            ["citation validity", "unsupported numbers", "answers with unsupported numbers"],
        )
        self.assertContains(
            page,
            "Candidate <strong>bot-2.0</strong> against bot-1.0: "
            "<strong>better on 1 measure, worse on 2, no detectable difference on 3</strong>",
        )

    def test_it_draws_each_paired_difference_with_its_interval(self):
        page = self.compare("bot-2.0", "bot-1.0")
        self.assertContains(page, '<svg role="img" aria-label="candidate minus baseline per measure')
        self.assertContains(page, "<circle", count=6)
        rows = page.context["chart"]["rows"]
        refusal = next(row for row in rows if row["label"] == "refusal accuracy")
        # Right of zero (x 520) and wholly so: the candidate is better there.
        self.assertEqual(page.context["chart"]["zero"], 520)
        self.assertGreater(refusal["x_low"], 520)
        self.assertContains(page, '<g class="outcome-better">', count=1)
        self.assertContains(page, '<g class="outcome-worse">', count=2)


class CompareOutcomeTests(SimpleTestCase):
    def test_it_counts_measures_by_where_their_interval_lies(self):
        class Comparison:
            def __init__(self, measure, baseline, candidate):
                self.measure, self.label = measure, measure.replace("_", " ")
                self.paired = paired(baseline, candidate)

        questions = [f"q{i}" for i in range(40)]
        all_ok = dict.fromkeys(questions, True)
        none_ok = dict.fromkeys(questions, False)
        outcome = compare_outcome(
            [
                Comparison("numeric_accuracy", none_ok, all_ok),
                Comparison("refusal_accuracy", all_ok, all_ok),
                Comparison("answer_rate", all_ok, none_ok),
                Comparison("citation_validity", {}, {}),
            ]
        )
        self.assertEqual(
            outcome,
            CompareOutcome(
                better=["numeric accuracy"],
                worse=["answer rate"],
                no_difference=["refusal accuracy"],
                not_compared=["citation validity"],
                by_measure={
                    "numeric_accuracy": "better",
                    "refusal_accuracy": "no_difference",
                    "answer_rate": "worse",
                    "citation_validity": "not_compared",
                },
            ),
        )
        self.assertEqual(
            outcome.sentence,
            "better on 1 measure, worse on 1, no detectable difference on 1; "
            "1 not compared (no question both versions have it on)",
        )

    def test_it_cautions_that_several_intervals_are_each_95_percent_on_their_own(self):
        outcome = CompareOutcome(["a", "b"], ["c"], [], ["d"], {})
        self.assertEqual(
            outcome.caution,
            "Each of these 3 intervals is 95 % on its own: across 3 measures, one showing a difference "
            "by chance alone is far likelier than 5 %, even between identical versions. "
            "The release gate judges every measure together.",
        )
        self.assertEqual(CompareOutcome(["a"], [], [], ["d"], {}).caution, "")


class GatePageTests(ManagerPagesBase):
    OPTIONS = {
        "baseline": "bot-1.0",
        "candidate": "bot-2.0",
        "set": SET,
        "measure": ["numeric_accuracy", "refusal_accuracy"],
        "margin": "3",
        "max_drop": "50",
        "floor": "refusal_accuracy=0.5",
        "max_p90": "100",
        "max_timeout_rate": "0.5",
    }

    def test_it_states_the_rule_and_the_defaults_the_gate_itself_gives(self):
        page = self.client.get(reverse("version-gate"), self.OPTIONS)
        self.assertContains(
            page, f"its lower bound for candidate − baseline lies above −margin ({escape(BOUND)}; "
        )
        self.assertContains(page, MULTIPLICITY[0].upper() + MULTIPLICITY[1:] + ".")
        self.assertContains(page, f"; {WORSE}.")
        blank = self.client.get(reverse("version-gate"))
        self.assertContains(blank, f'placeholder="{DEFAULT_MARGIN_POINTS:g} (default)"')
        self.assertContains(
            blank, 'title="none ticked: numeric accuracy, citation validity, refusal accuracy'
        )

    def test_it_gives_the_decision_gate_run_gives_for_the_same_options(self):
        page = self.client.get(reverse("version-gate"), self.OPTIONS)
        expected = gate_run(
            baseline="bot-1.0",
            candidate="bot-2.0",
            set_version=SET,
            measures=["numeric_accuracy", "refusal_accuracy"],
            margin_points=3,
            max_drop_points=50,
            floors={"refusal_accuracy": 0.5},
            max_p90_s=100,
            max_timeout_rate=0.5,
        )
        self.assertEqual(page.context["answer"], expected)
        self.assertEqual(expected["verdict"], "fail")  # numeric accuracy is shown worse
        self.assertEqual(
            [(m["key"], m["verdict"]) for m in page.context["measures"]],
            [("numeric_accuracy", "fail"), ("refusal_accuracy", "pass")],
        )
        self.assertEqual([m["key"] for m in page.context["limits"]], ["e2e_p90", "timeout_rate"])
        # The bound the decision compared with the margin stands beside Newcombe's interval.
        bound = expected["measures"]["refusal_accuracy"]["paired"]["bound_points"]
        self.assertContains(page, f"gate's lower bound {bound:.1f} · McNemar exact")
        self.assertContains(page, '<p class="gate-verdict verdict-fail"><strong>fail</strong>', html=False)
        self.assertContains(page, "the API answers HTTP 409; <code>manage.py gate</code> exits 1")
        for reason in expected["measures"]["numeric_accuracy"]["reasons"]:
            self.assertContains(page, f"<div>{reason}</div>", html=True)
        self.assertContains(
            page,
            '<code class="query">GET /api/gate?baseline=bot-1.0&amp;candidate=bot-2.0&amp;set_version=mgr-1&amp;'
            "measure=numeric_accuracy&amp;measure=refusal_accuracy&amp;margin=3&amp;max_drop=50&amp;"
            "max_p90=100&amp;max_timeout_rate=0.5&amp;floor=refusal_accuracy%3D0.5</code>",
        )

    def test_its_decision_is_the_apis_with_the_defaults(self):
        page = self.client.get(reverse("version-gate"), {"baseline": "bot-1.0", "candidate": "bot-2.0"})
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        api = self.client.get(
            "/api/gate", {"baseline": "bot-1.0", "candidate": "bot-2.0"}, HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        self.assertEqual(api.status_code, 409)
        self.assertEqual(page.context["answer"], api.json())
        self.assertEqual(page.context["status"], 409)
        self.assertEqual(page.context["chart"]["margin"], {"x": 514.6, "label": "−2 margin"})
        # The chart marks each measure's bound, the figure held to the margin line.
        rows = page.context["chart"]["rows"]
        bounds = [m["paired"]["bound_points"] / 100 for m in page.context["measures"]]
        self.assertEqual([row["bound"] for row in rows], bounds)
        self.assertTrue(all(row["x_bound"] <= row["x_low"] + 1e-9 for row in rows))
        self.assertContains(page, 'class="gate-bound"', count=len(rows))

    def test_it_shows_a_refusal_beside_the_field_it_names(self):
        for changes, field, message in (
            ({"floor": "refusal_accuracy=50"}, "floor", "floor 'refusal_accuracy=50': the rate is a share from 0 to 1 (0.9 for 90 %)"),
            ({"margin": "-1"}, "margin", "margin is in points, from 0 to under 100; got -1"),
            ({"measure": ["speed"]}, "measure", "unknown measure 'speed'; use numeric_accuracy, citation_validity, refusal_accuracy, answer_rate, unsupported_numbers, unsupported_answers"),
            ({"judge": "nobody"}, "judge", "no judge named 'nobody'"),
            ({"baseline": "nobody-9"}, "baseline", "no assistant version 'nobody-9' (baseline)"),
            ({"set": "no-such-set"}, "set", "no set version 'no-such-set'"),
            ({"margin": "abc"}, "margin", "Enter a number."),
        ):  # fmt: skip
            with self.subTest(field=field, changes=changes):
                page = self.client.get(reverse("version-gate"), {**self.OPTIONS, **changes})
                self.assertEqual((page.status_code, page.context["answer"]), (200, None))
                self.assertEqual(page.context["form"].errors, {field: [message]})
                self.assertContains(
                    page, f'<span class="field-error" id="{field}-error">{message}</span>', html=True
                )
                self.assertContains(page, f'aria-describedby="{field}-error"')
                self.assertContains(page, "the API answers HTTP 422")

    def test_it_puts_a_version_without_scores_beside_its_own_field(self):
        unfinished_run("bot-rejected", Run.Status.REJECTED, "a")
        page = self.client.get(reverse("version-gate"), {**self.OPTIONS, "candidate": "bot-rejected"})
        self.assertEqual(
            page.context["form"].errors, {"candidate": ["bot-rejected has no scored run on set mgr-1"]}
        )
        refused = GateRefused("the two versions have no set version in common", field="set_version")
        self.assertEqual(refusal_field(refused), "set")

    def test_before_asking_it_offers_the_newest_version_against_the_one_before_it(self):
        page = self.client.get(reverse("version-gate"), {"set": SET})
        self.assertIsNone(page.context["answer"])
        self.assertFalse(page.context["form"].is_bound)
        # Versions in the order they were first seen: bot-1.0, bot-2.0, bot-0.9.
        self.assertEqual(
            {name: page.context["values"][name] for name in ("candidate", "baseline", "set")},
            {"candidate": "bot-0.9", "baseline": "bot-2.0", "set": SET},
        )
        self.assertEqual(
            page.context["chosen_measures"],
            ["numeric_accuracy", "citation_validity", "refusal_accuracy", "unsupported_answers"],
        )
        self.assertContains(page, "<option selected>bot-0.9</option>", count=1, html=True)


class MenuTests(TestCase):
    # Every page the menu could offer; a role's menu holds exactly those it opens.
    PAGES = (
        "/review/", "/pairs/", "/paired/", "/lead/", "/", "/runs/upload/", "/runs/import/", "/versions/",
        "/versions/gate/",
        "/samples/", "/register/", "/agreement/", "/sets/", "/rubrics/", "/judges/", "/severity/", "/tokens/",
        "/audit/", "/admin/",
    )  # fmt: skip

    @classmethod
    def setUpTestData(cls):
        make_user("reviewer")
        make_user("lead")
        make_user("manager")
        make_user("admin")  # the admin role, not staff
        make_user("root", "admin", is_staff=True, is_superuser=True)

    def menu(self, username: str) -> list[str]:
        self.client.login(username=username, password=PASSWORD)
        html = self.client.get(reverse("login")).content.decode()
        nav = re.search(r'<header class="top">.*?<nav>(.*?)</nav>', html, re.S).group(1)
        return re.findall(r'href="([^"]+)"', nav)

    def opens(self, username: str) -> list[str]:
        self.client.login(username=username, password=PASSWORD)
        return [url for url in self.PAGES if self.client.get(url).status_code == 200]

    def test_a_reviewer_sees_only_their_queues(self):
        self.assertEqual(self.menu("reviewer"), ["/review/", "/pairs/"])
        self.assertEqual(self.opens("reviewer"), ["/review/", "/pairs/"])

    def test_a_manager_sees_what_managers_read_and_no_link_that_writes(self):
        menu = self.menu("manager")
        self.assertEqual(
            menu,
            ["/", "/versions/", "/versions/gate/", "/samples/", "/register/", "/agreement/",
             "/paired/", "/sets/", "/rubrics/", "/judges/", "/severity/", "/tokens/"],
        )  # fmt: skip
        # The menu's order is its own (tests/app/core/test_navigation.py); the pages are the same.
        self.assertEqual(sorted(menu), sorted(self.opens("manager")))
        self.assertNotIn("/runs/upload/", menu)
        self.assertNotIn("/runs/import/", menu)
        self.assertNotIn("/lead/", menu)

    def test_a_lead_sees_every_page_a_lead_opens(self):
        menu = self.menu("lead")
        self.assertEqual(sorted(menu), sorted(self.opens("lead")))
        self.assertIn("/runs/upload/", menu)
        self.assertIn("/runs/import/", menu)
        self.assertIn("/lead/", menu)

    def test_only_staff_get_the_admin_link_as_only_staff_open_the_admin_site(self):
        self.assertNotIn("/admin/", self.menu("admin"))
        self.assertNotIn("/admin/", self.opens("admin"))  # the admin site sends the admin role to its login
        self.assertEqual(self.menu("root")[-1], "/admin/")
        self.assertEqual(sorted(self.menu("root")), sorted(self.opens("root")))


class VersionsPageTests(ManagerPagesBase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        # A later set, so that the default set is not the one asked for.
        load_generated_run(answers=20, assistant="bot-3.0", version="mgr-2")
        unfinished_run("bot-rejected", Run.Status.REJECTED, "b")
        unfinished_run("bot-failed", Run.Status.FAILED, "c")

    def test_it_keeps_the_chosen_set_in_the_url_and_every_link(self):
        page = self.client.get(reverse("version-list"), {"set": SET})
        self.assertEqual(page.context["set_version"].version, SET)
        main = page.content.decode().split("<main>", 1)[1]
        links = [link.replace("&amp;", "&") for link in re.findall(r'href="(/versions/[^"]*)"', main)]
        self.assertEqual(
            links,
            [
                "/versions/gate/?set=mgr-1",
                "/versions/planner/",
                "/versions/bot-0.9/?set=mgr-1",
                "/versions/compare/?set=mgr-1&candidate=bot-0.9&baseline=bot-2.0",
                "/versions/gate/?set=mgr-1&candidate=bot-0.9&baseline=bot-2.0",
                "/versions/bot-2.0/?set=mgr-1",
                "/versions/compare/?set=mgr-1&candidate=bot-2.0&baseline=bot-1.0",
                "/versions/gate/?set=mgr-1&candidate=bot-2.0&baseline=bot-1.0",
                "/versions/bot-1.0/?set=mgr-1",
            ],
        )
        self.assertContains(page, "<option selected>mgr-1</option>", html=True)

    def test_it_opens_on_the_set_with_the_most_versions_not_the_one_uploaded_last(self):
        # mgr-2 was uploaded last and holds one version; mgr-1 holds three.
        page = self.client.get(reverse("version-list"))
        self.assertEqual(page.context["set_version"].version, SET)
        self.assertEqual(len(page.context["versions"]), 3)

    def test_it_opens_on_the_set_last_viewed_in_this_session(self):
        self.client.get(reverse("version-list"), {"set": "mgr-2"})
        self.assertEqual(self.client.get(reverse("version-list")).context["set_version"].version, "mgr-2")
        self.assertEqual(self.client.get(reverse("version-gate")).context["values"]["set"], "mgr-2")
        self.client.get(reverse("version-list"), {"set": SET})
        self.assertEqual(self.client.get(reverse("version-list")).context["set_version"].version, SET)
        # Another session knows nothing of it.
        self.client.logout()
        self.client.login(username="manager", password=PASSWORD)
        self.client.get(reverse("version-list"), {"set": "mgr-2"})
        self.client.logout()
        self.client.login(username="lead", password=PASSWORD)
        self.assertEqual(self.client.get(reverse("version-list")).context["set_version"].version, SET)

    def test_it_leaves_out_versions_whose_only_runs_were_rejected_or_failed(self):
        page = self.client.get(reverse("version-list"), {"set": SET})
        listed = [row.version.label for row in page.context["versions"]]
        self.assertEqual(listed, ["bot-0.9", "bot-2.0", "bot-1.0"])
        self.assertEqual(
            [(row.stored_runs, row.left_out_runs) for row in page.context["versions"]], [(1, 0)] * 3
        )
        self.assertNotContains(page, "bot-rejected")
        self.assertNotContains(page, "bot-failed")
        self.assertEqual([s.version for s in page.context["set_versions"]], ["mgr-2", SET])


class FaviconTests(TestCase):
    def test_it_serves_the_favicon_and_every_page_links_it(self):
        icon = self.client.get("/static/favicon.svg")
        self.assertEqual((icon.status_code, icon["Content-Type"]), (200, "image/svg+xml"))
        self.assertTrue(
            b"".join(icon.streaming_content).startswith(b'<svg xmlns="http://www.w3.org/2000/svg"')
        )
        self.assertContains(
            self.client.get(reverse("login")),
            '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">',
            html=True,
        )
        old_style = self.client.get("/favicon.ico")
        self.assertEqual((old_style.status_code, old_style["Location"]), (301, "/static/favicon.svg"))


class DemoAddressTests(SimpleTestCase):
    def test_it_prints_the_address_the_server_listens_on(self):
        for address, url in (
            ("", "http://127.0.0.1:8000/"),
            ("127.0.0.1:8000", "http://127.0.0.1:8000/"),
            ("8001", "http://127.0.0.1:8001/"),
            ("localhost:9000", "http://localhost:9000/"),
            ("[::1]:8002", "http://[::1]:8002/"),
            ("0.0.0.0:8003", "http://127.0.0.1:8003/ (served on 0.0.0.0:8003, every interface)"),
            ("0:8004", "http://127.0.0.1:8004/ (served on 0:8004, every interface)"),
        ):
            with self.subTest(address=address):
                self.assertEqual(address_url(address), url)

    def test_bin_demo_hands_its_address_to_the_demo_and_to_the_server(self):
        script = (Path(__file__).resolve().parents[3] / "bin" / "demo").read_text()
        self.assertIn('address="${ADDRESS:-127.0.0.1:8000}"', script)
        self.assertIn('manage.py demo --address "$address"\n', script)
        self.assertTrue(script.rstrip().endswith('manage.py runserver "$address"'))
