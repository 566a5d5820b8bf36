"""Declarations the models share: each states one database rule once, under the names the
schema already has (renaming them would be a migration)."""

import pgtrigger
from django.db import models
from django.db.models import Q


def choice_constraint(
    *, name: str, field: str, choices: type[models.Choices]
) -> models.CheckConstraint:
    """The column holds one of `choices`, whatever writes it (raw SQL, triggers, the ORM)."""
    return models.CheckConstraint(name=name, condition=Q(**{f"{field}__in": choices.values}))


def append_only(prefix: str, *, refuse_update_when: str | None = None) -> list[pgtrigger.Protect]:
    """Triggers that keep a table append-only: no row is updated or deleted.

    With `refuse_update_when` (SQL on OLD and NEW), only the updates it matches are refused.
    Deletes then have a trigger of their own, `<prefix>_no_delete`: a condition on NEW cannot
    guard a DELETE, and the user purge lifts that one alone (pgtrigger.ignore)."""
    if refuse_update_when is None:
        operation = pgtrigger.Update | pgtrigger.Delete
        return [pgtrigger.Protect(name=f"{prefix}_append_only", operation=operation)]
    return [
        pgtrigger.Protect(
            name=f"{prefix}_append_only",
            operation=pgtrigger.Update,
            condition=pgtrigger.Condition(refuse_update_when),
        ),
        pgtrigger.Protect(name=f"{prefix}_no_delete", operation=pgtrigger.Delete),
    ]
