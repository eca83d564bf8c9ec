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

# Spec 004's rules for every grader, whatever the rubric: shown in the review
# screens' guide as (heading, points).
GRADING_RULES = [
    (
        "Fairness",
        [
            "Form neither gains nor loses: short or long, paragraph, list or table, and any valid route "
            "to the evidence are judged on meaning and facts, not on wording, headings or the order "
            "tools were used in. Form counts only where it really gets in the way of understanding, "
            "hides a condition that matters or leaves the answer ambiguous.",
            "An answer that says what the reference says in other words, or reaches it from other "
            "evidence, is as right as the reference: do not match text.",
            "A condition is needed only when leaving it out would change the conclusion or what the "
            "user does; do not ask every answer for version fields, call chains, edge cases or next steps.",
            "The user's assumption, count or term may be wrong: an answer that corrects it accurately "
            "and then answers the real question can be resolved.",
            "Admitting plainly that the evidence does not reach is not an error; the part of the request "
            "left undone is still recorded under fulfilment.",
            "A missing citation, an unshown process or a short reply does not make a conclusion wrong. "
            "Sources an answer offers are checked for existence and support and earn nothing by "
            "themselves; a link that is unreachable for now is not fabrication.",
        ],
    ),
    (
        "Counterexamples",
        [
            "Ask: within the question's scope, is there a case, backed by evidence, that overturns a "
            "deciding claim or shows that something left out would change the user's judgement? Only "
            "such a case makes a material error.",
            "Keep to the question's scope and do not widen it while grading. The answer need not list "
            "counterexamples: a correct condition or statement of scope is enough, and a branch left "
            "unmentioned is not an error by itself.",
            "An answer that stays within its scope and generalizes nothing wrongly, but skips part of "
            "the request, is partially resolved.",
        ],
    ),
    (
        "The answer asks the user for more information",
        [
            "Tick i beside the grade when the answer asks the user for more; it sends the item to a "
            "lead. Only asking questions is unresolved; answering part and then asking can be "
            "partially resolved.",
        ],
    ),
    (
        "Anonymity is limited",
        [
            "Answers come under a random alias, without the system, version, run, timing or tool calls "
            "behind them. A link, a phrase or a habit of layout inside an answer can still give away "
            "where it came from: grade what it says, not who you think wrote it, and tell the lead when "
            "you recognised its origin.",
        ],
    ),
]

# How a declined answer counts (spec 000's refusal accuracy counts a right
# decline as a success; spec 004: admitting an evidence gap is not an error).
DECLINE_RULE = (
    "A decline addresses the question. If the records really lack what was asked and the answer "
    "says so, it is the right answer: resolved (1), with n/a on the figure questions. If the "
    "records could answer, it is unresolved (4)."
)
