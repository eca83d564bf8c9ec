"""lm-evaluation-harness --log_samples output as run logs (scoring.imports.lm_eval).

lm-eval itself needs torch, so the files are written here as its writer
writes them: each sample built as lm_eval/evaluator.py builds it, then
dumped as lm_eval/loggers/evaluation_tracker.py's save_results_samples
dumps it (0.4.3 on: JSON Lines, arguments as gen_args_i/arg_j, responses
sanitised to text) or as lm_eval/__main__.py did before (0.4.0 to 0.4.2: one
indented JSON array). Real files from public repositories are in
bench/corpus/lm_eval; the smallest is copied beside this test."""

import hashlib
import json
import shutil
from pathlib import Path

import orjson
import pytest

from scoring import imports
from scoring.imports import lm_eval, sniff
from scoring.imports.__main__ import main as import_main
from scoring.logfile import LogFileError, read_answers

HERE = Path(__file__).parent
CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "lm_eval"
ARC = HERE / "lm_eval_samples" / "samples_arc_easy_2026-09-24T03-05-32.831346.jsonl"
DATE = "2026-10-01T12-00-00.123456"
VERSIONS = imports.ImportOptions(assistant_version="tiny-1", set_version="gsm8k-3")


# -- lm-eval's writer, as its source has it ------------------------------------


def _hash(text: str) -> str:
    # lm_eval.utils.hash_string
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _handle_non_serializable(value):
    # lm_eval.utils.handle_non_serializable, numpy aside
    return list(value) if isinstance(value, set) else str(value)


def _sanitize_list(value):
    # lm_eval.utils.sanitize_list
    if isinstance(value, list):
        return [_sanitize_list(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_sanitize_list(item) for item in value)
    return str(value)


def logged(doc_id, doc, target, requests, filter_key="none", metrics=None, *, listed=True):
    """A sample as lm_eval/evaluator.py logs it: ``requests`` are (args,
    resps, filtered_resp) per request."""
    sample = {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": [args for args, _, _ in requests],
        "resps": [resps for _, resps, _ in requests],
        "filtered_resps": [filtered for _, _, filtered in requests],
    }
    if listed:  # lm-eval 0.4.3 on
        sample.update(
            {
                "filter": filter_key,
                "metrics": list(metrics or {}),
                "doc_hash": _hash(
                    json.dumps(doc, indent=2, default=_handle_non_serializable, ensure_ascii=False)
                ),
                "prompt_hash": _hash(requests[0][0][0]),
                "target_hash": _hash(str(target)),
            }
        )
    sample.update(metrics or {})
    return sample


def write_samples(folder: Path, task: str, samples: list[dict], *, date: str = DATE) -> Path:
    """EvaluationTracker.save_results_samples (lm-eval 0.4.3 on)."""
    path = folder / f"samples_{task}_{date}.jsonl"
    with open(path, "a", encoding="utf-8") as out:
        for sample in samples:
            sample = dict(sample)
            arguments = {}
            for i, arg in enumerate(sample["arguments"]):
                arguments[f"gen_args_{i}"] = {}
                for j, tmp in enumerate(arg):
                    arguments[f"gen_args_{i}"][f"arg_{j}"] = tmp
            sample["resps"] = _sanitize_list(sample["resps"])
            sample["filtered_resps"] = _sanitize_list(sample["filtered_resps"])
            sample["arguments"] = arguments
            sample["target"] = str(sample["target"])
            out.write(json.dumps(sample, default=_handle_non_serializable, ensure_ascii=False) + "\n")
    return path


def write_array(folder: Path, name: str, samples: list[dict]) -> Path:
    """lm_eval/__main__.py of 0.4.0 to 0.4.2: one indented JSON array."""
    path = folder / name
    path.write_text(
        json.dumps(samples, indent=2, default=_handle_non_serializable, ensure_ascii=False), encoding="utf-8"
    )
    return path


def write_results(folder: Path, task: str, *, model: str, version=3.0, effective=None, date: str = DATE):
    """The results file's fields the import reads (EvaluationTracker's general config)."""
    results = {
        "results": {task: {"alias": task}},
        "versions": {task: version},
        "n-samples": {task: {"original": effective, "effective": effective}},
        "config": {"model": "hf", "model_args": f"pretrained={model},dtype=float32"},
        "model_name": model,
        "model_name_sanitized": model.replace("/", "__"),
    }
    (folder / f"results_{date}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


GEN_KWARGS = {"until": ["Question:", "\n\n"], "do_sample": False}


def gsm8k(doc_id, question, answer, response, extracted, filter_key="strict-match"):
    doc = {"question": question, "answer": answer}
    prompt = f"Question: {question}\nAnswer:"
    metric = {"exact_match": 1.0 if extracted == answer.rsplit("#### ", 1)[-1] else 0.0}
    return logged(doc_id, doc, answer, [((prompt, GEN_KWARGS), [response], extracted)], filter_key, metric)


EGGS = "Janet’s ducks lay 16 eggs per day. She eats 3. How many are left?"
ROBE = "A robe takes 2 bolts of blue fiber and half that much white fiber. How many bolts in total?"
GSM8K = [
    gsm8k(0, EGGS, "16 - 3 = <<16-3=13>>13\n#### 13", "She has 16 - 3 = 13 left. The answer is 13.", "13"),
    gsm8k(1, ROBE, "2 + 1 = <<2+1=3>>3\n#### 3", "It takes 4 bolts. The answer is 4.", "4"),
]


def converted(path: Path, options=VERSIONS, *, out: Path | None = None, **kwargs) -> tuple[dict, list[dict]]:
    out = out or path.parent / "run.jsonl"
    with open(out, "wb") as stream:
        count = imports.convert(path, stream, "lm-eval", options, **kwargs)
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert count == len(lines) - 1
    return lines[0], lines[1:]


def own_samples(path: Path) -> list[dict]:
    """The samples as lm-eval's own files are read back (json, line by line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- generation tasks ------------------------------------------------------------


def test_it_reads_a_generation_task_as_lm_eval_wrote_it(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    header, lines = converted(path)
    assert header == {"assistant_version": "tiny-1", "set_version": "gsm8k-3"}
    first, second = lines
    assert first["question_id"] == "0"
    assert first["question"] == EGGS
    assert first["reference"] == "16 - 3 = <<16-3=13>>13\n#### 13"
    # GSM8K's "#### 13" is the expected value; the working's numbers are not.
    assert first["expected_values"] == [13.0]
    assert first["answer"] == "13"
    assert first["lm_eval"] == {
        "response": "She has 16 - 3 = 13 left. The answer is 13.",
        "filter": "strict-match",
    }
    for line, sample in zip(lines, own_samples(path), strict=True):
        assert line["lm_eval_scores"] == {
            "exact_match": {
                "value": sample["exact_match"],
                "answer": sample["filtered_resps"][0],
                "explanation": "lm-eval filter strict-match",
            }
        }
    assert second["lm_eval_scores"]["exact_match"]["value"] == 0.0
    # The run log reads back as the app's own.
    answers = read_answers(path.parent / "run.jsonl")
    assert [answer.record["answer"] for answer in answers] == ["13", "4"]


def test_it_takes_the_whole_generation_when_answer_is_mapped_to_resps(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    options = imports.ImportOptions(assistant_version="a", set_version="s", columns={"answer": "resps"})
    _, lines = converted(path, options)
    assert [line["answer"] for line in lines] == [
        "She has 16 - 3 = 13 left. The answer is 13.",
        "It takes 4 bolts. The answer is 4.",
    ]
    assert "lm_eval" not in lines[0]
    # lm-eval's filtered answer stays what its metric scored.
    assert lines[1]["lm_eval_scores"]["exact_match"]["answer"] == "4"


def test_it_reads_any_path_the_mapping_names(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    options = imports.ImportOptions(
        assistant_version="a",
        set_version="s",
        columns={"answer": "resps[0][0]", "question": "arguments[0][0]", "stratum": "filter"},
    )
    _, lines = converted(path, options)
    assert lines[0]["answer"] == "She has 16 - 3 = 13 left. The answer is 13."
    assert lines[0]["question"] == f"Question: {EGGS}\nAnswer:"
    assert lines[0]["stratum"] == "strict-match"


def test_it_names_the_line_and_path_a_sample_lacks(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    options = imports.ImportOptions(
        assistant_version="a", set_version="s", columns={"question": "doc.problem"}
    )
    with pytest.raises(LogFileError) as caught:
        converted(path, options)
    assert [str(error) for error in caught.value.errors] == [
        "line 1, field doc.problem: missing: 'doc' has no 'problem' (it has 'question', 'answer') "
        "(mapped to question) (doc_id 0)",
        "line 2, field doc.problem: missing: 'doc' has no 'problem' (it has 'question', 'answer') "
        "(mapped to question) (doc_id 1)",
    ]


def test_repeats_are_attempts_and_the_filtered_answer_keeps_its_metrics(tmp_path):
    doc = {"question": EGGS, "answer": "#### 13"}
    generations = ["The answer is 13.", "The answer is 12.", "The answer is 13."]
    samples = [
        logged(
            0,
            doc,
            "13",
            [((f"Q: {EGGS}\nA:", GEN_KWARGS), generations, "13")],
            "maj@3",
            {"exact_match": 1.0},
        )
    ]
    path = write_samples(tmp_path, "gsm8k_cot_self_consistency", samples)
    header, lines = converted(path)
    assert header["repetitions"] == 3
    assert [(line["attempt"], line["answer"]) for line in lines] == [
        (1, "The answer is 13."),
        (2, "The answer is 12."),
        (3, "The answer is 13."),
    ]
    assert lines[0]["lm_eval_scores"] == {
        "exact_match": {"value": 1.0, "answer": "13", "explanation": "lm-eval filter maj@3"}
    }
    assert "lm_eval_scores" not in lines[1]
    shown = imports.preview(path, "lm-eval", VERSIONS)
    assert any("3 generations" in note and "attempt" in note for note in shown.notes)


def test_every_filter_of_a_document_is_kept_on_its_one_line(tmp_path):
    strict = [
        gsm8k(0, EGGS, "#### 13", "So 13.", "[invalid]"),
        gsm8k(1, ROBE, "#### 3", "3 bolts.", "[invalid]"),
    ]
    flexible = [
        gsm8k(0, EGGS, "#### 13", "So 13.", "13", "flexible-extract"),
        gsm8k(1, ROBE, "#### 3", "3 bolts.", "3", "flexible-extract"),
    ]
    path = write_samples(tmp_path, "gsm8k", strict + flexible)
    _, lines = converted(path)
    assert [line["question_id"] for line in lines] == ["0", "1"]
    assert lines[0]["answer"] == "So 13."
    assert lines[0]["lm_eval_scores"] == {
        "exact_match,strict-match": {
            "value": 0.0,
            "answer": "[invalid]",
            "explanation": "lm-eval filter strict-match",
        },
        "exact_match,flexible-extract": {
            "value": 1.0,
            "answer": "13",
            "explanation": "lm-eval filter flexible-extract",
        },
    }
    shown = imports.preview(path, "lm-eval", VERSIONS)
    assert any("filtered answer (filter strict-match)" in note for note in shown.notes)


def test_a_document_twice_under_one_filter_is_named(tmp_path):
    path = write_samples(tmp_path, "gsm8k", [GSM8K[0], GSM8K[1], GSM8K[0]])
    with pytest.raises(LogFileError) as caught:
        converted(path)
    assert [str(error) for error in caught.value.errors] == [
        "line 3, field doc_id: doc_id 0 under filter 'strict-match' is already on line 1"
    ]


def test_it_reads_the_array_lm_eval_wrote_before_0_4_3(tmp_path):
    # Raw responses (no sanitising), arguments as lists, no filter or metrics
    # list, a document once per filter.
    samples = [
        logged(
            0,
            {"question": EGGS},
            "13",
            [((EGGS, GEN_KWARGS), ["13 eggs"], "13")],
            metrics={"em": 1.0},
            listed=False,
        ),
        logged(
            0,
            {"question": EGGS},
            "13",
            [((EGGS, GEN_KWARGS), ["13 eggs"], "13 eggs")],
            metrics={"em": 0.0},
            listed=False,
        ),
    ]
    path = write_array(tmp_path, "pretrained__tiny_gsm8k.jsonl", samples)
    assert imports.detect_format(path) == "lm-eval"
    _, lines = converted(path)
    assert len(lines) == 1
    assert lines[0]["answer"] == "13"
    assert lines[0]["lm_eval_scores"] == {
        "em,none": {"value": 1.0, "answer": "13", "explanation": "lm-eval filter none"},
        "em,filter-2": {"value": 0.0, "answer": "13 eggs", "explanation": "lm-eval filter filter-2"},
    }


# -- multiple choice -----------------------------------------------------------------


def test_multiple_choice_answers_the_option_of_highest_loglikelihood_as_acc_reads_it(tmp_path):
    # A real arc_easy file: the answer is right exactly when lm-eval's acc says so.
    _, lines = converted(Path(shutil.copy(ARC, tmp_path)))
    samples = own_samples(ARC)
    assert len(lines) == len(samples) == 5
    for line, sample in zip(lines, samples, strict=True):
        assert (line["answer"] == line["reference"]) == (sample["acc"] == 1.0)
        assert line["lm_eval_scores"]["acc"]["value"] == sample["acc"]
        assert line["lm_eval_scores"]["acc_norm"]["value"] == sample["acc_norm"]
        assert line["lm_eval"]["loglikelihoods"] == [float(ll) for ll, _ in sample["filtered_resps"]]
    assert lines[1]["question"] == (
        "Which piece of safety equipment is used to keep mold spores from entering the respiratory system?\n"
        "A. safety goggles\nB. breathing mask\nC. rubber gloves\nD. lead apron"
    )
    assert lines[1]["reference"] == "B. breathing mask"
    assert lines[0]["answer"] == "D. The producers in all ecosystems are plants."
    shown = imports.preview(ARC, "lm-eval", VERSIONS)
    assert any("highest loglikelihood" in note for note in shown.notes)


def test_letter_options_take_their_text_from_the_doc(tmp_path):
    # MMLU: the continuations are " A" .. " D", the doc holds the choices.
    doc = {"question": "The capital of France?", "choices": ["Lyon", "Paris", "Nice", "Metz"], "answer": 1}
    prompt = "The capital of France?\nA. Lyon\nB. Paris\nC. Nice\nD. Metz\nAnswer:"
    requests = [
        ((prompt, f" {letter}"), [(ll, False)], (ll, False))
        for letter, ll in zip("ABCD", (-3.0, -0.5, -2.0, -4.0), strict=True)
    ]
    path = write_samples(tmp_path, "mmlu_geography", [logged(0, doc, 1, requests, metrics={"acc": 1.0})])
    _, lines = converted(path)
    assert lines[0]["answer"] == lines[0]["reference"] == "B. Paris"
    assert lines[0]["question"].endswith("A. Lyon\nB. Paris\nC. Nice\nD. Metz")


# -- versions, detection and refusals ------------------------------------------------


def test_it_takes_the_model_and_the_task_from_the_results_file_beside_it(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    write_results(tmp_path, "gsm8k", model="EleutherAI/pythia-160m", version=3.0, effective=1319)
    header, _ = converted(path, imports.ImportOptions())
    assert header == {"assistant_version": "EleutherAI-pythia-160m", "set_version": "gsm8k-3.0"}
    shown = imports.preview(path, "lm-eval", imports.ImportOptions())
    assert (shown.assistant_version, shown.set_version, shown.set_name) == (
        "EleutherAI-pythia-160m",
        "gsm8k-3.0",
        "gsm8k",
    )
    assert "the results file beside it says 1319 samples were evaluated; this file holds 2" in shown.notes


def test_without_a_results_file_it_asks_for_the_model(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    with pytest.raises(LogFileError) as caught:
        converted(path, imports.ImportOptions())
    assert [str(error) for error in caught.value.errors] == [
        "the file, field assistant_version: missing: this file does not name the model (no results file "
        "beside it, or a name that is not lm-eval's); give the assistant version"
    ]
    # An upload stored under another name suggests the task its own name gives.
    stored = shutil.copy(path, tmp_path / "upload-1234")
    shown = imports.preview(Path(stored), "lm-eval", imports.ImportOptions(), name=path.name)
    assert (shown.assistant_version, shown.set_version) == ("", "gsm8k")


def test_it_is_told_from_its_first_line(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    assert imports.detect_format(path) == "lm-eval"
    assert sniff.format_problem(path, path.name, "lm-eval") is None
    assert sniff.format_problem(path, path.name, "ragas") == (
        "this file is lm-evaluation-harness samples (--log_samples), not Ragas-style JSON Lines; "
        "import it as lm-eval"
    )


def test_tasks_without_answers_are_refused_saying_so(tmp_path):
    lambada = logged(
        0,
        {"text": "the cat sat on the mat"},
        " mat",
        [(("the cat sat on the", " mat"), [(-1.2, True)], (-1.2, True))],
        metrics={"acc": 1.0},
    )
    path = write_samples(tmp_path, "lambada_openai", [lambada])
    with pytest.raises(LogFileError, match="loglikelihood task with one continuation each"):
        converted(path)
    wikitext = logged(
        0,
        {"page": "text"},
        "",
        [(("A whole page.",), [-40.5], -40.5)],
        metrics={"word_perplexity": (-40.5, 3)},
    )
    path = write_samples(tmp_path, "wikitext", [wikitext])
    with pytest.raises(LogFileError, match=r"perplexity task \(loglikelihood_rolling"):
        converted(path)


def test_a_results_file_is_not_samples(tmp_path):
    write_results(tmp_path, "gsm8k", model="m")
    with pytest.raises(LogFileError) as caught:
        converted(tmp_path / f"results_{DATE}.json")
    assert str(caught.value) == (
        "the file: this is lm-eval's results file (each task's scores), not its samples: import "
        "the samples_<task>_<date>.jsonl beside it that --log_samples wrote"
    )


# -- the corpus of real files ----------------------------------------------------------


def _corpus():
    expected = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
    return sorted(expected.items())


@pytest.mark.parametrize(("name", "expected"), _corpus())
def test_every_real_file_converts_as_its_samples_say_or_is_refused_saying_why(tmp_path, name, expected):
    path = CORPUS / name
    if "refused" in expected:
        with pytest.raises(LogFileError) as caught:
            # Written apart: a file beside the corpus's files would be one it does not list.
            converted(path, out=tmp_path / "run.jsonl")
        assert expected["refused"] in str(caught.value)
        return
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "run.jsonl"
    with open(out, "wb") as stream:
        count = imports.convert(
            path, stream, "lm-eval", imports.ImportOptions(set_version="s", assistant_version="a")
        )
    assert count == expected["answers"]
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()[1:]]
    # lm-eval's own samples, by document: one per filter, in the file's order.
    documents: dict[str, list[dict]] = {}
    for sample in own_samples(path):
        documents.setdefault(str(sample["doc_id"]), []).append(sample)
    assert [line["question_id"] for line in lines if line["attempt"] == 1] == list(documents)
    for line in lines:
        samples = documents[line["question_id"]]
        first = samples[0]
        if lm_eval.kind(first) == "multiple_choice":
            # The option the target's position names, lettered.
            assert line["reference"].startswith(f"{'ABCDEFGH'[int(first['target'])]}. ")
        else:
            assert line["reference"] == first["target"]
            generations = first["resps"][0]
            if len(generations) > 1:
                assert line["answer"] == generations[line["attempt"] - 1]
        if line["attempt"] > 1:
            assert "lm_eval_scores" not in line
            continue
        several = len(samples) > 1
        assert {name: score["value"] for name, score in line["lm_eval_scores"].items()} == {
            f"{metric},{sample['filter']}" if several else metric: sample[metric]
            for sample in samples
            for metric in sample.get("metrics") or [key for key in sample if key not in lm_eval.SAMPLE_KEYS]
        }
    assert sum(max(1, len(samples[0]["resps"][0])) for samples in documents.values()) == count
    assert len(list(read_answers(out))) == count


# -- the command line -------------------------------------------------------------------


def test_the_command_line_converts_and_previews_it(tmp_path, capsys):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    out = tmp_path / "out.jsonl"
    assert (
        import_main(
            [
                str(path),
                "--format",
                "lm-eval",
                "--assistant-version",
                "a",
                "--set-version",
                "s",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "2 answers written" in capsys.readouterr().err
    assert import_main([str(ARC), "--preview", "--assistant-version", "a"]) == 0
    printed = capsys.readouterr().out
    assert "lm-evaluation-harness samples" in printed
    assert "suggested: set_version=arc_easy" in printed
    assert (
        "note: multiple choice (loglikelihood): the answer is the option with the highest loglikelihood"
        in printed
    )


def test_a_metric_python_wrote_as_nan_is_read_as_no_value(tmp_path):
    # json.dumps writes float("nan") as NaN, which JSON has not.
    samples = [gsm8k(0, EGGS, "#### 13", "13", "13")]
    samples[0]["f1"] = float("nan")
    samples[0]["metrics"].append("f1")
    path = write_samples(tmp_path, "squad", samples)
    assert "NaN" in path.read_text()
    _, lines = converted(path)
    assert lines[0]["lm_eval_scores"]["f1"]["value"] is None
    assert lines[0]["lm_eval_scores"]["exact_match"]["value"] == 1.0


def test_a_chat_prompt_gives_its_last_user_message_as_the_question(tmp_path):
    # --apply_chat_template: lm-eval logs the prompt as the chat's JSON.
    chat = json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": EGGS}])
    samples = [logged(0, {"id": 7}, "13", [((chat, GEN_KWARGS), ["13"], "13")], "none", {"exact_match": 1.0})]
    _, lines = converted(write_samples(tmp_path, "custom", samples))
    assert lines[0]["question"] == EGGS


def test_a_multiple_choice_target_may_name_its_option_by_text(tmp_path):
    # Letter continuations, the doc's choices, and a target that is the text.
    doc = {"query": "Capital of France?", "choices": ["Lyon", "Paris"]}
    requests = [
        (("Capital of France?", f" {letter}"), [(ll, False)], (ll, False))
        for letter, ll in (("A", -2.0), ("B", -1.0))
    ]
    path = write_samples(tmp_path, "capitals", [logged(0, doc, "Paris", requests, metrics={"acc": 1.0})])
    _, lines = converted(path)
    assert lines[0]["question"] == "Capital of France?\nA. Lyon\nB. Paris"
    assert lines[0]["answer"] == lines[0]["reference"] == "B. Paris"


def test_a_field_a_sample_cannot_fill_is_refused_by_name(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    options = imports.ImportOptions(
        assistant_version="a", set_version="s", columns={"cited_ids": "doc.cites"}
    )
    with pytest.raises(LogFileError) as caught:
        converted(path, options)
    assert str(caught.value) == (
        "the file, field columns: 'cited_ids' is not a field an lm-eval sample can fill; those are "
        "question_id, question, language, answer, reference, expected_values, expected_behaviour, stratum"
    )


# -- layouts and values the reader once lost (review 26) ---------------------------------


def _mc_requests(contexts, continuations, loglikelihoods):
    return [
        ((context, continuation), [(ll, False)], (ll, False))
        for context, continuation, ll in zip(contexts, continuations, loglikelihoods, strict=True)
    ]


def test_a_path_is_read_as_every_reader_reads_it_negative_indexes_too(tmp_path):
    samples = [logged(0, {"question": EGGS}, "13", [((EGGS, GEN_KWARGS), ["13 eggs", "12"], "13")])]
    path = write_samples(tmp_path, "gsm8k", samples)
    options = imports.ImportOptions(
        assistant_version="a", set_version="s", columns={"answer": "resps[0][-1]"}
    )
    _, lines = converted(path, options)
    assert lines[0]["answer"] == "12"


def test_option_letters_are_the_qa_datasets_own():
    import inspect

    from scoring.qa import prompts

    assert lm_eval.OPTION_LETTERS is prompts.OPTION_LETTERS
    assert "OPTION_LETTERS =" not in inspect.getsource(lm_eval)


def test_an_answer_that_is_no_list_is_named_as_it_is(tmp_path):
    samples = [dict(GSM8K[0], filtered_resps="13"), dict(GSM8K[1], doc_id=1, resps=[], filtered_resps=[])]
    path = tmp_path / f"samples_gsm8k_{DATE}.jsonl"
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples), encoding="utf-8")
    with pytest.raises(LogFileError) as caught:
        converted(path)
    assert [str(error) for error in caught.value.errors] == [
        'line 1, field filtered_resps: is "13", not a list holding the answer (doc_id 0)',
        "line 2, field filtered_resps: is [], a list without the answer (doc_id 1)",
    ]


def test_an_answer_the_filter_found_nothing_in_is_the_whole_generation(tmp_path):
    samples = [
        gsm8k(0, EGGS, "#### 13", "So thirteen eggs.", "[invalid]"),
        gsm8k(1, ROBE, "#### 3", "#### 3", "3"),
    ]
    path = write_samples(tmp_path, "gsm8k", samples)
    _, lines = converted(path)
    assert lines[0]["answer"] == "So thirteen eggs."
    assert lines[0]["lm_eval"] == {"filtered": "[invalid]", "filter": "strict-match"}
    # lm-eval's metric stays what it scored.
    assert lines[0]["lm_eval_scores"]["exact_match"]["answer"] == "[invalid]"
    assert lines[1]["answer"] == "3"
    shown = imports.preview(path, "lm-eval", VERSIONS)
    assert (
        "1 answer is lm-eval's [invalid] (the filter strict-match extracted nothing): its answer is the "
        "model's whole generation, and the filtered [invalid] is kept as lm_eval.filtered"
    ) in shown.notes


def test_a_multiple_choice_sample_expects_no_value(tmp_path):
    # An option is right by its letter, as an Inspect choice is: not by the numbers its text holds.
    doc = {"question": "How many legs has a cat?", "choices": ["2", "4"]}
    requests = _mc_requests(["Q"] * 2, [" 2", " 4"], [-2.0, -1.0])
    path = write_samples(tmp_path, "legs", [logged(0, doc, 1, requests, metrics={"acc": 1.0})])
    _, lines = converted(path)
    assert (lines[0]["reference"], lines[0]["expected_values"]) == ("B. 4", [])


def test_a_list_of_aliases_is_the_reference_and_its_first_number_the_expected_value(tmp_path):
    # triviaqa: lm-eval's doc_to_target reads "[...]" as a list; its writer logs str(list).
    doc = {"question": "How many moons has Mars?"}
    samples = [
        logged(0, doc, ["2", "two"], [(("Q", GEN_KWARGS), [" 2"], "2")], "remove_whitespace"),
        logged(1, doc, ["Jupiter", "jupiter"], [(("Q", GEN_KWARGS), [" J"], "J")], "remove_whitespace"),
    ]
    path = write_samples(tmp_path, "triviaqa", samples)
    assert own_samples(path)[0]["target"] == "['2', 'two']"
    _, lines = converted(path)
    assert [(line["reference"], line["expected_values"]) for line in lines] == [
        ("2 | two", [2.0]),
        ("Jupiter | jupiter", []),
    ]
    # The same as a JSON list, as a file written without str() holds it.
    listed = tmp_path / "listed" / path.name
    listed.parent.mkdir()
    listed.write_text(
        "".join(json.dumps(dict(sample, target=["two", "2"])) + "\n" for sample in own_samples(path)[:1])
    )
    _, lines = converted(listed)
    assert (lines[0]["reference"], lines[0]["expected_values"]) == ("two | 2", [2.0])


def test_a_number_target_is_the_option_it_indexes_or_the_number(tmp_path):
    # lm-eval 0.4.0 to 0.4.2 logged a multiple-choice target unsanitised: the gold index.
    doc = {"question": "Capital of France?", "choices": {"text": ["Lyon", "Paris"], "label": ["A", "B"]}}
    requests = _mc_requests(["Q: Capital of France?\nA:"] * 2, [" Lyon", " Paris"], [-2.0, -1.0])
    mc = logged(0, doc, 1, requests, metrics={"acc": 1.0}, listed=False)
    path = write_array(tmp_path, "samples_arc_easy_2024-01-01T00-00-00.000000.jsonl", [mc])
    _, lines = converted(path)
    assert lines[0]["reference"] == "B. Paris"
    generation = logged(0, {"question": EGGS}, 13, [((EGGS, GEN_KWARGS), ["13"], "13")], listed=False)
    path = write_array(tmp_path, "samples_gsm8k_2024-01-01T00-00-00.000000.jsonl", [generation])
    _, lines = converted(path)
    assert (lines[0]["reference"], lines[0]["expected_values"]) == ("13", [13.0])


def test_options_named_by_letter_in_the_doc_are_read_as_the_qa_datasets_read_them(tmp_path):
    # CMMLU and C-Eval: continuations " A" .. " D", the options in doc.A .. doc.D.
    doc = {"Question": "中国的首都是哪里?", "A": "上海", "B": "北京", "C": "广州", "D": "深圳", "Answer": "B"}
    prompt = "题目：中国的首都是哪里?\nA. 上海\nB. 北京\nC. 广州\nD. 深圳\n答案："
    requests = _mc_requests([prompt] * 4, [" A", " B", " C", " D"], [-2.0, -0.1, -3.0, -4.0])
    path = write_samples(tmp_path, "cmmlu_chinese", [logged(0, doc, 1, requests, metrics={"acc": 1.0})])
    _, lines = converted(path)
    assert lines[0]["question"] == "中国的首都是哪里?\nA. 上海\nB. 北京\nC. 广州\nD. 深圳"
    assert lines[0]["answer"] == lines[0]["reference"] == "B. 北京"


WINO = {
    "sentence": "The trophy doesn't fit into the suitcase because the _ is too large.",
    "option1": "trophy",
    "option2": "suitcase",
    "answer": "2",
}


def test_options_that_are_contexts_before_one_continuation_are_read_from_the_doc(tmp_path):
    # winogrande: each request is another context, the continuation the same.
    contexts = ["The trophy doesn't fit into the suitcase because the trophy"]
    contexts.append("The trophy doesn't fit into the suitcase because the suitcase")
    requests = _mc_requests(contexts, [" is too large."] * 2, [-3.1, -4.0])
    path = write_samples(tmp_path, "winogrande", [logged(0, WINO, "is too large.", requests)])
    _, lines = converted(path)
    assert lines[0]["question"] == f"{WINO['sentence']}\nA. trophy\nB. suitcase"
    assert (lines[0]["answer"], lines[0]["reference"]) == ("A. trophy", "B. suitcase")
    # Without the doc's options, the contexts' differing ends are the options.
    doc = {"sentence": WINO["sentence"]}
    requests = _mc_requests(contexts, [" is too large."] * 2, [-4.0, -3.1])
    (tmp_path / "bare").mkdir()
    path = write_samples(tmp_path / "bare", "winogrande", [logged(0, doc, 1, requests)])
    _, lines = converted(path)
    assert lines[0]["question"] == f"{WINO['sentence']}\nA. trophy\nB. suitcase"
    assert lines[0]["answer"] == lines[0]["reference"] == "B. suitcase"


def test_options_that_are_contexts_without_a_gold_option_are_refused_saying_so(tmp_path):
    contexts = ["It is the trophy", "It is the suitcase"]
    requests = _mc_requests(contexts, [" that is large."] * 2, [-3.1, -4.0])
    path = write_samples(tmp_path, "wino_custom", [logged(0, {"sentence": "_"}, "that is large.", requests)])
    with pytest.raises(LogFileError) as caught:
        converted(path)
    assert str(caught.value) == (
        "line 1, field target: is 'that is large.', which names none of the options (each option is "
        "another context before the same continuation, as in winogrande): this layout is read when the "
        "target is the option's index or the doc gives option1, option2, ... and answer (doc_id 0)"
    )


def test_two_documents_that_become_one_question_id_are_refused_naming_both_lines(tmp_path):
    samples = [
        dict(GSM8K[0], doc_id=5),
        dict(GSM8K[1], doc_id="5"),
        dict(GSM8K[0], doc_id=6.0),
        dict(GSM8K[1], doc_id=6),
    ]
    path = tmp_path / f"samples_gsm8k_{DATE}.jsonl"
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples), encoding="utf-8")
    with pytest.raises(LogFileError) as caught:
        converted(path)
    assert [str(error) for error in caught.value.errors] == [
        "line 2, field doc_id: doc_id '5' is question_id '5', as doc_id 5 on line 1 is: "
        "each document needs its own",
        "line 4, field doc_id: doc_id 6 is question_id '6', as doc_id 6.0 on line 3 is: "
        "each document needs its own",
    ]


def test_a_results_file_is_named_for_what_it_is(tmp_path):
    write_results(tmp_path, "gsm8k", model="m")
    write_samples(tmp_path, "gsm8k", GSM8K)
    with pytest.raises(LogFileError) as caught:
        converted(tmp_path / f"results_{DATE}.json", out=tmp_path / "out.jsonl")
    assert str(caught.value) == (
        "the file: this is lm-eval's results file (each task's scores), not its samples: import "
        f"the samples_<task>_<date>.jsonl beside it that --log_samples wrote (here samples_gsm8k_{DATE}.jsonl)"
    )


def test_the_preview_asks_for_the_model_only_when_none_is_given(tmp_path):
    path = write_samples(tmp_path, "gsm8k", GSM8K)
    asked = "the file does not name the model: give the assistant version"
    assert asked in imports.preview(path, "lm-eval", imports.ImportOptions()).notes
    assert asked not in imports.preview(path, "lm-eval", VERSIONS).notes
