"""Question sets: creating versions from files, and revising them."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction

from reviewapp.core.bulk import insert_rows, refresh_statistics
from reviewapp.core.errors import ApplicationError
from reviewapp.core.uploads import StoredFile, resolve_version, store_upload
from reviewapp.models import Finding, Question, QuestionSet, SetVersion
from reviewapp.scorings.selectors import BATCH_KINDS, findings_for_set
from scoring import logfile, production, split

DEFAULT_SET_NAME = "default"


def _rejected(file_name: str, error: logfile.LogFileError) -> ApplicationError:
    messages = [f"{file_name}: {line_error}" for line_error in error.errors]
    if error.total > len(error.errors):
        messages.append(f"{file_name}: and {error.total - len(error.errors)} more errors")
    return ApplicationError(messages)


def set_version_create(
    *,
    version: str,
    questions: Iterable[dict],
    set_name: str = "",
    based_on: SetVersion | None = None,
    created_by=None,
    source_name: str = "",
    note: str = "",
) -> SetVersion:
    """Create a set version holding ``questions`` (normalised question dicts).

    With ``based_on``, the new version starts from that version's questions
    and the given ones replace or add to them. Refuses a version label that
    exists already or breaks the label rule (logfile.label_problem), and a
    set name that breaks its rule (logfile.set_name_problem).
    """
    version = _check_new_version(version)
    check_set_name(set_name)
    if based_on is not None:
        question_set = based_on.question_set
    else:
        question_set, _ = QuestionSet.objects.get_or_create(name=set_name.strip() or DEFAULT_SET_NAME)

    if based_on is not None:
        # A revision: the base version's questions, with the given ones
        # replacing or adding to them, field by field.
        merged = {q.question_id: _question_fields(q) for q in based_on.questions.all()}
        for question in questions:
            base = merged.get(question["question_id"]) or logfile.normalise_question(question)
            merged[question["question_id"]] = {**base, **question}
        questions = merged.values()

    columns = (*logfile.QUESTION_FIELDS, *logfile.QUESTION_OPTIONAL)
    try:
        with transaction.atomic():
            set_version = SetVersion.objects.create(
                question_set=question_set,
                version=version,
                based_on=based_on,
                created_by=created_by,
                source_name=source_name,
                note=note,
            )
            insert_rows(
                Question,
                ("set_version_id", *columns),
                ((set_version.id, *(_complete(q)[name] for name in columns)) for q in questions),
            )
            # Every chunk of every run on this set joins its questions: with the
            # statistics of an empty table the planner hashed all of them per chunk.
            refresh_statistics(Question)
    except IntegrityError as error:  # two uploads of the same new version at once
        raise ApplicationError(f"set version {version} exists already") from error
    return set_version


def _check_new_version(version: str) -> str:
    """The label of a set version to make, refused when it is empty, breaks
    the label rule or exists already."""
    version = version.strip()
    if not version:
        raise ApplicationError("a set version is needed: give it in a header line, the file name or the form")
    if problem := logfile.label_problem(version):
        raise ApplicationError(f"set version: {problem}")
    if SetVersion.objects.filter(version=version).exists():
        raise ApplicationError(
            f"set version {version} exists already; versions are never changed, choose a new one"
        )
    return version


def check_set_name(set_name: str) -> None:
    """Refuse (ApplicationError, naming the field) a set name that breaks the
    rule of logfile.set_name_problem; an empty one means the default set."""
    if set_name.strip() and (problem := logfile.set_name_problem(set_name.strip())):
        raise ApplicationError(f"set_name: {problem}")


def _complete(question: dict) -> dict:
    """A question with every field, the ones it does not state left empty."""
    if len(question) == len(logfile.QUESTION_FIELDS) + len(logfile.QUESTION_OPTIONAL):
        return question
    return {**logfile.normalise_question(question), **question}


def _question_fields(question: Question) -> dict:
    return {name: getattr(question, name) for name in (*logfile.QUESTION_FIELDS, *logfile.QUESTION_OPTIONAL)}


def set_version_upload(
    *,
    upload,
    version: str = "",
    set_name: str = "",
    created_by=None,
    qa_task: str = "",
    qa_columns: str = "",
    language: str = "en",
    seal_seed: int | None = None,
) -> SetVersion:
    """Create a set version from an uploaded question-set file.

    The version comes from the form, the file's header line or its name
    (questions_set-<version>.jsonl); when two of them disagree the upload is
    refused, as is any bad line (see scoring.logfile for the rules) and any
    line longer than settings.MAX_ANSWER_BYTES.

    With ``qa_task`` ("open" or "mc") the file is one of spec 001's QA
    datasets (JSON Lines or CSV, its columns named by ``qa_columns`` in
    scoring.qa's key=column form), written into this app's question set
    first, each question in ``language``.

    With ``seal_seed`` a stratified third of the questions drawn with that
    seed is sealed and the rest are tuning (scoring.split), the seed kept in
    the version's note; a file that states any split is refused then.
    """
    check_set_name(set_name)
    stored = store_upload(upload)
    if qa_task:
        stored = _qa_questions(stored, task=qa_task, columns=qa_columns, language=language)
    try:
        version = resolve_version(
            "set version",
            "set_version",
            given=version,
            header=logfile.read_header(stored.path),
            name_match=logfile.SET_FILE_NAME.match(stored.name),
            file_name=stored.name,
            form_field="version",
        )
        limit = settings.MAX_ANSWER_BYTES
        try:
            logfile.validate_questions(stored.path, max_line_bytes=limit)
        except logfile.LogFileError as error:
            raise _rejected(stored.name, error) from error
        # Valid: stream the questions in, however many there are.
        collector = logfile.ErrorCollector(limit=1)
        questions = logfile.iter_questions(stored.path, collector, max_line_bytes=limit)
        note = ""
        if seal_seed is not None:
            try:
                draw = split.seal_a_third_of_file(stored.path, seed=seal_seed, max_line_bytes=limit)
            except split.SplitStated as error:
                raise ApplicationError(f"{stored.name}: {error}") from error
            questions = _with_splits(questions, draw)
            note = _sealed_note(draw)
        return set_version_create(
            version=version,
            questions=questions,
            set_name=set_name,
            created_by=created_by,
            source_name=stored.name,
            note=note,
        )
    finally:
        stored.discard()


def _sealed_note(draw: split.SealedDraw) -> str:
    """What a set version's note says of the third sealed in it."""
    return (
        f"a third sealed at random, stratified (scoring.split, seed {draw.seed}): "
        f"{len(draw.sealed)} of {draw.total}"
    )


def _with_splits(questions: Iterable[dict], draw: split.SealedDraw) -> Iterator[dict]:
    for question in questions:
        sealed = question["question_id"] in draw.sealed
        yield {**question, "split": Question.Split.SEALED if sealed else Question.Split.TUNING}


def _qa_questions(stored: StoredFile, *, task: str, columns: str, language: str) -> StoredFile:
    """The stored QA dataset rewritten as this app's question set (the
    dataset file removed); refused, naming each line and column, when the
    dataset cannot be read with these columns."""
    from scoring.imports.tabular import qa_question_set

    target = stored.path.with_suffix(".questions.jsonl")
    # The stored copy has a name of its own: the upload's name says the format.
    suffix = Path(stored.name).suffix.lower()
    file_format = {".csv": "csv", ".json": "json"}.get(suffix, "jsonl")
    try:
        with open(target, "wb") as out:
            qa_question_set(
                stored.path, task, columns or None, language=language, out=out, file_format=file_format
            )
    except logfile.LogFileError as error:
        target.unlink(missing_ok=True)
        raise _rejected(stored.name, error) from error
    except ValueError as error:
        target.unlink(missing_ok=True)
        raise ApplicationError(f"{stored.name}: {error}") from error
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    finally:
        stored.discard()
    return StoredFile(path=target, name=stored.name, sha256=stored.sha256, size=target.stat().st_size)


@dataclass(frozen=True)
class SetRevision:
    """What a new version of a named set would hold: its latest version's
    questions (``base``), with the file's questions added or replacing them.
    ``seen`` names this plan, so that a confirmation stores what was shown
    and nothing else (another revision landing in between changes it)."""

    set_name: str
    base: SetVersion
    added: int
    changed: int
    kept: int

    @property
    def total(self) -> int:
        return self.added + self.changed + self.kept

    @property
    def seen(self) -> str:
        return f"{self.base.id}:{self.added}:{self.changed}:{self.kept}"

    def sentence(self, version: str) -> str:
        base_count = self.changed + self.kept
        return (
            f"set version {version} revises set {self.set_name}, whose latest version is "
            f"{self.base.version} ({base_count} question{'s' if base_count != 1 else ''}): it adds "
            f"{self.added}, changes {self.changed} and keeps {self.kept} unchanged, {self.total} in all"
        )


def set_revision_plan(*, questions: Iterable[dict], set_name: str) -> SetRevision | None:
    """What revising the set named ``set_name`` with ``questions`` would do;
    None when no set of that name has a version."""
    base = SetVersion.objects.filter(question_set__name=set_name).order_by("-created_at", "-id").first()
    if base is None:
        return None
    before = {q.question_id: _question_fields(q) for q in base.questions.all()}
    added = changed = 0
    for question in questions:
        earlier = before.get(question["question_id"])
        if earlier is None:
            added += 1
        elif {**earlier, **question} != earlier:
            changed += 1
    return SetRevision(set_name, base, added, changed, len(before) - changed)


class RevisionToConfirm(ApplicationError):
    """A revision asked for but not yet seen as it now stands: ``revision``
    says what it would do. Nothing is stored."""

    def __init__(self, revision: SetRevision, version: str):
        self.revision = revision
        super().__init__(f"Check the revision, then confirm it: {revision.sentence(version)}.", status=200)


def set_version_from_combined_log(
    *,
    path: Path,
    file_name: str,
    version: str,
    set_name: str = "",
    revise: bool = False,
    seen: str | None = None,
    created_by=None,
    seal_seed: int | None = None,
) -> SetVersion:
    """The set version ``version`` made from a log in the spec's combined form
    (answers carrying expected behaviour and values), holding that file's
    questions and nothing else: in the set named ``set_name``, new, or, when
    the name is empty, a set of its own named after the version.

    With ``revise`` the named set must exist, and the new version starts from
    its latest version's questions, the file's added or replacing them. With
    ``seen`` (the web's confirmation step) it must be what the user saw, the
    plan's ``seen``; else RevisionToConfirm says what it would do. ``seen``
    None (the API, where ``revise`` is the request itself) skips that check.
    Naming an existing set without ``revise`` is refused, saying what a
    revision would do; nothing is ever merged unasked (issue 25, point 1).

    With ``seal_seed`` a stratified third of the file's questions drawn with
    that seed is sealed and the rest are tuning (scoring.split), as for an
    uploaded set; refused for a revision, which keeps its base version's
    splits, and for a file whose lines state a split."""
    version = _check_new_version(version)
    if seal_seed is not None and revise:
        raise ApplicationError(
            "seal_seed: a revision keeps the splits of the version it revises; seal a third only of a new set"
        )
    check_set_name(set_name)
    name = set_name.strip() or version
    try:
        questions = logfile.questions_from_combined(path, max_line_bytes=settings.MAX_ANSWER_BYTES)
    except logfile.LogFileError as error:
        raise _rejected(file_name, error) from error
    plan = set_revision_plan(questions=questions, set_name=name)
    if revise and plan is None:
        raise ApplicationError(
            f"set_name: there is no set {name} to revise; name an existing set, "
            "or untick “revise” to make a new one"
        )
    if plan is not None and not revise:
        raise ApplicationError(
            f"set_name: set {name} exists (latest version {plan.base.version}, "
            f"{plan.changed + plan.kept} questions). A new version of it from this file would add "
            f"{plan.added}, change {plan.changed} and keep {plan.kept} unchanged: ask for it with "
            "“revise the named set” "
            "(revise_set=true through the API), or name a new set"
        )
    if plan is not None and seen is not None and seen != plan.seen:
        raise RevisionToConfirm(plan, version)
    sealed_note = ""
    if seal_seed is not None:
        try:
            draw = split.seal_a_third(questions, seed=seal_seed)
        except split.SplitStated as error:
            raise ApplicationError(f"{file_name}: {error}") from error
        questions = list(_with_splits(questions, draw))
        sealed_note = f"; {_sealed_note(draw)}"
    return set_version_create(
        version=version,
        questions=questions,
        set_name=name,
        based_on=plan.base if plan is not None else None,
        created_by=created_by,
        source_name=file_name,
        note="taken from the expected values of a combined-form log"
        + (f", revising {plan.base.version}" if plan is not None else "")
        + sealed_note,
    )


def findings_source_name(*, scoring_id: int, kind: str) -> str:
    """The source a set version made from a scoring's findings of one kind
    records, so that a second click on the same form is known for one."""
    return f"findings ({kind}) of scoring {scoring_id}"


def set_version_from_findings(
    *,
    scoring,
    kind: str,
    version: str,
    confirmed: Iterable[dict],
    created_by=None,
) -> SetVersion:
    """The set version ``version``, revising the scored set version with the
    questions of the scoring's findings of ``kind`` that the lead confirmed,
    each a dict of question_id, expected_behaviour and expected_values (a
    list, or numbers separated by commas), all stored in one transaction.

    Refuses, naming the question and field, a question that is not among
    these findings, a behaviour other than "answer" or "decline" and a value
    that is not a number; refuses an empty batch. Nothing is stored then. The
    same form sent twice by the same person returns the version the first
    made."""
    if kind not in BATCH_KINDS:
        raise ApplicationError(f"kind: {kind!r} is not a kind of finding that can go into a set")
    source_name = findings_source_name(scoring_id=scoring.id, kind=kind)
    made = SetVersion.objects.filter(version=version.strip(), source_name=source_name, created_by=created_by)
    if created_by is not None and (existing := made.first()) is not None:
        return existing
    batch = {row["question_id"]: row for row in findings_for_set(scoring, kind=kind)}
    questions, errors = [], []
    for row in confirmed:
        question_id = row.get("question_id", "")
        found = batch.get(question_id)
        if found is None:
            errors.append(f"question {question_id}: not among this scoring's findings of this kind")
            continue
        behaviour = row.get("expected_behaviour", "")
        if behaviour not in logfile.BEHAVIOURS:
            errors.append(f'question {question_id}, expected_behaviour: must be "answer" or "decline"')
        values = row.get("expected_values", [])
        if isinstance(values, str):
            values = [value.strip() for value in values.split(",") if value.strip()]
        try:
            numbers = [float(value) for value in values]
        except (TypeError, ValueError):
            errors.append(f"question {question_id}, expected_values: numbers separated by commas")
            continue
        questions.append(
            {
                "question_id": question_id,
                "language": found["language"],
                "expected_behaviour": behaviour,
                "expected_values": numbers,
            }
        )
    if errors:
        raise ApplicationError(errors)
    if not questions:
        raise ApplicationError("tick at least one question to put into the new set version")
    label = Finding.Kind(kind).label
    return set_version_create(
        version=version,
        questions=questions,
        based_on=scoring.set_version,
        created_by=created_by,
        source_name=source_name,
        note=f"{len(questions)} question{'s' if len(questions) != 1 else ''} with findings "
        f"({label}) confirmed from a scoring of run {scoring.run_id}",
    )


def set_version_from_production_frame(
    *,
    path: Path,
    file_name: str,
    version: str,
    start: datetime.date,
    end: datetime.date,
    size: int,
    period: str,
    seed: int,
    set_name: str = "",
    created_by=None,
) -> SetVersion:
    """The set version ``version`` holding a seeded sample of the production
    questions in the frame file at ``path``, drawn by the time each was asked
    (scoring.production: stratified by ``period``, from ``start`` to ``end``),
    the draw stated in its note. Refuses, naming the line and field, a frame
    line without a valid asked_at, and any draw scoring.production refuses;
    nothing is stored then."""
    version = _check_new_version(version)
    check_set_name(set_name)
    try:
        asked = production.read_frame(path, max_line_bytes=settings.MAX_ANSWER_BYTES)
        draw = production.draw_by_asked_time(asked, start=start, end=end, size=size, period=period, seed=seed)
    except logfile.LogFileError as error:
        raise _rejected(file_name, error) from error
    except ValueError as error:
        raise ApplicationError(str(error)) from error
    return set_version_create(
        version=version,
        questions=draw.questions,
        set_name=set_name,
        created_by=created_by,
        source_name=file_name,
        note=f"sampled from a production frame: {draw.sentence()}",
    )


def set_version_from_production_upload(*, upload, created_by=None, **draw) -> SetVersion:
    """set_version_from_production_frame of an uploaded frame file, stored
    only while it is read; ``draw`` holds that function's other arguments."""
    stored = store_upload(upload)
    try:
        return set_version_from_production_frame(
            path=stored.path, file_name=stored.name, created_by=created_by, **draw
        )
    finally:
        stored.discard()
