"""Drawing a judge's validation set: items with a settled human outcome,
frozen with a seed, on which the judge is then validated (judges/validation.py)."""

from __future__ import annotations

import random
import secrets

from django.db import transaction
from django.db.models import Q

from reviewapp.core.errors import ApplicationError
from reviewapp.judges.validation import settled_outcomes
from reviewapp.models import (
    Judge,
    SampleItem,
    ValidationItem,
    ValidationSet,
)


def validation_set_draw(
    *, judge: Judge, holdout_share: float = 0.5, seed: int | None = None, created_by=None
) -> ValidationSet:
    """Draw every sample item that has a settled human outcome now, across
    all samples, into a new frozen ValidationSet of ``judge`` and return it.
    A seeded shuffle (random.Random(seed); a seed is chosen and recorded when
    none is given) puts round(holdout_share × n) items in the holdout split
    and the rest in tuning. An answer drawn into several samples counts once
    (its item settled by a lead, else its first item), so one answer cannot
    weigh double. Later outcomes never change a drawn set: drawing again
    makes a new one, in which every item an earlier set of this judge held
    keeps its split (an item once open for tuning never validates the judge;
    a holdout item stays held out); only new items are shuffled.

    Refuses (ApplicationError) a share outside (0, 1) and a draw with no
    settled item."""
    if not 0 < holdout_share < 1:
        raise ApplicationError(
            f"the holdout share is above 0 and below 1 (a set needs both tuning and holdout items), "
            f"not {holdout_share}"
        )
    candidates = (
        SampleItem.objects.filter(answer__isnull=False, calibration__isnull=True)
        .filter(Q(assignments__judgements__isnull=False) | Q(adjudications__isnull=False))
        .distinct()
        .order_by("id")
    )
    settled = settled_outcomes(candidates.only("id", "answer_id", "calibration_id", "spot_check"))
    if not settled:
        raise ApplicationError(
            "no sample item has a settled human outcome yet (a lead's decision, or at least two readers "
            "who agree): there is nothing to validate a judge on"
        )
    chosen: dict[int, int] = {}
    for item in candidates.filter(id__in=list(settled)).values("id", "answer_id"):
        answer_id, item_id = item["answer_id"], item["id"]
        held = chosen.get(answer_id)
        if held is None or (settled[held].source != "lead" and settled[item_id].source == "lead"):
            chosen[answer_id] = item_id
    item_ids = sorted(chosen.values())
    earlier = dict(
        ValidationItem.objects.filter(validation_set__judge=judge, item_id__in=item_ids)
        .order_by("validation_set_id")
        .values_list("item_id", "split")
    )
    seed = secrets.randbelow(2**31) if seed is None else seed
    shuffled = [item_id for item_id in item_ids if item_id not in earlier]
    random.Random(seed).shuffle(shuffled)
    holdout = set(shuffled[: round(holdout_share * len(shuffled))])
    holdout |= {item_id for item_id, split in earlier.items() if split == ValidationItem.Split.HOLDOUT}
    with transaction.atomic():
        validation_set = ValidationSet.objects.create(
            judge=judge, seed=seed, holdout_share=holdout_share, created_by=created_by
        )
        ValidationItem.objects.bulk_create(
            ValidationItem(
                validation_set=validation_set,
                item_id=item_id,
                split=ValidationItem.Split.HOLDOUT if item_id in holdout else ValidationItem.Split.TUNING,
            )
            for item_id in item_ids
        )
    return validation_set
