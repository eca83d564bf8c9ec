"""A stand-in judge: not a language model, and labelled so wherever it is shown.

No package on the registries ships a small instruct model that runs on two
CPU cores in a test's time, so the demo and the tests grade with this: a
function with a model's signature, ``stand_in(prompt, system) -> str``, that
reads the tagged answer and evidence out of the prompt and labels from the
numbers alone (a number in the answer that no context holds is unsupported).
It answers the rubric, faithfulness, answer relevance and preference prompts
with strict JSON like a real judge (preferring the answer with more of its
figures in the evidence); any other prompt gets a reply that is not a verdict,
so it is counted as a failure, as a real judge's would be.
"""

from __future__ import annotations

import json
import re

from scoring.numbers import extract_numbers, match_value

NAME = "stand-in judge (numbers only, not a language model)"

# Innermost tags only: <contexts> wraps the numbered <context_N> blocks.
_TAGGED = re.compile(r"<(?P<name>(?!contexts>)[a-z_0-9]+)>\n(?P<text>.*?)\n</(?P=name)>", re.DOTALL)


def _tagged(prompt: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in _TAGGED.finditer(prompt):
        found.setdefault(match.group("name"), []).append(match.group("text").replace("<\\/", "</"))
    return found


def _evidence_values(parts: dict[str, list[str]]) -> list[float]:
    values: list[float] = []
    for name, texts in parts.items():
        if name.startswith("context_"):
            for text in texts:
                values.extend(number.value for number in extract_numbers(text))
    return values


def _claims(answer: str, values: list[float]) -> list[dict]:
    figures = [number for number in extract_numbers(answer) if not number.is_year]
    return [
        {"claim": f"the answer states {number.text}", "supported": match_value(number, values) is not None}
        for number in figures
    ]


def stand_in(prompt: str, system: str | None = None) -> str:
    """A verdict in the form the prompt asks for, from the numbers in the answer and the evidence."""
    parts = _tagged(prompt)
    answer = (parts.get("answer") or [""])[0]
    claims = _claims(answer, _evidence_values(parts))
    unsupported = any(not claim["supported"] for claim in claims)
    if '"claims"' in prompt:
        return json.dumps({"claims": claims})
    if '"grade"' in prompt:
        keys = re.findall(r"^- ([A-Za-z0-9_-]+): ", prompt, re.MULTILINE)
        answers = {key: "yes" for key in keys}
        for key in keys:
            if "unsupported" in key:
                answers[key] = "yes" if unsupported else "no"
            elif f"- {key}: " in prompt and "(na when:" in prompt.split(f"- {key}: ", 1)[1].split("\n", 1)[0]:
                answers[key] = "na"
        if unsupported:
            grade = "material_error"
        elif claims:
            grade = "resolved"
        else:
            grade = "unresolved"
        return json.dumps({"answers": answers, "grade": grade, "reason": "judged from the numbers alone"})
    if '"winner"' in prompt:
        values = _evidence_values(parts)
        shares = []
        for name in ("answer_a", "answer_b"):
            figures = _claims((parts.get(name) or [""])[0], values)
            shares.append(sum(claim["supported"] for claim in figures) / len(figures) if figures else 0.0)
        winner = "tie" if shares[0] == shares[1] else ("answer_a" if shares[0] > shares[1] else "answer_b")
        return json.dumps({"winner": winner, "reason": "more of its figures are in the evidence"})
    if '"score"' in prompt and "1 (not at all)" in prompt:
        return json.dumps({"score": 4 if claims else 2, "reason": "a figure answers the question"})
    return "The stand-in judge grades only the rubric, faithfulness and answer relevance."
