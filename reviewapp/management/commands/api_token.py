from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.roles import SCOPES
from reviewapp.models import ApiToken, TokenRefused


class Command(BaseCommand):
    help = (
        "Issue an API token for an existing user with a lead, manager or admin role and print it "
        "once. The token acts as that user, within its scopes: "
        + "; ".join(f"{s.name} ({s.summary})" for s in SCOPES.values())
        + "."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="pipeline", help="what the token is for")
        parser.add_argument(
            "--scope",
            action="append",
            dest="scopes",
            choices=list(SCOPES),
            help="a scope to give the token (repeatable); by default every scope the user's role allows",
        )
        parser.add_argument(
            "--days",
            type=int,
            default=None,
            help=f"how long the token lasts (default {settings.API_TOKEN_DAYS})",
        )

    def handle(self, *args, username: str, name: str, scopes, days, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(
                f"There is no user named {username!r}; no token was made. "
                "Create the user and give them a role first (in the admin)."
            )
        try:
            _, key = ApiToken.issue(user=user, name=name, scopes=scopes, days=days)
        except TokenRefused as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(key)
