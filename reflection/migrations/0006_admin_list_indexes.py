"""Indexes for the admin's evidence and cycle lists, newest first (measured by
`make bench-admin`: without them each page read the whole table). Built CONCURRENTLY, so
writes go on meanwhile; a failed build leaves an invalid index that the reverse drops."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY

    dependencies = [
        ("reflection", "0005_consistency_link_checks"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="reflectioncycle",
            index=models.Index(fields=["-started_at", "-id"], name="idx_reflection_recent"),
        ),
        AddIndexConcurrently(
            model_name="traitevidence",
            index=models.Index(fields=["-created_at", "-id"], name="idx_evidence_recent"),
        ),
    ]
