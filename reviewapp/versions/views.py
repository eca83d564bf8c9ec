"""Managers' pages: a version's dashboard, versions side by side, the paired
comparison, the release gate, the sample-size planner, and exports. Read-only."""

import json
import re

from django import forms
from django.contrib import messages
from django.http import FileResponse, Http404, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from reviewapp.core import csv_cells, files
from reviewapp.core.roles import READERS_OF_RUNS, role_required
from reviewapp.models import AssistantVersion, Judgement, Run, Sample, Scoring, SetVersion
from reviewapp.runs.selectors import (
    run_overhead_choice,
    runs_clocks_note,
    runs_reply_policies_note,
    runs_warnings,
    set_version_warnings,
)
from reviewapp.scorings import exports
from reviewapp.scorings.selectors import FINDINGS_EXPORT_FIELDS, findings_export, scores_as_dict
from reviewapp.versions import charts as manager_reads
from reviewapp.versions import selectors as dashboard
from reviewapp.versions.comparison import compare_judges, compare_versions
from reviewapp.versions.gate import (
    DEFAULT_MEASURES,
    GateRefused,
    gate_figures,
    gate_run,
    parse_floors,
    refusal_field,
)
from reviewapp.versions.records import set_versions_of, version_record
from scoring import timing
from scoring.logfile import MAX_REPETITIONS, PLANNED_REPETITIONS
from scoring.measures import FAILURE_MEASURES, MEASURE_LABELS, MEASURES
from scoring.stats.gate import DEFAULT_MARGIN_POINTS, WORSE
from scoring.stats.paired import (
    NEWCOMBE_METHOD,
    mcnemar_power,
    size_gate,
    size_independent,
    size_paired,
    size_paired_connor,
)
from scoring.stats.rates import Rate, rate

# The set a manager last looked at, so that the versions page and the gate
# open where they left off rather than on whatever was uploaded last (issue 25).
LAST_SET_KEY = "versions_last_set"


def _set_version(request, assistant_version=None) -> SetVersion | None:
    """The set in ?set= (remembered for this session), else the one last
    viewed in this session, else the set with the most versions. For one
    assistant version, only a set it has stored runs on; 404 for an unknown ?set=."""
    if label := request.GET.get("set"):
        set_version = get_object_or_404(SetVersion, version=label)
        request.session[LAST_SET_KEY] = set_version.version
        return set_version
    last = request.session.get(LAST_SET_KEY)
    if assistant_version is not None:
        versions = set_versions_of(assistant_version)
        return next((v for v in versions if v.version == last), versions[0] if versions else None)
    if last and (remembered := manager_reads.set_versions_with_runs().filter(version=last).first()):
        return remembered
    return manager_reads.set_version_with_most_versions()


@require_GET
@role_required(*READERS_OF_RUNS)
def version_list(request):
    """The versions with stored runs on one set (as _set_version picks it),
    each linked with that set to its dashboard, its comparison with
    the version before it and the gate."""
    set_version = _set_version(request)
    return render(
        request,
        "dashboard/versions.html",
        {
            "versions": manager_reads.versions_on_set(set_version) if set_version else [],
            "set_version": set_version,
            "set_versions": manager_reads.set_versions_with_runs(),
            "chart": dashboard.versions_chart(set_version) if set_version else [],
        },
    )


@require_GET
@role_required(*READERS_OF_RUNS)
def version_dashboard(request, label: str):
    version = get_object_or_404(AssistantVersion, label=label)
    set_version = _set_version(request, version)
    others = (
        AssistantVersion.objects.filter(runs__set_version=set_version).exclude(id=version.id).distinct()
        if set_version
        else []
    )
    run_id = _run_choice(request)
    figures = dashboard.version_dashboard(
        version, set_version, run_id=run_id, sample_ids=_sample_choice(request)
    )
    if "run" in request.GET and (figures["record"] is None or figures["record"].chosen is None):
        # A run of another version or set, or no run at all: say so, not just show every run.
        shown = f"run #{run_id}" if run_id is not None else f"run {request.GET['run']!r}"
        on_set = f" on set {set_version.version}" if set_version else ""
        messages.error(
            request, f"{shown} is not a stored run of {version.label}{on_set}: every run is shown."
        )
    return render(
        request,
        "dashboard/version.html",
        {
            "version": version,
            "set_version": set_version,
            "set_versions": set_versions_of(version),
            "others": others,
            "chart": dashboard.versions_chart(set_version) if set_version else [],
            "timing_chart": dashboard.timing_chart(set_version) if set_version else {},
            "export_query": _export_query(request, set_version),
            "warnings": _dashboard_warnings(figures["record"], set_version),
            **figures,
        },
    )


def _dashboard_warnings(record, set_version) -> list[str]:
    """The decline warning of the version's runs shown (their sets), or of
    the set version when it has no run yet."""
    if record is not None and record.runs:
        return runs_warnings(record.runs)
    return set_version_warnings(set_version) if set_version else []


# The columns of the dashboard's CSV, as dashboard_figure_rows names them.
FIGURE_COLUMNS = (
    "section", "slice", "figure", "measure", "basis", "from", "k", "n", "effective_n",
    "rate", "low", "high", "interval", "unrepresented_weight",
)  # fmt: skip
# Shares to four decimals (0.8948, a hundredth of a point); effective n as _draws gives it.
FOUR_DECIMALS = ("rate", "low", "high", "unrepresented_weight")


@require_GET
@role_required(*READERS_OF_RUNS)
def version_export(request, label: str, fmt: str):
    """What the dashboard shows, for the same query (set, run, samples
    counted): the automatic measures and the review figures, one labelled
    row per figure (selectors.dashboard_figure_rows). JSON keeps numbers
    whole; CSV rounds shares to four decimals and a fractional effective n to one."""
    if fmt not in ("csv", "json"):
        raise Http404("The dashboard exports CSV or JSON.")
    version = get_object_or_404(AssistantVersion, label=label)
    set_version = _set_version(request, version)
    figures = dashboard.version_dashboard(
        version, set_version, run_id=_run_choice(request), sample_ids=_sample_choice(request)
    )
    rows = dashboard.dashboard_figure_rows(figures)
    record = figures["record"]
    if fmt == "json":
        return JsonResponse(
            {
                "assistant_version": version.label,
                "set_version": set_version.version if set_version else None,
                "runs": [run.id for run in record.used_runs] if record else [],
                "samples": [
                    {"id": s.id, "name": s.name, "purpose": s.purpose, "counted": s.counted, "items": s.size}
                    for s in figures["samples"]
                ],
                "planned": figures["review"]["planned"],
                "figures": rows,
            }
        )
    on_set = f"-set-{set_version.version}" if set_version else ""
    response = _csv_response(f"figures-{version.label}{on_set}.csv")
    writer = csv_cells.writer(response)
    writer.writerow(["assistant_version", "set_version", *FIGURE_COLUMNS])
    for row in rows:
        cells = [
            f"{row[name]:.4f}"
            if name in FOUR_DECIMALS
            else _draws(row[name])
            if name == "effective_n"
            else row[name]
            for name in FIGURE_COLUMNS
        ]
        writer.writerow([version.label, set_version.version if set_version else "", *cells])
    return response


def _draws(effective_n: float) -> str:
    """An effective n for the CSV: 123 for n itself, 113.7 for a fraction of draws, never 123.0."""
    return str(int(effective_n)) if float(effective_n).is_integer() else f"{effective_n:.1f}"


def _export_query(request, set_version) -> str:
    """The dashboard's query for its exports: the same set, run and samples."""
    query = request.GET.copy()
    if set_version is not None:
        query["set"] = set_version.version
    return query.urlencode()


def _run_choice(request) -> int | None:
    value = request.GET.get("run", "")
    return int(value) if value.isascii() and value.isdigit() else None


def _sample_choice(request) -> list[int] | None:
    """The samples the manager chose to count (?sample=…, repeated), or None
    for the default (those drawn for review). ``?samples=chosen`` with no
    sample is a choice of none: the form sends it so that unticking every
    box does not bring the default back."""
    values = request.GET.getlist("sample")
    if not values and request.GET.get("samples") != "chosen":
        return None
    return [int(value) for value in values if value.isascii() and value.isdigit()]


@require_GET
@role_required(*READERS_OF_RUNS)
def compare(request):
    set_version = get_object_or_404(SetVersion, version=request.GET.get("set", ""))
    baseline_version = get_object_or_404(AssistantVersion, label=request.GET.get("baseline", ""))
    candidate_version = get_object_or_404(AssistantVersion, label=request.GET.get("candidate", ""))
    baseline = version_record(baseline_version, set_version)
    candidate = version_record(candidate_version, set_version)
    if not baseline or not candidate:
        raise Http404("Both versions need a scored run on this set version.")
    judged, unvalidated = compare_judges(baseline, candidate)
    comparisons = compare_versions(baseline, candidate)
    # ?also=LABEL (repeatable) adds versions to the common subset from grades.
    also = [get_object_or_404(AssistantVersion, label=label) for label in request.GET.getlist("also")]
    graded = dashboard.versions_graded_stable(set_version, [baseline_version, candidate_version, *also])
    return render(
        request,
        "dashboard/compare.html",
        {
            "set_version": set_version,
            "baseline": baseline_version,
            "candidate": candidate_version,
            "comparisons": comparisons,
            "outcome": manager_reads.compare_outcome(comparisons),
            "chart": manager_reads.compare_chart(comparisons),
            "failure_measures": FAILURE_MEASURES,
            "judged": judged,
            "unvalidated_judges": unvalidated,
            "baseline_record": baseline,
            "candidate_record": candidate,
            "interval_method": NEWCOMBE_METHOD,
            "clocks_note": runs_clocks_note([*baseline.used_runs, *candidate.used_runs]),
            "reply_policies_note": runs_reply_policies_note([*baseline.used_runs, *candidate.used_runs]),
            "graded_stable": graded,
        },
    )


class RepeatedField(forms.Field):
    """Every value of a repeated parameter (?measure=a&measure=b), each also
    split at commas and spaces, so that one text box can hold several."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[str]:
        return [part for item in value or () for part in re.split(r"[\s,]+", item) if part]


class GateForm(forms.Form):
    """The gate's options by the API's names (but ``set`` as on the other
    pages). Only types are checked here: gate_run judges the values, so the
    page refuses exactly what the API refuses."""

    baseline = forms.CharField()
    candidate = forms.CharField()
    set = forms.CharField(required=False)
    measure = RepeatedField(required=False)
    margin = forms.FloatField(required=False)
    max_drop = forms.FloatField(required=False)
    floor = RepeatedField(required=False)
    max_p90 = forms.FloatField(required=False)
    max_timeout_rate = forms.FloatField(required=False)
    judge = forms.CharField(required=False)
    unequal_attempts = forms.BooleanField(required=False)

    def gate_options(self) -> dict:
        """gate_run's arguments; raises GateRefused for a malformed floor."""
        data = self.cleaned_data
        return {
            "baseline": data["baseline"],
            "candidate": data["candidate"],
            "set_version": data["set"],
            "measures": data["measure"],
            "margin_points": DEFAULT_MARGIN_POINTS if data["margin"] is None else data["margin"],
            "max_drop_points": data["max_drop"],
            "floors": parse_floors(data["floor"]),
            "max_p90_s": data["max_p90"],
            "max_timeout_rate": data["max_timeout_rate"],
            "judge": data["judge"],
            "unequal_attempts": data["unequal_attempts"],
        }


@require_GET
@role_required(*READERS_OF_RUNS)
def gate(request):
    """The release gate in the browser: the API's decision (gate_run) on the
    options in the query, asked with the session's login instead of a token.
    A refusal is shown beside the field it concerns."""
    asked = "candidate" in request.GET or "baseline" in request.GET
    form = GateForm(request.GET) if asked else GateForm(initial=_gate_initial(request))
    answer = None
    if form.is_valid():
        try:
            answer = gate_run(**form.gate_options())
        except GateRefused as refused:
            form.add_error(refusal_field(refused), str(refused))
    values = {name: form[name].value() for name in form.fields}
    return render(
        request,
        "dashboard/gate.html",
        {
            "form": form,
            "values": {**values, "floor": " ".join(values["floor"] or ())},
            "chosen_measures": values["measure"] or DEFAULT_MEASURES,
            "default_margin": f"{DEFAULT_MARGIN_POINTS:g}",
            "worse_rule": WORSE,
            "default_measures": ", ".join(MEASURE_LABELS[m] for m in DEFAULT_MEASURES),
            "measure_choices": [(m, MEASURE_LABELS[m]) for m in MEASURES],
            "versions": [v.label for v in manager_reads.gate_versions()],
            "set_versions": [s.version for s in manager_reads.set_versions_with_runs()],
            "answer": answer,
            **(gate_figures(answer, form.cleaned_data) if answer else {}),
        },
    )


def _gate_initial(request) -> dict:
    """The form before anything is asked: the set in ?set= (else as _set_version picks it),
    its newest version with a like-for-like baseline (the last one before it
    with as many attempts per question) as the candidate and that baseline,
    else the newest version alone."""
    set_label = request.GET.get("set", "")
    set_version = SetVersion.objects.filter(version=set_label).first() if set_label else _set_version(request)
    rows = manager_reads.versions_on_set(set_version) if set_version else []
    newest = next((row for row in rows if row.previous), rows[0] if rows else None)
    return {
        "set": set_version.version if set_version else set_label,
        "candidate": newest.version.label if newest else "",
        "baseline": newest.previous.label if newest and newest.previous else "",
        "measure": list(DEFAULT_MEASURES),
        "margin": f"{DEFAULT_MARGIN_POINTS:g}",
    }


@require_GET
@role_required(*READERS_OF_RUNS)
def planner(request):
    context = {"values": request.GET, "result": None, "error": "", "planned_attempts": PLANNED_REPETITIONS}
    if request.GET:
        try:
            baseline = float(request.GET.get("baseline", "")) / 100
            target = float(request.GET.get("target", "")) / 100
            discordant = float(request.GET.get("discordant", "") or 0) / 100 or None
            margin_text = request.GET.get("margin", "")
            margin = (float(margin_text) if margin_text else DEFAULT_MARGIN_POINTS) / 100
            attempts = _planned_attempts(request.GET.get("attempts", ""))
            result = {"independent": size_independent(baseline, target)}
            if discordant:
                result |= _paired_plan(baseline, target, discordant, margin)
            result["attempts"] = attempts
            # Spec 004: a configuration plans N = Q × R runs; the sizes count questions.
            result["runs"] = {
                key: result[key] * attempts
                for key in ("independent", "paired", "gate")
                if result.get(key) is not None
            }
            context["result"] = result
        except ValueError as error:
            context["error"] = (
                str(error) if "could not convert" not in str(error) else "Give the rates as percentages."
            )
    return render(request, "dashboard/planner.html", context)


def _planned_attempts(text: str) -> int:
    """Attempts per question the plan collects: spec 004's three unless
    given; refuses anything but a whole number from 1 to MAX_REPETITIONS."""
    if not text.strip():
        return PLANNED_REPETITIONS
    try:
        attempts = int(text)
    except ValueError:
        attempts = None
    if attempts is None or not 1 <= attempts <= MAX_REPETITIONS:
        raise ValueError(
            f"attempts per question must be a whole number from 1 to {MAX_REPETITIONS}, not {text.strip()}"
        )
    return attempts


def _paired_plan(baseline: float, target: float, discordant: float, margin: float) -> dict:
    """The planner's paired figures: the size McNemar's exact test needs, its
    power there, Connor's approximation with the exact power it really has,
    and the pairs at which the gate passes equal versions with 80 % chance."""
    needed = size_paired(baseline, target, discordant)
    connor = size_paired_connor(baseline, target, discordant)
    if not 0 <= margin < 1:
        raise ValueError(f"the gate's margin is in points, from 0 to under 100; got {margin * 100:g}")
    return {
        "paired": needed,
        "paired_power": mcnemar_power(needed, baseline, target, discordant),
        "connor": connor,
        "connor_power": mcnemar_power(connor, baseline, target, discordant),
        "gate": size_gate(discordant, margin=margin) if margin > 0 else None,
        "margin_points": margin * 100,
    }


@require_GET
@role_required(*READERS_OF_RUNS)
def export_scores(request, run_id: int, scoring_id: int, fmt: str):
    scoring = get_object_or_404(
        Scoring.objects.select_related("run__assistant_version", "set_version"), id=scoring_id, run_id=run_id
    )
    data = scores_as_dict(scoring)
    base = {
        "run": scoring.run_id,
        "assistant_version": scoring.run.assistant_version.label,
        "set_version": scoring.set_version.version,
        "options": scoring.options,
    }
    if fmt == "json":
        return JsonResponse(
            {
                **base,
                "interval": "wilson, 95 %, on the effective n where units cluster (effective_n not null)",
                "slices": data,
                "repetitions": scoring.run.repetitions,
                "stable": scoring.stable,
                "timing": scoring.timing,
            }
        )
    response = _csv_response(f"scores-run-{run_id}-scoring-{scoring_id}.csv")
    writer = csv_cells.writer(response)
    # One table: rates (k, n, rate, interval), right in every attempt (k of n
    # questions), and timing figures (n, mean, P50, P90 in seconds).
    writer.writerow(
        [
            "run", "assistant_version", "set_version", "slice", "figure",
            "k", "n", "effective_n", "rate", "low", "high", "mean_s", "p50_s", "p90_s",
        ]
    )  # fmt: skip
    prefix = [base["run"], base["assistant_version"], base["set_version"]]

    def row(slice_name, figure, *, k="", n="", value=None, mean="", p50="", p90=""):
        interval = [value.value, value.low, value.high] if value is not None else ["", "", ""]
        effective = value.effective_n if value is not None and value.clustered else ""
        writer.writerow([*prefix, slice_name, figure, k, n, effective, *interval, mean, p50, p90])

    for slice_name, measures in data.items():
        for measure, c in measures.items():
            figure = Rate(**{name: c[name] for name in ("k", "n", "low", "high", "effective_n", "clusters")})
            row(slice_name, measure, k=c["k"], n=c["n"], value=figure)
    for slice_name, measures in (scoring.stable or {}).items():
        for measure, figure in measures.items():
            k, n = figure["stable"]["k"], figure["stable"]["n"]
            row(slice_name, f"right in every attempt {measure}", k=k, n=n, value=rate(k, n))
    # E2E as the run's recorded choice on channel overhead has it, as its page shows it.
    exclude_overhead = run_overhead_choice(scoring.run)["excluded"]
    for slice_name, summary in (scoring.timing or {}).items():
        for source, figure in timing.e2e_shown(summary, exclude_overhead=exclude_overhead)[
            "by_source"
        ].items():
            row(
                slice_name, f"e2e from {source}", n=figure["n"], mean=figure["mean"], p50=figure["p50"],
                p90=figure["p90"],
            )  # fmt: skip
        failures = summary["failures"]
        if failures["n"]:
            k, n = failures["counts"]["timeout"], failures["n"]
            row(slice_name, "timeouts", k=k, n=n, value=timing.failure_rate(failures, status="timeout"))
    return response


@require_GET
@role_required(*READERS_OF_RUNS)
def export_findings(request, run_id: int, scoring_id: int, fmt: str):
    """A scoring's findings, narrowed by the run page's filters (kind, language,
    question); JSON with the stored codes, CSV with the page's labels."""
    scoring = get_object_or_404(Scoring, id=scoring_id, run_id=run_id)
    filters = {name: request.GET.get(name, "") for name in ("kind", "language", "question")}
    names = FINDINGS_EXPORT_FIELDS
    if fmt == "json":
        rows = findings_export(scoring, **filters)
        return JsonResponse({"findings": [dict(zip(names, row, strict=True)) for row in rows]})
    response = _csv_response(f"findings-run-{run_id}-scoring-{scoring_id}.csv")
    writer = csv_cells.writer(response)
    writer.writerow(names)
    writer.writerows(findings_export(scoring, labels=True, **filters))
    return response


@require_GET
@role_required(*READERS_OF_RUNS)
def export_answers(request, run_id: int, scoring_id: int, fmt: str):
    """A scoring's answers with their checks, for other tools: an Inspect
    eval log (``inspect.json``) or Ragas-style JSON Lines (``ragas.jsonl``)."""
    scoring = get_object_or_404(
        Scoring.objects.select_related("run__assistant_version", "set_version__question_set"),
        id=scoring_id,
        run_id=run_id,
        status=Scoring.Status.DONE,
    )
    formats = {
        "inspect.json": (exports.inspect_log, "application/json", "inspect"),
        "ragas.jsonl": (exports.ragas_lines, "application/x-ndjson", "ragas"),
    }
    write, content_type, kind = formats[fmt]
    response = StreamingHttpResponse(write(scoring), content_type=content_type)
    name = f"answers-run-{run_id}-scoring-{scoring_id}-{kind}.{fmt.split('.')[-1]}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
@role_required(*READERS_OF_RUNS)
def export_judgements(request, sample_id: int, fmt: str):
    sample = get_object_or_404(Sample, id=sample_id)
    judgements = (
        Judgement.objects.filter(assignment__item__sample=sample)
        .select_related("assignment__item__answer", "assignment__reviewer")
        .order_by("assignment__item__position", "assignment_id", "revision")
    )
    names = [
        "item",
        "question_id",
        "reader",
        "alias",
        "revision",
        "created_at",
        "addresses_question",
        "material_error",
        "correctness",
        "fulfilment",
        "needs_more_info",
        "rubric_answers",
        "grade",
        "pending",
        "borderline",
        "note",
        "error_kind",
        "error_claim",
        "error_evidence",
        "error_effect",
    ]
    rows = [_judgement_row(j, names) for j in judgements]
    if fmt == "json":
        return JsonResponse(
            {
                "sample": sample.id,
                "seed": sample.seed,
                "strata": sample.strata,
                "judgements": [dict(zip(names, row, strict=True)) for row in rows],
            }
        )
    response = _csv_response(f"judgements-sample-{sample_id}.csv")
    writer = csv_cells.writer(response)
    writer.writerow(names)
    writer.writerows([[json.dumps(v) if isinstance(v, dict) else v for v in row] for row in rows])
    return response


@require_GET
@role_required(*READERS_OF_RUNS)
def export_log(request, run_id: int):
    """The run's log exactly as it was uploaded, byte for byte."""
    run = get_object_or_404(Run, id=run_id)
    try:
        stream = files.open_for_reading(run.stored_name)
    except files.StoredFileMissing as error:
        raise Http404("The stored log is missing from the file store.") from error
    except files.StoreUnreachable:
        message = "The file store could not be reached; try again in a moment."
        return HttpResponse(message, status=503, content_type="text/plain")
    return FileResponse(
        stream, as_attachment=True, filename=run.file_name, content_type="application/x-ndjson"
    )


def _judgement_row(judgement, names: list[str]) -> list:
    item = judgement.assignment.item
    fixed = {
        "item": item.position,
        "question_id": item.answer.question_id if item.answer_id else "calibration",
        "reader": judgement.assignment.reviewer.get_username(),
        "alias": judgement.assignment.alias,
        "created_at": judgement.created_at.isoformat(),
    }
    return [fixed[name] if name in fixed else getattr(judgement, name) for name in names]


def _csv_response(name: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
