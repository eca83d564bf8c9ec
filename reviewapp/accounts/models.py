"""Pipeline tokens: bearer tokens that act as their user within their scopes."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from reviewapp.core.errors import ApplicationError
from reviewapp.core.roles import ALONE_SCOPE, SCOPES, scopes_for


def api_token_expiry():
    """When a token made now expires unless its maker chose otherwise."""
    return timezone.now() + timedelta(days=settings.API_TOKEN_DAYS)


class TokenRefused(ApplicationError):
    """A token that may not be issued; the message says why, in a sentence."""


class ApiToken(models.Model):
    """A pipeline's bearer token. Only its hash is stored; the token is shown once.

    It acts as its user, limited to its scopes, until it expires or is revoked."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(default=api_token_expiry)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @staticmethod
    def hash(key: str) -> str:
        # The key is 256 random bits, so a fast hash is as good as a slow one here.
        return hashlib.sha256(key.encode()).hexdigest()

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()

    @classmethod
    def find(cls, key: str) -> ApiToken | None:
        """The unrevoked, unexpired token of an active user with this key, else None."""
        return (
            cls.objects.select_related("user")
            .filter(
                key_hash=cls.hash(key),
                revoked_at__isnull=True,
                expires_at__gt=timezone.now(),
                user__is_active=True,
            )
            .first()
        )

    @classmethod
    def issue(
        cls, *, user, name: str, scopes: list[str] | None = None, days: int | None = None
    ) -> tuple[ApiToken, str]:
        """Make a token for ``user`` and return it with its key, which is not stored.

        ``scopes`` defaults to every scope the user's roles allow but
        ``check``, which a token holds alone; ``days`` to API_TOKEN_DAYS.
        Raises TokenRefused for an inactive user, a user whose roles allow no
        scope (reviewers, people without a role), an unknown scope or one
        beyond the user's roles, ``check`` beside another scope, and a
        lifetime outside 1 to API_TOKEN_MAX_DAYS days."""
        username = user.get_username()
        if not user.is_active:
            raise TokenRefused(f"{username} is not active, so no token was made.")
        allowed = scopes_for(user)
        if not allowed:
            raise TokenRefused(
                f"{username} has no role that may use the API (lead, manager or admin), so no token was made."
            )
        if scopes is None:
            scopes = [scope for scope in allowed if scope != ALONE_SCOPE]
        chosen = list(dict.fromkeys(scopes))
        if not chosen:
            raise TokenRefused("Choose at least one scope.")
        unknown = [s for s in chosen if s not in SCOPES]
        if unknown:
            raise TokenRefused(f"Unknown scope {unknown[0]!r}: the scopes are {', '.join(SCOPES)}.")
        beyond = [s for s in chosen if s not in allowed]
        if beyond:
            raise TokenRefused(
                f"{username}'s role does not allow the scope {beyond[0]}; it allows {', '.join(allowed)}."
            )
        if ALONE_SCOPE in chosen and len(chosen) > 1:
            raise TokenRefused(
                f"The {ALONE_SCOPE} scope stands alone: a key kept in an assistant's runtime must reach no "
                "stored data. Make one token with check only (the runtime key) and another for the rest."
            )
        days = settings.API_TOKEN_DAYS if days is None else days
        if not 1 <= days <= settings.API_TOKEN_MAX_DAYS:
            raise TokenRefused(f"A token lasts from 1 to {settings.API_TOKEN_MAX_DAYS} days, not {days}.")
        key = secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            key_hash=cls.hash(key),
            scopes=chosen,
            expires_at=timezone.now() + timedelta(days=days),
        )
        return token, key

    def revoke(self) -> None:
        """Stop the token working from now on; revoking it again changes nothing."""
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=("revoked_at",))
