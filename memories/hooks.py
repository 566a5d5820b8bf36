"""What memories asks of the apps built on it, without importing them (tests/test_architecture.py:
memories never imports reflection). Reflection registers its part in its AppConfig.ready();
what memories only announces is in `memories.signals`."""

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from core.access import Caller
    from memories.models import Memory


class TraitBelief(Protocol):
    """How far a trait is still believed: its confidence decayed since it was last reinforced,
    and which traits recall and prompts use."""

    def decayed(self, trait: "Memory") -> float | None:
        """The trait's confidence decayed until now."""

    def decayed_sql(self, alias: str) -> str:
        """The SQL twin of `decayed` for the row `alias`, decayed until the parameter %(now)s;
        its other parameters come from `recall_params`."""

    def recall_params(self) -> dict[str, Any]:
        """The parameters `decayed_sql` names, and `min_trait_confidence`: the least decayed
        confidence a recalled trait keeps."""

    def believed(self, *, caller: "Caller", user_id: str) -> list["Memory"]:
        """The user's traits recall adds to its hits, most believed first, each with its
        `decayed_confidence`."""


_trait_belief: TraitBelief | None = None


def trait_belief_register(belief: TraitBelief) -> None:
    global _trait_belief
    _trait_belief = belief


def trait_belief() -> TraitBelief:
    if _trait_belief is None:
        raise RuntimeError("No trait belief registered: is the reflection app installed?")
    return _trait_belief


class EmbeddingColumnDependent(Protocol):
    """Something an app builds on the `memories.embedding` column (reflection's decay view
    carries the traits' vectors), which `manage.py embeddings_rebuild` drops and re-adds at
    another dimension and empties: taken down before, created again after, brought up to date
    once every memory is embedded again."""

    def drop(self) -> None:
        """Remove it, in the rebuild's transaction (the column cannot change under it)."""

    def create(self) -> None:
        """Create it again, in the same transaction, from the column as it now is."""

    def refresh(self) -> None:
        """Bring it up to date with the new vectors (outside any transaction)."""


_embedding_column_dependents: dict[str, EmbeddingColumnDependent] = {}


def embedding_column_dependent_register(name: str, dependent: EmbeddingColumnDependent) -> None:
    _embedding_column_dependents[name] = dependent


def embedding_column_dependents() -> list[EmbeddingColumnDependent]:
    """The registered dependents, in the order they registered (none without reflection)."""
    return list(_embedding_column_dependents.values())
