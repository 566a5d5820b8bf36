"""Staff views of memories and conversations.

Nothing here is edited in place. Staff change a memory only through the services the API
uses (supersede with new content, invalidate, soft delete), each from the memory's page on a
confirmation page that asks for a reason. They act as `staff:<username>`, the actor the audit
trigger records; each action also writes an admin LogEntry (where the reason is kept) and
needs `memories.change_memory`. Forgetting a memory (erasing it on request, as an end user may
ask) is the purge's permission, `memories.purge_end_user`: a dry run first, then the forget
(neuromem_site.backoffice.views). A forgotten memory shows when and on whose request, never
what it said; its forget request has a read-only page here.

The lists run over a million rows: no exact count of a big list (EstimatedCountPaginator), no
facet counts, sorting by indexed columns only, the user filter is an exact match typed in
(never a list of distinct users), and search uses the full-text column or exact ids, never
ILIKE. Migration 0012 holds the indexes the lists and filters read.

Other apps add sections to a memory's page through `sections.memory_page_section` (the
reflection admin: a trait's evidence, the traits citing a memory): memories imports none of
them.

Modules: `memory` (the memory admin and its actions, with `actions`), `conversations`,
`forget_requests`, `graph` (entities and their edges over time); `filters` (list filters and
search), `display` (URLs and blocks).
"""

# Imported for their registrations: admin.autodiscover imports this package only.
from memories.admin import conversations, forget_requests, graph, memory

__all__ = ["conversations", "forget_requests", "graph", "memory"]
