"""Production questions sampled by the time they were asked (issue 27 point 10, spec 002)."""

import datetime as dt
import json

import pytest

from scoring.logfile import LogFileError
from scoring.production import draw_by_asked_time, read_frame

NOVEMBER = dt.date(2026, 11, 1), dt.date(2026, 11, 30)


def frame(tmp_path, *records):
    path = tmp_path / "frame.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def asked(question_id: str, asked_at: str, **extra) -> dict:
    return {
        "question_id": question_id,
        "language": "en",
        "question": f"q {question_id}",
        "asked_at": asked_at,
    } | extra


def month_frame(tmp_path):
    """Six questions in the first week of November, two in the third, one in October."""
    records = [
        asked(f"w1-{i}", f"2026-11-0{i + 2}T10:00:00Z", uploaded_at="2026-10-01T00:00:00Z") for i in range(6)
    ]
    records += [asked(f"w3-{i}", "2026-11-17T10:00:00+01:00") for i in range(2)]
    records += [asked("oct", "2026-10-30T10:00:00Z", uploaded_at="2026-11-10T00:00:00Z")]
    return read_frame(frame(tmp_path, *records))


def test_it_names_the_line_and_field_of_a_missing_or_bad_asked_at(tmp_path):
    path = frame(
        tmp_path,
        asked("a", "2026-11-02T10:00:00Z"),
        {"question_id": "b", "language": "en"},
        asked("c", "2026-11-02 10:00"),
        asked("d", "yesterday"),
    )
    with pytest.raises(LogFileError) as raised:
        read_frame(path)
    assert [str(error) for error in raised.value.errors] == [
        "line 2, field asked_at: missing",
        "line 3, field asked_at: '2026-11-02 10:00' has no offset: write Z or +01:00 so that it names one moment",
        "line 4, field asked_at: 'yesterday' is not an ISO 8601 time, such as 2026-11-03T09:30:00Z",
    ]


def test_it_stratifies_by_week_of_asked_time_never_upload_time(tmp_path):
    draw = draw_by_asked_time(
        month_frame(tmp_path), start=NOVEMBER[0], end=NOVEMBER[1], size=4, period="week", seed=7
    )
    assert draw.periods == {"2026-W45": (3, 6), "2026-W47": (1, 2)}
    assert len(draw.questions) == 4
    assert "oct" not in [q["question_id"] for q in draw.questions]
    assert [q["stratum"] for q in draw.questions] == ["2026-W45"] * 3 + ["2026-W47"]
    assert draw.questions[0]["expected_behaviour"] == "answer"
    assert draw.sentence() == (
        "4 of 8 production questions asked from 2026-11-01 to 2026-11-30, drawn by week of asked_at (seed 7): "
        "2026-W45 3 of 6, 2026-W47 1 of 2"
    )


def test_the_same_seed_draws_the_same_questions_whatever_the_line_order(tmp_path):
    questions = month_frame(tmp_path)
    first = draw_by_asked_time(questions, start=NOVEMBER[0], end=NOVEMBER[1], size=5, period="month", seed=3)
    again = draw_by_asked_time(
        questions[::-1], start=NOVEMBER[0], end=NOVEMBER[1], size=5, period="month", seed=3
    )
    assert first.questions == again.questions
    assert first.periods == {"2026-11": (5, 8)}


def test_it_refuses_a_size_above_the_frame(tmp_path):
    with pytest.raises(
        ValueError, match=r"^size: 9 is more than the 8 questions asked from 2026-11-01 to 2026-11-30$"
    ):
        draw_by_asked_time(
            month_frame(tmp_path), start=NOVEMBER[0], end=NOVEMBER[1], size=9, period="week", seed=1
        )
