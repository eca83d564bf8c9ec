"""Bearer-token authentication for the pipeline API: a token acts as its user,
within its scopes, until it expires or is revoked."""

from __future__ import annotations

import time
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from ninja.errors import AuthorizationError
from ninja.security import HttpBearer

from reviewapp.core.roles import ALONE_SCOPE, SCOPES, has_role
from reviewapp.models import ApiToken

# A token's last use is written at most this often: a pipeline calling the
# check a thousand times a second would otherwise write its token's row a
# thousand times a second. The tokens page shows it to the minute.
USE_RECORDED_EVERY = timedelta(minutes=1)


class TokenCache:
    """Tokens found in the last ``seconds``, by the hash of their key.

    For the hot path of POST /api/check: a hit skips the token's and its
    user's roles' queries. What the cache holds is as the database was when
    the token was looked up, so revoking a token, making its user inactive or
    taking a role away reaches a process that used it within ``seconds``;
    expiry is checked on every request. Per process: each server worker
    keeps its own."""

    def __init__(self, seconds: float, *, size: int = 1024, clock=time.monotonic):
        self.seconds = seconds
        self.size = size
        self.clock = clock
        self._tokens: dict[str, tuple[float, ApiToken]] = {}

    def get(self, key_hash: str) -> ApiToken | None:
        entry = self._tokens.get(key_hash)
        if entry is None:
            return None
        found_at, token = entry
        if self.clock() - found_at >= self.seconds:
            self._tokens.pop(key_hash, None)
            return None
        return token

    def put(self, key_hash: str, token: ApiToken) -> None:
        if len(self._tokens) >= self.size:
            self._tokens.clear()  # a bound, never reached by a deployment's handful of tokens
        self._tokens[key_hash] = (self.clock(), token)

    def clear(self) -> None:
        self._tokens.clear()


# Tokens used for the number check, kept 10 s (TokenCache says what that delays).
CHECK_TOKENS = TokenCache(10)


class TokenAuth(HttpBearer):
    """A bearer token allowed to do what ``scope`` names.

    Returns the token (as ``request.auth``; its user becomes ``request.user``).
    Refuses with 401 a missing, unknown, expired or revoked token and the
    token of an inactive user; with 403 a token whose user has none of the
    scope's roles, or which lacks the scope. Without a scope it refuses every
    token, so an operation that names none is closed. With a ``cache``, a
    token found in it is not looked up again (TokenCache says for how long).
    Records the token's use at most once a minute (USE_RECORDED_EVERY)."""

    def __init__(self, scope: str | None = None, *, cache: TokenCache | None = None):
        if scope is not None and scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}")
        self.scope = scope
        self.cache = cache
        super().__init__()

    def authenticate(self, request, token):
        found = self._find(token)
        if found is None:
            return None
        if self.scope is None:
            raise AuthorizationError(message="No scope opens this operation to tokens.")
        scope = SCOPES[self.scope]
        if not has_role(found.user, *scope.roles):
            raise AuthorizationError(
                message=f"Your role does not give access to this operation: it is for {_names(scope.roles)}."
            )
        if self.scope not in found.scopes:
            raise AuthorizationError(message=f"This token does not hold the scope {self.scope}.")
        if self.scope == ALONE_SCOPE and len(found.scopes) > 1:
            # Tokens made before the rule may hold it beside others.
            raise AuthorizationError(
                message="This token holds other scopes beside check; the number check takes a check-only "
                "token (the runtime key on the tokens page)."
            )
        _record_use(found)
        request.user = found.user
        return found

    def _find(self, key: str) -> ApiToken | None:
        if self.cache is None:
            return ApiToken.find(key)
        key_hash = ApiToken.hash(key)
        found = self.cache.get(key_hash)
        if found is None:
            found = ApiToken.find(key)
            if found is not None:
                has_role(found.user)  # reads the user's roles once, into the cached user
                self.cache.put(key_hash, found)
        elif found.expires_at <= timezone.now():
            return None
        return found


def _record_use(token: ApiToken) -> None:
    """Set the token's last use to now, unless it was set less than a minute ago."""
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < USE_RECORDED_EVERY:
        return
    # Conditional, so that workers that see the same stale time write once.
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - USE_RECORDED_EVERY)
    ApiToken.objects.filter(stale, id=token.id).update(last_used_at=now)
    token.last_used_at = now


def _names(roles: tuple[str, ...]) -> str:
    return ", ".join(roles[:-1]) + f" or {roles[-1]}" if len(roles) > 1 else roles[0]


def _scopes_table() -> str:
    rows = "\n".join(f"| `{s.name}` | {s.summary} | {_names(s.roles)} |" for s in SCOPES.values())
    return f"| scope | lets a token | for users who are |\n| --- | --- | --- |\n{rows}"
