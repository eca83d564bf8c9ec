"""Collecting a run log by asking an assistant every question of a set:
python -m scoring.collect, whose usage and behaviour scoring.collect.cli
tells.

The parts, each importing only those before it: replies (the reply, the
errors of an attempt, reading a reply from a response), assistants (a chat
endpoint or a command), loop (the collection itself) and cli (the command
line; __main__ runs it). Everything is imported from ``scoring.collect``.
"""

from scoring.collect.assistants import ChatEndpoint, CommandAssistant
from scoring.collect.cli import ProgressBar, main
from scoring.collect.loop import CollectSummary, ProgressCallback, collect
from scoring.collect.replies import (
    CHAT_SHAPE,
    COMMAND_SHAPE,
    DEFAULT_ANSWER_PATH,
    DEFAULT_TIMEOUT_S,
    EVIDENCE_FIELD,
    INTERRUPTED,
    MAX_CONCURRENCY,
    MAX_LISTED_ERRORS,
    REPLY_FIELDS,
    Assistant,
    AttemptFailed,
    CollectError,
    PathParts,
    Reply,
    ReplyShape,
    load_mapping,
    reply_from_document,
)

__all__ = [
    "CHAT_SHAPE",
    "COMMAND_SHAPE",
    "DEFAULT_ANSWER_PATH",
    "DEFAULT_TIMEOUT_S",
    "EVIDENCE_FIELD",
    "INTERRUPTED",
    "MAX_CONCURRENCY",
    "MAX_LISTED_ERRORS",
    "REPLY_FIELDS",
    "Assistant",
    "AttemptFailed",
    "ChatEndpoint",
    "CollectError",
    "CollectSummary",
    "CommandAssistant",
    "PathParts",
    "ProgressBar",
    "ProgressCallback",
    "Reply",
    "ReplyShape",
    "collect",
    "load_mapping",
    "main",
    "reply_from_document",
]
