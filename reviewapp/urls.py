from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import path
from django.utils.functional import lazy
from django.views.generic import RedirectView

from reviewapp.accounts import views as tokens
from reviewapp.api import api
from reviewapp.judges import views as judges
from reviewapp.paired import views as paired
from reviewapp.review.views import lead, review, samples, severity
from reviewapp.runs.views import imports, question_sets, runs
from reviewapp.versions import views as dashboard

urlpatterns = [
    path("", runs.home, name="home"),
    # Pages link the SVG icon; this answers what asks /favicon.ico anyway (the
    # admin's pages, the API docs, feed readers), resolved when first asked.
    path(
        "favicon.ico",
        RedirectView.as_view(url=lazy(static, str)("favicon.svg"), permanent=True),
        name="favicon",
    ),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("runs/upload/", runs.run_upload, name="run-upload"),
    path("runs/upload/confirm/", runs.run_upload_confirm, name="run-upload-confirm"),
    path("runs/import/", imports.run_import, name="run-import"),
    path("runs/import/confirm/", imports.run_import_confirm, name="run-import-confirm"),
    path("runs/<int:run_id>/", runs.run_detail, name="run-detail"),
    path("runs/<int:run_id>/rescore/", runs.run_rescore, name="run-rescore"),
    path("runs/<int:run_id>/retry/", runs.run_retry_view, name="run-retry"),
    path("runs/<int:run_id>/exclude/", runs.run_exclude_view, name="run-exclude"),
    path("runs/<int:run_id>/overhead/", runs.run_overhead_view, name="run-overhead"),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/retry/",
        runs.scoring_retry_view,
        name="scoring-retry",
    ),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/open-sealed/",
        runs.scoring_open_sealed_view,
        name="scoring-open-sealed",
    ),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/findings-into-set/",
        runs.scoring_findings_into_set,
        name="scoring-findings-into-set",
    ),
    path("runs/<int:run_id>/answers/<int:answer_id>/", runs.answer_detail, name="answer-detail"),
    path("sets/", question_sets.set_list, name="set-list"),
    path("sets/production/", question_sets.set_from_production, name="set-from-production"),
    path("sets/<str:version>/", question_sets.set_detail, name="set-detail"),
    path("samples/", samples.sample_list, name="sample-list"),
    path("samples/new/", samples.sample_new, name="sample-new"),
    path("samples/<int:sample_id>/", samples.sample_detail, name="sample-detail"),
    path("samples/<int:sample_id>/assign/", samples.sample_assign_view, name="sample-assign"),
    path("samples/<int:sample_id>/items/<int:position>/", samples.sample_item, name="sample-item"),
    path("rubrics/", samples.rubric_list, name="rubric-list"),
    path("rubrics/new/", samples.rubric_edit, name="rubric-new"),
    path("rubrics/<int:rubric_id>/edit/", samples.rubric_edit, name="rubric-edit"),
    path("samples/<int:sample_id>/agreement/", lead.agreement_view, name="sample-agreement"),
    path("samples/<int:sample_id>/calibration/", lead.calibration_new, name="calibration-new"),
    path(
        "samples/<int:sample_id>/calibration/patterns/",
        lead.calibration_patterns_new,
        name="calibration-patterns-new",
    ),
    path("lead/", lead.lead_queue, name="lead-queue"),
    path("lead/consistency/", lead.reader_consistency, name="reader-consistency"),
    path("lead/items/<int:item_id>/", lead.adjudicate, name="adjudicate"),
    path("register/", lead.material_register, name="register"),
    path("agreement/", lead.agreement_view, name="agreement"),
    path("versions/", dashboard.version_list, name="version-list"),
    path("versions/compare/", dashboard.compare, name="version-compare"),
    path("versions/gate/", dashboard.gate, name="version-gate"),
    path("severity/", severity.severity_edit, name="severity"),
    path("versions/planner/", dashboard.planner, name="planner"),
    path("versions/<str:label>/", dashboard.version_dashboard, name="version-dashboard"),
    path("versions/<str:label>/figures.<str:fmt>", dashboard.version_export, name="version-export"),
    path("runs/<int:run_id>/log.jsonl", dashboard.export_log, name="run-log"),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/scores.<str:fmt>",
        dashboard.export_scores,
        name="export-scores",
    ),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/question-times.csv",
        runs.export_question_times,
        name="export-question-times",
    ),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/findings.<str:fmt>",
        dashboard.export_findings,
        name="export-findings",
    ),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/answers.inspect.json",
        dashboard.export_answers,
        {"fmt": "inspect.json"},
        name="export-answers-inspect",
    ),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/answers.ragas.jsonl",
        dashboard.export_answers,
        {"fmt": "ragas.jsonl"},
        name="export-answers-ragas",
    ),
    path(
        "samples/<int:sample_id>/judgements.<str:fmt>", dashboard.export_judgements, name="export-judgements"
    ),
    path("review/", review.review_queue, name="review-queue"),
    path("review/<int:sample_id>/", review.review_start, name="review-start"),
    path("review/<int:sample_id>/<str:alias>/", review.review_item, name="review-item"),
    # Blinded comparison of two runs: leads' pages name the runs, readers' pages never do.
    path("paired/", paired.paired_list, name="paired-list"),
    path("paired/new/", paired.paired_new, name="paired-new"),
    path("paired/<int:paired_id>/", paired.paired_detail, name="paired-detail"),
    path("paired/<int:paired_id>/assign/", paired.paired_assign_view, name="paired-assign"),
    path("paired/<int:paired_id>/pairs/<int:position>/decide/", paired.paired_decide, name="paired-decide"),
    path("pairs/", paired.paired_queue, name="paired-queue"),
    path("pairs/<int:paired_id>/", paired.paired_start, name="paired-start"),
    path("pairs/<int:paired_id>/<str:pair_alias>/", paired.paired_item, name="paired-item"),
    path("judges/", judges.judge_list, name="judge-list"),
    path("judges/new/", judges.judge_edit, name="judge-new"),
    path("judges/<int:judge_id>/edit/", judges.judge_edit, name="judge-edit"),
    path("judges/<int:judge_id>/validation/", judges.judge_validation, name="judge-validation"),
    path(
        "judges/<int:judge_id>/validation/draw/",
        judges.judge_validation_draw,
        name="judge-validation-draw",
    ),
    path("runs/<int:run_id>/judge/", judges.judge_run_new, name="judge-run-new"),
    path("judge-runs/<int:judge_run_id>/", judges.judge_run_detail, name="judge-run-detail"),
    path("judge-runs/<int:judge_run_id>/confirm/", judges.judge_run_confirm_view, name="judge-run-confirm"),
    path("judge-runs/<int:judge_run_id>/cancel/", judges.judge_run_cancel_view, name="judge-run-cancel"),
    path("judge-runs/<int:judge_run_id>/resume/", judges.judge_run_resume_view, name="judge-run-resume"),
    path("judge-runs/<int:judge_run_id>/verdicts.jsonl", judges.judge_run_export, name="judge-run-export"),
    path("tokens/", tokens.token_list, name="token-list"),
    path("tokens/<int:token_id>/revoke/", tokens.token_revoke, name="token-revoke"),
    path("audit/", tokens.audit_trail, name="audit-trail"),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
]
