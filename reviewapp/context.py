from django.conf import settings


def deployment(request):
    """What the footer says about where data live and where tasks run."""
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    database = {"sqlite3": "SQLite", "postgresql": "PostgreSQL"}.get(engine, engine)
    tasks = (
        "tasks run in-process (no broker set)"
        if settings.CELERY_TASK_ALWAYS_EAGER
        else "tasks run on Celery workers"
    )
    return {"deployment": f"{database} database · {tasks}"}
