"""A slow, plain implementation of the scoring rules, kept only to check the
fast one: a pandas per-row loop, every rule applied in full to every answer,
no shortcuts. The differential tests compare the two on generated runs.
"""

from __future__ import annotations

import math
import re

import pandas as pd

# Written out here rather than imported, so that the reference stands alone.
MEASURES = (
    "numeric_accuracy",
    "citation_validity",
    "refusal_accuracy",
    "answer_rate",
    "unsupported_numbers",
    "unsupported_answers",
)
SEPARATORS = " \u00a0\u202f\u2009'\u2019,."
DOT_GROUPING = {"fr", "es", "de", "it", "pt", "nl", "da", "id", "tr"}
SCALE = {
    "thousand": 1e3, "thousands": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9,
    "billions": 1e9, "mille": 1e3, "milliers": 1e3, "milliard": 1e9, "milliards": 1e9,
    "mil": 1e3, "millón": 1e6, "millon": 1e6, "millones": 1e6, "billón": 1e12, "billones": 1e12,
}  # fmt: skip


def blank(text: str, patterns) -> str:
    for pattern in patterns:
        text = re.sub(pattern, lambda m: " " * len(m.group()), text)
    return text


DATES_AND_DENOMINATORS = (r"\d{4}-\d{2}-\d{2}", r"\b[Pp][Ee][Rr]\s+\d+(?:[ ,]\d{3})*(?:[.,]\d+)?")
IDENTIFIERS = (r"[A-Z][A-Z0-9_]{3,}",)


def readings_of(body: str, language: str) -> list[tuple[float, int]]:
    runs = re.split(r"[" + re.escape(SEPARATORS) + "]", body)
    seps = [c for c in body if c in SEPARATORS]
    dot_ok = language[:2].lower() in DOT_GROUPING
    found = []
    if not seps:
        return [(float(body), 0)]
    if len(set(seps)) == 1 and all(len(r) == 3 for r in runs[1:]) and (seps[0] != "." or dot_ok):
        found.append((float("".join(runs)), 0))
    groups, mark = seps[:-1], seps[-1]
    if (
        mark in ".,"
        and len(set(groups)) <= 1
        and mark not in groups
        and all(len(r) == 3 for r in runs[1:-1])
        and (not groups or groups[0] != "." or dot_ok)
    ):
        found.append((float("".join(runs[:-1]) + "." + runs[-1]), len(runs[-1])))
    base = re.fullmatch(r"\d+(?:[ ,]\d{3})*(?:[.,]\d+)?", body)
    if base and len(found) == 2:
        whole = re.sub(r"[ ,](?=\d{3}(?!\d))", "", body).replace(",", ".")
        found.sort(key=lambda r: r[0] != float(whole))
    return found


def numbers_of(text: str, language: str, scale_words: bool) -> list[dict]:
    partly = blank(text, DATES_AND_DENOMINATORS)
    blanked = blank(partly, IDENTIFIERS)
    token = re.compile(
        r"(?<![\w.])([-\u2212](?=\d))?(\d+(?:[" + re.escape(SEPARATORS) + r"]\d{3})*(?:[.,]\d+)?)(?!\w)"
    )
    result = []
    for match in token.finditer(blanked):
        sign, body = match.group(1), match.group(2)
        at = match.start(2)
        begin = match.start()
        if sign and begin > 0 and (partly[begin - 1].isalnum() or partly[begin - 1] in "_."):
            # A minus glued to a word (an identifier included) is no sign.
            sign, begin = None, at
        if at >= 2 and text[at - 1] in "-\u2010" and text[at - 2].isalpha():
            continue
        readings = readings_of(body, language)
        end = match.end()
        if not readings:
            body = re.match(r"\d+(?:[ ,]\d{3})*(?:[.,]\d+)?", body).group()
            end = at + len(body)
            whole = re.sub(r"[ ,](?=\d{3}(?!\d))", "", body).replace(",", ".")
            readings = [(float(whole), len(whole.partition(".")[2]))]
        values = [(-v if sign else v) for v, _ in readings]
        if scale_words:
            after = re.match(r"\s+(mil\s+millones\b|[^\W\d_]+\b)", blanked[end:], re.IGNORECASE)
            if after and " ".join(after.group(1).lower().split()) in {*SCALE, "mil millones"}:
                word = " ".join(after.group(1).lower().split())
                factor = 1e9 if word == "mil millones" else SCALE[word]
                values += [v * factor for v in values]
        text_written = text[begin:end]
        result.append(
            {
                "text": text_written,
                "values": values,
                "decimals": readings[0][1],
                "signed": bool(sign),
                "year": len(text_written) == 4 and text_written.isdigit() and 1900 <= values[0] <= 2100,
            }
        )
    return result


def supports(number: dict, candidates, rounding: bool) -> bool:
    readings = list(number["values"])
    readings += [-v for v in readings]  # either sign supports a figure
    for candidate in candidates:
        for reading in readings:
            if math.isclose(reading, candidate):
                return True
            if rounding and round(candidate, number["decimals"]) == reading:
                return True
    return False


def reference_score(
    answers: list[dict],
    questions: dict,
    *,
    slice_fields=("language",),
    rounding=False,
    scale_words=False,
    distinct=False,
) -> dict:
    frame = pd.DataFrame(answers)
    rows = []
    for _, row in frame.iterrows():
        question = questions[row["question_id"]]
        numbers = numbers_of(row["answer"], row["language"], scale_words)
        declined = bool(row["declined"])
        counts = dict.fromkeys(
            [f"{m}_{p}" for m in MEASURES for p in "kn"],
            0,
        )
        if question["expected_behaviour"] == "answer":
            counts["numeric_accuracy_n"] = counts["answer_rate_n"] = 1
            counts["answer_rate_k"] = int(not declined)
            counts["numeric_accuracy_k"] = int(
                not declined and any(supports(n, question["expected_values"], rounding) for n in numbers)
            )
        else:
            counts["refusal_accuracy_n"] = 1
            counts["refusal_accuracy_k"] = int(declined)
        cited = list(dict.fromkeys(row["cited_ids"])) if distinct else list(row["cited_ids"])
        counts["citation_validity_n"] = len(cited)
        counts["citation_validity_k"] = sum(c in row["retrieved_ids"] for c in cited)
        counted = [n for n in numbers if not n["year"]]
        if distinct:
            counted = list({n["values"][0]: n for n in reversed(counted)}.values())
        unsupported = [
            n
            for n in counted
            if not supports(n, list(row["retrieved_values"]) + list(question["expected_values"]), rounding)
        ]
        counts["unsupported_numbers_n"] = len(counted)
        counts["unsupported_numbers_k"] = len(unsupported)
        if not declined or counted:
            counts["unsupported_answers_n"] = 1
            counts["unsupported_answers_k"] = int(bool(unsupported))
        for name in slice_fields:
            counts[name] = row[name] if name in row and not pd.isna(row[name]) else question.get(name)
        rows.append(counts)
    answered = set(frame["question_id"])
    for question_id, question in questions.items():
        if question_id in answered:
            continue
        # Not run: a failure wherever a question counts.
        counts = dict.fromkeys([f"{m}_{p}" for m in MEASURES for p in "kn"], 0)
        if question["expected_behaviour"] == "answer":
            counts["numeric_accuracy_n"] = counts["answer_rate_n"] = 1
        else:
            counts["refusal_accuracy_n"] = 1
        for name in slice_fields:
            counts[name] = question.get(name)
        rows.append(counts)
    table = pd.DataFrame(rows)
    measures = MEASURES

    def as_slice(sums) -> dict:
        return {
            m: {"k": int(sums[f"{m}_k"]), "n": int(sums[f"{m}_n"])} for m in measures if int(sums[f"{m}_n"])
        }

    result = {"all": as_slice(table.sum(numeric_only=True))}
    for name in slice_fields:
        for value, group in table.dropna(subset=[name]).groupby(name):
            result[f"{name}={value}"] = as_slice(group.sum(numeric_only=True))
    return result
