import json
import re
import uuid

from django.urls import reverse
from django.utils import timezone

from reviewapp.models import Answer, Assignment, Judgement, Rubric, RubricVersion, Sample, SetVersion
from reviewapp.review.defaults import DECLINE_RULE
from reviewapp.review.selectors import REASONS
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, BaseTestCase, make_user

RUBRIC_KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")


def full_judgement(**overrides) -> dict:
    """A resolved judgement as the screen sends it: no material error, the
    conclusion correct and the request fully met."""
    data = {
        "submission_key": str(uuid.uuid4()),
        "addresses_question": "yes",
        **{f"q_{key}": "yes" for key in RUBRIC_KEYS},
        "material_error": "no",
        "correctness": "correct",
        "fulfilment": "full",
        "note": "",
    }
    data.update(overrides)
    return data


# Which grade key sets each value of the two metrics (static/review.js PRESETS).
PRESET_CORRECTNESS = {
    "correct": ["1", "2"],
    "material_error": ["3"],
    "no_gradable_conclusion": ["4"],
    "pending": ["p"],
}
PRESET_FULFILMENT = {"full": ["1"], "partial": ["2"], "not_met": ["4"], "pending": ["p"]}

MATERIAL = {
    "material_error": "yes",
    "correctness": "material_error",
    "error_claim": "35 per 1,000",
    "error_evidence": "the record says 41",
    "error_effect": "understates mortality",
    "error_kind": "wrong_conclusion",
}


class ReviewTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=60, assistant="secretbot-9.9")
        cls.reader_a = make_user("reader_a", "reviewer")
        cls.reader_b = make_user("reader_b", "reviewer")
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run),
            size=6,
            seed=11,
            rubric_version=rubric_default(),
            created_by=cls.lead,
        )
        sample_assign(sample=cls.sample, reviewers=[cls.reader_a, cls.reader_b], readers_per_item=2)

    def login(self, user):
        self.client.login(username=user.username, password=PASSWORD)

    def mine(self, user):
        return list(Assignment.objects.filter(reviewer=user).order_by("order"))

    def url(self, assignment):
        return reverse("review-item", args=[self.sample.id, assignment.alias])


class ReviewItemTests(ReviewTestCase):
    def test_it_shows_the_answer_beside_its_evidence_and_nothing_that_identifies_the_run(self):
        self.login(self.reader_a)
        assignment = self.mine(self.reader_a)[0]
        record = assignment.item.answer.record
        response = self.client.get(self.url(assignment))
        self.assertContains(response, "item 1 of 6")
        self.assertContains(response, record["retrieved_records"][0]["id"])
        html = response.content.decode()
        for secret in (
            "secretbot",
            "9.9",
            "gen-1",
            f"/runs/{self.logged_run.id}/",
            "latency",
            "tool_calls",
            "run #",
        ):
            self.assertNotIn(secret, html)

    def test_it_gives_404_for_another_readers_item(self):
        self.login(self.reader_a)
        theirs = [
            a for a in self.mine(self.reader_b) if a.alias not in {m.alias for m in self.mine(self.reader_a)}
        ]
        self.assertEqual(self.client.get(self.url(theirs[0])).status_code, 404)

    def test_it_keeps_reviewers_out_of_lead_pages(self):
        self.login(self.reader_a)
        for url in (
            reverse("run-detail", args=[self.logged_run.id]),
            reverse("sample-detail", args=[self.sample.id]),
            reverse("rubric-list"),
        ):
            self.assertEqual(self.client.get(url).status_code, 403, url)
        self.assertRedirects(self.client.get(reverse("home")), reverse("review-queue"))

    def test_it_saves_a_judgement_and_brings_the_next_item(self):
        self.login(self.reader_a)
        first, second = self.mine(self.reader_a)[:2]
        response = self.client.post(self.url(first), full_judgement(note="fine"))
        self.assertRedirects(response, self.url(second))
        judgement = Judgement.objects.get(assignment=first)
        self.assertEqual(
            (judgement.revision, judgement.grade, judgement.note, judgement.author),
            (1, "resolved", "fine", self.reader_a),
        )
        self.assertEqual(judgement.rubric_answers, dict.fromkeys(RUBRIC_KEYS, "yes"))

    def test_it_makes_one_judgement_of_a_double_submit(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        data = full_judgement()
        self.client.post(self.url(first), data)
        self.client.post(self.url(first), data)
        self.assertEqual(Judgement.objects.filter(assignment=first).count(), 1)

    def test_it_keeps_every_revision(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        self.client.post(self.url(first), full_judgement(fulfilment="partial", note="the caveat is missing"))
        self.client.post(self.url(first), full_judgement(note="on second thought"))
        revisions = list(
            Judgement.objects.filter(assignment=first).order_by("revision").values_list("revision", "grade")
        )
        self.assertEqual(revisions, [(1, "partially_resolved"), (2, "resolved")])

    def test_it_records_an_answer_that_does_not_address_the_question_asking_only_for_a_material_error(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        self.client.post(
            self.url(first),
            {
                "submission_key": str(uuid.uuid4()),
                "addresses_question": "no",
                "material_error": "no",
                "note": "it answers about exports, not imports",
                # Sent by a form whose rubric was filled before "no": ignored.
                "q_series": "yes",
                "fulfilment": "full",
            },
        )
        judgement = Judgement.objects.get(assignment=first)
        self.assertEqual(
            (judgement.addresses_question, judgement.rubric_answers, judgement.grade),
            (False, {}, "unresolved"),
        )
        self.assertEqual(
            (judgement.material_error, judgement.correctness, judgement.fulfilment),
            ("no", "no_gradable_conclusion", "not_met"),
        )
        self.assertEqual(judgement.outcome, "does not address the question")

    def test_it_records_a_material_error_in_an_answer_that_does_not_address_the_question(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        response = self.client.post(
            self.url(first),
            {
                "submission_key": str(uuid.uuid4()),
                "addresses_question": "no",
                **MATERIAL,
                "error_kind": "fabricated_evidence",
            },
        )
        self.assertEqual(response.status_code, 302)
        judgement = Judgement.objects.get(assignment=first)
        self.assertEqual(
            (judgement.grade, judgement.material_error, judgement.error_kind, judgement.correctness),
            ("material_error", "yes", "fabricated_evidence", "no_gradable_conclusion"),
        )
        self.assertEqual(judgement.outcome, "material error (off the question)")

    def test_it_refuses_an_incomplete_judgement_and_stores_nothing(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        response = self.client.post(
            self.url(first), full_judgement(q_period="", material_error="", correctness="", fulfilment="")
        )
        self.assertContains(response, "Answer “Is it the right period?” with yes or no.", status_code=400)
        self.assertContains(
            response, "Say whether the answer holds a material error: yes, no or pending.", status_code=400
        )
        self.assertContains(response, "Say whether the core conclusion holds:", status_code=400)
        self.assertContains(response, "Say how much of the request is met:", status_code=400)
        response = self.client.post(self.url(first), full_judgement(q_series="na"))
        self.assertContains(response, "with yes or no", status_code=400)
        self.assertFalse(Judgement.objects.exists())

    def test_it_shows_every_error_beside_its_field_at_once(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        response = self.client.post(
            self.url(first),
            full_judgement(q_unit="", material_error="yes", error_claim="35", error_kind=""),
            HTTP_HX_REQUEST="true",
        )
        # htmx swaps only a 2xx response: the refused form comes back as 200, in place.
        self.assertEqual(response.status_code, 200)
        self.assertNotContains(response, "<html")
        self.assertContains(response, "Not saved: 4 things to fix, marked in red.")
        for field, message in (
            ("q_unit", "Answer “Is the unit stated?” with yes or no."),
            ("error_evidence", "A material error records the evidence against it."),
            ("error_effect", "A material error records its effect on the user."),
            ("error_kind", "Say which kind of material error it is."),
        ):
            self.assertContains(
                response, f'<span class="field-error" id="error-{field}">{message}</span>', html=True
            )
        self.assertContains(response, '<fieldset class="question invalid" data-key="q_unit">')
        # What the reader typed is kept.
        self.assertContains(response, ">35</textarea>")
        self.assertFalse(Judgement.objects.exists())

    def test_it_refuses_a_grade_other_than_resolved_without_a_reason(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        for overrides, label in (
            ({"fulfilment": "partial"}, "partially resolved"),
            ({"correctness": "no_gradable_conclusion", "fulfilment": "not_met"}, "unresolved"),
            ({"material_error": "pending"}, "pending verification"),
        ):
            response = self.client.post(self.url(first), full_judgement(note="  ", **overrides))
            self.assertContains(
                response,
                f"Say why it is {label}: every outcome but resolved needs a reason another reader can check.",
                status_code=400,
            )
        self.assertFalse(Judgement.objects.exists())
        self.client.post(self.url(first), full_judgement(fulfilment="partial", note="the caveat is missing"))
        self.assertEqual(Judgement.objects.get(assignment=first).grade, "partially_resolved")

    def test_it_refuses_metrics_that_contradict_each_other_quoting_the_rule(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        response = self.client.post(
            self.url(first), full_judgement(correctness="material_error", note="the figure is wrong")
        )
        self.assertContains(
            response,
            "These answers contradict each other. The rule: “A core conclusion that does not hold is itself "
            "a material error: answer the material-error question yes, with its claim, evidence and effect, "
            "or look at the conclusion again.”",
            status_code=400,
        )
        self.assertFalse(Judgement.objects.exists())

    def test_it_needs_claim_evidence_effect_and_kind_for_a_material_error(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        response = self.client.post(
            self.url(first), full_judgement(material_error="yes", error_claim="35 per 1,000")
        )
        self.assertContains(response, "A material error records the evidence against it.", status_code=400)
        self.assertContains(response, "Say which kind of material error it is.", status_code=400)
        self.client.post(self.url(first), full_judgement(**MATERIAL))
        judgement = Judgement.objects.get(assignment=first)
        self.assertEqual(
            (judgement.grade, judgement.error_kind, judgement.error_evidence, judgement.fulfilment),
            ("material_error", "wrong_conclusion", "the record says 41", "full"),
        )

    def test_it_keeps_pending_apart_from_the_grades(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        self.client.post(
            self.url(first),
            full_judgement(
                correctness="pending",
                borderline="on",
                needs_more_info="on",
                note="the office publishes the 2024 figure in May",
            ),
        )
        judgement = Judgement.objects.get(assignment=first)
        self.assertEqual(
            (judgement.pending, judgement.grade, judgement.borderline, judgement.needs_more_info),
            (True, "", True, True),
        )
        self.assertEqual(judgement.outcome, "pending verification")

    def test_it_swaps_in_the_next_item_for_htmx(self):
        self.login(self.reader_a)
        first, second = self.mine(self.reader_a)[:2]
        response = self.client.post(self.url(first), full_judgement(), HTTP_HX_REQUEST="true")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["HX-Push-Url"], self.url(second))
        self.assertNotContains(response, "<html")
        self.assertContains(response, f'<code class="alias">{second.alias}</code>')
        self.assertContains(
            response, f'<span class="saved" role="status">✓ Saved item 1 ({first.alias}): resolved</span>'
        )

    def test_it_confirms_the_save_on_the_next_page_once(self):
        self.login(self.reader_a)
        first, second = self.mine(self.reader_a)[:2]
        response = self.client.post(
            self.url(first), full_judgement(fulfilment="partial", note="no caveat"), follow=True
        )
        self.assertEqual(response.redirect_chain, [(self.url(second), 302)])
        self.assertContains(
            response,
            f'<span class="saved" role="status">✓ Saved item 1 ({first.alias}): partially resolved</span>',
        )
        self.assertNotContains(self.client.get(self.url(second)), 'class="saved"')

    def test_it_lists_the_readers_own_items_to_jump_to(self):
        self.login(self.reader_a)
        mine = self.mine(self.reader_a)
        self.client.post(self.url(mine[0]), full_judgement())
        response = self.client.get(self.url(mine[1]))
        jump = response.context["jump"]
        self.assertEqual([entry["alias"] for entry in jump], [a.alias for a in mine])
        self.assertEqual([entry["outcome"] for entry in jump], ["resolved", "", "", "", "", ""])
        self.assertEqual([entry["current"] for entry in jump], [False, True, False, False, False, False])
        for assignment in mine:
            self.assertContains(response, f'href="{self.url(assignment)}"')
        theirs = {a.alias for a in self.mine(self.reader_b)} - {a.alias for a in mine}
        for alias in theirs:
            self.assertNotContains(response, f"/{alias}/")

    def test_it_returns_the_full_page_or_the_screen_alone_for_htmx(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        page = self.client.get(self.url(first))
        self.assertContains(page, "<html")
        self.assertContains(page, 'id="review-screen"')
        self.assertContains(page, "review.js")
        partial = self.client.get(self.url(first), HTTP_HX_REQUEST="true")
        self.assertNotContains(partial, "<html")
        self.assertContains(partial, 'id="review-screen"')
        self.assertContains(partial, 'id="grade-rules"')

    def test_it_refuses_other_methods(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        self.assertEqual(self.client.put(self.url(first)).status_code, 405)

    def test_it_asks_for_the_material_error_before_coverage_and_shows_the_rules(self):
        self.login(self.reader_a)
        html = self.client.get(self.url(self.mine(self.reader_a)[0])).content.decode()
        order = [
            html.index(marker)
            # Issue 25, point 13: spec 004's order, as the README gives it.
            for marker in (
                'name="addresses_question"',
                'name="material_error"',
                'name="correctness"',
                'name="fulfilment"',
                'name="q_series"',
                'name="q_unsupported_claim"',
                'name="note"',
            )
        ]
        self.assertEqual(order, sorted(order))
        for text in (
            "any valid route to the evidence are equal",
            "can be resolved",
            "not the reference&#x27;s text",
            "is there a case, backed by evidence, that overturns a deciding claim",
            "anonymity is limited",
            "A link, a phrase or a habit of layout can still give away",
            "A material error decides the grade by itself",
        ):
            self.assertIn(text, html)

    def test_it_shows_the_keys_that_set_the_core_conclusion_and_the_request(self):
        self.login(self.reader_a)
        html = self.client.get(self.url(self.mine(self.reader_a)[0])).content.decode()
        for key, presets in (("correctness", PRESET_CORRECTNESS), ("fulfilment", PRESET_FULFILMENT)):
            start = html.index(f'data-key="{key}"')
            row = html[start : html.index("</fieldset>", start)]
            for value, keys in presets.items():
                label = row[row.index(f'value="{value}"') :].split("</label>")[0]
                self.assertEqual(re.findall(r"<kbd>(.+?)</kbd>", label), keys, (key, value))

    def test_it_labels_the_i_box_by_what_it_does(self):
        # Issue 25, point 13: the flag says the answer asks the user for more,
        # and ticking it sends the item to a lead; one label on every screen.
        self.login(self.reader_a)
        response = self.client.get(self.url(self.mine(self.reader_a)[0]))
        self.assertContains(
            response,
            f'<input type="checkbox" name="needs_more_info"> <kbd>i</kbd> the answer {REASONS["needs_info"]} '
            '<span class="muted">(sends it to a lead)</span>',
            html=False,
        )
        self.assertNotContains(response, "needs more information")

    def test_a_correct_decline_answers_the_figure_questions_not_applicable_and_needs_no_reason(self):
        # Issue 25, point 12: a decline states no figure, so "right series?",
        # "right period?" and "unit stated?" do not apply to it.
        self.login(self.reader_a)
        first, second = self.mine(self.reader_a)[:2]
        Answer.objects.filter(id=first.item.answer_id).update(declined=True)
        Answer.objects.filter(id=second.item.answer_id).update(declined=False)
        page = self.client.get(self.url(first))
        for key in ("series", "period", "unit", "caveat"):
            self.assertContains(page, f'name="q_{key}" value="na"')
        self.assertNotContains(page, 'name="q_unsupported_claim" value="na"')
        self.assertContains(page, DECLINE_RULE)
        self.assertNotContains(self.client.get(self.url(second)), 'name="q_series" value="na"')
        not_applicable = {f"q_{key}": "na" for key in ("series", "period", "unit", "caveat")}
        self.client.post(self.url(first), full_judgement(**not_applicable, q_unsupported_claim="no"))
        judgement = Judgement.objects.get(assignment=first)
        self.assertEqual((judgement.grade, judgement.note), ("resolved", ""))
        self.assertEqual(
            judgement.rubric_answers,
            {"series": "na", "period": "na", "unit": "na", "caveat": "na", "unsupported_claim": "no"},
        )
        # An answer that does state a figure is still asked yes or no.
        response = self.client.post(self.url(second), full_judgement(**not_applicable))
        self.assertContains(response, 'id="error-q_series"', status_code=400)
        self.assertFalse(Judgement.objects.filter(assignment=second).exists())

    def test_it_never_shows_one_reader_the_others_work(self):
        shared = next(
            a
            for a in self.mine(self.reader_a)
            if Assignment.objects.filter(item=a.item, reviewer=self.reader_b).exists()
        )
        self.login(self.reader_a)
        self.client.post(self.url(shared), full_judgement(note="a private remark"))
        theirs = Assignment.objects.get(item=shared.item, reviewer=self.reader_b)
        self.login(self.reader_b)
        self.assertNotContains(self.client.get(self.url(theirs)), "a private remark")

    def test_it_shows_log_text_as_text(self):
        first = self.mine(self.reader_a)[0]
        answer = first.item.answer
        record = answer.record
        record["answer"] = "<script>alert('x')</script> <b>bold</b>"
        Answer.objects.filter(id=answer.id).update(raw=json.dumps(record))
        self.login(self.reader_a)
        response = self.client.get(self.url(first))
        self.assertNotContains(response, "<script>alert('x')</script>")
        self.assertContains(
            response, "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &lt;b&gt;bold&lt;/b&gt;"
        )

    def test_it_lists_the_readers_samples_with_progress(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        self.client.post(self.url(first), full_judgement())
        response = self.client.get(reverse("review-queue"))
        self.assertContains(response, "1 of 6")


class LeadReviewPagesTests(ReviewTestCase):
    def test_it_freezes_a_rubric_version_once_a_judgement_uses_it(self):
        self.login(self.lead)
        rubric = rubric_default().rubric
        form = {
            "guidance": "new guidance",
            "questions": "series | Right series?\ncaveat | Caveat stated? | n/a when no caveat",
            "awkward_cases": "a refusal | unresolved unless the data lack it",
        }
        self.client.post(reverse("rubric-edit", args=[rubric.id]), form)
        self.assertEqual(rubric.versions.count(), 1)  # not yet used: edited in place
        self.client.login(username="reader_a", password=PASSWORD)
        first = self.mine(self.reader_a)[0]
        self.client.post(
            self.url(first),
            {
                "submission_key": str(uuid.uuid4()),
                "addresses_question": "no",
                "material_error": "no",
                "note": "off the question",
            },
        )
        self.login(self.lead)
        self.client.post(reverse("rubric-edit", args=[rubric.id]), {**form, "guidance": "third"})
        self.assertEqual(
            list(rubric.versions.order_by("number").values_list("number", "guidance")),
            [(1, "new guidance"), (2, "third")],
        )
        self.assertEqual(RubricVersion.objects.get(number=2).questions.get(key="caveat").allows_na, True)

    def test_it_refuses_a_new_rubric_with_a_repeated_key_and_keeps_nothing(self):
        self.login(self.lead)
        response = self.client.post(
            reverse("rubric-new"), {"name": "Short", "questions": "unit | Unit stated?\nunit | Unit right?"}
        )
        self.assertContains(response, "each rubric question needs its own key", status_code=400)
        self.assertFalse(Rubric.objects.filter(name="Short").exists())
        self.client.post(reverse("rubric-new"), {"name": "Short", "questions": "unit | Unit stated?"})
        self.assertEqual(Rubric.objects.get(name="Short").versions.get().questions.get().key, "unit")

    def test_it_puts_a_failure_back_into_the_set_in_one_step(self):
        self.login(self.lead)
        item = self.sample.items.get(position=1)
        response = self.client.post(
            reverse("sample-item", args=[self.sample.id, 1]),
            {"version": "gen-2", "question": "", "expected_values": "7.5", "expected_caveats": "provisional"},
        )
        self.assertRedirects(response, reverse("set-detail", args=["gen-2"]))
        revised = SetVersion.objects.get(version="gen-2")
        self.assertEqual(revised.based_on, self.logged_run.set_version)
        question = revised.questions.get(question_id=item.answer.question_id)
        self.assertEqual((question.expected_values, question.expected_caveats), ([7.5], ["provisional"]))
        self.assertEqual(revised.questions.count(), self.logged_run.set_version.questions.count())

    def test_it_shows_the_sample_with_its_seed_strata_and_weights(self):
        self.login(self.lead)
        response = self.client.get(reverse("sample-detail", args=[self.sample.id]))
        self.assertContains(response, f"seed <code>{self.sample.seed}</code>")
        for name, stratum in self.sample.strata.items():
            self.assertContains(response, f'<td>{name}</td><td class="num">{stratum["population"]}</td>')
        self.assertContains(response, "reader_a")

    def test_it_lets_a_manager_read_but_not_write(self):
        manager = self.manager
        self.login(manager)
        self.assertEqual(self.client.get(reverse("run-detail", args=[self.logged_run.id])).status_code, 200)
        self.assertEqual(self.client.get(reverse("sample-new")).status_code, 403)
        self.assertEqual(
            self.client.post(reverse("run-rescore", args=[self.logged_run.id]), {}).status_code, 403
        )
        self.assertEqual(
            self.client.post(reverse("sample-item", args=[self.sample.id, 1]), {"version": "x"}).status_code,
            403,
        )

    def test_it_draws_and_assigns_from_the_pages(self):
        self.login(self.lead)
        response = self.client.post(
            reverse("sample-new"),
            {
                "run": self.logged_run.id,
                "size": 5,
                "allocation": "equal",
                "min_per_stratum": 1,
                "seed": 3,
                "rubric_version": rubric_default().id,
            },
        )
        sample = self.logged_run.samples.exclude(id=self.sample.id).get()
        self.assertRedirects(response, reverse("sample-detail", args=[sample.id]))
        self.assertEqual((sample.seed, sample.size), (3, 5))
        self.client.post(
            reverse("sample-assign", args=[sample.id]),
            {"reviewers": [self.reader_a.id, self.reader_b.id], "readers_per_item": 2},
        )
        self.assertEqual(Assignment.objects.filter(item__sample=sample).count(), 10)


class SampleDrawPageTests(ReviewTestCase):
    # The run holds 42 tuning answers (en 21, fr 12, es 9) and 18 sealed ones (en 8, fr 8, es 2).
    def draw(self, **fields):
        self.login(self.lead)
        data = {
            "run": self.logged_run.id,
            "size": 5,
            "allocation": "proportional",
            "min_per_stratum": 1,
            "seed": 3,
            "rubric_version": rubric_default().id,
            **fields,
        }
        return self.client.post(reverse("sample-new"), data)

    def test_a_second_click_on_draw_leads_to_the_first_sample(self):
        self.login(self.lead)
        page = self.client.get(reverse("sample-new")).content.decode()
        key = shown = re.search(r'name="submission_key" value="([0-9a-f-]{36})"', page).group(1)
        for seed in ("", "3"):  # unseeded, a second click would draw other answers
            before = Sample.objects.count()
            first = self.draw(seed=seed, submission_key=key)
            second = self.draw(seed=seed, submission_key=key)
            self.assertEqual(Sample.objects.count(), before + 1)
            self.assertEqual(second["Location"], first["Location"])
            self.assertIn("drawn by the first click", self.client.get(second["Location"]).content.decode())
            key = str(uuid.uuid4())
        # The page gives each showing of the form its own key.
        again = self.client.get(reverse("sample-new")).content.decode()
        self.assertIn('name="submission_key"', again)
        self.assertNotIn(shown, again)

    def sealed_question_ids(self) -> set[str]:
        return set(
            self.logged_run.set_version.questions.filter(split="sealed").values_list("question_id", flat=True)
        )

    def test_it_shows_minimums_that_do_not_fit_as_an_error_and_stores_nothing(self):
        before = Sample.objects.count()
        response = self.draw(size=5, min_per_stratum=4)
        self.assertContains(response, "The sample was not drawn.", status_code=400)
        self.assertContains(
            response,
            "<li>3 strata × a minimum of 4 = 12 items, more than the 5 asked for: "
            "ask for at least 12, lower the minimum, or use fewer strata</li>",
            status_code=400,
        )
        self.assertEqual(Sample.objects.count(), before)

    def test_it_draws_the_sealed_part_alone_and_shows_who_when_and_why(self):
        response = self.draw(size=6, splits="sealed", by_split="on", sealed_reason="Release <2.1> figure")
        sample = self.logged_run.samples.exclude(id=self.sample.id).get()
        self.assertRedirects(response, reverse("sample-detail", args=[sample.id]))
        self.assertEqual(
            (sample.includes_sealed, sample.sealed_opened_by, sample.sealed_reason, sample.strata_fields),
            (True, self.lead, "Release <2.1> figure", ["language", "split"]),
        )
        self.assertEqual(
            {key: s["population"] for key, s in sample.strata.items()},
            {"language=en|split=sealed": 8, "language=es|split=sealed": 2, "language=fr|split=sealed": 8},
        )
        drawn = set(sample.items.values_list("answer__question_id", flat=True))
        self.assertEqual((len(drawn), drawn - self.sealed_question_ids()), (6, set()))
        page = self.client.get(reverse("sample-detail", args=[sample.id]))
        opened_at = timezone.localtime(sample.sealed_opened_at).strftime("%Y-%m-%d %H:%M")
        self.assertContains(
            page,
            f"<strong>sealed part opened</strong> by lead at {opened_at}, "
            "because: <q>Release &lt;2.1&gt; figure</q>",
        )

    def test_it_refuses_the_sealed_part_without_a_reason_and_stores_nothing(self):
        before = Sample.objects.count()
        response = self.draw(splits="both", sealed_reason=" ")
        self.assertContains(
            response,
            "<li>say why the sealed part is opened; the reason is kept with the sample</li>",
            status_code=400,
        )
        self.assertEqual(Sample.objects.count(), before)

    def test_it_draws_tuning_answers_only_when_the_page_leaves_the_split_alone(self):
        self.draw(size=42, by_split="on")
        sample = self.logged_run.samples.exclude(id=self.sample.id).get()
        drawn = set(sample.items.values_list("answer__question_id", flat=True))
        self.assertEqual((len(drawn), drawn & self.sealed_question_ids()), (42, set()))
        self.assertEqual(
            set(sample.strata),
            {"language=en|split=tuning", "language=es|split=tuning", "language=fr|split=tuning"},
        )
        self.assertEqual((sample.includes_sealed, sample.sealed_opened_by), (False, None))

    def test_it_says_so_when_asked_for_more_than_the_frame_holds(self):
        response = self.draw(size=100, min_per_stratum=10)
        sample = self.logged_run.samples.exclude(id=self.sample.id).get()
        self.assertEqual((sample.size, sample.frame_size), (42, 42))
        page = self.client.get(response["Location"])
        self.assertContains(
            page,
            "Sample drawn: 42 items (the frame holds only 42 answers, fewer than the 100 asked for, "
            "so every one of them is drawn), seed 3. Assign it to readers.",
        )


class LastItemTests(ReviewTestCase):
    def test_it_sends_the_reader_back_to_the_queue_after_the_last_item(self):
        self.login(self.reader_a)
        items = self.mine(self.reader_a)
        for assignment in items[:-1]:
            self.client.post(self.url(assignment), full_judgement())
        response = self.client.post(self.url(items[-1]), full_judgement(), HTTP_HX_REQUEST="true")
        self.assertEqual(response["HX-Redirect"], reverse("review-queue") + f"?done={self.sample.id}")
        response = self.client.post(self.url(items[-1]), full_judgement())
        self.assertRedirects(response, reverse("review-queue") + f"?done={self.sample.id}")
