"""The lead's form for drawing a paired sample (blinded comparison of two runs)."""

from django import forms

from reviewapp.core.once import key_field
from reviewapp.models import Run


class RunChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, run: Run) -> str:
        # A lead choosing runs sees their attempts: a pair holds only attempt 1 of each.
        attempts = f" · {run.repetitions} attempts per question" if run.repetitions > 1 else ""
        return (
            f"run {run.id} · {run.assistant_version.label} on set {run.set_version.version} · "
            f"{run.answer_count} answers{attempts} · {run.created_at:%Y-%m-%d}"
        )


def stored_runs():
    return Run.objects.filter(status=Run.Status.STORED, excluded_reason="").select_related(
        "assistant_version", "set_version"
    )


class PairedDrawForm(forms.Form):
    submission_key = key_field()
    run_a = RunChoiceField(
        queryset=stored_runs(), label="Run A (baseline)", help_text="Differences are shown as B − A."
    )
    run_b = RunChoiceField(
        queryset=stored_runs(),
        label="Run B (candidate)",
        help_text="Another version's run on the same set version, or another run of the same version.",
    )
    size = forms.IntegerField(min_value=1, max_value=100000, initial=30, label="Pairs to draw")
    by_stratum = forms.BooleanField(
        required=False, label="Also stratify by question stratum", help_text="Language always."
    )
    readers_per_item = forms.IntegerField(min_value=1, max_value=10, initial=2, label="Readers per pair")
    repeat_percent = forms.IntegerField(
        min_value=0,
        max_value=50,
        initial=10,
        label="Repeats, % of each reader's pairs",
        help_text="Shown again later with the answers' places swapped, to check that the preference "
        "follows the answer and not its place.",
    )
    # The seed is stored in a 64-bit column.
    seed = forms.IntegerField(
        required=False,
        min_value=-(2**63),
        max_value=2**63 - 1,
        help_text="Leave empty for a random seed; it is recorded, and the readers' orders, places, "
        "aliases and repeats follow from it.",
    )
    name = forms.CharField(
        required=False,
        max_length=200,
        help_text="Readers never see it, so it may name the versions.",
    )
