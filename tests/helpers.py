"""Shared people and files for the app's tests."""

import json
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from tests.conftest import SHARED_DATA

PASSWORD = "a-test-password-9"

# The screen the browser tests look at: a laptop's.
LAPTOP = {"width": 1366, "height": 768}


def browser_log_in(browser, live_server, username: str, *, viewport=LAPTOP):
    """A new browser page at ``viewport``, logged in as ``username``."""
    page = browser.new_page(viewport=viewport)
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    return page


def make_user(username: str = "lead", *roles: str, **extra):
    """A user with ``roles`` (by default the role their name says, else lead)."""
    from reviewapp.core.roles import grant
    from reviewapp.models import Role

    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)
    grant(user, *(roles or ((username,) if username in Role.ALL else (Role.LEAD,))))
    return user


def example_file(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (SHARED_DATA / name).read_bytes())


def jsonl(*rows, name: str = "run.jsonl") -> SimpleUploadedFile:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    return SimpleUploadedFile(name, ("\n".join(lines) + "\n").encode())


def example_answers() -> list[dict]:
    lines = (SHARED_DATA / "answers_run_assistant-1.3_set-1.2.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]


class BaseTestCase(TestCase):
    """The people most app tests need, made once per class: ``reviewer``,
    ``lead`` and ``manager`` hold the role their name says; ``outsider`` is
    logged-in staff with no role at all. Classes that need more people add them
    in their own setUpTestData after calling this one."""

    @classmethod
    def setUpTestData(cls):
        cls.reviewer = make_user("reviewer")
        cls.lead = make_user("lead")
        cls.manager = make_user("manager")
        cls.outsider = get_user_model().objects.create_user(username="outsider", password=PASSWORD)


class KeepsClassFiles:
    """For a TestCase whose setUpTestData stores files (uploaded logs): its
    tests read them from the data folder they were stored in, not from the
    folder of its own that tests/conftest.py gives each test. Put it before
    the TestCase class among the bases."""

    @classmethod
    def setUpClass(cls):
        cls.class_data_dir = settings.DATA_DIR  # where setUpTestData, run next, stores
        super().setUpClass()

    def setUp(self):
        self.enterContext(self.settings(DATA_DIR=self.class_data_dir))
        super().setUp()


@contextmanager
def row_held(table: str, pk: int):
    """Row ``pk`` of ``table`` locked by another connection's transaction,
    as a worker's long transaction holds it, for as long as the block runs."""
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    holder = psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"]
    )
    try:
        holder.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE", [pk])
        yield
    finally:
        holder.rollback()
        holder.close()
