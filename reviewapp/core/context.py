from django.conf import settings

from reviewapp.core.roles import API_USERS, READERS_OF_RUNS, WRITERS, Role, has_role


def deployment(request):
    """What the footer says about where data live and where tasks run."""
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    database = {"sqlite3": "SQLite", "postgresql": "PostgreSQL"}.get(engine, engine)
    tasks = (
        "tasks run in-process (no broker set)"
        if settings.CELERY_TASK_ALWAYS_EAGER
        else "tasks run on Celery workers"
    )
    files = (
        f"files in bucket {settings.STORAGES['data']['OPTIONS']['bucket_name']}"
        if settings.STORAGE_KIND == "s3"
        else "files in the data folder"
    )
    return {"deployment": f"{database} database · {tasks} · {files}"}


def roles(request):
    """Which parts of the navigation this person may use."""
    user = request.user
    return {
        "roles": {
            "runs": has_role(user, *READERS_OF_RUNS),
            "write": has_role(user, *WRITERS),
            "review": has_role(user, Role.REVIEWER, Role.LEAD, Role.ADMIN),
            "api": has_role(user, *API_USERS),
        }
    }
