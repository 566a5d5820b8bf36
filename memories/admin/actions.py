"""What staff may do to a memory from its page, each on a confirmation page asking why:
supersede it with new content, invalidate it, soft delete it. The forms and the checks the
memory admin's action views share."""

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.conf import settings

from core.errors import Conflict
from memories.models import Memory
from memories.services import memory_delete, memory_invalidate

# What the admin's history keeps of a reason.
REASON_MAX_CHARS = 1000


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=REASON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="Why: kept in the admin's history of this memory, with your name.",
    )
    # The version the page showed: a change made since then refuses the action.
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    def __init__(self, data=None, *, memory: Memory):
        super().__init__(data, initial=self.initial_for(memory))
        self.memory = memory

    def initial_for(self, memory: Memory) -> dict:
        return {"version": memory.version}


class SupersedeForm(ReasonForm):
    content = forms.CharField(
        max_length=settings.MEMORY_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80}),
        help_text="The new version's content; this one is kept as the older version.",
    )
    field_order = ["content", "reason", "version"]

    def initial_for(self, memory: Memory) -> dict:
        return {**super().initial_for(memory), "content": memory.content}

    def clean_content(self) -> str:
        content = self.cleaned_data["content"]
        if content == self.memory.content:
            raise forms.ValidationError("The same content as now: nothing to supersede.")
        return content


def version_check(memory: Memory, expected: int) -> None:
    """After invalidate or delete (which bump the version by one and take no expected
    version): anything else means the row changed since the page showed `expected`, or the
    service found nothing current to change. Raising rolls the action back."""
    if memory.version != expected + 1:
        raise Conflict(
            "This memory changed since the page was shown (or is no longer current); "
            "nothing was changed. Reload it and try again.",
            field="version",
            current_version=memory.version,
        )


@dataclass(frozen=True)
class MemoryAction:
    title: str
    button: str
    explanation: str  # what it does
    form: type[ReasonForm]


MEMORY_ACTIONS = {
    "supersede": MemoryAction(
        "Supersede memory",
        "Supersede",
        "A new version with the content below becomes the current one; this one is kept, "
        "expired and pointing at it. Links follow the new version.",
        SupersedeForm,
    ),
    "invalidate": MemoryAction(
        "Invalidate memory",
        "Invalidate",
        "The fact stopped being true now: it leaves current reads and recall, and as of any "
        "later instant it is no longer seen. The row and its history stay.",
        ReasonForm,
    ),
    "soft_delete": MemoryAction(
        "Delete memory (soft)",
        "Delete",
        "A soft delete: recall and listings no longer see it; the row and its history stay "
        "(a hard delete is the end user's purge).",
        ReasonForm,
    ),
}


@dataclass(frozen=True)
class Retirement:
    """An action that takes a memory out of current reads, keeping the row and its history."""

    service: Callable[..., Memory]  # (memory=, caller=) → the row after
    logged: str  # the admin's history says this, then the reason
    done: str  # the success message


RETIREMENTS = {
    "invalidate": Retirement(
        memory_invalidate, "Invalidated", "Invalidated: it is no longer current."
    ),
    "soft_delete": Retirement(
        memory_delete, "Deleted (soft)", "Deleted (soft): recall no longer sees it."
    ),
}
