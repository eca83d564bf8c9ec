"""The audit trail: each kind of change issue 30 lists is there with who and
when, leads and admins read it and download it, nobody edits it."""

import csv
import io

from auditlog.context import set_actor
from auditlog.models import LogEntry
from django.urls import reverse

from reviewapp.core.roles import grant
from reviewapp.judges.services.judge_versions import judge_version_save
from reviewapp.models import ApiToken, Scoring
from reviewapp.review.services.review import rubric_default, rubric_save
from reviewapp.review.services.samples import Frame, sample_draw
from reviewapp.review.services.severity import severity_weights_save
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.scorings.services import scoring_open_sealed
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, BaseTestCase, KeepsClassFiles, make_user


class AuditTrailTests(KeepsClassFiles, BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=40, assistant="audited-1.0")
        cls.reader = make_user("reader_a", "reviewer")
        cls.admin = make_user("boss", "admin")

    def as_lead(self):
        self.client.login(username="lead", password=PASSWORD)
        return self.client

    def entries(self, model: str):
        return LogEntry.objects.filter(content_type__model=model).order_by("id")

    def test_changes_made_on_the_pages_are_kept_with_the_person(self):
        lead = self.as_lead()
        response = lead.post(
            reverse("sample-new"),
            {
                "run": self.logged_run.id,
                "size": 4,
                "allocation": "proportional",
                "min_per_stratum": 1,
                "seed": 5,
                "rubric_version": rubric_default().id,
                "name": "audited draw",
            },
        )
        self.assertEqual(response.status_code, 302)
        sample = self.logged_run.samples.get(name="audited draw")
        lead.post(reverse("sample-assign", args=[sample.id]), {"reviewers": [self.reader.id], "readers_per_item": 1})
        lead.post(reverse("run-exclude", args=[self.logged_run.id]), {"reason": "a broken deploy"})
        lead.post(reverse("token-list"), {"name": "nightly", "scopes": ["runs:read"], "days": 30})
        token = ApiToken.objects.get(name="nightly")
        lead.post(reverse("token-revoke", args=[token.id]))

        on_sample = list(self.entries("sample").filter(object_pk=str(sample.id)))
        drawn = on_sample[0]
        self.assertEqual((drawn.action, drawn.actor), (LogEntry.Action.CREATE, self.lead))
        assigned = next(entry for entry in on_sample if "assigned to" in entry.changes_dict)
        self.assertEqual((assigned.actor, assigned.changes_dict["assigned to"]), (self.lead, ["", "reader_a"]))
        left_out = self.entries("run").get()
        self.assertEqual(
            (left_out.actor, left_out.changes_dict), (self.lead, {"excluded_reason": ["", "a broken deploy"]})
        )
        made, revoked = self.entries("apitoken")
        self.assertEqual((made.action, made.actor), (LogEntry.Action.CREATE, self.lead))
        self.assertNotIn("key_hash", made.changes_dict)  # the secret stays out
        self.assertIn("revoked_at", revoked.changes_dict)

        page = lead.get(reverse("audit-trail")).content.decode()
        for seen in ("audited draw", "assigned to", "a broken deploy", "nightly", "revoked_at"):
            self.assertIn(seen, page)

    def test_every_kind_of_change_is_on_the_trail(self):
        with set_actor(self.lead):
            rubric_save(
                name="Audited rubric",
                guidance="Read the numbers.",
                awkward_cases=[],
                questions=[{"key": "cites", "text": "Does it cite its source?", "allows_na": False}],
                created_by=self.lead,
            )
            set_version_create(
                version="audited-set-1", questions=[], set_name="audited", created_by=self.lead
            )
            judge_version_save(
                name="audited judge",
                provider="openai",
                model="gpt-test",
                key_variable="OPENAI_API_KEY",
                metrics=["answer_relevance"],
                created_by=self.lead,
            )
            severity_weights_save(field="stratum", weights_text="health = 3", created_by=self.lead)
            sample_draw(
                frame=Frame(run=self.logged_run),
                size=3,
                seed=3,
                splits=("tuning", "sealed"),
                sealed_reason="release check",
                rubric_version=rubric_default(),
                created_by=self.lead,
            )
            scoring_open_sealed(
                scoring=Scoring.objects.get(run=self.logged_run), opened_by=self.lead, reason="audit"
            )
            grant(self.reader, "lead")
        kinds = set(LogEntry.objects.filter(actor=self.lead).values_list("content_type__model", flat=True))
        self.assertLessEqual(
            {
                "rubric",
                "rubricversion",
                "setversion",
                "judgeversion",
                "severityweights",
                "sample",
                "scoring",
                "user",
            },
            kinds,
        )
        questions = self.entries("rubricversion").filter(changes__has_key="questions").last()
        self.assertEqual(questions.changes_dict["questions"], ["", "Does it cite its source?"])
        role = LogEntry.objects.get(content_type__model="user", object_pk=str(self.reader.pk), actor=self.lead)
        self.assertEqual(role.changes_dict["groups"]["objects"], ["lead"])
        sealed = self.entries("sample").last()
        self.assertEqual(sealed.changes_dict["sealed_reason"], ["None", "release check"])

    def test_leads_and_admins_read_it_and_download_it_others_do_not(self):
        with set_actor(self.lead):
            grant(self.reader, "manager")
        for user, status in (("lead", 200), ("boss", 200), ("manager", 403), ("reviewer", 403)):
            self.client.login(username=user, password=PASSWORD)
            self.assertEqual(self.client.get(reverse("audit-trail")).status_code, status, user)
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.get(reverse("audit-trail"), {"kind": "user", "format": "csv"})
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        self.assertEqual(rows[0][:3], ["when", "who", "action"])
        self.assertIn(
            ["lead", "update", "user", str(self.reader.pk), "reader_a", "groups", "", "manager"],
            [row[1:] for row in rows[1:]],
        )

    def test_nobody_edits_or_removes_an_entry(self):
        with set_actor(self.lead):
            grant(self.reader, "manager")
        entry = LogEntry.objects.latest("id")
        self.client.login(username="boss", password=PASSWORD)
        self.admin.is_staff = self.admin.is_superuser = True
        self.admin.save()
        change = reverse("admin:auditlog_logentry_change", args=[entry.id])
        delete = reverse("admin:auditlog_logentry_delete", args=[entry.id])
        self.client.post(change, {"action": 3})
        self.client.post(delete, {"post": "yes"})
        entry.refresh_from_db()
        self.assertEqual(entry.changes_dict["groups"]["objects"], ["manager"])
        self.assertEqual(self.client.post(reverse("audit-trail")).status_code, 405)
