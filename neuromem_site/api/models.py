import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from core.access import Caller


class ApiClient(models.Model):
    """An agent (REST client) with a bearer token, limited to end users under its prefixes."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100, unique=True)
    # Only a SHA-256 of the token is kept; the token itself is shown once, at creation.
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    token_hint = models.CharField(max_length=16, editable=False, help_text="First characters")
    user_prefixes = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    is_staff = models.BooleanField(
        default=False, help_text="Sees every end user and may use staff-only endpoints."
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        db_table = "api_clients"
        ordering = ["name"]
        # Django would derive "Api client" / "Api clients" from the class name.
        verbose_name = "API client"
        verbose_name_plural = "API clients"
        constraints = [
            models.CheckConstraint(
                name="api_client_staff_or_prefixed",
                condition=Q(is_staff=True) | Q(user_prefixes__len__gt=0),
                violation_error_message="A non-staff client needs at least one user prefix.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    # DRF's IsAuthenticated asks the principal this; an ApiClient is one once authenticated.
    is_authenticated = True

    @property
    def caller(self) -> Caller:
        """Who the domain code acts for when this client calls (core/access.py)."""
        return Caller(
            name=self.name, user_prefixes=tuple(self.user_prefixes), is_staff=self.is_staff
        )
