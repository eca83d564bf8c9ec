"""Model graders (spec 003): judges that label as strict JSON, formulas that score,
panels whose agreement is measured, and preference asked in both orders."""

from scoring.judge.methods import METRICS, JudgeResult, LLMJudge, average_precision, context_texts

__all__ = ["METRICS", "JudgeResult", "LLMJudge", "average_precision", "context_texts"]
