import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

app = Celery("reviewapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _cover_for_beat(**_) -> None:
    """Each worker sends the sweep when Celery beat has not run it lately, so
    that work left behind is taken up with beat down (reviewapp.core.broker)."""
    from django.conf import settings

    from reviewapp.core.broker import keep_swept
    from reviewapp.tasks import sweep_work_task

    keep_swept(lambda: sweep_work_task.apply_async(expires=settings.WORK_SWEEP_SECONDS))
