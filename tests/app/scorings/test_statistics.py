"""Issue 31, point 6: the tables a bulk load filled are ANALYZEd before the
queries that read them (a second 1M-answer run's adding up ran 7 minutes
on the statistics of empty tables)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.fixtures import load_generated_run
from tests.helpers import row_held


@pytest.mark.django_db
def test_ingest_and_adding_up_refresh_the_statistics_of_what_they_loaded():
    if connection.vendor != "postgresql":
        pytest.skip("ANALYZE is PostgreSQL's")
    with CaptureQueriesContext(connection) as queries:
        run = load_generated_run(answers=30)
    statements = [query["sql"] for query in queries.captured_queries]
    analyzed = [sql for sql in statements if sql.startswith("ANALYZE")]
    assert analyzed == [
        'ANALYZE "reviewapp_question"',
        'ANALYZE "reviewapp_answer"',
        'ANALYZE "reviewapp_answercheck"',
        'ANALYZE "reviewapp_questionoutcome"',
        'ANALYZE "reviewapp_finding"',
    ]
    # Each before the first query that reads its table's figures back.
    first_score = next(i for i, sql in enumerate(statements) if 'INSERT INTO "reviewapp_score"' in sql)
    assert statements.index('ANALYZE "reviewapp_answercheck"') < first_score
    assert run.scorings.get().status == "done"


@pytest.mark.django_db(transaction=True)
def test_try_again_answers_at_once_while_a_workers_transaction_holds_the_scoring():
    import time

    from reviewapp.models import Scoring
    from reviewapp.scorings.services import scoring_retry

    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    run = load_generated_run(answers=10)
    scoring = run.scorings.get()
    Scoring.objects.filter(id=scoring.id).update(status="failed", error="stopped")
    # As a worker adding a scoring up holds its row for minutes.
    with row_held("reviewapp_scoring", scoring.id):
        started = time.monotonic()
        assert scoring_retry(scoring=scoring) is False
        assert time.monotonic() - started < 2
    assert scoring_retry(scoring=scoring) is True
