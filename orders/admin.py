"""Admin of the orders app. Status is read-only; transitions are actions that call the services."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from orders.choices import REASON_REQUIRED, OrderStatus
from orders.models import (
    ROI_INPUT_FIELDS,
    WORKLOAD_FIELDS,
    ConfigurationLine,
    Order,
    ROIAssessment,
    ServerConfiguration,
    Workload,
)
from orders.selectors import ROI_OUTPUT_LABELS, order_gate_report, transition_checks
from orders.services import (
    TRANSITION_SERVICES,
    configuration_create,
    configuration_update,
    order_create,
    order_update,
    roi_assess,
    workload_set,
)
from werkbank.access import is_pm
from werkbank.admin import PMAdmin, audit_timeline

CONFIGURATION_FIELDS = ("name", "description", "psu_count", "psu_rating_w", "psu_redundant")


class ConfigurationLineInline(admin.TabularInline):
    model = ConfigurationLine
    extra = 1
    fields = ["part", "quantity"]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_pm(request.user)

    has_add_permission = has_change_permission = has_delete_permission = has_view_permission


@admin.register(ServerConfiguration)
class ServerConfigurationAdmin(PMAdmin):
    list_display = ["name", "psu_count", "psu_rating_w", "psu_redundant", "usable_psu_w"]
    search_fields = ["name", "description"]
    inlines = [ConfigurationLineInline]
    readonly_fields = ["timeline"]

    @admin.display(description="Audit timeline")
    def timeline(self, obj: ServerConfiguration) -> str:
        return audit_timeline(obj) if obj.pk else "—"

    def save_model(self, request: HttpRequest, obj: ServerConfiguration, form: Any, change: bool) -> None:
        # Written in save_related, where the bill of materials from the inline is known: one service call.
        pass

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        for formset in formsets:
            formset.save(commit=False)  # writes nothing; the admin's change message needs what it sorts out
        lines = [
            (line_form.cleaned_data["part"], line_form.cleaned_data["quantity"])
            for formset in formsets
            for line_form in formset.forms
            if getattr(line_form, "cleaned_data", None)
            and line_form.cleaned_data.get("part")
            and not line_form.cleaned_data.get("DELETE")
        ]
        if change:
            configuration_update(
                configuration=form.instance, actor=request.user, lines=lines, **self.changed_values(form)
            )
        else:
            created = configuration_create(
                actor=request.user,
                lines=lines,
                **{key: form.cleaned_data[key] for key in CONFIGURATION_FIELDS},
            )
            form.instance.pk = created.pk


def _labelled_checks(order: Order, *, action: str | None = None) -> list[dict[str, Any]]:
    """The order's transition checks, with readable labels, optionally of one action only."""
    return [
        {
            **asdict(check),
            "label": check.action.replace("_", " "),
            "target_label": OrderStatus(check.target).label,
        }
        for check in transition_checks(order=order)
        if action is None or check.action == action
    ]


def _transition_admin_action(name: str) -> Any:
    """An admin action that asks for a note (or the required reason) and calls the transition service."""
    service = TRANSITION_SERVICES[name]
    needs_reason = name in REASON_REQUIRED
    label = name.replace("_", " ")

    def run(modeladmin: OrderAdmin, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        text = request.POST.get("transition_text", "").strip()
        if "apply" not in request.POST or (needs_reason and not text):
            return TemplateResponse(
                request,
                "admin/orders/order/transition.html",
                {
                    **modeladmin.admin_site.each_context(request),
                    "title": f"{label.capitalize()} orders",
                    "orders": queryset,
                    "rows": [(order, _labelled_checks(order, action=name)) for order in queryset],
                    "action": request.POST.get("action"),
                    "needs_reason": needs_reason,
                    "offers_override": name == "approve",
                    "missing_reason": "apply" in request.POST and needs_reason and not text,
                    "label": label,
                    "opts": modeladmin.model._meta,
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )
        kwargs: dict[str, str] = {"reason": text} if needs_reason else {"note": text}
        if name == "approve":
            kwargs["override_reason"] = request.POST.get("override_reason", "").strip()
        modeladmin.run_for_each(
            request,
            queryset,
            lambda order: service(order=order, actor=request.user, **kwargs),
            f"{label} done",
        )
        return None

    run.__name__ = f"action_{name}"
    return admin.action(description=f"{label.capitalize()} selected orders")(run)


@admin.register(Order)
class OrderAdmin(PMAdmin):
    list_display = [
        "reference",
        "customer",
        "configuration",
        "server_count",
        "warranty_months",
        "status",
        "created_at",
    ]
    list_filter = ["status", "warranty_months", "customer", "configuration"]
    search_fields = ["reference", "customer__name", "configuration__name"]
    list_select_related = ["customer", "configuration"]
    date_hierarchy = "created_at"
    readonly_fields = [
        "reference",
        "status",
        "approval_override_reason",
        "created_by",
        "created_at",
        "updated_at",
        "gate",
        "next_steps",
        "timeline",
    ]
    fields = [
        "reference",
        "status",
        "customer",
        "configuration",
        "server_count",
        "warranty_months",
        "notes",
        "circuit_v",
        "circuit_a",
        "circuit_phases",
        "approval_override_reason",
        "next_steps",
        "gate",
        "created_by",
        "created_at",
        "updated_at",
        "timeline",
    ]
    actions = [_transition_admin_action(name) for name in TRANSITION_SERVICES]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        if "customer" in form.base_fields:
            form.base_fields["customer"].queryset = form.base_fields["customer"].queryset.filter(
                kind="customer"
            )
        return form

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Order) -> str:
        return audit_timeline(obj) if obj.pk else "—"

    @admin.display(description="Next steps")
    def next_steps(self, obj: Order) -> str:
        if not obj.pk:
            return "—"
        return render_to_string(
            "orders/_transition_checks.html", {"order": obj, "checks": _labelled_checks(obj)}
        )

    @admin.display(description="Approval gate")
    def gate(self, obj: Order) -> str:
        if not obj.pk:
            return "—"
        panel = render_to_string("orders/_gate_report.html", order_gate_report(order=obj))
        link = format_html(
            '<p><a href="{}">Cash-flow chart and figures</a></p>', reverse("pm:order-roi", args=[obj.pk])
        )
        return mark_safe(link + panel)

    def save_model(self, request: HttpRequest, obj: Order, form: Any, change: bool) -> None:
        if change:
            order_update(order=obj, actor=request.user, **self.changed_values(form))
        else:
            data = form.cleaned_data
            created = order_create(
                actor=request.user,
                customer=data["customer"],
                configuration=data["configuration"],
                server_count=data["server_count"],
                warranty_months=data["warranty_months"],
                notes=data.get("notes", ""),
                circuit_v=data.get("circuit_v"),
                circuit_a=data.get("circuit_a"),
                circuit_phases=data.get("circuit_phases") or 1,
            )
            obj.pk, obj.reference, obj.status = created.pk, created.reference, OrderStatus(created.status)


@admin.register(ROIAssessment)
class ROIAssessmentAdmin(PMAdmin):
    """ROI versions. Adding one computes and saves the next version; saved versions never change."""

    list_display = [
        "order",
        "version",
        "currency",
        "capex",
        "net_month",
        "payback_months",
        "npv",
        "created_at",
    ]
    list_filter = ["currency"]
    search_fields = ["order__reference"]
    list_select_related = ["order"]
    fields = ["order", "currency", *ROI_INPUT_FIELDS, "note"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return []
        return [*self.fields, "version", *(key for key, _label in ROI_OUTPUT_LABELS)]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return list(self.fields)
        return ["version", *self.fields, *(key for key, _label in ROI_OUTPUT_LABELS)]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ROIAssessment, form: Any, change: bool) -> None:
        data = dict(form.cleaned_data)
        order = data.pop("order")
        created = roi_assess(
            order=order,
            actor=request.user,
            currency=data.pop("currency"),
            note=data.pop("note", ""),
            **{key: value for key, value in data.items() if value is not None},
        )
        obj.pk, obj.version = created.pk, created.version


@admin.register(Workload)
class WorkloadAdmin(PMAdmin):
    """The customer's workload per order; saving recomputes nothing stored, the sizing is always derived."""

    list_display = ["order", "preset", "weights_dtype", "kv_dtype", "context_tokens", "concurrency"]
    list_filter = ["preset", "weights_dtype"]
    search_fields = ["order__reference"]
    fields = ["order", *WORKLOAD_FIELDS]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["order"] if obj else []

    def save_model(self, request: HttpRequest, obj: Workload, form: Any, change: bool) -> None:
        data = {key: form.cleaned_data.get(key) for key in WORKLOAD_FIELDS}
        saved = workload_set(order=form.cleaned_data.get("order") or obj.order, actor=request.user, **data)
        obj.pk = saved.pk
