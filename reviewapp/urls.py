from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from reviewapp.api import api
from reviewapp.views import question_sets, runs

urlpatterns = [
    path("", runs.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("runs/upload/", runs.run_upload, name="run-upload"),
    path("runs/<int:run_id>/", runs.run_detail, name="run-detail"),
    path("runs/<int:run_id>/rescore/", runs.run_rescore, name="run-rescore"),
    path("runs/<int:run_id>/retry/", runs.run_retry_view, name="run-retry"),
    path(
        "runs/<int:run_id>/scorings/<int:scoring_id>/retry/",
        runs.scoring_retry_view,
        name="scoring-retry",
    ),
    path("runs/<int:run_id>/answers/<int:answer_id>/", runs.answer_detail, name="answer-detail"),
    path("sets/", question_sets.set_list, name="set-list"),
    path("sets/<str:version>/", question_sets.set_detail, name="set-detail"),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
]
