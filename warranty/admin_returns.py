"""Admin of supplier returns (issue #29), for PMs: read only, with the next step on the change page (ship
with the supplier's RMA number, or close with the outcome), through `warranty.services.supplier_returns`
as the API does. A return is opened through the API (`/api/v1/warranty/supplier-returns/`). Registered
by warranty/admin.py, which imports this module.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from warranty.choices import SupplierReturnOutcome, SupplierReturnStatus
from warranty.models import SupplierReturn
from warranty.services.supplier_returns import supplier_return_close, supplier_return_ship
from werkbank.admin import PMAdmin, admin_link, audit_timeline, badge


class SupplierReturnStepForm(forms.ModelForm):
    """The next step of an open or shipped return; the fields of the other step are ignored. The inputs
    are named apart from the read-only columns they fill (rma_number → supplier_rma_number, …)."""

    step = forms.ChoiceField(choices=[("", "—")], required=False)
    rma_number = forms.CharField(
        required=False, max_length=64, label="Supplier's RMA number", help_text="To ship."
    )
    answer = forms.ChoiceField(
        choices=[("", "—"), *SupplierReturnOutcome.choices], required=False, label="Outcome"
    )
    note = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="Required for refused."
    )
    replacement_serial = forms.CharField(required=False, max_length=64)
    lot_code = forms.CharField(
        required=False, max_length=64, help_text="Empty: the original's lot; else a lot on the same PO."
    )
    date_code = forms.CharField(required=False, max_length=16, help_text="For a new lot.")
    amount = forms.DecimalField(
        required=False, max_digits=12, decimal_places=2, label="Credit amount", help_text="For a credit."
    )

    class Meta:
        model = SupplierReturn
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        steps = {
            SupplierReturnStatus.OPEN: [("ship", "Ship to the supplier (give its RMA number)")],
            SupplierReturnStatus.SHIPPED: [("close", "Close with the supplier's answer")],
        }
        self.fields["step"].choices = [("", "—"), *steps.get(self.instance.status, [])]


@admin.register(SupplierReturn)
class SupplierReturnAdmin(PMAdmin):
    form = SupplierReturnStepForm
    # What fits 1,400 px: the dates are on the change page.
    list_display = ["number", "component_link", "supplier", "claim_link", "status_badge", "outcome"]
    list_filter = ["status", "outcome", "supplier"]
    list_select_related = ["component", "supplier", "claim"]
    search_fields = ["number", "component__serial", "supplier_rma_number", "claim__number"]
    show_full_result_count = False
    readonly_fields = [
        "number", "component_link", "supplier", "claim_link", "attribution", "status", "reason",
        "supplier_rma_number", "shipped_at", "closed_at", "outcome", "outcome_note", "credit_amount",
        "replacement_link", "created_by", "created_at", "timeline",
    ]  # fmt: skip
    step_fields = [
        "step",
        "rma_number",
        "answer",
        "note",
        "replacement_serial",
        "lot_code",
        "date_code",
        "amount",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # opened through the API, from a failed component

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None or obj.status == SupplierReturnStatus.CLOSED:
            return list(self.readonly_fields)
        return [*self.readonly_fields, *self.step_fields]

    @admin.display(description="Component", ordering="component__serial")
    def component_link(self, obj: SupplierReturn) -> str:
        return admin_link(obj.component, obj.component.serial)

    @admin.display(description="Claim", ordering="claim__number")
    def claim_link(self, obj: SupplierReturn) -> str:
        return admin_link(obj.claim, obj.claim.number) if obj.claim is not None else "—"

    @admin.display(description="Replacement")
    def replacement_link(self, obj: SupplierReturn) -> str:
        return admin_link(obj.replacement, obj.replacement.serial) if obj.replacement is not None else "—"

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: SupplierReturn) -> str:
        return badge(obj.status, obj.get_status_display())

    @admin.display(description="Audit timeline")
    def timeline(self, obj: SupplierReturn) -> str:
        return audit_timeline(obj)

    def save_model(self, request: HttpRequest, obj: SupplierReturn, form: Any, change: bool) -> None:
        data = form.cleaned_data
        if data.get("step") == "ship":
            supplier_return_ship(
                supplier_return=obj, actor=request.user, supplier_rma_number=data.get("rma_number", "")
            )
        elif data.get("step") == "close":
            supplier_return_close(
                supplier_return=obj,
                actor=request.user,
                outcome=data.get("answer") or "",
                note=data.get("note", ""),
                replacement_serial=data.get("replacement_serial", ""),
                lot_code=data.get("lot_code", ""),
                date_code=data.get("date_code", ""),
                credit_amount=data.get("amount"),
            )

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # the service wrote everything
