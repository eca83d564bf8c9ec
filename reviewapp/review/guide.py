"""The grader guide: spec 004's grading rules in this project's words, the
same for every rubric. Written once here and shown by
templates/review/grading_guide.html beside the review screen, the lead's
adjudication screen and on the rubric page.

The review screen must not say "calibration" (a reader must not tell a
calibration item from any other), so spec 004's calibration sections appear
here as worked patterns and checks on graders."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GuideSection:
    """One heading of the guide: an optional case it opens with, its rules,
    and an optional lesson drawn from them."""

    heading: str
    rules: tuple[str, ...]
    case: str = ""
    lesson: str = ""


SECTIONS: tuple[GuideSection, ...] = (
    GuideSection(
        "Two judgements, then the material-error question",
        (
            "Core conclusion: do the answer's key conclusions hold within the question's scope, and "
            "is no condition missing that would make them mislead? Correct, material error, no "
            "gradable conclusion, or pending.",
            "Request: was what the user asked for delivered? It is judged only against the question "
            "and the context it needs. Full, partial, not met, or pending.",
            "Material error: yes, no or pending, asked on its own. For a yes, write down the exact "
            "claim, the evidence that contradicts it, and what it does to the user's judgement or action.",
        ),
    ),
    GuideSection(
        "What counts as a material error (any one, once confirmed)",
        (
            "the core conclusion is wrong;",
            "a key recommendation would make the user do the wrong thing;",
            "deciding evidence is made up;",
            "a live situation nobody verified is stated as confirmed fact;",
            "a necessary condition is left out, so the answer becomes a wrong unconditional statement.",
            "Typos and clumsy wording that change no judgement or action are only noted in the reason.",
            "A right main conclusion does not rescue a side recommendation that is materially wrong: "
            "that is still a material error.",
            "Extra information that is correct but beside the question earns nothing.",
        ),
    ),
    GuideSection(
        "The grades, in the order they are decided",
        (
            "Look for confirmed material errors first, and only then decide how much of the request "
            "was covered: correct content elsewhere never makes up for a key error.",
            "Resolved: the core conclusion holds, the whole request is met and nothing materially misleads.",
            "Partially resolved: useful, correct content, but part of the request or a fact it needs "
            "is missing, with no confirmed material error.",
            "Material error: the core conclusion or a key recommendation is materially wrong; blanket "
            "generalizations that mislead and made-up deciding evidence count.",
            "Unresolved: no substantive answer, only a plan, only a request for more information, or "
            '"cannot answer". A wrong refusal that itself holds a confirmed key error is a material error.',
            "Pending verification is a state of the review, not a fifth grade: when a deciding fact "
            "cannot be checked yet, keep the check open and give no grade, neither pass nor fail. If "
            "the evidence at hand already confirms a material error, grade it now.",
            "The answer asks the user for more information (tick i; it sends the item to a lead): that "
            "goes with a grade. Only asking questions is unresolved; answering part and then asking "
            "can be partially resolved.",
        ),
    ),
    GuideSection(
        "Fairness",
        (
            "Short or long, paragraph, list or table, and any valid route to the evidence are equal: "
            "weigh meaning and facts, not the reference's text, set wording, headings or tool order.",
            "Form counts only where it really gets in the way of understanding, hides a condition "
            "that matters or leaves the answer ambiguous.",
            "A condition is needed only when leaving it out would change the conclusion or what the "
            "user does. Do not ask every answer for version fields, full call chains, parameter "
            "flows, lists of edge cases or next steps.",
            'For "how do I debug this", what is delivered is the method, what must be in place first '
            "and the steps; how the assistant searched need not be shown.",
            'For "list all", check the whole set within the question\'s scope: a few right examples '
            "may be only partial. A side topic the user did not ask about is not an omission.",
            "The user's assumption, count or term may be wrong: an answer that corrects the premise "
            "accurately and answers the real question can be resolved.",
            "Keep static rules apart from live facts. Saying plainly that there is an evidence gap is "
            "not an error, but the part of the request left undone is still recorded.",
            "A missing citation, an unshown process or a short reply is no reason to call a "
            "conclusion wrong.",
            "Sources are part of what is delivered only when the user or the shared test protocol "
            "asks for them, and that request is put the same way to every setup.",
            "Citations an answer volunteered are checked for existence and support but earn no "
            "points; a link that cannot be reached for now is not fabrication.",
            "The evidence existing locally, the link's path being right, and the link opening for "
            "the user's own account are three separate checks.",
        ),
    ),
    GuideSection(
        "Counterexamples",
        (
            "Ask: within the question's scope, is there a case, backed by evidence, that overturns a "
            "deciding claim or shows that something left out would change the user's judgement?",
            "The case must lie inside the question's scope and bear on the conclusion: do not widen "
            "the question while grading.",
            "The answer needs no counterexamples section: a correct condition or statement of scope "
            "is enough, and a branch left unmentioned is not an error by itself.",
            "An answer that keeps to its scope and generalizes nothing wrongly but skips part of the "
            "request is partially resolved.",
        ),
    ),
    GuideSection(
        "Worked pattern 1: a definition existing is not a call happening",
        (
            'Saying "no business call was found in the checked scope": resolved.',
            "Listing the wrapper without judging whether anything calls it: partially resolved.",
            "Taking the monitoring entry for a request, or saying the address is nowhere in the code: "
            "material error.",
            "Only suggesting searches: unresolved.",
        ),
        case="Where does the front end call an old endpoint? A request wrapper for it is still "
        "defined and a monitoring list registers its address, but nothing in the checked scope "
        "calls it; the pages use a newer endpoint.",
        lesson="Grade what the answer means and what the user wants, let it correct the premise, "
        "and never score by how often an address appears.",
    ),
    GuideSection(
        "Worked pattern 2: role differences also depend on state and permission",
        (
            "Stating the differences with their conditions: resolved.",
            '"Non-owners see no actions" or "owners can always act": material error.',
        ),
        case="What can an owner do on a list page that others cannot? Each action has its own "
        "conditions (role, workflow state, item type), and one entry is also behind a switch and "
        "an organisation grant, so non-owners may reach it too.",
        lesson="Counterexamples test blanket generalizations. The conditions needed come from the "
        "question's scope; the answer need not show the grader's whole control chain.",
    ),
    GuideSection(
        "Worked pattern 3: an outer choice and an inner data switch are different layers",
        (
            "Explaining both layers: resolved.",
            "Saying that history always brings back the old interface, or taking the revision number "
            "for the version generation: material error.",
        ),
        case="With the new workflow version current, does opening an old snapshot bring back the "
        "old interface? The parent page picks the component from the current workflow; moving "
        "through history inside it changes only the data. Only a separate component renders "
        "history by its own version.",
        lesson="When the knowledge at hand misses the parent-level condition, go back to the "
        "source and correct the criteria: a knowledge page is not the answer key.",
    ),
    GuideSection(
        "How graders are checked",
        (
            "Each answer comes under a random alias per question, its seed recorded. The first pass "
            "hides the setup, timings, tool counts and earlier scores.",
            "A link, a phrase or a habit of layout can still give away where an answer came from, so "
            "anonymity is limited: grade what it says, and tell the lead when you recognised its origin.",
            "Consistency is checked with separate check samples: the same facts told short and long, or "
            "as a paragraph and as a table, should get the same grade, and swapping the order two "
            "answers are shown in should not change the judgement. Check samples are kept apart "
            "from the real questions.",
            "Every material error, pending item, partial resolution and borderline call is reviewed; "
            "resolved items are spot-checked.",
            "Give reasons another reader can check. Length, style, tool order and whether the process "
            "is shown are no universal plus or minus.",
            "Grading done by software alone, with no human-labelled samples, is an internal "
            "consistency review, never a check against human graders.",
        ),
    ),
)
