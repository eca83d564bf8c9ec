"""The one refusal the app raises: what is wrong and where, as sentences.

Services raise ApplicationError (or a subclass that names a kind of refusal)
for anything a person or pipeline can put right: a bad line in an upload, a
sample with no items, a token that may not be issued. Views show its errors
beside the form; the API turns it into one JSON response in one place
(reviewapp/api.py's exception handler), with its status.
"""

from __future__ import annotations


class ApplicationError(Exception):
    """A refusal. ``errors`` are sentences that each say what is wrong and
    where (file, line, field); ``field`` names the request field at fault when
    there is one; ``status`` is the HTTP status it answers with (400 unless
    said otherwise: 409 for a conflict, 413 for too large, 422 for a field)."""

    def __init__(self, errors: list[str] | str, *, status: int = 400, field: str | None = None):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        self.status = status
        self.field = field
        super().__init__("; ".join(self.errors))

    @property
    def message(self) -> str:
        return "; ".join(self.errors)


NUL_MESSAGE = (
    "This holds a NUL character, which no text here may hold (it is invisible in most editors): remove it."
)


def nul_field_errors(data, *, prefix: str = "") -> dict[str, str]:
    """The fields of ``data`` (a dataclass or a mapping, nested one level
    under ``prefix``) whose text holds a NUL character, which PostgreSQL
    cannot store: a form error for each, beside its field."""
    from dataclasses import asdict, is_dataclass

    values = asdict(data) if is_dataclass(data) else dict(data)
    errors = {}
    for name, value in values.items():
        if isinstance(value, str) and "\x00" in value:
            errors[f"{prefix}{name}"] = NUL_MESSAGE
        elif isinstance(value, dict):
            errors.update(nul_field_errors(value, prefix="q_" if name == "rubric_answers" else f"{name}."))
    return errors
