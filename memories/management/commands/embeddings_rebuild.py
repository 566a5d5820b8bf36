"""`manage.py embeddings_rebuild`: bring every stored embedding to EMBEDDING_PROVIDER /
EMBEDDING_DIM (memories/services/embedding_rebuild.py; docs/schema.md, "Changing
EMBEDDING_DIM"). Interrupted, it resumes where it stopped when run again."""

import time
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import DomainError
from memories.embeddings import EmbeddingError
from memories.services.embedding_rebuild import (
    RebuildPlan,
    RebuildProgress,
    embeddings_rebuild,
    embeddings_rebuild_plan,
)


class Command(BaseCommand):
    help = (
        "Change the embedding provider or dimension of a database that holds vectors: reset "
        "the column to EMBEDDING_DIM, re-embed every memory in batches, rebuild the HNSW "
        "indexes. Safe to interrupt; run it again to resume."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be done, change nothing"
        )
        parser.add_argument(
            "--force-reembed",
            action="store_true",
            help="re-embed every memory even when the column already holds the target "
            "(e.g. another model of the same dimension made the stored vectors)",
        )
        parser.add_argument(
            "--batch-size", type=int, default=256, help="memories embedded per batch (256)"
        )

    def handle(self, *args, dry_run: bool, force_reembed: bool, batch_size: int, **options) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        try:
            plan = embeddings_rebuild_plan(force_reembed=force_reembed)
            self.stdout.write(describe(plan))
            if dry_run or not plan.needed:
                return
            progress = ProgressLine(self.stderr)

            def phase(message: str) -> None:
                progress.begin()
                self.stdout.write(message)

            result = embeddings_rebuild(
                force_reembed=force_reembed,
                batch_size=batch_size,
                on_phase=phase,
                on_progress=progress.update,
            )
            progress.begin()
        except KeyboardInterrupt:
            raise CommandError(
                "Interrupted. Nothing stored is lost; run the command again to resume.",
                returncode=130,
            ) from None
        except DomainError as error:
            raise CommandError(error.message) from error
        except EmbeddingError as error:
            raise CommandError(
                f"The embedding provider failed: {error}. Nothing stored is lost; run the "
                "command again to resume."
            ) from error
        built = ", ".join(result.indexes_built) or "none missing"
        self.stdout.write(
            self.style.SUCCESS(
                f"Done: {result.embedded} memories embedded by {plan.target.model_id}; "
                f"indexes built: {built}."
            )
        )


def describe(plan: RebuildPlan) -> str:
    recorded = (
        f"{plan.recorded.space.model_id}"
        + ("" if plan.recorded.complete else " (rebuild in progress)")
        if plan.recorded
        else "not recorded"
    )
    lines = [
        f"column: halfvec({plan.column_dimensions}), vectors by: {recorded}",
        f"target: halfvec({plan.target.dimensions}), model {plan.target.model_id}",
        f"memories: {plan.memories}, not ready: {plan.not_ready}",
    ]
    if plan.reset_reason:
        lines.append(
            f"to do: reset ({plan.reset_reason}), then re-embed all {plan.memories} memories "
            "and rebuild the HNSW indexes"
        )
    elif plan.resuming:
        lines.append(
            f"to do: resume: re-embed the {plan.not_ready} memories not ready, then rebuild "
            "the HNSW indexes"
        )
    else:
        lines.append("to do: nothing, the column holds the target")
        if plan.recorded is None:
            lines.append(
                f"(no rebuild has recorded which model made the stored vectors: taken to be "
                f"{plan.target.model_id}; if another model of the same dimension made them, "
                "run with --force-reembed)"
            )
    return "\n".join(lines)


class ProgressLine:
    """`12,800/40,000 (32%) 410/s ETA 0:01:06`, redrawn in place on a terminal; on anything
    else (a log file) one line every PLAIN_INTERVAL seconds."""

    PLAIN_INTERVAL = 10.0

    def __init__(self, stream) -> None:
        self.stream = stream
        self.interactive = stream.isatty()
        self.drawn = False
        self.begin()

    def update(self, progress: RebuildProgress) -> None:
        now = time.monotonic()
        elapsed = max(now - self.started, 1e-9)
        rate = progress.done / elapsed
        remaining = (progress.total - progress.done) / rate if rate else 0
        share = progress.done / progress.total if progress.total else 1
        line = (
            f"{progress.done:,}/{progress.total:,} ({share:.0%}) {rate:,.0f}/s "
            f"ETA {timedelta(seconds=round(remaining))}"
        )
        if self.interactive:
            self.stream.write(f"\r{line}\x1b[K", style_func=plain, ending="")
            self.stream.flush()
            self.drawn = True
        elif now - self.last_line >= self.PLAIN_INTERVAL or progress.done == progress.total:
            self.stream.write(line, style_func=plain)
            self.last_line = now

    def begin(self) -> None:
        """End the line drawn so far, if any; the rate counts from now (each phase)."""
        if self.drawn:
            self.stream.write("")
        self.drawn = False
        self.started = time.monotonic()
        self.last_line = 0.0


def plain(text: str) -> str:
    """Progress is not an error: no red (Django styles stderr as errors)."""
    return text
