"""Reading and validating run logs and question sets (JSON Lines), streaming.

A run log (spec 000, recipe 4.1) is one JSON object per line. Its first line
may be a header naming the versions: {"assistant_version": ..., "set_version": ...}.
A question set is the same, with a {"set_version": ...} header.

A run log's header may also say how the run was made (spec 004, see RunPlan):
``repetitions``, how many times each question was asked (1 unless stated; each
line then says which ``attempt`` it is, from 1), ``timeout_s``, the limit an
attempt ran under (600 unless stated), ``repeats``, the run it repeats, and
``clock_skew_ms`` and ``clock_precision_ms``, what it states of the clocks
that stamped its times (not stated unless given, never 0), ``reply_policy``,
"direct" or "channel", and ``exclude_overhead``, the pipeline's choice to
leave the channel overhead a line logs (``overhead``) out of E2E.
An attempt that ended without an answer says so with ``status`` (error,
timeout, cancelled, refused_quota; ok unless stated), ``status_reason`` and
``stopped_at``; it is a result, and needs none of an answer's own fields.
A re-run is a run of its own (its header's ``repeats`` names the run); each
of its lines may say with ``repeats_attempt`` which attempt of that run it
repeats, so that a failed attempt keeps its receipt beside the one repeating it.
Timestamps, latency_ms, tool_calls and overhead are checked by scoring.timing.

Readers never stop at the first problem: they report every bad line with its
number, the field and the reason, so a file can be fixed in one pass.

What a file may hold (each rule a line error naming the line and the field):

- a version label (assistant_version, set_version): 1 to 100 characters, ASCII
  letters, digits, ".", "_", "-" and "+", starting with a letter or a digit, so
  that it is safe in a URL and a file name; a question set's name the same,
  with spaces allowed inside;
- a question id: 1 to 200 printable characters (no control characters, tabs
  or line breaks), not only spaces;
- a language: a short code such as en, fr or pt-BR: two or three letters, then
  optional subtags of letters and digits after "-" or "_", 20 characters at most;
- a question's series and unit at most 200 characters, its period and stratum
  at most 100, the stratum printable;
- no string anywhere holding the NUL character (JSON "\u0000"): PostgreSQL
  cannot store it;
- no line longer than the limit the caller gives (the app passes
  REVIEWAPP_MAX_ANSWER_KB, 100 KB by default);
- an attempt from 1 to the header's repetitions, stated on every line when
  there are several; each attempt of a question once, and a question's
  attempts without gaps (1 and 3 without 2 is refused; 1 and 2 of 3 are not:
  the third was not run).

A file must be UTF-8 text: ``encoding_problem`` names a compressed, UTF-16 or
UTF-32 file from its first bytes.

The package's parts, each importing only those listed before it:
errors (LineError, LogFileError, ErrorCollector), fields (the field tables
and the rules for values), lines (streaming lines and objects), header (the
header and its RunPlan), followups (the multi-turn protocol), attempts
(AttemptBook), answers and questions (each line's checks and the readers of
whole files). Everything is imported from ``scoring.logfile`` itself.
"""

from scoring.logfile.answers import (
    StoredFields,
    answer_errors,
    check_answer_line,
    normalise_answer,
    read_answers,
    stored_fields,
)
from scoring.logfile.attempts import AttemptBook
from scoring.logfile.errors import ErrorCollector, LineError, LogFileError, line_too_long
from scoring.logfile.fields import (
    ANSWER_CONTENT_FIELDS,
    ANSWER_FIELDS,
    BEHAVIOURS,
    COMBINED_FIELDS,
    DEFAULT_REPETITIONS,
    DEFAULT_TIMEOUT_S,
    LABEL_MAX_LENGTH,
    LANGUAGE_MAX_LENGTH,
    MAX_REPETITIONS,
    MAX_TIMEOUT_S,
    PLANNED_REPETITIONS,
    QUESTION_FIELDS,
    QUESTION_ID_MAX_LENGTH,
    QUESTION_OPTIONAL,
    QUESTION_TEXT_LIMITS,
    REPEATS_MAX_LENGTH,
    RUN_FILE_NAME,
    SET_FILE_NAME,
    SET_NAME_MAX_LENGTH,
    SPLITS,
    encoding_problem,
    holds_nul,
    label_problem,
    language_problem,
    question_id_problem,
    set_name_problem,
)
from scoring.logfile.followups import (
    FOLLOW_UP_KINDS,
    FOLLOW_UP_LABELS,
    declared_follow_ups,
    follow_up_counts,
    follow_up_summary,
    label_follow_ups,
)
from scoring.logfile.header import HEADER_MAX_BYTES, RunPlan, plan_from_header, read_header, read_plan
from scoring.logfile.lines import (
    HEADER_FIELDS,
    LoggedLine,
    ProgressCallback,
    _decode,
    is_header,
    iter_lines,
    iter_raw_lines,
    parse_object,
)
from scoring.logfile.questions import (
    is_combined_form,
    iter_questions,
    normalise_question,
    question_errors,
    questions_from_combined,
    read_questions,
    validate_questions,
)

__all__ = [
    "ANSWER_CONTENT_FIELDS",
    "ANSWER_FIELDS",
    "BEHAVIOURS",
    "COMBINED_FIELDS",
    "DEFAULT_REPETITIONS",
    "DEFAULT_TIMEOUT_S",
    "FOLLOW_UP_KINDS",
    "FOLLOW_UP_LABELS",
    "HEADER_FIELDS",
    "HEADER_MAX_BYTES",
    "LABEL_MAX_LENGTH",
    "LANGUAGE_MAX_LENGTH",
    "MAX_REPETITIONS",
    "MAX_TIMEOUT_S",
    "PLANNED_REPETITIONS",
    "QUESTION_FIELDS",
    "QUESTION_ID_MAX_LENGTH",
    "QUESTION_OPTIONAL",
    "QUESTION_TEXT_LIMITS",
    "REPEATS_MAX_LENGTH",
    "RUN_FILE_NAME",
    "SET_FILE_NAME",
    "SET_NAME_MAX_LENGTH",
    "SPLITS",
    "AttemptBook",
    "ErrorCollector",
    "LineError",
    "LogFileError",
    "LoggedLine",
    "ProgressCallback",
    "RunPlan",
    "StoredFields",
    "_decode",
    "answer_errors",
    "check_answer_line",
    "declared_follow_ups",
    "encoding_problem",
    "follow_up_counts",
    "follow_up_summary",
    "holds_nul",
    "is_combined_form",
    "is_header",
    "iter_lines",
    "iter_questions",
    "iter_raw_lines",
    "label_follow_ups",
    "label_problem",
    "language_problem",
    "line_too_long",
    "normalise_answer",
    "normalise_question",
    "parse_object",
    "plan_from_header",
    "question_errors",
    "question_id_problem",
    "questions_from_combined",
    "read_answers",
    "read_header",
    "read_plan",
    "read_questions",
    "set_name_problem",
    "stored_fields",
    "validate_questions",
]
