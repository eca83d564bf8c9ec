"""The default rubric of recipe 4.3, with the awkward-case rules decided
before any grading (spec 002). Used by a migration and by rubric_default()."""

RUBRIC_NAME = "Statistics answers (recipe 4.3)"

QUESTIONS = [
    ("series", "Is this the right series for the question?", False, ""),
    ("period", "Is it the right period?", False, ""),
    ("unit", "Is the unit stated?", False, ""),
    (
        "caveat",
        "Where the record's metadata carries a caveat (provisional, break in series, limited coverage), does the answer state it?",
        True,
        "Not applicable when no retrieved record carries a caveat.",
    ),
    (
        "unsupported_claim",
        "Does the answer claim anything the retrieved records do not support?",
        False,
        "",
    ),
]

AWKWARD_CASES = [
    {
        "case": "A correct value attached to the wrong period",
        "rule": "The period question is no; the grade is a material error when the period changes what the user concludes.",
    },
    {
        "case": "A range where the records hold a point value",
        "rule": "Partially resolved when the range contains the value and says it is approximate; a material error when it excludes it.",
    },
    {
        "case": "A refusal",
        "rule": "Unresolved when the data could answer; resolved when the records really lack the level or period asked for and the answer says so.",
    },
    {
        "case": "A correct but incomplete answer",
        "rule": "Partially resolved: say in the note what is missing. It is a material error only if the gap turns it into a wrong unconditional statement.",
    },
]

GUIDANCE = (
    "Judge the answer against the evidence shown beside it, not against what you know. "
    "First decide whether it addresses the question at all; then answer every rubric question; "
    "then grade: look for a material error first, then judge how much of the request is met. "
    "Use pending verification when a deciding fact cannot be checked yet; it is not a grade. "
    "Form (short or long, paragraph or table) gains or loses nothing unless it hides a condition."
)
