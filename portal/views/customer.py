"""Portal pages: a customer's orders, one order, one server, and the customer's API tokens.

The portal is for members of customer organizations (portal/customer.py has the rule of what they see).
Anonymous visitors go to the login page; PMs (who have the admin), assembly partners (who have the bench)
and users of no customer get a 404 on every page, as for another customer's order. Views are thin: reads
come from portal.selectors, token writes from werkbank.services; each page's rows are built here with
exactly the fields portal.customer.PAGE_FIELDS names.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from builds.choices import ServerStatus
from builds.models import Server
from burnin.health import health_history, health_panel
from orders.choices import OrderStatus
from orders.models import Order
from portal import selectors
from portal.customer import (
    BURNIN_RESULT_LABELS,
    EVENT_TEXTS,
    PART_CATEGORY_LABELS,
    SERVER_STAGES,
    SEVERITY_LABELS,
    SLOT_KIND_LABELS,
    order_stages,
    pager,
    row,
)
from portal.views.access import customer_required
from portal.views.credentials import bmc_context
from portal.views.documents import documents_context
from portal.views.income import income_row
from portal.views.warranty import warranty_context
from werkbank.choices import label_of
from werkbank.errors import DomainError
from werkbank.services import api_token_create, live_api_tokens
from werkbank.views import token_page_response, token_revoke_response

#: Orders per page of the order list.
ORDERS_PER_PAGE = 25
#: Servers per page of an order's server list (an order may have a fleet).
SERVERS_PER_PAGE = 50


def _server_rows(servers: Any) -> list[dict[str, Any]]:
    return [
        row(
            "order.server",
            id=server.pk,
            hostname=server.hostname,
            asset_tag=server.asset_tag,
            status=server.status,
            status_label=label_of(ServerStatus, server.status, server.status),
            url=reverse("portal:server", args=[server.pk]),
        )
        for server in servers
    ]


@customer_required
def orders_page(request: HttpRequest) -> HttpResponse:
    """The customer's orders, newest first: each with its stage, its servers by stage, its last change."""
    page = Paginator(selectors.customer_orders(request.user), ORDERS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    orders: list[Order] = list(page.object_list)
    ids = [order.pk for order in orders]
    by_stage = selectors.servers_by_stage(ids)
    changed = selectors.last_changes(ids)
    rows = [
        row(
            "orders.order",
            id=order.pk,
            reference=order.reference,
            configuration=order.configuration.name,
            server_count=order.server_count,
            status=order.status,
            status_label=label_of(OrderStatus, order.status, order.status),
            stages=order_stages(order.status),
            servers_by_stage=[
                {
                    "status": status,
                    "label": label_of(ServerStatus, status),
                    "count": by_stage[order.pk][status],
                }
                for status in SERVER_STAGES
                if by_stage[order.pk].get(status)
            ],
            last_change=changed.get(order.pk, order.created_at),
            url=reverse("portal:order", args=[order.pk]),
        )
        for order in orders
    ]
    return TemplateResponse(request, "portal/orders.html", {"pager": pager(page), "orders": rows})


def _business_case(order: Order) -> dict[str, Any] | None:
    case = selectors.business_case(order)
    if case is None:
        return None
    a = case["assessment"]
    return row(
        "order.business_case",
        version=a.version,
        currency=a.currency,
        capex=a.capex,
        gpu_count=a.gpu_count,
        price_per_gpu_hour=a.price_per_gpu_hour,
        utilization=a.utilization,
        net_month=a.net_month,
        payback_months=a.payback_months,
        target_payback_months=a.target_payback_months,
        horizon_months=a.horizon_months,
        npv=a.npv,
        breakeven_utilization_opex=a.breakeven_utilization_opex,
        breakeven_utilization_target=a.breakeven_utilization_target,
        buy_vs_rent_breakeven_utilization=a.buy_vs_rent_breakeven_utilization,
        rent_price_per_gpu_hour=a.rent_price_per_gpu_hour,
        hours_per_month=a.hours_per_month,
        breakeven_month=case["breakeven_month"],
        # Built with escape() from our own data (orders.charts).
        chart=mark_safe(case["chart"]),
    )


def _sizing(order: Order) -> dict[str, Any] | None:
    found = selectors.workload_sizing(order)
    if found is None or found["sizing"] is None:
        return None
    workload, sizing = found["workload"], found["sizing"]
    model = (
        workload.get_preset_display()
        if workload.preset
        else _("your model (%(params)s B parameters)") % {"params": workload.params_b}
    )
    return row(
        "order.sizing",
        model=model,
        context_tokens=workload.context_tokens,
        concurrency=workload.concurrency,
        per_gpu_gb=sizing.per_gpu_gb,
        gpu_vram_gb=found["gpu_vram_gb"],
        headroom_gb=sizing.headroom_gb,
        total_gb=sizing.total_gb,
        weights_gb=sizing.weights_gb,
        kv_cache_gb=sizing.kv_cache_gb,
        fits=sizing.fits,
    )


def _power(order: Order) -> dict[str, Any]:
    power = selectors.power_budget(order)
    return row(
        "order.power",
        load_w=power.psu_load_w,
        usable_w=power.usable_w,
        usable_with_headroom_w=power.usable_with_headroom_w,
        installed_w=power.installed_w,
        margin_w=power.psu_margin_w,
        psu_ok=power.psu_ok,
        wall_w=power.wall_power_w,
        circuit_limit_w=power.circuit_continuous_w,
        circuit_margin_w=power.circuit_margin_w,
        circuit_ok=power.circuit_ok,
    )


@customer_required
def order_page(request: HttpRequest, order_id: int) -> HttpResponse:
    """One order: its progress, its timeline in plain words, its business case, and its servers."""
    order = selectors.customer_order(request.user, order_id)
    if order is None:
        raise Http404("No such order.")
    events = [
        row(
            "order.event",
            when=event.created_at,
            text=EVENT_TEXTS[event.verb],
            status=event.after.get("status", ""),
            status_label=label_of(OrderStatus, event.after.get("status", "")),
        )
        for event in selectors.order_timeline(order)
    ]
    servers = Paginator(
        selectors.customer_servers(request.user).filter(order=order).order_by("sequence"), SERVERS_PER_PAGE
    ).get_page(request.GET.get("page"))
    context = {
        "order": row(
            "order.order",
            id=order.pk,
            reference=order.reference,
            configuration=order.configuration.name,
            server_count=order.server_count,
            warranty_months=order.warranty_months,
            status=order.status,
            status_label=label_of(OrderStatus, order.status, order.status),
            stages=order_stages(order.status),
            created_at=order.created_at,
            last_change=events[-1]["when"] if events else order.created_at,
        ),
        "events": events,
        "business_case": _business_case(order),
        "sizing": _sizing(order),
        "power": _power(order),
        "income": income_row(order),
        "pager": pager(servers),
        "servers": _server_rows(servers.object_list),
    }
    return TemplateResponse(request, "portal/order.html", context)


def _burnin(server: Server) -> dict[str, Any] | None:
    found = selectors.latest_burnin(server)
    if found is None:
        return None
    run = found["run"]
    return row(
        "server.burnin",
        result=found["verdict"],
        result_label=BURNIN_RESULT_LABELS.get(found["verdict"], found["verdict"]),
        started_at=run.started_at,
        ended_at=run.ended_at,
        stale_because=found["stale_because"],
        full_load_h=run.full_load_h,
        target_h=run.target_h,
        # Built with escape() from our own data (burnin.charts).
        chart=mark_safe(found["chart"]),
        incomplete_stages=[
            {"name": stage.name, "status": stage.status, "reason": stage.reason}
            for stage in found["incomplete_stages"]
        ],
        findings=[
            row(
                "server.finding",
                severity=finding.severity,
                severity_label=SEVERITY_LABELS.get(finding.severity, finding.severity),
                subject=finding.subject_text,
                message=finding.text,  # the sentence in the reader's language (`Finding.text`)
                waived=finding.waived,
                waived_at=finding.waived_at,
                waiver_reason=finding.waiver_reason,
            )
            for finding in found["findings"]
        ],
        url=reverse("burnin:server", args=[server.pk]),
    )


def _health(server: Server) -> dict[str, Any] | None:
    panel = health_panel(health_history(server))
    if panel is None:
        return None
    return row(
        "server.health",
        **{
            **panel,
            "runs": [row("server.health_run", **run) for run in panel["runs"]],
            "gpus": [row("server.health_gpu", **gpu) for gpu in panel["gpus"]],
            "newest_findings": [row("server.health_finding", **f) for f in panel["newest_findings"]],
        },
    )


def slot_rows(server: Server) -> list[dict[str, Any]]:
    """The server's serials by slot, from its active installations (its page and its CSV download)."""
    return [
        row(
            "server.slot",
            slot=installation.connector.name,
            kind=SLOT_KIND_LABELS.get(installation.connector.kind, installation.connector.kind),
            category=PART_CATEGORY_LABELS.get(
                installation.component.part.category, installation.component.part.category
            ),
            manufacturer=installation.component.part.manufacturer,
            part=installation.component.part.name or installation.component.part.mpn,
            serial=installation.component.serial,
        )
        for installation in selectors.installed_slots(server)
    ]


def server_context(request: HttpRequest, server: Server) -> dict[str, Any]:
    """Everything the server page shows. The warranty and documents areas add their keys (and
    `show_warranty` / `show_documents`), and the template then includes "portal/_server_warranty.html" /
    "portal/_server_documents.html"."""
    placement = selectors.server_placement(server)
    return {
        "server": row(
            "server.server",
            id=server.pk,
            hostname=server.hostname,
            asset_tag=server.asset_tag,
            chassis_serial=server.chassis_serial,
            status=server.status,
            status_label=label_of(ServerStatus, server.status, server.status),
            order_reference=server.order.reference,
            order_url=reverse("portal:order", args=[server.order_id]),
        ),
        "slots": slot_rows(server),
        "blacklist": [
            row(
                "server.blacklist",
                connector=entry.connector.name,
                reason=entry.reason,
                since=entry.created_at,
            )
            for entry in selectors.blacklisted_connectors(server)
        ],
        "burnin": _burnin(server),
        "health": _health(server),
        "placement": None
        if placement is None
        else row(
            "server.placement",
            site=placement.rack.site.name,
            country=placement.rack.site.country,
            rack=placement.rack.name,
            rack_id=placement.rack_id,
            lowest_u=placement.lowest_u,
            top_u=placement.top_u,
            face=placement.face,
            # The drawing in the page's language (the API's own answers are English).
            elevation_url=f"{reverse('rack-elevation-file', args=[placement.rack_id])}"
            f"?{urlencode({'lang': get_language()})}",
        ),
        **warranty_context(request, server),
        **documents_context(request, server),
        **bmc_context(server),
    }


@customer_required
def server_page(request: HttpRequest, server_id: int) -> HttpResponse:
    """One server: serials by slot, blacklisted connectors, burn-in summary, rack placement."""
    server = selectors.customer_server(request.user, server_id)
    if server is None:
        raise Http404("No such server.")
    return TemplateResponse(request, "portal/server.html", server_context(request, server))


def _token_rows(user: Any) -> list[dict[str, Any]]:
    return [
        row("tokens.token", token_key=token.token_key, created=token.created, expiry=token.expiry)
        for token in live_api_tokens(user=user)
    ]


@customer_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    """The user's API tokens: list them; POST creates one and shows it on this answer only."""
    new_token = ""
    if request.method == "POST":
        try:
            _row, new_token = api_token_create(user=request.user, actor=request.user)
        except DomainError:
            messages.error(request, _("No token was created: you already hold the most live tokens allowed."))
            return HttpResponseRedirect(reverse("portal:tokens"), status=303)
    response = TemplateResponse(
        request,
        "portal/tokens.html",
        {
            "tokens": _token_rows(request.user),
            "new_token": new_token,
            "limit": settings.REST_KNOX["TOKEN_LIMIT_PER_USER"],
        },
    )
    return token_page_response(response)


@customer_required
@require_POST
def token_revoke(request: HttpRequest) -> HttpResponse:
    """POST: revoke one of the user's tokens by its prefix."""
    return token_revoke_response(request, back="portal:tokens")


urlpatterns: list[URLPattern] = [
    path("", orders_page, name="orders"),
    path("orders/<int:order_id>/", order_page, name="order"),
    path("servers/<int:server_id>/", server_page, name="server"),
    path("tokens/", tokens_page, name="tokens"),
    path("tokens/revoke/", token_revoke, name="token-revoke"),
]
