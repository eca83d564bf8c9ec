from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviewapp.models import ApiToken


class Command(BaseCommand):
    help = "Issue an API token for a user (created when missing) and print it once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="pipeline", help="what the token is for")

    def handle(self, *args, username: str, name: str, **options):
        user, _ = get_user_model().objects.get_or_create(username=username)
        if not user.is_active:
            raise CommandError(f"user {username} is not active")
        _, key = ApiToken.issue(user=user, name=name)
        self.stdout.write(key)
