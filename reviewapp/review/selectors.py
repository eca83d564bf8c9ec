"""Reads for leads: what an item shows, the lead queue, agreement between
readers, and the material-error register."""

from __future__ import annotations

import json
from collections import defaultdict

from reviewapp.models import (
    Adjudication,
    Assignment,
    CalibrationItem,
    Judgement,
    Question,
    Sample,
    SampleItem,
    SeverityWeights,
)
from reviewapp.review.calibration_patterns import PAIR_KINDS, PATTERNS_BY_KEY
from reviewapp.scorings.selectors import answer_evidence, records_as_passages
from scoring.stats.agreement import TOO_FEW_ITEMS, agreement

REASONS = {
    "material_error": "material error",
    "pending": "pending verification",
    "partial": "partially resolved",
    "borderline": "borderline",
    "needs_info": "asks the user for more information",
    "grade_disagreement": "readers disagree on the grade",
    "rubric_disagreement": "readers disagree on a rubric question",
    "spot_check": "spot check of a resolved item",
    "judge_disagrees": "judge disagrees with people",
}


def item_content(item: SampleItem) -> dict:
    """What a reader is shown: question, answer and evidence, whether the item
    is a logged answer or a calibration item (they must look alike)."""
    if item.calibration_id:
        calibration = item.calibration
        record = {
            "retrieved_records": calibration.evidence,
            "retrieved_ids": [r.get("id") for r in calibration.evidence],
        }
        if _sample_shows_passages(item.sample_id):
            # Among answers whose evidence is passages (an import from Ragas
            # or Inspect), a record would mark the item out as calibration.
            record = {"retrieved_contexts": records_as_passages(record)}
        return {
            "question_text": calibration.question,
            "language": calibration.language,
            "answer_text": calibration.answer,
            "declined": False,
            "evidence": answer_evidence(record),
        }
    answer = item.answer
    record = answer.record
    question = (
        Question.objects.filter(set_version_id=answer.run.set_version_id, question_id=answer.question_id)
        .only("question")
        .first()
    )
    return {
        "question_text": question.question if question else "",
        "language": answer.language,
        "answer_text": record.get("answer", ""),
        "declined": answer.declined,
        "evidence": answer_evidence(record),
    }


def _sample_shows_passages(sample_id: int) -> bool:
    """Whether the sample's logged answers show their evidence as passages
    only (its first answer's, as a sample is drawn from one run)."""
    first = (
        SampleItem.objects.filter(sample_id=sample_id, answer__isnull=False)
        .order_by("position")
        .values_list("answer__raw", flat=True)
        .first()
    )
    if not first:
        return False
    record = json.loads(first)
    return bool(record.get("retrieved_contexts")) and not record.get("retrieved_records")


def outcome_key(judgement) -> str:
    """One label per outcome, for comparing readers: a grade, pending, or not
    addressing. Spec 004's grading order puts a material error first, so an
    answer off the question that holds one is a material error."""
    if judgement.grade == Judgement.Grade.MATERIAL_ERROR:
        return "material_error"
    if judgement.pending:
        return "pending"
    if not judgement.addresses_question:
        return "not_addressed"
    return judgement.grade


def counted_grade(key: str) -> str:
    """An outcome key as the figures count it: an answer that does not
    address the question resolves nothing, so it counts as unresolved."""
    return "unresolved" if key == "not_addressed" else key


def latest_decisions(items) -> dict[int, Adjudication]:
    """Each item's latest lead decision, for the items that have one."""
    latest: dict[int, Adjudication] = {}
    for decision in Adjudication.objects.filter(item__in=items).order_by("item_id", "revision"):
        latest[decision.item_id] = decision
    return latest


def latest_judgements(items) -> dict[int, list[Judgement]]:
    """Each item's readers' latest judgements."""
    latest: dict[tuple[int, int], Judgement] = {}
    for judgement in (
        Judgement.objects.filter(assignment__item__in=items)
        .select_related("assignment__reviewer")
        .order_by("assignment_id", "revision")
    ):
        latest[(judgement.assignment.item_id, judgement.assignment_id)] = judgement
    by_item: dict[int, list[Judgement]] = defaultdict(list)
    for (item_id, _), judgement in sorted(latest.items()):
        by_item[item_id].append(judgement)
    return by_item


def reasons_for(item: SampleItem, judgements: list[Judgement]) -> list[str]:
    """Why an item needs a lead (spec 004: every material error, pending
    item, partial resolution and borderline call, disagreements, and a
    spot-check share of full resolutions). A material error counts once a
    reader answers yes to it; one left pending is pending verification, not
    an error. An answer that asks the user for more information needs a
    lead too."""
    reasons = []
    outcomes = {outcome_key(j) for j in judgements}
    if "material_error" in outcomes or any(j.material_error == "yes" for j in judgements):
        reasons.append("material_error")
    if "pending" in outcomes:
        reasons.append("pending")
    if "partially_resolved" in outcomes:
        reasons.append("partial")
    if any(j.borderline for j in judgements):
        reasons.append("borderline")
    if any(j.needs_more_info for j in judgements):
        reasons.append("needs_info")
    if len(judgements) > 1 and len(outcomes) > 1:
        reasons.append("grade_disagreement")
    answered = [j.rubric_answers for j in judgements if j.addresses_question]
    if len(answered) > 1 and any(len({a.get(key) for a in answered}) > 1 for key in answered[0]):
        reasons.append("rubric_disagreement")
    if not reasons and item.spot_check and outcomes == {"resolved"}:
        reasons.append("spot_check")
    return reasons


def agreement_table(samples) -> dict:
    """Agreement on the grade and on each rubric question over the judged
    items of ``samples`` (each reader's latest judgement, keyed by reader so
    that Cohen's kappa is given only to a fixed pair): per rating a row with
    its key, label, figures, the items whose readers differ (in sample and
    position order), its ``cells`` (agreement_cells) and its ``matrix``
    (confusion_matrix). Also the page's ``notes`` (the cautions said once, not
    on every row; ``cautions`` are those that warn against reading a
    figure), the labels of the ratings ``below_floor``, the number of
    double-read items and each reader's agreement with the lead's final
    decisions."""
    items = list(
        SampleItem.objects.filter(sample__in=samples)
        .select_related("sample")
        .order_by("sample_id", "position")
    )
    judged = latest_judgements(items)
    keys: list[str] = []
    for sample in samples:
        for question in sample.rubric_version.questions.all():
            if question.key not in keys:
                keys.append(question.key)
    by_id = {item.id: item for item in items}
    item_judgements = [(item, judged.get(item.id, [])) for item in items]
    readers = {
        j.assignment.reviewer_id: j.assignment.reviewer.get_username()
        for _, js in item_judgements
        for j in js
    }
    grades = {item.id: {j.assignment.reviewer_id: outcome_key(j) for j in js} for item, js in item_judgements}
    rows = [_agreement_row("grade", "Outcome grade", grades, by_id, readers)]
    for key in keys:
        # A reader who found the answer does not address the question gave no rubric answers.
        answers = {
            item.id: {
                j.assignment.reviewer_id: j.rubric_answers.get(key) if j.addresses_question else None
                for j in js
            }
            for item, js in item_judgements
        }
        rows.append(_agreement_row(key, key.replace("_", " "), answers, by_id, readers))
    notes = agreement_cells(rows)

    finals = latest_decisions(items)
    per_reader: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        final = finals.get(item.id)
        if final is None or final.pending:
            continue
        for judgement in judged.get(item.id, []):
            tally = per_reader[judgement.assignment.reviewer.get_username()]
            tally[1] += 1
            tally[0] += int(outcome_key(judgement) == outcome_key(final))
    return {
        "rows": rows,
        "notes": notes,
        "cautions": [note for note in notes if note["caution"]],
        "below_floor": [row["label"] for row in rows if row["figures"].below_floor],
        "double_read": sum(len(judged.get(item.id, [])) > 1 for item in items),
        "readers": sorted((name, agreed, total) for name, (agreed, total) in per_reader.items()),
    }


def _agreement_row(key: str, label: str, ratings: dict, items_by_id: dict, readers: dict[int, str]) -> dict:
    """One rating's figures, the items whose readers differ on it, and its confusion matrix."""
    figures = agreement(ratings)
    differing = [items_by_id[item_id] for item_id in figures.differing]
    return {
        "key": key,
        "label": label,
        "figures": figures,
        "differing": differing,
        "matrix": confusion_matrix(ratings, readers=readers),
    }


# The figures of an agreement row, in the order the page shows them.
AGREEMENT_FIGURES = (
    ("percent", "agreement"),
    ("cohen", "Cohen's κ"),
    ("fleiss", "Fleiss' κ"),
    ("alpha", "Krippendorff's α"),
)


def agreement_cells(rows: list[dict]) -> list[dict]:
    """Give each row ``cells`` (name, figure, and its note: ``note_number``
    when the note is one of the page's, else ``inline_note``) and return the
    page's notes, numbered in order of first use, each with the ratings it
    concerns and whether it is a ``caution`` against reading a figure (too
    few items) rather than why one is missing. A note is the page's when it
    is a caution or recurs on several ratings: said once, not on every row."""
    recurring: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        for attribute, _ in AGREEMENT_FIGURES:
            if note := getattr(row["figures"], attribute).note:
                recurring[note].add(row["key"])
    numbers: dict[str, int] = {}
    for row in rows:
        row["cells"] = []
        for attribute, name in AGREEMENT_FIGURES:
            figure = getattr(row["figures"], attribute)
            page_note = figure.note and (figure.note == TOO_FEW_ITEMS or len(recurring[figure.note]) > 1)
            if page_note:
                numbers.setdefault(figure.note, len(numbers) + 1)
            row["cells"].append(
                {
                    "name": name,
                    "figure": figure,
                    "percent": attribute == "percent",
                    "below_floor": attribute == "alpha" and row["figures"].below_floor,
                    "note_number": numbers[figure.note] if page_note else None,
                    "inline_note": "" if page_note else figure.note,
                }
            )
    labels = {row["key"]: row["label"] for row in rows}
    return [
        {
            "number": number,
            "text": note,
            "caution": note == TOO_FEW_ITEMS,
            # Named only when the note does not hold for every rating.
            "ratings": [labels[key] for key in labels if key in recurring[note]]
            if len(recurring[note]) < len(rows)
            else [],
        }
        for note, number in numbers.items()
    ]


# Ratings in the order a lead reads them; others follow, sorted.
RATING_ORDER = (
    *("resolved", "partially_resolved", "unresolved", "material_error", "pending", "not_addressed"),
    *("yes", "no", "na"),
)
RATING_LABELS = {
    **dict(Judgement.Grade.choices),
    "pending": "pending",
    "not_addressed": "does not address the question",
    "na": "n/a",
}


def confusion_matrix(ratings: dict, *, readers: dict[int, str]) -> dict:
    """How the readings of the items with two or more ratings pair up:
    ``categories`` (labels, in RATING_ORDER) and ``cells``, a row per category
    of counts, the diagonal where readers agree. With one fixed pair of
    readers the rows are the first reader's (by name) and the columns the
    other's, both named (``rows_reader``, ``columns_reader``); with readers
    who rotate, each pair of readings of an item is counted once, under the
    later category in the rows, so only the lower triangle holds counts.
    ``pairs`` is the number of pairs counted."""
    counted = []
    for given in ratings.values():
        present = {reader: rating for reader, rating in given.items() if rating is not None}
        if len(present) >= 2:
            counted.append(present)
    found = {rating for present in counted for rating in present.values()}
    order = [rating for rating in RATING_ORDER if rating in found] + sorted(found - set(RATING_ORDER))
    place = {rating: index for index, rating in enumerate(order)}
    cells = [[0] * len(order) for _ in order]
    who = sorted({reader for present in counted for reader in present}, key=lambda r: (readers.get(r, ""), r))
    fixed = len(who) == 2
    pairs = 0
    for present in counted:
        if fixed:
            cells[place[present[who[0]]]][place[present[who[1]]]] += 1
            pairs += 1
            continue
        shown = sorted(place[rating] for rating in present.values())
        for first in range(len(shown)):
            for second in range(first + 1, len(shown)):
                cells[shown[second]][shown[first]] += 1
                pairs += 1
    return {
        "categories": [RATING_LABELS.get(rating, rating) for rating in order],
        "cells": cells,
        "fixed_pair": fixed,
        "rows_reader": readers.get(who[0], "") if fixed else "",
        "columns_reader": readers.get(who[1], "") if fixed else "",
        "pairs": pairs,
    }


def calibration_results(samples) -> list[dict]:
    """Per calibration group and reader, the grade given to each form; a
    reader whose grade changes with form is flagged."""
    # A pattern's graded variants are meant to get different grades.
    items = list(
        SampleItem.objects.filter(sample__in=samples, calibration__isnull=False)
        .exclude(calibration__form=CalibrationItem.Form.VARIANT)
        .select_related("calibration")
    )
    judged = latest_judgements(items)
    groups: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for item in items:
        for judgement in judged.get(item.id, []):
            reader = judgement.assignment.reviewer.get_username()
            groups[item.calibration.group][reader][item.calibration.form] = outcome_key(judgement)
    results = []
    for group, readers in sorted(groups.items()):
        for reader, by_form in sorted(readers.items()):
            results.append(
                {
                    "group": group,
                    "reader": reader,
                    "grades": dict(sorted(by_form.items())),
                    "changes": len(set(by_form.values())) > 1,
                }
            )
    return results


def reader_consistency(samples) -> list[dict]:
    """Per human reader of the samples' calibration items, by each reader's
    latest judgements: for each pair kind spec 004 names
    (calibration_patterns.PAIR_KINDS) the pairs graded (both items judged)
    and those graded the same; for each pattern variant with an expected
    grade the items graded and those matching it (an answer judged off the
    question counts as unresolved); and the items that disagreed, with the
    grade given against the twin's or the expected one."""
    items = list(
        SampleItem.objects.filter(sample__in=samples, calibration__isnull=False)
        .select_related("calibration", "sample")
        .order_by("sample_id", "position")
    )
    grades: dict[str, dict[int, str]] = defaultdict(dict)
    for item_id, judgements in latest_judgements(items).items():
        for judgement in judgements:
            grades[judgement.assignment.reviewer.get_username()][item_id] = outcome_key(judgement)
    readers = sorted(
        {
            *grades,
            *(
                Assignment.objects.filter(item__in=items)
                .values_list("reviewer__username", flat=True)
                .distinct()
            ),
        }
    )
    by_group: dict[tuple[int, str], dict[str, SampleItem]] = defaultdict(dict)
    variants: dict[tuple[str, str], list[SampleItem]] = defaultdict(list)
    for item in items:
        by_group[(item.sample_id, item.calibration.group)][item.calibration.form] = item
        if item.calibration.expected_grade:
            variants[(item.calibration.group, item.calibration.expected_grade)].append(item)
    results = []
    for reader in readers:
        given = grades.get(reader, {})
        differing = []
        pairs = []
        for kind, (label, (first_form, second_form)) in PAIR_KINDS.items():
            graded = same = 0
            for forms in by_group.values():
                first, second = forms.get(first_form), forms.get(second_form)
                if not (first and second and first.id in given and second.id in given):
                    continue
                graded += 1
                if given[first.id] == given[second.id]:
                    same += 1
                else:
                    differing.append(
                        {
                            "item": first,
                            "grade": RATING_LABELS[given[first.id]],
                            "against": f"{RATING_LABELS[given[second.id]]} on its twin",
                            "twin": second,
                        }
                    )
            pairs.append({"kind": kind, "label": label, "graded": graded, "same": same})
        expected_rows = []
        for (group, expected), variant_items in variants.items():
            graded_items = [item for item in variant_items if item.id in given]
            matched = [item for item in graded_items if counted_grade(given[item.id]) == expected]
            differing += [
                {
                    "item": item,
                    "grade": RATING_LABELS[given[item.id]],
                    "against": f"{RATING_LABELS[expected]} expected",
                    "twin": None,
                }
                for item in graded_items
                if item not in matched
            ]
            pattern = PATTERNS_BY_KEY.get(group)
            expected_rows.append(
                {
                    "pattern": pattern.title if pattern else group,
                    "expected": RATING_LABELS[expected],
                    "graded": len(graded_items),
                    "matched": len(matched),
                }
            )
        results.append(
            {
                "reader": reader,
                "pairs": pairs,
                "pairs_graded": sum(pair["graded"] for pair in pairs),
                "variants": expected_rows,
                "differing": sorted(differing, key=lambda row: (row["item"].sample_id, row["item"].position)),
            }
        )
    return results


def register(*, status: str = "confirmed", kind: str = "", version: str = ""):
    """The latest decision on each item that confirmed or dismissed a
    material error, with where it came from."""
    latest: dict[int, Adjudication] = {}
    for adjudication in Adjudication.objects.select_related(
        "item__answer__run__assistant_version", "item__calibration", "lead"
    ).order_by("item_id", "revision"):
        latest[adjudication.item_id] = adjudication
    rows = [a for a in latest.values() if a.material_status]
    if status:
        rows = [a for a in rows if a.material_status == status]
    if kind:
        rows = [a for a in rows if a.error_kind == kind]
    if version:
        rows = [a for a in rows if a.item.answer_id and a.item.answer.run.assistant_version.label == version]
    return sorted(rows, key=lambda a: a.created_at, reverse=True)


def samples_between(date_from, date_to):
    return list(
        Sample.objects.filter(created_at__gte=date_from, created_at__lte=date_to).select_related(
            "rubric_version"
        )
    )


def severity_in_force() -> SeverityWeights | None:
    return SeverityWeights.objects.first()


# The rubric question whose "yes" is the failing answer (recipe 4.3's
# question 5); every other question passes on "yes" or "not applicable".
FAILING_YES = ("unsupported_claim",)


def answer_passes(key: str, answer: str) -> bool:
    """Whether one rubric answer passes: "no" for a question whose yes is a
    failure (FAILING_YES), else "yes" or "na"."""
    return answer == "no" if key in FAILING_YES else answer in ("yes", "na")


# Rubric questions about a figure the answer states: not applicable to an
# answer that declines, which states none (issue 25, point 12).
FIGURE_QUESTIONS = ("series", "period", "unit")
DECLINED_NA_RULE = "Not applicable: the answer declines and states no figure."


def declined_answer(item: SampleItem) -> bool:
    """Whether the item's answer was logged as declined (a calibration item never is)."""
    return bool(item.answer_id and item.answer.declined)


def question_allows_na(question, *, declined: bool) -> bool:
    """Whether ``question`` may be answered "na": where its rubric says so, and
    for a declined answer on the questions about a figure (FIGURE_QUESTIONS)."""
    return question.allows_na or (declined and question.key in FIGURE_QUESTIONS)


def rubric_questions_for(rubric_version, *, declined: bool) -> list[dict]:
    """The rubric's questions as a screen asks them of one answer: key, text,
    whether "na" is allowed (question_allows_na) and the rule that says when."""
    return [
        {
            "key": question.key,
            "text": question.text,
            "allows_na": question_allows_na(question, declined=declined),
            "na_rule": question.na_rule
            or (DECLINED_NA_RULE if question_allows_na(question, declined=declined) else ""),
        }
        for question in rubric_version.questions.all()
    ]
