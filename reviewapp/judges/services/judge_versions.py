"""Judge versions: checking and saving one (frozen once it graded anything),
and the model it grades with, made once per process and cached in the database."""

import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Iterator, MutableMapping

from django.db import (
    transaction,
)

from reviewapp.core import limits
from reviewapp.core.errors import ApplicationError
from reviewapp.judges import endpoints
from reviewapp.models import (
    Judge,
    JudgeResponse,
    JudgeVersion,
    RubricVersion,
)
from scoring.judge import METRICS
from scoring.judge import prompts as judge_prompts
from scoring.judge.standin import NAME as STAND_IN_NAME
from scoring.judge.standin import stand_in
from scoring.llm import LLM, CallableLLM, LLMError, make_llm

# Metrics a judge version may grade: spec 003's answer metrics and the rubric.
# (criteria_score needs a rubric text of its own; the review rubric serves here.)
JUDGE_METRICS = tuple(metric for metric in METRICS if metric not in ("preference", "criteria_score"))


STAND_IN_METRICS = ("rubric", "faithfulness", "answer_relevance")


ENVIRONMENT_VARIABLE = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")


class DatabaseCache(MutableMapping):
    """The judges' response cache in the database (JudgeResponse), shared by every worker."""

    def __getitem__(self, key: str):
        value = JudgeResponse.objects.filter(key=key).values_list("value", flat=True).first()
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value) -> None:
        # One statement: two workers that store the same request's response
        # at once are both right, so the second is simply dropped.
        JudgeResponse.objects.bulk_create([JudgeResponse(key=key, value=value)], ignore_conflicts=True)

    def __delitem__(self, key: str) -> None:
        deleted, _ = JudgeResponse.objects.filter(key=key).delete()
        if not deleted:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(JudgeResponse.objects.values_list("key", flat=True))

    def __len__(self) -> int:
        return JudgeResponse.objects.count()

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def judge_version_errors(
    *, provider: str, model: str, base_url: str, options, key_variable: str, metrics, rubric_version
) -> dict[str, str]:
    """What is wrong with a judge version's settings, by field (empty when nothing)."""
    errors = {}
    if provider not in JudgeVersion.Provider.values:
        errors["provider"] = f"choose one of {', '.join(JudgeVersion.Provider.values)}"
    if provider != JudgeVersion.Provider.STAND_IN and not model.strip():
        errors["model"] = "name the model, as its provider spells it"
    if base_url and provider not in (JudgeVersion.Provider.OPENAI, JudgeVersion.Provider.ANTHROPIC):
        errors["base_url"] = "a base URL is for an OpenAI-compatible server (or Anthropic's API)"
    elif refused := endpoints.base_url_error(base_url):
        errors["base_url"] = refused
    if not isinstance(options, dict):
        errors["options"] = 'options are a JSON object, such as {"temperature": 0}'
    elif any(str(name).lower() in ("api_key", "key", "authorization") for name in options):
        errors["options"] = "a key is never stored: name its environment variable instead"
    elif problem := _options_problem(options):
        errors["options"] = problem
    if key_variable and not ENVIRONMENT_VARIABLE.match(key_variable):
        errors["key_variable"] = "the name of an environment variable: capitals, digits and _"
    elif refused := endpoints.key_variable_error(key_variable):
        errors["key_variable"] = refused
    allowed = STAND_IN_METRICS if provider == JudgeVersion.Provider.STAND_IN else JUDGE_METRICS
    unknown = [metric for metric in metrics or () if metric not in allowed]
    if not metrics:
        errors["metrics"] = "choose at least one metric or the rubric"
    elif unknown:
        errors["metrics"] = f"{', '.join(unknown)}: this judge grades {', '.join(allowed)}"
    if "rubric" in (metrics or ()) and rubric_version is None:
        errors["rubric_version"] = "choose the rubric version whose questions the judge answers"
    return errors


OPTIONS_DEPTH = 8


def _options_problem(value, depth: int = 0) -> str:
    """What in a judge's options PostgreSQL's JSON cannot hold, or that no
    provider option needs: NUL, NaN or infinity, nesting past OPTIONS_DEPTH."""
    if depth > OPTIONS_DEPTH:
        return f"nested more than {OPTIONS_DEPTH} levels deep: a provider's options need a few"
    if isinstance(value, str) and "\x00" in value:
        return "an option holds a NUL character (\\u0000), which cannot be stored: remove it"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN and infinity are not numbers an option can hold: write a number"
    if isinstance(value, dict):
        for key, inner in value.items():
            if problem := _options_problem(str(key), depth + 1) or _options_problem(inner, depth + 1):
                return problem
    if isinstance(value, list):
        for inner in value:
            if problem := _options_problem(inner, depth + 1):
                return problem
    return ""


def judge_version_save(
    *,
    judge: Judge | None = None,
    name: str = "",
    provider: str,
    model: str,
    base_url: str = "",
    options: dict | None = None,
    key_variable: str = "",
    max_tokens: int = 1024,
    concurrency: int = 4,
    metrics: list[str],
    rubric_version: RubricVersion | None = None,
    validation_threshold: float = 0.6,
    validation_min_items: int = 50,
    created_by=None,
) -> JudgeVersion:
    """Write a judge: into its latest version while that has graded nothing,
    else into a new version (a version that graded anything never changes).
    Without ``judge`` a new judge called ``name`` is made. Refuses
    (ApplicationError, naming the field) what judge_version_errors finds, a
    name taken, and limits out of range."""
    options = {} if options is None else options
    errors = judge_version_errors(
        provider=provider,
        model=model,
        base_url=base_url,
        options=options,
        key_variable=key_variable,
        metrics=metrics,
        rubric_version=rubric_version,
    )
    if not 1 <= max_tokens <= 100_000:
        errors["max_tokens"] = "from 1 to 100,000 tokens"
    if not 1 <= concurrency <= 64:
        errors["concurrency"] = "from 1 to 64 calls at once"
    if not 0 <= validation_threshold < 1:
        errors["validation_threshold"] = "a kappa from 0 to below 1"
    if not 10 <= validation_min_items <= 1_000_000:
        errors["validation_min_items"] = "from 10 to 1,000,000 items"
    if judge is None:
        name = name.strip()
        if not name:
            errors["name"] = "give the judge a name"
        elif Judge.objects.filter(name=name).exists():
            errors["name"] = f"a judge named {name!r} exists already"
    if errors:
        raise ApplicationError("; ".join(f"{field}: {message}" for field, message in errors.items()))
    fields = {
        "provider": provider,
        "model": model.strip() or STAND_IN_NAME,
        "base_url": base_url.strip(),
        "options": options,
        "key_variable": key_variable.strip(),
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "metrics": list(dict.fromkeys(metrics)),
        "rubric_version": rubric_version if "rubric" in metrics else None,
        "prompt_version": judge_prompts.PROMPT_VERSION,
        "prompt_hash": judge_prompts.prompt_hash(),
        "validation_threshold": validation_threshold,
        "validation_min_items": validation_min_items,
    }
    with transaction.atomic():
        if judge is None:
            judge = Judge.objects.create(name=name)
        latest = judge.versions.select_for_update().order_by("-number").first()
        if latest is None or latest.is_frozen:
            return JudgeVersion.objects.create(
                judge=judge, number=(latest.number + 1) if latest else 1, created_by=created_by, **fields
            )
        for field, value in fields.items():
            setattr(latest, field, value)
        latest.save(update_fields=tuple(fields))
        return latest


# Retries inside one call: a worker should not sleep for minutes on one
# answer while its lease runs; the chunk is taken up again instead.
CALL_RETRIES = 3


# Models made in this process, by everything that makes them differ (the key
# among it, hashed): a provider's client keeps its connections alive between
# chunks, and making one costs more than many calls.
_MODELS: dict[str, LLM] = {}
_MODELS_LOCK = threading.Lock()


KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def shared_llm_for(version: JudgeVersion, *, cache: MutableMapping | None = None) -> LLM:
    """llm_for, made once per process for the version, its settings and keys;
    its calls take slots of the version's concurrency across every worker
    (reviewapp.core.limits)."""
    variables = (version.key_variable, *KEY_VARIABLES) if version.key_variable else KEY_VARIABLES
    settings_key = json.dumps(
        [
            version.id,
            version.concurrency,
            version.provider,
            version.model,
            version.base_url,
            version.options,
            version.max_tokens,
            version.key_variable,
            [os.environ.get(variable, "") for variable in variables],
            type(cache).__name__,
        ],
        sort_keys=True,
        default=str,
    )
    key = hashlib.sha256(settings_key.encode()).hexdigest()
    with _MODELS_LOCK:
        model = _MODELS.get(key)
    if model is None:
        model = llm_for(version, cache=cache)
        model.send_limit = limits.judge_call_slot(version.id, version.concurrency)
        with _MODELS_LOCK:
            model = _MODELS.setdefault(key, model)
    return model


def llm_for(
    version: JudgeVersion, *, cache: MutableMapping | None = None, retries: int = CALL_RETRIES
) -> LLM:
    """The model behind a judge version. Raises LLMError, in one sentence, when
    its SDK is missing or its key variable is unset."""
    if version.provider == JudgeVersion.Provider.STAND_IN:
        return CallableLLM(stand_in, model=STAND_IN_NAME, cache=cache)
    # Checked again here: the settings may have changed since the version was
    # saved, and a name may resolve elsewhere now.
    refused = endpoints.key_variable_error(version.key_variable) or endpoints.base_url_error(version.base_url)
    if refused:
        raise LLMError(f"judge version {version}: {refused}")
    guarded = version.provider in (JudgeVersion.Provider.OPENAI, JudgeVersion.Provider.ANTHROPIC)
    return make_llm(
        version.provider,
        version.model,
        cache=cache,
        max_tokens=version.max_tokens,
        options=version.options or None,
        base_url=version.base_url or None,
        key_variable=version.key_variable or None,
        retries=retries,
        request_hook=endpoints.guard if guarded else None,
    )
