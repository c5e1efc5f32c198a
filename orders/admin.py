"""Admin of the orders app. Status is read-only; transitions are actions that call the services."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from inventory.admin import PurchaseOrderAdmin as InventoryPurchaseOrderAdmin
from inventory.models import PurchaseOrder
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
    roi_preview,
    workload_set,
)
from werkbank.access import is_pm
from werkbank.admin import PMAdmin, SharedChoicesInline, admin_link, audit_timeline, badge, day, shortened
from werkbank.errors import InvalidInput

CONFIGURATION_FIELDS = ("name", "description", "psu_count", "psu_rating_w", "psu_redundant", "burnin_hours")


class ConfigurationLineInline(SharedChoicesInline):
    model = ConfigurationLine
    extra = 1
    fields = ["part", "quantity"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("part")

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
    """Orders: created and edited through the services; transitions are list actions that ask for a note.

    The builds app adds the servers' progress (builds/admin.py), which this app cannot see.
    """

    list_display = [
        "reference",
        "customer_link",
        "configuration_name",
        "status_badge",
        "created",
    ]
    list_filter = ["status", "warranty_months", "customer", "configuration"]
    search_fields = ["reference", "customer__name", "configuration__name"]
    list_select_related = ["customer", "configuration"]
    date_hierarchy = "created_at"
    readonly_fields = [
        "reference",
        "status_badge",
        "approval_override_reason",
        "created_by",
        "created_at",
        "updated_at",
        "gate",
        "next_steps",
        "purchase_orders",
        "timeline",
    ]
    fields = [
        "reference",
        "status_badge",
        "customer",
        "configuration",
        "server_count",
        "warranty_months",
        "burnin_hours",
        "notes",
        "circuit_v",
        "circuit_a",
        "circuit_phases",
        "approval_override_reason",
        "next_steps",
        "purchase_orders",
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

    @admin.display(description="Customer", ordering="customer__name")
    def customer_link(self, obj: Order) -> str:
        return admin_link(obj.customer, shortened(obj.customer.name, 24))

    @admin.display(description="Configuration", ordering="configuration__name")
    def configuration_name(self, obj: Order) -> str:
        return shortened(obj.configuration.name, 24)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: Order) -> str:
        return badge(obj.status, obj.get_status_display())

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: Order) -> str:
        return day(obj.created_at)

    @admin.display(description="Purchase orders")
    def purchase_orders(self, obj: Order) -> str:
        if not obj.pk:
            return "—"
        links = obj.purchase_order_links.select_related("purchase_order__supplier").order_by("pk")
        rows = format_html_join(
            "",
            "<div>{} · {} · {}</div>",
            (
                (
                    admin_link(link.purchase_order, link.purchase_order.number),
                    link.purchase_order.supplier.name,
                    badge(link.purchase_order.status, link.purchase_order.get_status_display()),
                )
                for link in links
            ),
        )
        return rows or "none yet (procurement drafts them)"

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Order) -> str:
        return audit_timeline(obj) if obj.pk else "—"

    @admin.display(description="Next steps")
    def next_steps(self, obj: Order) -> str:
        if not obj.pk:
            return "—"
        # The order page carries the transitions as buttons, each with its checks and a note.
        link = format_html(
            '<p><a href="{}" id="order-page-link">{}</a></p>',
            reverse("pm:order", args=[obj.pk]),
            "Order page: transitions, servers, purchase orders, lots",
        )
        checks = render_to_string(
            "orders/_transition_checks.html", {"order": obj, "checks": _labelled_checks(obj)}
        )
        return mark_safe(link + checks)

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
                burnin_hours=data.get("burnin_hours") or 72,
            )
            obj.pk, obj.reference, obj.status = created.pk, created.reference, OrderStatus(created.status)


def _never(value: float | None) -> bool:
    """No figure: the formulas give None, or an infinite payback for a server that never pays back."""
    return value is None or (isinstance(value, float) and (math.isinf(value) or math.isnan(value)))


def _figure(key: str, value: float | None, currency: str) -> str:
    """One ROI output as a PM reads it: money with its currency, shares in per cent, months, or "never"."""
    if value is None or _never(value):
        return "never" if key == "payback_months" else "—"
    if key == "hours_per_month":
        return f"{value:,.0f} h"
    if key == "payback_months":
        return f"{value:,.1f} months"
    if key == "irr_annual" or "utilization" in key:
        return f"{value * 100:,.1f} %"
    return f"{value:,.2f} {currency}"


@admin.register(ROIAssessment)
class ROIAssessmentAdmin(PMAdmin):
    """ROI versions. Adding one computes and saves the next version; saved versions never change.

    The add form previews the result as the PM types: roi_preview.js posts the inputs to `preview_view`,
    which computes them with the same service (`roi_preview`, orders.formulas) that saves them.
    """

    list_display = [
        "order_link",
        "version",
        "capex_money",
        "net_month_money",
        "payback",
        "npv_money",
        "created",
    ]
    list_filter = ["currency"]
    search_fields = ["order__reference", "order__customer__name"]
    list_select_related = ["order"]
    fields = ["order", "currency", *ROI_INPUT_FIELDS, "note"]

    class Media:
        js = ["orders/admin/roi_preview.js"]

    def get_urls(self) -> list[URLPattern]:
        preview = path(
            "preview/",
            self.admin_site.admin_view(self.preview_view),
            name="orders_roiassessment_preview",
        )
        return [preview, *super().get_urls()]

    def preview_view(self, request: HttpRequest) -> JsonResponse:
        """The ROI of the form's values as JSON, saving nothing; a bad value is a 400 naming its field."""
        if not is_pm(request.user):
            return JsonResponse({"error": "Only project managers compute ROI previews."}, status=403)
        if request.method != "POST":
            return JsonResponse({"error": "POST the form's values."}, status=405)
        form_fields = self.get_form(request, None).base_fields
        values: dict[str, Any] = {}
        for name in ROI_INPUT_FIELDS:
            field = form_fields[name]
            try:
                value = field.clean(request.POST.get(name, ""))
                ROIAssessment._meta.get_field(name).run_validators(value)
            except ValidationError as exc:
                # "required" lets the page say what is still to fill in rather than flag an error.
                code = next((error.code for error in exc.error_list if error.code), "invalid")
                return JsonResponse(
                    {
                        "field": name,
                        "label": str(field.label),
                        "message": " ".join(exc.messages),
                        "code": code,
                    },
                    status=400,
                )
            if value is not None:
                values[name] = value
        try:
            result = roi_preview(**values)
        except InvalidInput as exc:
            label = form_fields[exc.field].label if exc.field in form_fields else exc.field
            return JsonResponse(
                {"field": exc.field, "label": str(label), "message": exc.field_message}, status=400
            )
        currency = (request.POST.get("currency") or "EUR").strip().upper()[:3]
        figures = {key: getattr(result, key) for key, _label in ROI_OUTPUT_LABELS}
        return JsonResponse(
            {
                "currency": currency,
                "pays_back": result.pays_back,
                "meets_target": result.meets_target,
                "target_payback_months": settings.WERKBANK_PAYBACK_TARGET_MONTHS,
                "values": {
                    key: None if value is None or math.isinf(value) else value
                    for key, value in figures.items()
                },
                "rows": [
                    {"key": key, "label": label, "text": _figure(key, figures[key], currency)}
                    for key, label in ROI_OUTPUT_LABELS
                ],
            }
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return ["preview"]
        return [*self.fields, "version", *(key for key, _label in ROI_OUTPUT_LABELS)]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return [*self.fields, "preview"]
        return ["version", *self.fields, *(key for key, _label in ROI_OUTPUT_LABELS)]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Result (live preview)")
    def preview(self, obj: ROIAssessment) -> str:
        return format_html(
            '<div id="roi-preview" data-url="{}" aria-live="polite"><p class="wb-muted">Fill in the inputs: '
            "the payback, NPV, monthly net and break-even utilisation appear here as you type. Nothing is "
            "saved until you press Save.</p></div>",
            reverse("admin:orders_roiassessment_preview"),
        )

    @admin.display(description="Order", ordering="order__reference")
    def order_link(self, obj: ROIAssessment) -> str:
        return admin_link(obj.order, obj.order.reference)

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: ROIAssessment) -> str:
        return day(obj.created_at)

    @admin.display(description="Capex", ordering="capex")
    def capex_money(self, obj: ROIAssessment) -> str:
        return f"{obj.capex:,.2f} {obj.currency}"

    @admin.display(description="Net per month", ordering="net_month")
    def net_month_money(self, obj: ROIAssessment) -> str:
        return f"{obj.net_month:,.2f} {obj.currency}"

    @admin.display(description="Payback", ordering="payback_months")
    def payback(self, obj: ROIAssessment) -> str:
        return "never" if obj.payback_months is None else f"{obj.payback_months:,.1f} months"

    @admin.display(description="NPV", ordering="npv")
    def npv_money(self, obj: ROIAssessment) -> str:
        return f"{obj.npv:,.2f} {obj.currency}"

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

    list_display = ["order_link", "preset", "weights_dtype", "kv_dtype", "context_tokens", "concurrency"]
    list_filter = ["preset", "weights_dtype"]
    search_fields = ["order__reference"]
    list_select_related = ["order"]
    fields = ["order", *WORKLOAD_FIELDS]

    @admin.display(description="Order", ordering="order__reference")
    def order_link(self, obj: Workload) -> str:
        return admin_link(obj.order, obj.order.reference)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["order"] if obj else []

    def save_model(self, request: HttpRequest, obj: Workload, form: Any, change: bool) -> None:
        data = {key: form.cleaned_data.get(key) for key in WORKLOAD_FIELDS}
        saved = workload_set(order=form.cleaned_data.get("order") or obj.order, actor=request.user, **data)
        obj.pk = saved.pk


# --- purchase orders: inventory's admin, with the order each one serves ---------------------------------
# Inventory knows nothing of orders (DESIGN.md): the link PO → order is this app's, so this app re-registers
# inventory's admin with the order's column, its search and its link on the change page.

admin.site.unregister(PurchaseOrder)


@admin.register(PurchaseOrder)
class PurchaseOrderAdmin(InventoryPurchaseOrderAdmin):
    """Inventory's purchase order admin, plus the order it serves (a column, a search, a link)."""

    list_display = [
        *InventoryPurchaseOrderAdmin.list_display[:2],
        "order",
        *InventoryPurchaseOrderAdmin.list_display[2:],
    ]
    search_fields = [*InventoryPurchaseOrderAdmin.search_fields, "order_link__order__reference"]
    list_select_related = [*InventoryPurchaseOrderAdmin.list_select_related, "order_link__order"]
    links = ["order", *InventoryPurchaseOrderAdmin.links]

    @admin.display(description="Order", ordering="order_link__order__reference")
    def order(self, obj: PurchaseOrder) -> str:
        link = getattr(obj, "order_link", None)
        return admin_link(link.order, link.order.reference) if link else "—"
