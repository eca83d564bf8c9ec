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
    "Judge the answer against the evidence shown beside it, not against what you remember. "
    "First say whether it addresses the question, then answer the rubric's evidence checks. "
    "Then look for a material error before anything else: a core conclusion that is wrong, a key "
    "recommendation that would send the user the wrong way, deciding evidence that was made up, a "
    "live situation nobody checked stated as fact, or a missing condition that turns the answer into "
    "a wrong blanket statement. Only then decide whether the core conclusion holds and how much of the "
    "request was delivered; the grade follows from those answers. Use pending when a deciding fact "
    "cannot be checked yet: it is not a grade. Every outcome but resolved needs a reason another "
    "reader can check. Form (short or long, paragraph or table) gains or loses nothing unless it "
    "hides a condition or makes the answer unclear."
)

# How a declined answer counts (spec 000's refusal accuracy counts a right
# decline as a success; spec 004: admitting an evidence gap is not an error).
DECLINE_RULE = (
    "A decline addresses the question. If the records really lack what was asked and the answer "
    "says so, it is the right answer: resolved (1), with n/a on the figure questions. If the "
    "records could answer, it is unresolved (4)."
)
