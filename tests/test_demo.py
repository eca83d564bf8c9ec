from io import StringIO

import pytest
from django.core.management import call_command

from reviewapp.models import Run, Score


@pytest.mark.django_db
def test_it_loads_scored_demo_runs_once_and_prints_how_to_log_in(
    django_capture_on_commit_callbacks,
):
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", answers=300, stdout=out)
    assert "password review-demo" in out.getvalue()
    assert "API token for pipelines" in out.getvalue()
    runs = list(Run.objects.order_by("id"))
    assert [(r.status, r.answer_count) for r in runs] == [
        ("stored", 8),
        ("stored", 300),
        ("stored", 300),
    ]
    slices = set(Score.objects.filter(scoring__run=runs[1]).values_list("slice", flat=True))
    assert {s for s in slices if s.startswith("language=")} == {"language=en", "language=es", "language=fr"}
    assert {"all", "split=tuning", "split=sealed", "stratum=level"} <= slices

    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo", answers=300, stdout=StringIO())
    assert Run.objects.count() == 3
