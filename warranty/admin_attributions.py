"""Admin of failure attributions (issue #29, item 1), for PMs: the rules' proposals, read only, with the
PM's word on the change page: confirm the cause, or correct it with a note. Either goes through
`warranty.services.attribution.attribution_confirm` (audited, row-locked), as the API's
`POST /api/v1/warranty/attributions/{id}/attribute/` does; a row is never saved raw. The rows are made by
the rules (on ingest, claim and blacklisting); nothing is added here. Registered by warranty/admin.py,
which imports this module.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from builds.models import Connector
from inventory.models import Component
from warranty.choices import FailureCause
from warranty.models import Attribution
from warranty.services.attribution import attribution_confirm
from werkbank.admin import PMAdmin, admin_link, audit_timeline, badge


class AttributionDecisionForm(forms.ModelForm):
    """The PM's decision; the inputs are named apart from the read-only columns they fill."""

    decided_cause = forms.ChoiceField(
        choices=[("", "—"), *FailureCause.choices],
        required=False,
        label="Cause",
        help_text="The same cause confirms it; another corrects it (a note is required).",
    )
    blamed_component = forms.ModelChoiceField(
        queryset=Component.objects.none(),
        required=False,
        label="Component",
        help_text="For a component cause (default: the one named).",
    )
    blamed_connector = forms.ModelChoiceField(
        queryset=Connector.objects.none(),
        required=False,
        label="Connector",
        help_text="For a connector cause (default: the one named).",
    )
    decision_note = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Note",
        help_text="Why it is corrected.",
    )

    class Meta:
        model = Attribution
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        server_id = self.instance.server_id
        components: Any = self.fields["blamed_component"]
        components.queryset = (
            Component.objects.filter(installations__server_id=server_id).select_related("part").distinct()
        )
        connectors: Any = self.fields["blamed_connector"]
        connectors.queryset = Connector.objects.filter(server_id=server_id).select_related("server")


@admin.register(Attribution)
class AttributionAdmin(PMAdmin):
    form = AttributionDecisionForm
    # What fits 1,400 px: the proposal and the confirmation are filters and on the change page.
    list_display = [
        "occurred_at", "server", "stage", "source", "cause_badge", "component_link", "connector_name",
    ]  # fmt: skip
    list_filter = ["stage", "cause", "proposed_cause", ("confirmed_at", admin.EmptyFieldListFilter)]
    list_select_related = [
        "server", "finding", "claim", "blacklist__connector", "component", "connector__server",
    ]  # fmt: skip
    search_fields = [
        "component__serial",
        "connector__name",
        "finding__code",
        "claim__number",
        "server__hostname",
    ]
    show_full_result_count = False
    readonly_fields = [
        "server", "stage", "occurred_at", "source", "proposed_cause", "proposed_reason", "cause",
        "component_link", "connector", "confirmed_by", "confirmed_at", "note", "created_at", "timeline",
    ]  # fmt: skip
    decision_fields = ["decided_cause", "blamed_component", "blamed_connector", "decision_note"]

    def get_queryset(self, request: HttpRequest) -> Any:
        # The change page's read-only columns name the server, the connector (with its server), the source.
        return (
            super()
            .get_queryset(request)
            .select_related(
                "server", "finding", "claim", "blacklist__connector", "component", "connector__server",
                "confirmed_by",
            )
        )  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made by the rules, from a finding, a claim or a blacklisting

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return list(self.readonly_fields)
        return [*self.readonly_fields, *self.decision_fields]

    @admin.display(description="Source")
    def source(self, obj: Attribution) -> str:
        if obj.finding is not None:
            return f"{obj.finding.code} ({obj.finding.subject}, run {obj.finding.run_id})"
        if obj.claim is not None:
            return f"claim {obj.claim.number}"
        return f"blacklisted {obj.blacklist.connector.name}" if obj.blacklist is not None else "—"

    @admin.display(description="Connector", ordering="connector__name")
    def connector_name(self, obj: Attribution) -> str:
        return obj.connector.name if obj.connector is not None else "—"

    @admin.display(description="Component", ordering="component__serial")
    def component_link(self, obj: Attribution) -> str:
        return admin_link(obj.component, obj.component.serial) if obj.component is not None else "—"

    @admin.display(description="Cause", ordering="cause")
    def cause_badge(self, obj: Attribution) -> str:
        return badge(obj.cause, obj.get_cause_display())

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Attribution) -> str:
        return audit_timeline(obj)

    def save_model(self, request: HttpRequest, obj: Attribution, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if not data.get("decided_cause"):
            return  # nothing decided: nothing written
        attribution_confirm(
            attribution=obj,
            actor=request.user,
            cause=data["decided_cause"],
            component=data.get("blamed_component"),
            connector=data.get("blamed_connector"),
            note=data.get("decision_note", ""),
        )

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # the service wrote everything
