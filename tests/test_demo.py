from io import StringIO

import pytest
from django.core.management import call_command

from reviewapp.models import Assignment, Run, Sample, Score


# Committed as it goes, as on a real database: each step's tasks run at its commit.
@pytest.mark.django_db(transaction=True)
def test_it_loads_scored_demo_data_once_and_prints_how_to_log_in():
    out = StringIO()
    call_command("demo", answers=300, stdout=out)
    assert "password review-demo" in out.getvalue()
    assert "API token for pipelines" in out.getvalue()
    runs = list(Run.objects.order_by("id"))
    assert [(r.status, r.answer_count) for r in runs] == [("stored", 8), ("stored", 300), ("stored", 300)]
    slices = set(Score.objects.filter(scoring__run=runs[1]).values_list("slice", flat=True))
    assert {s for s in slices if s.startswith("language=")} == {"language=en", "language=es", "language=fr"}
    # The sealed part is scored apart, under its own prefix, and kept out of "all".
    assert {"all", "split=tuning", "stratum=level", "sealed:all", "sealed:split=sealed"} <= slices
    assert "split=sealed" not in slices
    sample = Sample.objects.get()
    assert (sample.size, sample.items.count(), sample.readers_per_item) == (30, 30, 2)
    assert Assignment.objects.filter(item__sample=sample).count() == 60

    call_command("demo", answers=300, stdout=StringIO())
    assert (Run.objects.count(), Sample.objects.count()) == (3, 1)
