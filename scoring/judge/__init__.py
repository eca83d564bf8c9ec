"""Model graders (spec 003): judges that label as strict JSON, formulas that score,
panels whose agreement is measured, and preference asked in both orders."""

from scoring.judge.methods import (
    GRADES,
    METRICS,
    JudgeResult,
    LLMJudge,
    RubricQuestion,
    average_precision,
    context_texts,
)

__all__ = [
    "GRADES",
    "METRICS",
    "JudgeResult",
    "LLMJudge",
    "RubricQuestion",
    "average_precision",
    "context_texts",
]
