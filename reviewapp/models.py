"""Where Django finds the app's models: each is defined in its domain's folder
(runs, scorings, accounts, review, judges, paired) and imported here, so that
`from reviewapp.models import Run` keeps working and migrations keep their paths."""

from reviewapp.accounts.models import *  # noqa: F403
from reviewapp.core.roles import Role  # noqa: F401
from reviewapp.judges.models import *  # noqa: F403
from reviewapp.paired.models import *  # noqa: F403
from reviewapp.review.models import *  # noqa: F403
from reviewapp.runs.models import *  # noqa: F403
from reviewapp.scorings.models import *  # noqa: F403
