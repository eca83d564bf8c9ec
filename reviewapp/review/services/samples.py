"""Samples for review: drawn once, seeded and stratified, then frozen; and
their assignment to readers under random aliases."""

from __future__ import annotations

import random
import secrets
import string
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from reviewapp.core import audit
from reviewapp.core.errors import ApplicationError
from reviewapp.core.once import create_once
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

STRATA_FIELDS = ("language", "stratum", "split")
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
            raise ApplicationError("a frame is one run, or an assistant version between two dates")
        if self.date_from > self.date_to:
            raise ApplicationError("the frame's first date comes after its last")
        return Answer.objects.filter(
            run__assistant_version=self.assistant_version,
            run__status=Run.Status.STORED,
            run__created_at__gte=self.date_from,
            run__created_at__lte=self.date_to,
        )


def strata_record(populations: dict, counts: dict) -> dict:
    """What a frozen sample records of each stratum: its population, how many
    were drawn, and the weight (population over drawn) that turns the drawn
    items' rates into the population's; None where none were drawn."""
    return {
        key: {
            "population": populations[key],
            "drawn": counts[key],
            "weight": populations[key] / counts[key] if counts[key] else None,
        }
        for key in sorted(populations)
    }


def allocate(populations: dict[str, int], *, size: int, allocation: str, minimum: int) -> dict[str, int]:
    """How many to draw from each stratum, as ``{stratum: count}``: proportional
    to its population (largest remainders) with at least ``minimum`` each, or
    equal; never more than a stratum holds, and never more than ``size`` in
    all. A size above the populations' total draws every item.

    Refuses a size that cannot give every stratum its minimum (a stratum
    smaller than the minimum counts with all it holds) or, for equal
    allocation or a minimum of 0, at least one item each."""
    strata = sorted(populations)
    floor = minimum if allocation == Sample.Allocation.PROPORTIONAL else 1
    if floor > 1:
        shortfall = minimum_shortfall(populations, size=size, minimum=floor)
        if shortfall:
            raise ApplicationError(shortfall)
    if size < len(strata):
        raise ApplicationError(
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


def minimum_shortfall(populations: dict[str, int], *, size: int, minimum: int) -> str | None:
    """The sentence refusing ``size`` when the strata's minimums add up to
    more than it, with the sum worked out; None when they fit."""
    full = [stratum for stratum, population in populations.items() if population >= minimum]
    small_total = sum(population for population in populations.values() if population < minimum)
    small_count = len(populations) - len(full)
    needed = minimum * len(full) + small_total
    if needed <= size:
        return None
    terms = []
    if full:
        terms.append(f"{plural(len(full), 'stratum', 'strata')} × a minimum of {minimum}")
    if small_count:
        terms.append(
            f"the {plural(small_total, 'item', 'items')} of "
            f"{plural(small_count, 'smaller stratum', 'smaller strata')}"
        )
    return (
        f"{' + '.join(terms)} = {needed} items, more than the {size} asked for: "
        f"ask for at least {needed}, lower the minimum, or use fewer strata"
    )


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def sample_draw(
    *,
    frame: Frame,
    size: int = 30,
    strata_fields: tuple[str, ...] = ("language",),
    allocation: str = Sample.Allocation.PROPORTIONAL,
    min_per_stratum: int = 1,
    seed: int | None = None,
    splits: tuple[str, ...] = (Question.Split.TUNING,),
    sealed_reason: str = "",
    rubric_version: RubricVersion,
    readers_per_item: int = 1,
    spot_check_share: float = 0.10,
    name: str = "",
    purpose: str = Sample.Purpose.REVIEW,
    created_by=None,
    submission_key: uuid.UUID | None = None,
) -> Sample:
    """Draw a frozen, stratified sample and return it; record its frame,
    seed, strata and each stratum's weight. Only answers to questions of the
    ``splits`` asked for are drawn (the tuning split unless told otherwise);
    opening the sealed split is recorded with who, when and why. A size
    above what the frame holds draws every answer in it.

    Refuses unknown strata fields or splits, sealed questions without a
    reason or a person, an empty frame, a purpose that is not one of
    Sample.Purpose, and a size the allocation cannot meet (see ``allocate``).
    ``purpose`` says what the sample is for: a version's review figures
    count the samples drawn for review unless a manager chooses others.
    A ``submission_key`` already used returns the sample drawn with it (a
    second click on Draw), drawing nothing."""
    if submission_key and (drawn := Sample.objects.filter(submission_key=submission_key).first()):
        return drawn
    if purpose not in Sample.Purpose.values:
        raise ApplicationError(f"a sample is drawn for {', '.join(Sample.Purpose.values)}, not {purpose!r}")
    if size < 1:
        raise ApplicationError("a sample needs at least one item")
    unknown = set(strata_fields) - set(STRATA_FIELDS)
    if unknown or not strata_fields:
        raise ApplicationError(
            f"strata are drawn by {', '.join(STRATA_FIELDS[:-1])} or {STRATA_FIELDS[-1]}, "
            f"not {sorted(unknown)}"
        )
    unknown_splits = set(splits) - set(Question.Split.values)
    if unknown_splits or not splits:
        raise ApplicationError(
            f"draw from the tuning split, the sealed split or both, not {sorted(unknown_splits)}"
        )
    include_sealed = Question.Split.SEALED in splits
    sealed_reason = sealed_reason.strip()
    if include_sealed and not sealed_reason:
        raise ApplicationError("say why the sealed part is opened; the reason is kept with the sample")
    if include_sealed and created_by is None:
        raise ApplicationError("the sealed part is opened by someone; say who")
    seed = secrets.randbelow(2**31) if seed is None else seed

    question = Question.objects.filter(
        set_version=OuterRef("run__set_version"), question_id=OuterRef("question_id")
    )
    rows = (
        frame.answers()
        .annotate(
            q_stratum=Subquery(question.values("stratum")[:1]), q_split=Subquery(question.values("split")[:1])
        )
        # Filtered in the query, so an answer of a split not asked for never
        # reaches the draw at all.
        .filter(q_split__in=list(splits))
        .order_by("id")
        .values_list("id", "language", "q_stratum", "q_split")
    )
    by_stratum: dict[str, list[int]] = defaultdict(list)
    for answer_id, language, stratum, split in rows.iterator(chunk_size=20000):
        values = {"language": language, "stratum": stratum or "none", "split": split}
        key = "|".join(f"{field}={values[field]}" for field in strata_fields)
        by_stratum[key].append(answer_id)
    frame_size = sum(map(len, by_stratum.values()))
    if not frame_size:
        raise ApplicationError("the frame holds no answers to draw from")

    populations = {key: len(ids) for key, ids in by_stratum.items()}
    counts = allocate(populations, size=size, allocation=allocation, minimum=min_per_stratum)
    rng = random.Random(seed)
    drawn = {key: rng.sample(by_stratum[key], counts[key]) for key in sorted(by_stratum)}

    def create() -> Sample:
        with transaction.atomic():
            sample = Sample.objects.create(
                name=name or f"Sample of {timezone.localdate():%Y-%m-%d}",
                purpose=purpose,
                run=frame.run,
                assistant_version=(
                    frame.assistant_version if frame.run is None else frame.run.assistant_version
                ),
                frame_from=frame.date_from,
                frame_to=frame.date_to,
                frame_size=frame_size,
                size=sum(counts.values()),
                strata_fields=list(strata_fields),
                allocation=allocation,
                min_per_stratum=min_per_stratum,
                seed=seed,
                strata=strata_record(populations, counts),
                includes_sealed=include_sealed,
                sealed_opened_by=created_by if include_sealed else None,
                sealed_opened_at=timezone.now() if include_sealed else None,
                sealed_reason=sealed_reason if include_sealed else "",
                rubric_version=rubric_version,
                readers_per_item=readers_per_item,
                spot_check_share=spot_check_share,
                created_by=created_by,
                submission_key=submission_key,
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

    return create_once(Sample, submission_key, create)


def sample_assign(
    *, sample: Sample, reviewers: list, readers_per_item: int | None = None
) -> list[Assignment]:
    """Give each item to ``readers_per_item`` readers, balanced across them,
    each under a random alias and in a shuffled order per reader, all from a
    recorded seed. A sample is assigned once."""
    readers_per_item = readers_per_item or sample.readers_per_item
    reviewers = checked_readers(reviewers, readers_per_item, unit="item")
    with transaction.atomic():
        locked = Sample.objects.select_for_update().get(id=sample.id)
        if Assignment.objects.filter(item__sample=locked).exists():
            raise ApplicationError("this sample is assigned already; draw a new sample to read it again")
        alias_seed = locked.seed ^ 0x5EED
        rng = random.Random(alias_seed)
        items = list(locked.items.order_by("position"))
        per_reader = round_robin(items, reviewers, readers_per_item)
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
        audit.record(locked, {"assigned to": ("", [reader.get_username() for reader in reviewers])})
    return assignments


def checked_readers(reviewers, readers_per_item: int, *, unit: str) -> list:
    """The readers, each once, in a stable order; refuses (ApplicationError) none,
    and fewer than ``readers_per_item`` (each ``unit`` needs that many)."""
    reviewers = sorted(set(reviewers), key=lambda user: user.pk)
    if not reviewers:
        raise ApplicationError("choose at least one reader")
    if readers_per_item > len(reviewers):
        raise ApplicationError(
            f"{readers_per_item} readers per {unit} needs at least {readers_per_item} readers; "
            f"{len(reviewers)} chosen"
        )
    return reviewers


def round_robin(items: list, reviewers: list, readers_per_item: int) -> dict[int, list]:
    """Each reader's items, by reader id: round-robin from a rotating start
    keeps the load even and never gives one item twice to the same reader."""
    per_reader: dict[int, list] = defaultdict(list)
    for index, item in enumerate(items):
        for offset in range(readers_per_item):
            reader = reviewers[(index * readers_per_item + offset) % len(reviewers)]
            per_reader[reader.pk].append(item)
    return per_reader


def new_alias(rng: random.Random, reader_id: int, taken: set) -> str:
    while True:
        alias = "".join(rng.choice(ALIAS_ALPHABET) for _ in range(4))
        if (reader_id, alias) not in taken:
            taken.add((reader_id, alias))
            return alias
