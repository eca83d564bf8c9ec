"""Deterministic text metrics against references, run before any judge.

Both compare normalised text: lower case, punctuation removed, the English
articles "a", "an" and "the" dropped, white space collapsed. With several
acceptable references an answer gets its best score against any of them.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

ARTICLES = frozenset({"a", "an", "the"})


def normalised_tokens(text: str) -> list[str]:
    """The words of ``text`` after normalising (see the module's docstring)."""
    kept = "".join(
        " " if unicodedata.category(character).startswith("P") else character for character in text
    )
    return [word for word in kept.casefold().split() if word not in ARTICLES]


def exact_match(answer: str, references: Sequence[str]) -> float:
    """1.0 when the normalised answer equals a normalised reference, else 0.0."""
    words = normalised_tokens(answer)
    return float(any(words == normalised_tokens(reference) for reference in references))


def token_f1(answer: str, references: Sequence[str]) -> float:
    """The best F1 of shared words between the answer and any reference."""
    return max(
        (_f1(normalised_tokens(answer), normalised_tokens(reference)) for reference in references),
        default=0.0,
    )


def _f1(answer: list[str], reference: list[str]) -> float:
    if not answer or not reference:
        return float(answer == reference)
    shared = sum((Counter(answer) & Counter(reference)).values())
    if shared == 0:
        return 0.0
    precision = shared / len(answer)
    recall = shared / len(reference)
    return 2 * precision * recall / (precision + recall)


TEXT_METRICS = {"exact_match": exact_match, "token_f1": token_f1}
