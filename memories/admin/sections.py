"""Sections other apps add to a memory's page, so that memories never imports them: the
reflection admin registers a trait's evidence and the traits citing a memory.

A section is a template included below the memory's own sections, with `section` (what the
provider answered) in its context; a provider answers None to show nothing."""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest

from memories.models import Memory

# (template, provider): the provider answers the section's context, or None for no section.
SectionProvider = Callable[[HttpRequest, Memory], Any]
MEMORY_PAGE_SECTIONS: list[tuple[str, SectionProvider]] = []


def memory_page_section(template: str) -> Callable[[SectionProvider], SectionProvider]:
    """Register the decorated provider's section (shown with `template`), in order, below
    every memory's page."""

    def register(provider: SectionProvider) -> SectionProvider:
        MEMORY_PAGE_SECTIONS.append((template, provider))
        return provider

    return register


def memory_page_sections(request: HttpRequest, memory: Memory) -> list[tuple[str, Any]]:
    """The registered sections this memory has: (template, section)."""
    shown = ((template, provider(request, memory)) for template, provider in MEMORY_PAGE_SECTIONS)
    return [(template, section) for template, section in shown if section is not None]
