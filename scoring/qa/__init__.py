"""General question answering (spec 001): how often an AI system answers the
user's own questions correctly, as two tasks.

- Open-ended: the system answers in its own words; a judge model compares
  each response with the reference answer and says CORRECT or INCORRECT, as
  strict JSON with its reasoning (read by scoring.judge.verdict.parse_verdict).
- Multiple choice: the system gets the question with its options labelled
  A, B, C, ... (``mc_prompt``) and begins its answer with a letter; the first
  character that is not a space is compared with the correct option's letter.

Accuracy is k of n trials with a Wilson interval, per task and per stratum;
for multiple choice beside the random-guess baseline, the mean of 1/N over
the questions (N options each). Answers come from a callable system or from
a run log (``read_run_answers``); every attempt of a question is a trial, a
question without an answer is a trial answered wrongly, and a verdict the
judge gave malformed is an error that keeps its raw text, counted apart and
never guessed.

Datasets are JSON Lines, a JSON array or CSV with configurable column names
or paths into nested fields (``Columns``); the correct option is given by
its position, its letter or its text.
A file-level problem raises DatasetError; bad lines raise
scoring.logfile.LogFileError listing every one (line, field, reason).

The parts, each importing only those before it: prompts (what the system
and the judge are asked, and grading by letter), datasets, answers (a run
log's attempts), score (grading, accuracy and the report), cost (a judge's
cost before it is asked) and collection (a dataset as a question set).
Everything is imported from ``scoring.qa`` itself.
"""

from scoring.qa.answers import NOT_ANSWERED, OK, VERDICT_ERROR, LoggedAnswer, read_run_answers
from scoring.qa.collection import question_set_lines, write_prompts
from scoring.qa.cost import JudgeCost, estimate_judge_cost
from scoring.qa.datasets import (
    COLUMN_KEYS,
    MAX_LISTED_ERRORS,
    Columns,
    DatasetError,
    Question,
    parse_columns,
    read_dataset,
)
from scoring.qa.prompts import (
    FORMATS,
    JUDGE_SYSTEM,
    JUDGE_TAGS,
    JUDGE_TEMPLATE,
    MC_INSTRUCTION,
    MIN_OPTIONS,
    OPTION_LETTERS,
    PROMPT_HASH,
    PROMPT_VERSION,
    TASK_NAMES,
    TASKS,
    VERDICT_SCHEMA,
    JudgeVerdict,
    choice_is_correct,
    escape_tagged,
    judge_prompt,
    judge_response,
    mc_prompt,
    option_letter,
)
from scoring.qa.score import (
    Accuracy,
    Answers,
    Graded,
    QAReport,
    System,
    score_multiple_choice,
    score_open_ended,
)

__all__ = [
    "COLUMN_KEYS",
    "FORMATS",
    "JUDGE_SYSTEM",
    "JUDGE_TAGS",
    "JUDGE_TEMPLATE",
    "MAX_LISTED_ERRORS",
    "MC_INSTRUCTION",
    "MIN_OPTIONS",
    "NOT_ANSWERED",
    "OK",
    "OPTION_LETTERS",
    "PROMPT_HASH",
    "PROMPT_VERSION",
    "TASKS",
    "TASK_NAMES",
    "VERDICT_ERROR",
    "VERDICT_SCHEMA",
    "Accuracy",
    "Answers",
    "Columns",
    "DatasetError",
    "Graded",
    "JudgeCost",
    "JudgeVerdict",
    "LoggedAnswer",
    "QAReport",
    "Question",
    "System",
    "choice_is_correct",
    "escape_tagged",
    "estimate_judge_cost",
    "judge_prompt",
    "judge_response",
    "mc_prompt",
    "option_letter",
    "parse_columns",
    "question_set_lines",
    "read_dataset",
    "read_run_answers",
    "score_multiple_choice",
    "score_open_ended",
    "write_prompts",
]
