"""Every public file in bench/corpus/ gives through POST /api/imports what it
gives through the command line: the same answers, the same figures, or the
same refusal (issue 26: the app and the CLI read a file alike)."""

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from reviewapp.models import ApiToken, Run
from scoring.runner import score_file
from tests.helpers import make_user

_PATH = Path(__file__).resolve().parents[3] / "bench" / "import_corpus.py"
_spec = importlib.util.spec_from_file_location("import_corpus", _PATH)
import_corpus = sys.modules.setdefault("import_corpus", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(import_corpus)

# The CLI's options and the API's form fields that carry them.
_FIELDS = {
    "--format": "format",
    "--columns": "columns",
    "--assistant-version": "assistant_version",
    "--set-version": "set_version",
    "--language": "language",
}


def _form(entry: dict) -> dict | None:
    """The API form for a corpus entry's CLI arguments; None for commands the
    API has no form for (question sets from QA datasets)."""
    args = list(entry.get("args") or entry.get("command") or [])
    if args[:1] == ["qa"]:
        return None
    form: dict[str, str] = {}
    args = [a for a in args if a != "{file}"]
    for option, value in zip(args[::2], args[1::2], strict=True):
        field = _FIELDS[option]
        form[field] = f"{form[field]},{value}" if field in form else value
    return form


def _entries():
    for folder in sorted(import_corpus.CORPUS.glob("*/expected.json")):
        for name, entry in sorted(json.loads(folder.read_text(encoding="utf-8")).items()):
            if _form(entry) is not None:
                yield pytest.param(folder.parent / name, entry, id=f"{folder.parent.name}/{name}")


def _cli(path: Path, entry: dict) -> tuple[dict, dict]:
    """The CLI's header and its figures for "all", for a file it converts."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.jsonl"
        assert import_corpus.imports_main(import_corpus.arguments(entry, path, out)) == 0
        with open(out, "rb") as stream:
            header = json.loads(stream.readline())
        return header, score_file(out, None).slices["all"]


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "entry"), list(_entries()))
def test_the_api_reads_each_public_file_as_the_cli_does(
    client, django_capture_on_commit_callbacks, path, entry
):
    _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
    form = _form(entry) | {"file": SimpleUploadedFile(path.name, path.read_bytes())}
    if "refused" not in entry:
        header, cli = _cli(path, entry)
        # The versions the CLI found in files beside this one (lm-eval's
        # results file) are given, as a pipeline sending one file gives them.
        for field in ("assistant_version", "set_version"):
            form.setdefault(field, header[field])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/imports", form, HTTP_AUTHORIZATION=f"Bearer {key}")
    if "refused" in entry:
        assert response.status_code == 400, response.content
        assert entry["refused"].lower() in response.content.decode().lower()
        assert not Run.objects.exists()
        return
    assert response.status_code == 201, response.content
    run = Run.objects.get()
    assert run.answers.count() == entry["answers"]
    scores = client.get(f"/api/runs/{run.id}", HTTP_AUTHORIZATION=f"Bearer {key}").json()
    api = scores["scorings"][0]["scores"]["all"]
    for measure, counts in cli.items():
        assert (api[measure]["k"], api[measure]["n"]) == (counts["k"], counts["n"]), measure
