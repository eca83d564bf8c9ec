"""Strict reading of a judge's verdict: moved to scoring.judge.verdict.

Kept so that ``from scoring.verdict import ...`` goes on working (scoring.qa
imports it); new code imports scoring.judge.verdict."""

from scoring.judge.verdict import (
    FENCED,
    Boolean,
    Choice,
    ListOf,
    Rating,
    Text,
    VerdictError,
    parse_verdict,
)

__all__ = [
    "FENCED",
    "Boolean",
    "Choice",
    "ListOf",
    "Rating",
    "Text",
    "VerdictError",
    "parse_verdict",
]
