"""The Core Safety Contract's versions; a new version is made through the service
(`safety_contract_update`), from a form that starts from the current one."""

from collections.abc import Callable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.admin_base import ReadOnlyAdmin, staff_caller
from core.errors import DomainError
from core.validation import bigint_id
from evolution.models import Agent, SafetyContract
from evolution.selectors import safety_contract_current
from evolution.services import safety_contract_update


def lines_of(text: str) -> list[str]:
    """One item per non-blank line, without the whitespace around it."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def items_html(items: list[str]) -> str:
    if not items:
        return "–"
    return format_html(
        "<ol>{}</ol>", format_html_join("", "<li><code>{}</code></li>", ((i,) for i in items))
    )


def items_field(name: str, description: str) -> Callable[[admin.ModelAdmin, SafetyContract], str]:
    """A read-only field showing the contract's list `name` as a numbered list: the four lists
    are shown alike."""

    @admin.display(description=description)
    def field(model_admin: admin.ModelAdmin, obj: SafetyContract) -> str:
        return items_html(getattr(obj, name) or [])

    return field


class SafetyContractForm(forms.Form):
    agent = forms.ModelChoiceField(
        queryset=Agent.objects.order_by("id"),
        help_text="Whose contract: the staff additions below join what its SOUL states.",
    )
    anchors = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "cols": 100}),
        required=False,
        help_text="One anchor per line: a phrase every SOUL version must keep (case-insensitive).",
    )
    constraints = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "cols": 100}),
        required=False,
        help_text=(
            "One regular expression per line (case-insensitive, multi-line): a pattern no SOUL "
            "version may match. Whitespace at either end of a line is dropped."
        ),
    )


@admin.register(SafetyContract)
class SafetyContractAdmin(ReadOnlyAdmin):
    """The contract's versions, read-only; "Add" makes the next version through the service
    (`evolution.add_safetycontract`)."""

    list_display = [
        "version",
        "agent",
        "anchors_count",
        "constraints_count",
        "hash_prefix",
        "created_by",
        "created_at",
    ]
    list_filter = ["agent"]
    list_select_related = ["agent"]
    ordering = ["agent", "-version"]
    sortable_by = ["version", "created_at"]
    fields = [
        "agent",
        "version",
        "content_hash",
        "source_hash",
        "created_by",
        "created_at",
        "extracted_anchors_list",
        "extracted_constraints_list",
        "anchors_list",
        "constraints_list",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return admin.ModelAdmin.has_add_permission(self, request)

    @admin.display(description="anchors")
    def anchors_count(self, obj: SafetyContract) -> int:
        return len(obj.anchors or []) + len(obj.extracted_anchors or [])

    @admin.display(description="constraints")
    def constraints_count(self, obj: SafetyContract) -> int:
        return len(obj.constraints or []) + len(obj.extracted_constraints or [])

    @admin.display(description="hash")
    def hash_prefix(self, obj: SafetyContract) -> str:
        return obj.content_hash[:12]

    extracted_anchors_list = items_field(
        "extracted_anchors", "anchors from the SOUL (every later SOUL must keep)"
    )
    extracted_constraints_list = items_field(
        "extracted_constraints", "constraints from the SOUL (every later SOUL must keep stating)"
    )
    anchors_list = items_field("anchors", "staff anchors (every SOUL must keep)")
    constraints_list = items_field("constraints", "staff constraints (patterns no SOUL may match)")

    def add_view(self, request, form_url="", extra_context=None):
        """A new contract version of an agent: the form starts from the contract named by
        `?from=<id>` (or the first agent's current one) and is saved through
        `safety_contract_update`."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        current = None
        if request.method == "POST":
            form = SafetyContractForm(request.POST)
            if form.is_valid():
                current = safety_contract_current(agent=form.cleaned_data["agent"])
                created = self.create_contract(request, form)
                if created is not None:
                    messages.success(
                        request,
                        f"Created safety contract v{created.version}; evaluations use it now.",
                    )
                    return HttpResponseRedirect(
                        reverse("admin:evolution_safetycontract_change", args=[created.pk])
                    )
        else:
            start = None
            if (start_id := bigint_id(request.GET.get("from", ""))) is not None:
                start = SafetyContract.objects.filter(pk=start_id).first()
            first_agent = Agent.objects.order_by("id").first()
            if start is None and first_agent is not None:
                start = safety_contract_current(agent=first_agent)
            initial = {"agent": start.agent if start else first_agent}
            if start is not None:
                current = safety_contract_current(agent=start.agent)
                initial |= {
                    "anchors": "\n".join(start.anchors or []),
                    "constraints": "\n".join(start.constraints or []),
                }
            form = SafetyContractForm(initial=initial)
        return TemplateResponse(
            request,
            "admin/evolution/safetycontract/add_form.html",
            {
                **self.admin_site.each_context(request),
                **(extra_context or {}),
                "title": "New safety contract version",
                "opts": self.opts,
                "form": form,
                "current": current,
                "next_version": (current.version if current else 0) + 1,
            },
        )

    def create_contract(self, request: HttpRequest, form: SafetyContractForm):
        anchors = lines_of(form.cleaned_data["anchors"])
        constraints = lines_of(form.cleaned_data["constraints"])
        try:
            with transaction.atomic():
                created = safety_contract_update(
                    agent=form.cleaned_data["agent"],
                    caller=staff_caller(request),
                    anchors=anchors,
                    constraints=constraints,
                )
                self.log_addition(request, created, f"Created safety contract v{created.version}")
        except DomainError as error:
            name, _, index = (error.field or "").partition("[")
            if name in form.fields:
                message = error.message
                if index.rstrip("]").isdigit():
                    items = anchors if name == "anchors" else constraints
                    number = int(index.rstrip("]"))
                    message = f"Line {number + 1} ({items[number]!r}): {message}"
                form.add_error(name, message)
            else:
                form.add_error(None, error.message)
            return None
        return created

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        if self.has_add_permission(request):
            extra_context["new_version_url"] = (
                reverse("admin:evolution_safetycontract_add") + f"?from={unquote(object_id)}"
            )
        return super().change_view(request, object_id, form_url, extra_context)
