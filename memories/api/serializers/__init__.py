"""The memory API's serializers, by subject: `memories` (writes, lookups, filters, links, the
memory itself), `recall` (recall and search) and `users` (sessions, messages, forgetting).
Import them from their module."""

# The settings' ENUM_NAME_OVERRIDES name it by this path.
from memories.api.serializers.memories import MEMORY_TYPE_CHOICES

__all__ = ["MEMORY_TYPE_CHOICES"]
