"""A seeded, synthetic evaluation run in English, French and Spanish.

Used for the app's demo data and for benchmarks: a question set (recipe 4.1's
question rows) and a run of logged answers to it, with a known mix of correct
answers and the failures the automatic measures look for (wrong values,
invented figures, citations of records never retrieved, wrong refusals).

Everything is drawn from one ``random.Random(seed)`` per call, so a seed always
gives the same rows. Standard library only: this must run anywhere the
scoring library runs. A demo and benchmark tool, not part of scoring itself:
no module of the library imports it.

Answer texts are written within the number rules the scorer reads them by:
dates are YYYY-MM-DD, denominators follow "per", identifiers are capitals,
digits and underscores, and numbers use "." or "," decimals with groups of
three after a space or comma. French and Spanish group thousands with a plain
space ("1 250") so that no Spanish "1.250" can be misread as a decimal, and
write their denominators in words ("pour mille", "por cada mil"), because the
scorer only blanks English "per 1,000"-style denominators.

The package: catalogue (series, periods, regions, drawing values), wording
(the texts in three languages), questions (generate_question_set) and runs
(generate_run, write_jsonl). Everything is imported from here as before
(``from scoring import synthetic``).
"""

from scoring.synthetic.catalogue import ANNUAL_PERIODS as ANNUAL_PERIODS
from scoring.synthetic.catalogue import CATALOGUE as CATALOGUE
from scoring.synthetic.catalogue import LANGUAGES as LANGUAGES
from scoring.synthetic.catalogue import MISSING_YEARS as MISSING_YEARS
from scoring.synthetic.catalogue import QUARTERLY_PERIODS as QUARTERLY_PERIODS
from scoring.synthetic.catalogue import Series as Series
from scoring.synthetic.questions import DECLINE_SHARE as DECLINE_SHARE
from scoring.synthetic.questions import SUBNATIONAL_DECLINE_SHARE as SUBNATIONAL_DECLINE_SHARE
from scoring.synthetic.questions import TUNING_SHARE as TUNING_SHARE
from scoring.synthetic.questions import generate_question_set
from scoring.synthetic.runs import ANSWER_OUTCOMES as ANSWER_OUTCOMES
from scoring.synthetic.runs import CAVEAT_MENTION_SHARE as CAVEAT_MENTION_SHARE
from scoring.synthetic.runs import DATED_SHARE as DATED_SHARE
from scoring.synthetic.runs import DECLINE_OUTCOMES as DECLINE_OUTCOMES
from scoring.synthetic.runs import LONG_ANSWER_SHARE as LONG_ANSWER_SHARE
from scoring.synthetic.runs import UNRETRIEVED_IDS as UNRETRIEVED_IDS
from scoring.synthetic.runs import combined_form, generate_run, write_jsonl

__all__ = ["combined_form", "generate_question_set", "generate_run", "write_jsonl"]
