"""Load demo data: the spec's running example, generated runs of a few
thousand answers in three languages (one of them asking every question three
times, with timings, tool calls and some timeouts), and users to log in as."""

import random
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand

from reviewapp.core.roles import grant
from reviewapp.judges.services import judge_versions, judging
from reviewapp.judges.services.validation_sets import validation_set_draw
from reviewapp.models import Adjudication, AnswerCheck, ApiToken, Judge, Run, Sample, SetVersion
from reviewapp.review.services.adjudication import Decision, adjudication_submit
from reviewapp.review.services.grading import metrics_from_grade
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from reviewapp.runs.services.imports import import_receive
from reviewapp.runs.services.question_sets import set_version_create, set_version_upload
from reviewapp.runs.services.runs import run_receive
from scoring import imports, synthetic
from scoring.logfile import normalise_question

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
DEMO_PASSWORD = "review-demo"
DEMO_USERS = ("lead", "reviewer", "reviewer2", "manager")
# Questions in the generated set; each generated run answers every one.
DEMO_ANSWERS = 3000
TIMEOUT_S = 600
DEFAULT_ADDRESS = "127.0.0.1:8000"
# runserver's names for "every interface", and the host to open in their place.
WILDCARD_HOSTS = {"0": "127.0.0.1", "0.0.0.0": "127.0.0.1", "[::]": "[::1]"}


def address_url(address: str) -> str:
    """The address to open for what runserver is given ("8001",
    "0.0.0.0:8001", "[::1]:8001", "localhost:8001"): a port alone is on
    127.0.0.1, and a wildcard host is opened on this machine, with the
    address served named beside it."""
    address = address.strip() or DEFAULT_ADDRESS
    if address.isdigit():
        return f"http://127.0.0.1:{address}/"
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return f"http://{address}/"  # not what runserver takes, and it will say so
    if host in WILDCARD_HOSTS:
        return f"http://{WILDCARD_HOSTS[host]}:{port}/ (served on {address}, every interface)"
    return f"http://{host}:{port}/"


@dataclass(frozen=True)
class GeneratedRun:
    """One generated run of the demo, on set version demo-1.0."""

    assistant_version: str
    seed: int
    repetitions: int = 1
    timeout_share: float = 0.0
    # The clocks its header states (the platform's offset from the tester's).
    clock_skew_ms: float = 12.0
    clock_precision_ms: float = 1.0
    reply_policy: str = "direct"


# The third asks each question three times, with a few timeouts, so that the
# run page's stable resolution and timing tables have something to show.
REPEATED_SAMPLE = "Demo sample of three attempts, decided by the lead"
REPEATED_RUN = GeneratedRun("assistant-demo-2.2", seed=13, repetitions=3, timeout_share=0.03)
# The second was called as a chat channel's agent: its answers log the
# channel overhead, so that the run page shows it apart, and the compare page
# notes the reply policies differ.
CHANNEL_RUN = GeneratedRun("assistant-demo-2.1", seed=12, clock_skew_ms=-8.0, reply_policy="channel")
GENERATED_RUNS = (
    GeneratedRun("assistant-demo-2.0", seed=11),
    CHANNEL_RUN,
    REPEATED_RUN,
)


def _moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def with_startup_and_overhead(rows: list[dict], *, seed: int, channel: bool) -> list[dict]:
    """The generated rows with when the platform started each attempt
    (startup_at, a few hundred ms after submitting) and, for a run called
    as a channel's agent, its overhead events on each delivered answer:
    channel detection first, then link resolution overlapping the card's
    assembly near the end. A generator of its own, so that the answers
    stay those the seed gives."""
    rng = random.Random(seed)
    for row in rows:
        submitted = _moment(row["submitted_at"])
        row["startup_at"] = _stamp(submitted + timedelta(milliseconds=rng.randint(80, 400)))
        if not channel or "received_at" not in row:
            continue
        duration = _moment(row["received_at"]) - submitted
        row["overhead"] = [
            _event(kind, submitted, duration, start, start + rng.uniform(*length))
            for kind, start, length in (
                ("channel_detection", 0.02, (0.03, 0.08)),
                ("link_resolution", 0.70, (0.08, 0.15)),
                ("card_assembly", 0.80, (0.08, 0.15)),
            )
        ]
    return rows


def _event(kind: str, submitted: datetime, duration: timedelta, start: float, end: float) -> dict:
    """An overhead event from ``start`` to ``end``, as shares of the attempt's duration."""
    return {
        "kind": kind,
        "started_at": _stamp(submitted + duration * start),
        "ended_at": _stamp(submitted + duration * end),
    }


# The readers' reasons for the outcomes that need one.
DEMO_REASONS = {
    "partially_resolved": "the figure is right but the caveat on the record is missing",
    "unresolved": "the answer does not give the figure that was asked for",
}

RECIPE_SAMPLE = "Recipe 4.3: the running example read against the rubric"
# Recipe 4.3's worked example: the reader's answers to the five rubric
# questions for each of the running example's eight answers, the grade, and
# the note. a03 and a06 state figures no record holds (recipe 4.2's
# findings); a04 omits the provisional status its record carries; a07's
# figure is in the records (its extra citation is citation validity's
# finding, not the rubric's); a08 declines rightly, so the figure questions
# do not apply. Five pass every question, as the recipe records.
FIGURES_RIGHT = {"series": "yes", "period": "yes", "unit": "yes", "caveat": "na", "unsupported_claim": "no"}
RECIPE_READINGS = {
    "a01": (FIGURES_RIGHT, "resolved", ""),
    "a02": (FIGURES_RIGHT, "resolved", ""),
    "a03": (
        FIGURES_RIGHT | {"unsupported_claim": "yes"},
        "material_error",
        "states 35 per 1,000 where the record holds 41",
    ),
    "a04": (FIGURES_RIGHT | {"caveat": "no"}, "partially_resolved", "provisional status omitted"),
    "a05": (FIGURES_RIGHT, "resolved", ""),
    "a06": (
        FIGURES_RIGHT | {"series": "no", "unsupported_claim": "yes"},
        "material_error",
        "a district figure from a national series, which holds no 31",
    ),
    "a07": (FIGURES_RIGHT, "resolved", ""),
    "a08": (
        {"series": "na", "period": "na", "unit": "na", "caveat": "na", "unsupported_claim": "no"},
        "resolved",
        "",
    ),
}


class Command(BaseCommand):
    help = "Load demo data (idempotent) and print how to log in."

    def add_arguments(self, parser):
        parser.add_argument(
            "--address",
            default=DEFAULT_ADDRESS,
            help="where the server will listen, as runserver takes it (bin/demo passes $ADDRESS), "
            "so that the address printed is the one to open",
        )
        parser.add_argument(
            "--answers",
            type=int,
            default=DEMO_ANSWERS,
            help="questions in the generated set; each generated run answers every one "
            f"(the repeated run {REPEATED_RUN.repetitions} times)",
        )

    def handle(self, *args, answers: int, address: str = DEFAULT_ADDRESS, **options):
        User = get_user_model()
        for name in DEMO_USERS:
            user, created = User.objects.get_or_create(username=name)
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            grant(user, name.rstrip("0123456789"))
        admin, created = User.objects.get_or_create(
            username="admin", defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            admin.set_password(DEMO_PASSWORD)
            admin.save()
        lead = User.objects.get(username="lead")

        if not SetVersion.objects.filter(version="1.2").exists():
            with open(DEMO_DIR / "questions_set-1.2.jsonl", "rb") as f:
                set_version_upload(
                    upload=File(f, name=f"{DEMO_DIR}/questions_set-1.2.jsonl"),
                    set_name="statistics",
                    created_by=lead,
                )
        self._upload(DEMO_DIR / "answers_run_assistant-1.3_set-1.2.jsonl", lead)

        if not SetVersion.objects.filter(version="demo-1.0").exists():
            questions = synthetic.generate_question_set(questions=answers, seed=7, set_version="demo-1.0")
            set_version_create(
                version="demo-1.0",
                questions=[normalise_question(q) for q in questions],
                set_name="demo",
                created_by=lead,
                source_name="generated",
            )
        questions = synthetic.generate_question_set(questions=answers, seed=7, set_version="demo-1.0")
        for plan in GENERATED_RUNS:
            rows = synthetic.generate_run(
                question_set=questions,
                answers=answers,
                seed=plan.seed,
                assistant_version=plan.assistant_version,
                repetitions=plan.repetitions,
                timeout_share=plan.timeout_share,
                timeout_s=TIMEOUT_S,
            )
            rows = with_startup_and_overhead(rows, seed=plan.seed, channel=plan.reply_policy == "channel")
            header = {
                "assistant_version": plan.assistant_version,
                "set_version": "demo-1.0",
                "clock_skew_ms": plan.clock_skew_ms,
                "clock_precision_ms": plan.clock_precision_ms,
                "reply_policy": plan.reply_policy,
            }
            if plan.repetitions > 1:
                header |= {"repetitions": plan.repetitions, "timeout_s": TIMEOUT_S}
            # The same seed writes the same bytes, so a second demo finds the
            # file it stored the first time and makes no second run.
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / f"answers_run_{plan.assistant_version}_set-demo-1.0.jsonl"
                synthetic.write_jsonl(path, rows, header=header)
                self._upload(path, lead)

        self._import_inspect_example(lead)

        if not Sample.objects.exists():
            run = Run.objects.filter(assistant_version__label="assistant-demo-2.1").first()
            sample = sample_draw(
                frame=Frame(run=run),
                size=30,
                seed=2026,
                rubric_version=rubric_default(),
                name="Demo sample, double read",
                created_by=lead,
            )
            readers = list(User.objects.filter(username__in=("reviewer", "reviewer2")))
            sample_assign(sample=sample, reviewers=readers, readers_per_item=2)
            judged = self._grade_some(sample, readers)
            self.stdout.write(
                f"  sample #{sample.id}: 30 items, each read by reviewer and reviewer2; "
                f"{judged} judgements made so the lead queue and agreement have substance"
            )

        if not Judge.objects.exists():
            self.stdout.write(self._model_graders(lead))

        # After the judge's validation set is drawn, so that its items stay the lead's 80 decisions.
        if not Sample.objects.filter(name=RECIPE_SAMPLE).exists():
            self.stdout.write(self._recipe_rubric(lead, User.objects.get(username="reviewer")))

        if not Sample.objects.filter(name=REPEATED_SAMPLE).exists():
            self.stdout.write(self._repeated_decisions(lead))

        token_note = ""
        pipeline, _ = User.objects.get_or_create(username="pipeline")
        # A token acts with its user's role: the pipeline uploads, as a lead does.
        grant(pipeline, "lead")
        if not ApiToken.objects.filter(user=pipeline, name="demo").exists():
            _, key = ApiToken.issue(user=pipeline, name="demo")
            token_note = f"  API token for pipelines (shown once): {key}\n"

        self.stdout.write(
            self.style.SUCCESS("Demo data ready.")
            + f"\n  {Run.objects.count()} runs; open {address_url(address)} and log in as "
            + ", ".join(DEMO_USERS)
            + f" or admin, password {DEMO_PASSWORD}\n"
            + "  (lead: runs, samples, rubrics; reviewer, reviewer2: their queue; manager: read only)\n"
            + token_note
        )

    def _grade_some(self, sample, readers) -> int:
        """Judge the first twelve items of each reader's queue, with seeded
        disagreement, as readers would have by mid-morning."""
        rng = random.Random(7)
        keys = list(sample.rubric_version.questions.values_list("key", flat=True))
        grades = ["resolved"] * 6 + ["partially_resolved", "unresolved", "material_error"]
        made = 0
        for item in sample.items.order_by("position")[:12]:
            for assignment in item.assignments.filter(reviewer__in=readers):
                grade = rng.choice(grades)
                material = grade == "material_error"
                judgement_submit(
                    assignment=assignment,
                    author=assignment.reviewer,
                    data=JudgementInput(
                        addresses_question=True,
                        rubric_answers={k: rng.choice(["yes"] * 5 + ["no"]) for k in keys},
                        grade=grade,
                        borderline=rng.random() < 0.1,
                        # Every outcome but resolved carries its reason (spec 004).
                        note=DEMO_REASONS.get(grade, ""),
                        error_claim="the figure stated" if material else "",
                        error_evidence="the record holds another value" if material else "",
                        error_effect="the user quotes a wrong figure" if material else "",
                        error_kind="wrong_conclusion" if material else "",
                    ),
                    submission_key=uuid.uuid4(),
                )
                made += 1
        return made

    def _recipe_rubric(self, lead, reader) -> str:
        """Recipe 4.3's worked example: the reader reads all eight answers of
        the running example against the five rubric questions (the default
        rubric is the recipe's), and the lead decides the three that need a
        lead, so the version's page counts 5 of 8 passing beside the four
        automatic scores."""
        run = Run.objects.get(assistant_version__label="assistant-1.3", set_version__version="1.2")
        sample = self._whole_run_sample(run, seed=43, name=RECIPE_SAMPLE, lead=lead)
        sample_assign(sample=sample, reviewers=[reader], readers_per_item=1)
        for item in sample.items.select_related("answer"):
            rubric_answers, grade, note = RECIPE_READINGS[item.answer.question_id]
            material = grade == "material_error"
            error = {
                "error_claim": "the figure stated" if material else "",
                "error_evidence": note if material else "",
                "error_effect": "the user quotes a figure the statistics do not hold" if material else "",
                "error_kind": "fabricated_evidence" if material else "",
            }
            judgement_submit(
                assignment=item.assignments.get(),
                author=reader,
                data=JudgementInput(
                    addresses_question=True, rubric_answers=rubric_answers, grade=grade, note=note, **error
                ),
                submission_key=uuid.uuid4(),
            )
            if grade != "resolved":
                adjudication_submit(
                    item=item,
                    lead=lead,
                    decision=Decision(
                        reason=note,
                        rubric_answers=rubric_answers,
                        grade=grade,
                        material_error="yes" if material else "",
                        **error,
                    ),
                    submission_key=uuid.uuid4(),
                )
        return (
            f"  sample #{sample.id}: recipe 4.3, the running example's {sample.size} answers read "
            "against the five rubric questions (a04 omits the provisional status)\n"
        )

    def _model_graders(self, lead) -> str:
        """A stand-in judge (clearly labelled: no language model runs here)
        grades assistant-demo-2.1's run, with a human regrade sample drawn;
        a lead has decided 80 items of another sample the way a careful
        reader would (from the answer's checks, with a few seeded calls going
        the other way), and a validation set is drawn from them, so the judge
        pages show real figures."""
        run = Run.objects.get(assistant_version__label="assistant-demo-2.1")
        version = judge_versions.judge_version_save(
            name="numbers",
            provider="stand-in",
            model="",
            metrics=["rubric", "faithfulness"],
            rubric_version=rubric_default(),
            concurrency=1,
            created_by=lead,
        )
        judge_run = judging.judge_run_estimate(
            judge_versions=[version], run=run, regrade_share=0.01, created_by=lead
        )
        judge_run = judging.judge_run_confirm(judge_run=judge_run, draw_regrade=judging.regrade_draw)
        for chunk_id in judge_run.chunks.values_list("id", flat=True):
            judging.judge_chunk_perform(chunk_id=chunk_id)
        judge_run.refresh_from_db()

        decided = sample_draw(
            frame=Frame(run=run),
            size=80,
            seed=2027,
            rubric_version=rubric_default(),
            name="Demo sample decided by the lead (judge validation)",
            purpose=Sample.Purpose.JUDGE_VALIDATION,
            created_by=lead,
        )
        rng = random.Random(11)
        questions = list(decided.rubric_version.questions.values_list("key", "allows_na"))
        for item in decided.items.select_related("answer"):
            grade, unsupported = self._careful_grade(item.answer, rng)
            answers = {key: "na" if allows_na else "yes" for key, allows_na in questions}
            answers.update({key: ("yes" if unsupported else "no") for key in answers if "unsupported" in key})
            self._decide(item, lead=lead, grade=grade, rubric_answers=answers)
        validation_set_draw(judge=version.judge, holdout_share=0.8, seed=2028, created_by=lead)
        return (
            f"  judge numbers v1 (a stand-in, not a language model): judge run #{judge_run.id} graded "
            f"{judge_run.estimate['answers']} answers; regrade sample #{judge_run.regrade_sample_id}; "
            f"{decided.size} items decided by the lead form its validation set\n"
        )

    def _repeated_decisions(self, lead) -> str:
        """The lead decides every attempt of assistant-demo-2.2's first twelve
        questions (and two of the three of the next), the way a careful
        reader would, so the version page counts stable resolution from grades."""
        run = Run.objects.get(assistant_version__label=REPEATED_RUN.assistant_version)
        sample = self._whole_run_sample(run, seed=2029, name=REPEATED_SAMPLE, lead=lead)
        items = sample.items.select_related("answer").order_by("answer__question_id", "answer__attempt")
        questions = sorted({item.answer.question_id for item in items})[:13]
        rng = random.Random(17)
        decided = 0
        for item in items.filter(answer__question_id__in=questions):
            if item.answer.question_id == questions[-1] and item.answer.attempt == 3:
                continue  # one question left with an attempt not yet decided
            grade, _ = self._careful_grade(item.answer, rng)
            self._decide(item, lead=lead, grade=grade, rubric_answers={})
            decided += 1
        version = REPEATED_RUN.assistant_version
        return f"  sample #{sample.id}: {decided} attempts of {version} decided by the lead\n"

    @staticmethod
    def _whole_run_sample(run, *, seed: int, name: str, lead):
        """A sample of every answer of the run, in one stratum: nothing to weight."""
        return sample_draw(
            frame=Frame(run=run),
            size=run.answer_count,
            strata_fields=("split",),
            seed=seed,
            rubric_version=rubric_default(),
            spot_check_share=0.0,
            name=name,
            created_by=lead,
        )

    @staticmethod
    def _decide(item, *, lead, grade: str, rubric_answers: dict) -> None:
        """The lead's decision on the item, checked against the records."""
        material = grade == "material_error"
        Adjudication.objects.create(
            item=item,
            revision=1,
            lead=lead,
            reason="checked against the records",
            grade=grade,
            rubric_answers=rubric_answers,
            # The primary metrics the grade stands for (spec 004's table read backwards).
            **metrics_from_grade(grade=grade, pending=False, addresses_question=True),
            material_status="confirmed" if material else "",
            error_claim="the figure stated" if material else "",
            error_evidence="no retrieved record holds it" if material else "",
            error_effect="the user quotes a figure the statistics do not hold" if material else "",
            error_kind="fabricated_evidence" if material else "",
            submission_key=uuid.uuid4(),
        )

    @staticmethod
    def _careful_grade(answer, rng: random.Random) -> tuple[str, bool]:
        """How a careful reader grades from the answer's checks; one call in twelve goes the other way."""
        check = AnswerCheck.objects.filter(answer=answer).first()
        unsupported = bool(check and check.unsupported_answers_k)
        if answer.declined:
            grade = "unresolved"
        elif unsupported:
            grade = "material_error"
        else:
            grade = "resolved"
        if rng.random() < 1 / 12:
            grade = "partially_resolved" if grade == "resolved" else "resolved"
        return grade, unsupported

    def _import_inspect_example(self, user) -> None:
        """The Inspect example log, imported as the import page would: its
        scores show as "Inspect scorer: match" beside this app's measures."""
        try:
            import inspect_ai  # noqa: F401
        except ImportError:
            self.stdout.write("  inspect_example.eval: not imported; '.[inspect]' reads Inspect logs")
            return
        path = DEMO_DIR / "imports" / "inspect_example.eval"
        received = import_receive(
            path=path,
            name=path.name,
            file_format="inspect",
            options=imports.ImportOptions(columns={"retrieved_contexts": "contexts"}),
            set_from_file=not SetVersion.objects.filter(version="regional_statistics-0").exists(),
            uploaded_by=user,
            source=Run.Source.COMMAND,
        )
        state = "imported" if received.created else "already there"
        self.stdout.write(f"  {path.name} (an Inspect AI log): run #{received.run.id} {state}")

    def _upload(self, path: Path, user) -> None:
        with open(path, "rb") as f:
            received = run_receive(
                upload=File(f, name=path.name), uploaded_by=user, source=Run.Source.COMMAND
            )
        run = Run.objects.get(id=received.run.id)
        state = "loaded" if received.created else "already there"
        self.stdout.write(f"  {path.name}: run #{run.id} {state} ({run.status})")
