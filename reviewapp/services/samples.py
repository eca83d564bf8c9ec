"""Samples for review: drawn once, seeded and stratified, then frozen; and
their assignment to readers under random aliases."""

from __future__ import annotations

import random
import secrets
import string
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from reviewapp.models import (
    Answer,
    Assignment,
    AssistantVersion,
    Question,
    RubricVersion,
    Run,
    Sample,
    SampleItem,
)
from reviewapp.services.uploads import UploadRejected

STRATA_FIELDS = ("language", "stratum")
ALIAS_ALPHABET = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Frame:
    """Where a sample is drawn from: one run, or every run of one assistant
    version uploaded between two dates."""

    run: Run | None = None
    assistant_version: AssistantVersion | None = None
    date_from: datetime | None = None
    date_to: datetime | None = None

    def answers(self):
        if self.run is not None:
            return Answer.objects.filter(run=self.run, run__status=Run.Status.STORED)
        if self.assistant_version is None or self.date_from is None or self.date_to is None:
            raise UploadRejected("a frame is one run, or an assistant version between two dates")
        if self.date_from > self.date_to:
            raise UploadRejected("the frame's first date comes after its last")
        return Answer.objects.filter(
            run__assistant_version=self.assistant_version,
            run__status=Run.Status.STORED,
            run__created_at__gte=self.date_from,
            run__created_at__lte=self.date_to,
        )


def allocate(populations: dict[str, int], *, size: int, allocation: str, minimum: int) -> dict[str, int]:
    """How many to draw from each stratum: proportional to its population
    (largest remainders) with at least ``minimum`` each, or equal; never more
    than a stratum holds. Refuses a size too small to represent every stratum."""
    strata = sorted(populations)
    floor = minimum if allocation == Sample.Allocation.PROPORTIONAL else 1
    if size < len(strata):
        raise UploadRejected(
            f"a sample of {size} cannot represent all {len(strata)} strata; draw at least {len(strata)}"
        )
    total = sum(populations.values())
    size = min(size, total)
    if allocation == Sample.Allocation.EQUAL:
        shares = {s: size / len(strata) for s in strata}
    else:
        shares = {s: size * populations[s] / total for s in strata}
    counts = {s: min(populations[s], max(floor, int(shares[s]))) for s in strata}
    # Hand out what is left by largest remainder, then take back from the
    # largest strata if the minimums overshot.
    by_remainder = sorted(strata, key=lambda s: (shares[s] - int(shares[s]), populations[s]), reverse=True)
    while sum(counts.values()) < size:
        grew = False
        for stratum in by_remainder:
            if sum(counts.values()) >= size:
                break
            if counts[stratum] < populations[stratum]:
                counts[stratum] += 1
                grew = True
        if not grew:
            break
    while sum(counts.values()) > size:
        largest = max((s for s in strata if counts[s] > floor), key=lambda s: counts[s], default=None)
        if largest is None:
            break
        counts[largest] -= 1
    return counts


def sample_draw(
    *,
    frame: Frame,
    size: int = 30,
    strata_fields=("language",),
    allocation: str = Sample.Allocation.PROPORTIONAL,
    min_per_stratum: int = 1,
    seed: int | None = None,
    include_sealed: bool = False,
    rubric_version: RubricVersion,
    readers_per_item: int = 1,
    spot_check_share: float = 0.10,
    name: str = "",
    created_by=None,
) -> Sample:
    """Draw a frozen, stratified sample; record its frame, seed, strata and
    each stratum's weight. Sealed questions stay out unless asked for, which
    is recorded with who and when."""
    if size < 1:
        raise UploadRejected("a sample needs at least one item")
    unknown = set(strata_fields) - set(STRATA_FIELDS)
    if unknown or not strata_fields:
        raise UploadRejected(f"strata are drawn by {' and '.join(STRATA_FIELDS)}, not {sorted(unknown)}")
    seed = secrets.randbelow(2**31) if seed is None else seed

    question = Question.objects.filter(
        set_version=OuterRef("run__set_version"), question_id=OuterRef("question_id")
    )
    rows = (
        frame.answers()
        .annotate(
            q_stratum=Subquery(question.values("stratum")[:1]), q_split=Subquery(question.values("split")[:1])
        )
        .order_by("id")
        .values_list("id", "language", "q_stratum", "q_split")
    )
    by_stratum: dict[str, list[int]] = defaultdict(list)
    for answer_id, language, stratum, split in rows.iterator(chunk_size=20000):
        if split == "sealed" and not include_sealed:
            continue
        values = {"language": language, "stratum": stratum or "none"}
        key = "|".join(f"{field}={values[field]}" for field in strata_fields)
        by_stratum[key].append(answer_id)
    frame_size = sum(map(len, by_stratum.values()))
    if not frame_size:
        raise UploadRejected("the frame holds no answers to draw from")

    populations = {key: len(ids) for key, ids in by_stratum.items()}
    counts = allocate(populations, size=size, allocation=allocation, minimum=min_per_stratum)
    rng = random.Random(seed)
    drawn = {key: rng.sample(by_stratum[key], counts[key]) for key in sorted(by_stratum)}

    with transaction.atomic():
        sample = Sample.objects.create(
            name=name or f"Sample of {timezone.localdate():%Y-%m-%d}",
            run=frame.run,
            assistant_version=frame.assistant_version if frame.run is None else frame.run.assistant_version,
            frame_from=frame.date_from,
            frame_to=frame.date_to,
            frame_size=frame_size,
            size=sum(counts.values()),
            strata_fields=list(strata_fields),
            allocation=allocation,
            min_per_stratum=min_per_stratum,
            seed=seed,
            strata={
                key: {
                    "population": populations[key],
                    "drawn": counts[key],
                    "weight": populations[key] / counts[key] if counts[key] else None,
                }
                for key in sorted(populations)
            },
            includes_sealed=include_sealed,
            sealed_opened_by=created_by if include_sealed else None,
            sealed_opened_at=timezone.now() if include_sealed else None,
            rubric_version=rubric_version,
            readers_per_item=readers_per_item,
            spot_check_share=spot_check_share,
            created_by=created_by,
        )
        order = [(key, answer_id) for key in sorted(drawn) for answer_id in drawn[key]]
        # Which items a lead spot-checks if they come out resolved: decided
        # now, from the seed, so the share cannot be steered afterwards.
        spot = random.Random(seed ^ 0x5C07)
        SampleItem.objects.bulk_create(
            SampleItem(
                sample=sample,
                answer_id=answer_id,
                stratum=key,
                position=position,
                spot_check=spot.random() < spot_check_share,
            )
            for position, (key, answer_id) in enumerate(order, start=1)
        )
    return sample


def sample_assign(
    *, sample: Sample, reviewers: list, readers_per_item: int | None = None
) -> list[Assignment]:
    """Give each item to ``readers_per_item`` readers, balanced across them,
    each under a random alias and in a shuffled order per reader, all from a
    recorded seed. A sample is assigned once."""
    readers_per_item = readers_per_item or sample.readers_per_item
    reviewers = sorted(set(reviewers), key=lambda user: user.pk)
    if not reviewers:
        raise UploadRejected("choose at least one reader")
    if readers_per_item > len(reviewers):
        raise UploadRejected(
            f"{readers_per_item} readers per item needs at least {readers_per_item} readers; "
            f"{len(reviewers)} chosen"
        )
    with transaction.atomic():
        locked = Sample.objects.select_for_update().get(id=sample.id)
        if Assignment.objects.filter(item__sample=locked).exists():
            raise UploadRejected("this sample is assigned already; draw a new sample to read it again")
        alias_seed = locked.seed ^ 0x5EED
        rng = random.Random(alias_seed)
        items = list(locked.items.order_by("position"))
        per_reader: dict[int, list[SampleItem]] = defaultdict(list)
        # Round-robin from a rotating start keeps the load even and never
        # gives one item twice to the same reader.
        for index, item in enumerate(items):
            for offset in range(readers_per_item):
                reader = reviewers[(index * readers_per_item + offset) % len(reviewers)]
                per_reader[reader.pk].append(item)
        taken = set(Assignment.objects.filter(reviewer__in=reviewers).values_list("reviewer_id", "alias"))
        assignments = []
        for reader in reviewers:
            mine = per_reader[reader.pk]
            rng.shuffle(mine)
            for order, item in enumerate(mine, start=1):
                alias = new_alias(rng, reader.pk, taken)
                assignments.append(Assignment(item=item, reviewer=reader, alias=alias, order=order))
        Assignment.objects.bulk_create(assignments)
        locked.alias_seed = alias_seed
        locked.readers_per_item = readers_per_item
        locked.save(update_fields=("alias_seed", "readers_per_item"))
    return assignments


def new_alias(rng: random.Random, reader_id: int, taken: set) -> str:
    while True:
        alias = "".join(rng.choice(ALIAS_ALPHABET) for _ in range(4))
        if (reader_id, alias) not in taken:
            taken.add((reader_id, alias))
            return alias
