"""What a customer sees in the portal: the rule, and the fields of every portal page, in one place.

The API applies the same rule through `werkbank/audiences.py` (its "Customer" paragraph); this module is its
twin for the HTML pages under /portal/, and the two must say the same.

Who may open the portal
    Members of a customer organization, for their own organizations' orders and servers
    (`visible_to(user, purpose="view")`, narrowed to the customer organizations the user belongs to). A PM
    has the admin and the PM pages instead, and an assembly partner the bench: for either of them (and for a
    user who belongs to no customer) every portal page is a 404, as for another customer's order. Anonymous
    visitors are sent to the login page.

What a customer sees
    The facts of its own orders and servers: reference, configuration, number of servers, warranty term,
    status as a progress line, and the date of the last change; the order's timeline, built from the audit
    events a customer receives (`CUSTOMER_ORDER_VERBS`: the order opened and each status change), told in
    plain words, with when it happened and nothing of who did it or which service ran; its business case
    (the ROI assessment that counts: payback, NPV, break-even utilisation, buy-vs-rent, the cash-flow chart;
    the workload's VRAM sizing; the power budget), which is the customer's own; its servers with their
    stage; per server the serial numbers by slot (from the active installations), the blacklisted
    connectors with their reason, the latest burn-in run with its findings (a waived finding shows that it
    was waived, when, and why), the temperature chart, its health history once it is in service (every
    run's date, purpose, verdict and count of drift faults; per GPU its baseline against each field run),
    and the rack placement with the rack's elevation
    (other tenants' servers in it appear only as "occupied"); once a server is handed over, its BMC
    credentials, only in the answer to a reveal after the member typed the password again (audited;
    portal/views/credentials.py); its own API tokens; its warranty records
    (looked up by serial), each with its replacement lineage both ways and its claims with their status
    and the decision note, which is written for the customer (a claim drafted from a drift finding shows
    the finding's sentence with the baseline's figure and the new one), and the logs and photos attached
    to them (the file's name, kind and size, and its download after the access check).

What a customer never sees
    The builder's internals: the PM's override reasons (approval, lot, power) and notes (order notes,
    transition notes, ROI notes), purchase orders (ids or numbers), suppliers and prices paid, the assembly
    partner (a subcontractor) and the partner's internal notes and evidence, the usernames of the people who
    did the work (actors, installers, uploaders, waivers, whoever opened a claim), the PM's notes on a
    claim's steps, and anything of another customer.

Each page's view builds plain rows with exactly the fields named below (`PAGE_FIELDS`), and its template
shows only those: no model instance reaches a portal template, so a field added to a model cannot appear
on a page by accident. tests/portal/test_customer_fields.py renders every page on data full of internal
values and checks both the rows' fields against this table and the HTML against the internal values.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from orders.choices import OrderStatus
from werkbank.choices import label_of

#: The fields of each row a portal page shows, by page and row kind. Nothing else reaches a template.
PAGE_FIELDS: dict[str, frozenset[str]] = {
    "orders.order": frozenset(
        {
            "id",
            "reference",
            "configuration",
            "server_count",
            "status",
            "status_label",
            "stages",
            "servers_by_stage",
            "last_change",
            "url",
        }
    ),
    "order.order": frozenset(
        {
            "id",
            "reference",
            "configuration",
            "server_count",
            "warranty_months",
            "status",
            "status_label",
            "stages",
            "created_at",
            "last_change",
        }
    ),
    "order.event": frozenset({"when", "text", "status", "status_label"}),
    "order.business_case": frozenset(
        {
            "version",
            "currency",
            "capex",
            "gpu_count",
            "price_per_gpu_hour",
            "utilization",
            "net_month",
            "payback_months",
            "target_payback_months",
            "horizon_months",
            "npv",
            "breakeven_utilization_opex",
            "breakeven_utilization_target",
            "buy_vs_rent_breakeven_utilization",
            "rent_price_per_gpu_hour",
            "hours_per_month",
            "breakeven_month",
            "chart",
        }
    ),
    "order.sizing": frozenset(
        {
            "model",
            "context_tokens",
            "concurrency",
            "per_gpu_gb",
            "gpu_vram_gb",
            "headroom_gb",
            "total_gb",
            "weights_gb",
            "kv_cache_gb",
            "fits",
        }
    ),
    "order.power": frozenset(
        {
            "load_w",
            "usable_w",
            "usable_with_headroom_w",
            "installed_w",
            "margin_w",
            "psu_ok",
            "wall_w",
            "circuit_limit_w",
            "circuit_margin_w",
            "circuit_ok",
        }
    ),
    # Income against the forecast (deployment.income): the customer's own earnings, its business case's
    # forecast, the payback re-estimated from them; the servers by hostname only.
    "order.income": frozenset(
        {
            "problem",
            "currency",
            "currencies",
            "converted",
            "start",
            "server_months",
            "months_missing",
            "total_actual",
            "total_forecast",
            "ratio_percent",
            "mean_actual",
            "forecast_month",
            "utilization_percent",
            "observed_price",
            "utilization_from_hours",
            "net_month",
            "forecast_net_month",
            "payback_months",
            "payback_date",
            "forecast_payback_months",
            "forecast_payback_date",
            "estimate_error",
            "breakeven_month",
            "chart",
            "cashflow_chart",
            "months",
            "servers",
        }
    ),
    "order.income_month": frozenset(
        {"month", "actual", "forecast", "difference", "gpu_hours", "recorded", "in_service", "in_progress"}
    ),
    "order.income_server": frozenset({"hostname", "start", "months_recorded", "actual", "forecast"}),
    "order.server": frozenset({"id", "hostname", "asset_tag", "status", "status_label", "url"}),
    "server.server": frozenset(
        {
            "id",
            "hostname",
            "asset_tag",
            "chassis_serial",
            "status",
            "status_label",
            "order_reference",
            "order_url",
        }
    ),
    "server.slot": frozenset({"slot", "kind", "category", "manufacturer", "part", "serial"}),
    "server.blacklist": frozenset({"connector", "reason", "since"}),
    "server.burnin": frozenset(
        {
            "result",
            "result_label",
            "started_at",
            "ended_at",
            "stale_because",
            "full_load_h",
            "target_h",
            "chart",
            "incomplete_stages",
            "findings",
            "url",
        }
    ),
    "server.finding": frozenset(
        {"severity", "severity_label", "subject", "message", "waived", "waived_at", "waiver_reason"}
    ),
    # The health history after the handover (burnin.health.health_panel): runs with their purpose,
    # verdict and drift faults, and per GPU its baseline against each field run, drawn as SVG.
    "server.health": frozenset(
        {
            "handed_over",
            "overdue",
            "max_age_days",
            "last_field_check_at",
            "last_run_at",
            "field_runs",
            "newest_field_run_at",
            "newest_findings",
            "timeline",
            "runs",
            "gpus",
        }
    ),
    "server.health_run": frozenset(
        {
            "id",
            "purpose",
            "purpose_label",
            "started_at",
            "uploaded_at",
            "result",
            "result_label",
            "is_baseline",
            "accepted_at",
            "drift_fails",
            "url",
        }
    ),
    "server.health_gpu": frozenset({"index", "serial", "has_baseline", "fallen", "charts"}),
    "server.health_finding": frozenset({"severity", "severity_label", "subject", "message", "waived"}),
    "server.placement": frozenset(
        {"site", "country", "rack", "rack_id", "lowest_u", "top_u", "face", "elevation_url"}
    ),
    # The BMC credentials' hand-over (portal/views/credentials.py): whether they can be revealed, and
    # where; the credentials themselves only in the answer to a reveal with the password typed again.
    "server.bmc": frozenset({"handed_over", "stored", "reveal_url"}),
    "bmc.server": frozenset({"id", "hostname", "url"}),
    "bmc.revealed": frozenset({"username", "password"}),
    "server.pack": frozenset(
        {"newest", "revision", "language", "generated_at", "pdf_url", "zip_url", "zip_sha256"}
    ),
    "server.warranty": frozenset({"serial", "description", "start_date", "end_date", "state", "url"}),
    "tokens.token": frozenset({"token_key", "created", "expiry"}),
    # The warranty pages (portal/views/warranty.py): who opened a claim (a login name) and the PM's notes on
    # its transitions are the builder's; the decision note is written for the customer.
    "warranty.row": frozenset(
        {"serial", "description", "hostname", "start_date", "end_date", "state", "url"}
    ),
    "warranty.record": frozenset(
        {
            "serial",
            "description",
            "hostname",
            "asset_tag",
            "order_reference",
            "start_date",
            "term_months",
            "end_date",
            "state",
            "replaced_at",
        }
    ),
    "warranty.lineage": frozenset({"serial", "url"}),
    "warranty.claim": frozenset(
        {
            "number",
            "created_at",
            "status",
            "status_label",
            "description",
            "decision_note",
            "replacement",
            "drift",
            "attachments",
            "attach_url",
            "attach_form",
        }
    ),
    # A claim's logs and photos: not who uploaded them (a login name). The form attaches more while the
    # claim is in progress (`attach_url`, empty once it is decided).
    "warranty.attachment": frozenset({"name", "kind", "kind_label", "size_bytes", "url"}),
    # A claim drafted from a drift finding: the finding's sentence in the reader's language, with the
    # figure at the baseline and the new one (the finding is the customer's: it is on its server's run).
    "warranty.drift": frozenset({"subject", "text", "run_date", "baseline", "value"}),
}


def row(kind: str, /, **values: Any) -> dict[str, Any]:
    """A page's row with exactly the fields `PAGE_FIELDS[kind]` names: a field missing or left over is a
    programming error, caught by every test that renders the page."""
    expected = PAGE_FIELDS[kind]
    if set(values) != expected:
        raise ValueError(
            f"{kind}: fields {sorted(set(values) - expected)} not in PAGE_FIELDS, "
            f"{sorted(expected - set(values))} missing"
        )
    return values


def pager(page: Any) -> dict[str, Any]:
    """What a pager shows of a Paginator page: numbers only (no rows, so no model instance reaches a
    template)."""
    return {
        "number": page.number,
        "num_pages": page.paginator.num_pages,
        "previous": page.previous_page_number() if page.has_previous() else None,
        "next": page.next_page_number() if page.has_next() else None,
    }


#: The order's main line of statuses, the progress line of every order (README.md, Lifecycle).
ORDER_STAGES: tuple[str, ...] = (
    "draft",
    "roi_review",
    "approved",
    "procurement",
    "assembly",
    "burn_in",
    "deployment",
    "handed_over",
    "closed",
)

#: Server statuses in the order a server passes them (a failed burn-in sends it back to assembly).
SERVER_STAGES: tuple[str, ...] = (
    "planned",
    "assembling",
    "assembled",
    "burn_in",
    "burn_in_failed",
    "burn_in_passed",
    "deployed",
    "handed_over",
)

#: What each customer-facing event of an order means, in a customer's words (werkbank.audiences
#: CUSTOMER_ORDER_VERBS; a test keeps the two in step).
EVENT_TEXTS: dict[str, Any] = {
    "order.create": _("We opened your order."),
    "order.submit": _("Your business case went to review."),
    "order.approve": _("Your order was approved."),
    "order.reject": _("Your order was not approved."),
    "order.procure": _("We ordered the parts for your servers."),
    "order.start_assembly": _("The parts are in: assembly of your servers began."),
    "order.start_burn_in": _(
        "Your servers are assembled and in burn-in (a full-load test of at least 72 h)."
    ),
    "order.start_deployment": _("Your servers passed burn-in and are being installed in their racks."),
    "order.hand_over": _("Your servers were handed over to you."),
    "order.close": _("Your order was closed."),
    "order.cancel": _("Your order was cancelled."),
}

SLOT_KIND_LABELS: dict[str, Any] = {
    "chassis": _("Chassis"),
    "board": _("Mainboard"),
    "cpu_socket": _("CPU socket"),
    "pcie_slot": _("PCIe slot"),
    "riser_port": _("Riser port"),
    "gpu_power": _("GPU power cable"),
    "dimm_slot": _("DIMM slot"),
    "nvme_bay": _("NVMe bay"),
    "psu_bay": _("PSU bay"),
}

PART_CATEGORY_LABELS: dict[str, Any] = {
    "gpu": _("GPU"),
    "cpu": _("CPU"),
    "memory": _("Memory (DIMM)"),
    "storage": _("Storage (NVMe)"),
    "motherboard": _("Mainboard"),
    "chassis": _("Chassis"),
    "psu": _("Power supply"),
    "nic": _("Network card"),
    "riser": _("Riser / cable"),
    "cooling": _("Cooling"),
    "other": _("Other"),
}

BURNIN_RESULT_LABELS: dict[str, Any] = {
    "pass": pgettext_lazy("burn-in result", "Passed"),
    "fail": pgettext_lazy("burn-in result", "Failed"),
    "incomplete": pgettext_lazy("burn-in result", "Incomplete"),
    "waived": pgettext_lazy("burn-in result", "Passed with waivers"),
    "stale": pgettext_lazy("burn-in result", "Stale: measured on other hardware"),
}

SEVERITY_LABELS: dict[str, Any] = {
    "info": pgettext_lazy("finding severity", "Note"),
    "warn": pgettext_lazy("finding severity", "Warning"),
    "fail": pgettext_lazy("finding severity", "Fault"),
}


def order_stages(status: str) -> list[dict[str, Any]]:
    """The progress line of an order: each main-line status as done, current or to come. A rejected or
    cancelled order has left the line: nothing on it is current."""
    current = ORDER_STAGES.index(status) if status in ORDER_STAGES else -1
    return [
        {
            "status": stage,
            "label": label_of(OrderStatus, stage),
            "state": "current" if index == current else "done" if index < current else "todo",
        }
        for index, stage in enumerate(ORDER_STAGES)
    ]
