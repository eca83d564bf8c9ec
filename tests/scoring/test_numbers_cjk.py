"""Numbers in answers written in Chinese, Japanese, Korean and Thai, and
ordinals (issue 26): scripts written without spaces between words may touch
a number, where a Latin letter still may not."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.logfile import language_problem
from scoring.measures import Options, check_answer
from scoring.numbers import extract_numbers, match_value
from tests.scoring.test_numbers import written


def values(text: str, language: str = "zh", **options) -> list[float]:
    return [number.value for number in extract_numbers(text, language=language, **options)]


def readings(text: str, language: str = "zh", **options) -> list[tuple[float, ...]]:
    return [number.readings for number in extract_numbers(text, language=language, **options)]


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        # The testers' answers (issue 26, point 3).
        ("每年5天", "zh", [5.0]),
        ("30天", "zh", [30.0]),
        ("1.5倍", "zh", [1.5]),
        ("年假为每年5天，病假30天，加班费为1.5倍。", "zh", [5.0, 30.0, 1.5]),
        ("约7.6%的人口", "zh", [7.6]),
        ("共有1,340所学校", "zh", [1340.0]),
        ("第37届", "zh", [37.0]),
        ("人口は1,234人です", "ja", [1234.0]),
        ("カタカナ12ページ", "ja", [12.0]),
        ("실업률은 3.5%였다", "ko", [3.5]),
        ("인구는1,250명이다", "ko", [1250.0]),
        ("ราคา50บาท", "th", [50.0]),
        ("อัตรา7.6เปอร์เซ็นต์", "th", [7.6]),
        # Digits of other scripts are digits, as before.
        ("ราคา๕๐บาท", "th", [50.0]),
    ],
)
def test_it_reads_a_number_glued_to_an_unspaced_script(text, language, expected):
    assert values(text, language) == expected


def test_it_reads_them_whatever_the_language_says():
    assert values("每年5天", "") == [5.0]
    assert values("每年5天", "en") == [5.0]
    assert values("1.5倍", "fr") == [1.5]


def test_it_keeps_the_offsets_and_the_text_of_a_glued_number():
    text = "加班费为1.5倍"
    (number,) = extract_numbers(text, language="zh")
    assert (number.text, text[number.start : number.end]) == ("1.5", "1.5")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Glue to Latin letters stays as it was: identifiers, names and codes.
        ("COVID19病例", []),
        ("A1号楼", []),
        ("B12维生素", []),
        ("型号v2和x3", []),
        ("COVID-19病例", []),
        ("12abc与_12", []),
        # A minus after an ideograph is a sign, not a name's hyphen.
        ("增长率为-2.5%", [-2.5]),
        ("增长率为−2.5%", [-2.5]),
        # Ranges.
        ("5-7天", [5.0, 7.0]),
        ("5～7天", [5.0, 7.0]),
        ("5至7天", [5.0, 7.0]),
    ],
)
def test_it_keeps_the_rules_for_latin_glue_signs_and_ranges(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("３０天", [30.0]),
        ("１．５倍", [1.5]),
        ("1．5倍", [1.5]),
        ("１，２３４人", [1234.0]),
        ("３０％", [30.0]),
        ("－２．５％", [-2.5]),
        # A full-width comma after ASCII digits is the clause comma of Chinese prose.
        ("第1，2，3条", [1.0, 2.0, 3.0]),
        ("数量为5，100人参加", [5.0, 100.0]),
        # A full-width full stop closing a sentence is no decimal mark.
        ("値は5．次に", [5.0]),
    ],
)
def test_it_reads_full_width_digits_and_marks(text, expected):
    assert values(text, "ja") == expected


def test_it_keeps_full_width_characters_as_written_in_the_number_text():
    text = "合計１，２３４．５円"
    (number,) = extract_numbers(text, language="ja")
    assert (number.value, number.text, text[number.start : number.end]) == (
        1234.5,
        "１，２３４．５",
        "１，２３４．５",
    )


def test_it_tells_a_full_width_year():
    assert [n.is_year for n in extract_numbers("２０２４年の値は７．６", language="ja")] == [True, False]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024年3月31日的失业率为4.1%", [4.1]),
        ("截至2024年3月31日，失业率为4.1%", [4.1]),
        ("２０２４年３月３１日現在、4.1％", [4.1]),
        ("2024년 3월 31일 기준 4.1%", [4.1]),
        # A month is a month's name: the year stays a year.
        ("2024年3月为7.6%", [2024.0, 7.6]),
        ("3月31日为7.6%", [7.6]),
        ("2024년 3월 실업률 7.6%", [2024.0, 7.6]),
        # Months counted are figures.
        ("3个月内增长5%", [3.0, 5.0]),
        ("3か月で5%", [3.0, 5.0]),
        ("3개월 동안 5%", [3.0, 5.0]),
        ("13月", [13.0]),
    ],
)
def test_it_blanks_dates_written_with_year_month_and_day_signs(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("每1,000例活产中有35例", [35.0]),
        ("每10万人中有12人", [12.0]),
        ("每年5天", [5.0]),
        ("人口1,000人当たり35人", [35.0]),
        ("10万人あたり12人", [12.0]),
        ("인구 1,000명당 35명", [35.0]),
        ("อัตรา 35 ต่อ 1,000 คน", [35.0]),
    ],
)
def test_it_blanks_per_denominators_in_each_script(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("5万人", "zh", [(5.0, 5e4)]),
        ("1.2亿元", "zh", [(1.2, 1.2e8)]),
        ("3千", "zh", [(3.0, 3e3)]),
        ("5千万", "zh", [(5.0, 5e7)]),
        ("2 万", "zh", [(2.0, 2e4)]),
        ("1.5萬", "zh", [(1.5, 1.5e4)]),
        ("12億円", "ja", [(12.0, 1.2e9)]),
        ("100万人", "ja", [(100.0, 1e6)]),
        ("5만 명", "ko", [(5.0, 5e4)]),
        ("3억원", "ko", [(3.0, 3e8)]),
        ("5百人", "zh", [(5.0, 500.0)]),
        ("2佰", "zh", [(2.0, 200.0)]),
        ("3十", "zh", [(3.0, 30.0)]),
        ("4拾", "zh", [(4.0, 40.0)]),
        ("6仟", "zh", [(6.0, 6000.0)]),
        ("5백명", "ko", [(5.0, 500.0)]),
        ("2십", "ko", [(2.0, 20.0)]),
        ("2천", "ko", [(2.0, 2e3)]),
        ("5 ล้าน คน", "th", [(5.0, 5e6)]),
        ("3พันล้านบาท", "th", [(3.0, 3e9)]),
    ],
)
def test_it_adds_scaled_readings_of_unspaced_scale_words_only_when_asked(text, language, expected):
    assert readings(text, language) == [reading[:1] for reading in expected]
    assert readings(text, language, scale_words=True) == expected


@pytest.mark.parametrize(
    ("text", "language", "expected", "texts"),
    [
        ("1万5千人", "zh", [(1.5, 15000.0)], ["1万5千"]),
        ("1万5000人", "zh", [(1.5, 15000.0)], ["1万5000"]),
        ("3亿5000万元", "zh", [(3.5, 3.5e8)], ["3亿5000万"]),
        ("1亿2000万5000", "zh", [(1.20005, 120005000.0)], ["1亿2000万5000"]),
        ("1億2345万円", "ja", [(1.2345, 123450000.0)], ["1億2345万"]),
        ("2억 5천만 원", "ko", [(2.5, 2.5e8)], ["2억 5천만"]),
        # Hundreds and tens are scale words too (the review of issue 26, item 1).
        ("一共1千5百元", "zh", [(1.5, 1500.0)], ["1千5百"]),
        ("约1万2千3百人", "zh", [(1.23, 12300.0)], ["1万2千3百"]),
        ("3천5백 원", "ko", [(3.5, 3500.0)], ["3천5백"]),
        ("3百5十", "zh", [(3.5, 350.0)], ["3百5十"]),
        ("1仟2佰3拾元", "zh", [(1.23, 1230.0)], ["1仟2佰3拾"]),
        ("2백5십", "ko", [(2.5, 250.0)], ["2백5십"]),
        # A lone digit after a Han scale word is the next lower unit, as
        # Chinese says it: 1万5 is 15,000 (1万5千), never 10,005.
        ("1万5", "zh", [(1.5, 15000.0)], ["1万5"]),
        ("约3万5人", "zh", [(3.5, 35000.0)], ["3万5"]),
        ("1千5", "zh", [(1.5, 1500.0)], ["1千5"]),
        ("1亿5", "zh", [(1.5, 1.5e8)], ["1亿5"]),
        ("1万2千5", "zh", [(1.25, 12500.0)], ["1万2千5"]),
        ("1万500", "zh", [(1.05, 10500.0)], ["1万500"]),
        # Japanese and Korean say 10,005 so (一万五, 만 오).
        ("1万5", "ja", [(1.0005, 10005.0)], ["1万5"]),
        ("1만5", "ko", [(1.0005, 10005.0)], ["1만5"]),
        ("1万5", "", [(1.5, 15000.0)], ["1万5"]),
        # A count of 万 or 亿 in thousands and hundreds: 1千5百万 is 1,500万.
        ("1千5百万人", "zh", [(1.5, 1.5e7)], ["1千5百万"]),
        ("3千2百亿元", "zh", [(3.2, 3.2e11)], ["3千2百亿"]),
        ("1천5백만 원", "ko", [(1.5, 1.5e7)], ["1천5백만"]),
        ("1千5百万3千", "zh", [(1.5003, 15003000.0)], ["1千5百万3千"]),
        ("2百5十万", "zh", [(2.5, 2.5e6)], ["2百5十万"]),
        # Not parts of one number: a rising scale, a space before a bare number, a sign.
        ("1万2万", "zh", [(1.0, 1e4), (2.0, 2e4)], ["1", "2"]),
        ("5万 3个城市", "zh", [(5.0, 5e4), (3.0,)], ["5", "3"]),
        ("1万-5千", "zh", [(1.0, 1e4), (-5.0, -5e3)], ["1", "-5"]),
        ("1万15000", "zh", [(1.0, 1e4), (15000.0,)], ["1", "15000"]),
    ],
)
def test_it_joins_a_number_written_in_parts_of_falling_scale(text, language, expected, texts):
    numbers = extract_numbers(text, language=language, scale_words=True)
    assert [n.readings for n in numbers] == expected
    assert [n.text for n in numbers] == texts
    assert [text[n.start : n.end] for n in numbers] == texts


def test_it_reads_the_parts_alone_without_scale_words():
    assert readings("1万5千人") == [(1.0,), (5.0,)]


def test_a_joined_number_matches_a_value_rounded_to_its_precision():
    (number,) = extract_numbers("1万5千人", language="zh", scale_words=True)
    assert number.decimals == 1
    assert match_value(number, [1.54], rounding=True) == 1.54
    assert match_value(number, [15000.0]) == 15000.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ranked 37th of 190", [37.0, 190.0]),
        ("the 1st, 2nd and 3rd quarters", [1.0, 2.0, 3.0]),
        ("the 21st and 112th", [21.0, 112.0]),
        ("the 1,000th visitor", [1000.0]),
        ("4TH EDITION", [4.0]),
        ("el 1º y la 2ª", [1.0, 2.0]),
        ("第37th届", [37.0]),
        # A letter after the suffix makes a word, not an ordinal.
        ("3rdparty 5ths 7thx", []),
        ("37t 2n", []),
    ],
)
def test_it_reads_ordinals(text, expected):
    assert values(text, "en") == expected


def test_it_marks_ordinals():
    numbers = extract_numbers("ranked 37th of 190 in 2024, the 1º and the 2ª", language="es")
    assert [(n.text, n.is_ordinal, n.is_year) for n in numbers] == [
        ("37", True, False),
        ("190", False, False),
        ("2024", False, True),
        ("1", True, False),
        ("2", True, False),
    ]


def test_a_degree_written_with_the_ordinal_indicator_is_no_ordinal():
    # Spanish and Portuguese often write 30º C for 30 °C.
    assert [n.is_ordinal for n in extract_numbers("a 30º C y 25º F", language="es")] == [False, False]


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("on March 3rd, it was 37", "en", [37.0]),
        ("on 3rd of March, 37", "en", [37.0]),
        ("the 3rd March, 37", "en", [37.0]),
        ("the 21ST OF JUNE", "en", []),
        ("Mar. 3rd, 2024: 37", "en", [2024.0, 37.0]),
        ("Sept 1st", "en", []),
        ("el 1º de marzo, 37", "es", [37.0]),
        ("em 1º de março", "pt", []),
        ("am 3. März 2024 lag sie bei 37", "de", [2024.0, 37.0]),
        ("bis 1. Mai", "de", []),
        # An ordinal that is no day of a month stays, and so does a day
        # written without one (the reference script reads it).
        ("the 3rd quarter of May's report", "en", [3.0]),
        ("March 3", "en", [3.0]),
    ],
)
def test_it_blanks_a_date_written_with_an_ordinal_day(text, language, expected):
    assert values(text, language) == expected


@pytest.mark.parametrize("language", ["zh", "ja", "ko", "th", "zh-Hans", "zh-TW", "ja-JP", "ko-KR", "th-TH"])
def test_it_accepts_the_codes_of_these_languages_and_reads_english_separators(language):
    assert language_problem(language) is None
    assert readings("1,234.5 与 1.234 与 1,234", language) == [(1234.5,), (1.234,), (1234.0, 1.234)]


@given(
    value=st.floats(min_value=0, max_value=1e9, allow_nan=False),
    decimals=st.integers(min_value=0, max_value=3),
    grouping=st.sampled_from([",", ""]),
    before=st.sampled_from(["为", "約", "은", "ราคา", "第"]),
    after=st.sampled_from(["天", "倍", "円", "명", "บาท", "。", ""]),
    wide=st.booleans(),
)
def test_it_reads_back_any_value_glued_to_unspaced_text(value, decimals, grouping, before, after, wide):
    value = round(value, decimals)
    text = written(value, decimals, grouping, ".")
    if wide:
        text = text.translate(str.maketrans("0123456789,.", "０１２３４５６７８９，．"))
    (number,) = extract_numbers(f"{before}{text}{after}", language="zh")
    assert any(math.isclose(reading, value) for reading in number.readings), (text, number)


def test_a_chinese_answer_scores_as_its_english_twin():
    question = {"expected_behaviour": "answer", "expected_values": [5.0]}
    answer = {
        "question_id": "z1",
        "language": "zh",
        "declined": False,
        "retrieved_values": [5.0, 30.0, 1.5],
        "answer": "年假为每年5天，病假30天，加班费为1.5倍（2024年3月31日）。",
    }
    check = check_answer(answer, question, options=Options())
    assert [finding.kind for finding in check.findings] == []
    assert [n.number.text for n in check.numbers] == ["5", "30", "1.5"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("一共1千5百元", 1500.0), ("约1万2千3百人", 12300.0), ("3천5백 원", 3500.0), ("约1万5人", 15000.0)],
)
def test_an_amount_in_hundreds_states_its_expected_value_with_scale_words(answer, expected):
    question = {"expected_behaviour": "answer", "expected_values": [expected]}
    line = {"question_id": "b1", "language": "zh", "declined": False, "answer": answer}
    check = check_answer(line, question, options=Options(scale_words=True))
    assert check.findings == []
