"""Which fields each role receives from each API route: the rule of `werkbank/audiences.py`, as a table.

For every route of the API router, a PM, a partner member (P, who builds customer A's servers) and a customer
member (A) GET it on one world of realistic data, and the set of JSON keys each receives (recursively, as
paths like `lines[].unit_price`; `results[].` for a list's rows) must be exactly the table's. The tables are
written by hand: each role's set is the full set minus the fields the rule withholds, named explicitly, and
a new field fails the test until someone writes it into the table for the roles that may receive it. A
route with no entry fails the meta-test. Write actions answer with the serializer of a read route
(`SameAs`) or are checked by a named test (`Checked`); files are not JSON.

Below the table, the audit's examples as regression tests (issue #16, defect 10).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from burnin.models import Finding, TelemetrySample
from burnin.services.gate import finding_waive
from burnin.services.samples import store_rollup
from deployment.models import RackPlacement
from inventory.models import BatchLot, Component, StockMovement
from inventory.services import label_batch_request
from orders.choices import OrderStatus
from orders.models import Workload
from orders.services import order_approve, order_procure, order_submit, order_update
from tests import factories
from tests.conftest import Tenants, api_client
from tests.werkbank import test_isolation as iso
from warranty.models import HandoverPack

pytestmark = pytest.mark.django_db


# --- the world: customer A's orders, built by partner P, in burn-in and deployed ------------------------


@dataclass
class World:
    iso: iso.World
    builds: iso.Builds
    gate: iso.BurninGate
    deployment: iso.Deployment
    events_order: Any
    warranty: Any = None
    urls: dict[str, str] = field(default_factory=dict)

    @property
    def t(self) -> Tenants:
        return self.iso.t


def _events_order(t: Tenants) -> Any:
    """An order of customer A taken through submit, an overridden approval and procurement, with notes a
    PM wrote for PMs at every step."""
    order = factories.OrderFactory(customer=t.customer_a, server_count=1)
    order_update(order=order, actor=t.pm, notes="Internal: customer pays late, ask for a deposit.")
    order_submit(order=order, actor=t.pm, note="PM note: credit check pending")
    # No ROI assessment: the payback check fails, and the PM overrides it.
    order_approve(
        order=order, actor=t.pm, note="PM note: approved on Friday", override_reason="Strategic account"
    )
    order_procure(order=order, actor=t.pm, note="PM note: ordered from the cheaper supplier")
    order.refresh_from_db()
    assert order.status == OrderStatus.PROCUREMENT and order.approval_override_reason
    return order


@pytest.fixture
def world(tenants: Tenants) -> World:
    order_a = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    order_b = factories.OrderFactory(customer=tenants.customer_b)
    factories.ROIAssessmentFactory(order=order_a, note="PM note: the customer's capex is a guess")
    Workload.objects.create(order=order_a, preset="llama-3.1-8b", context_tokens=8192)
    gpu_a = order_a.configuration.lines.get(part__category="gpu").part
    po_p = factories.receive_stock(
        deliver_to=tenants.partner_p, part=gpu_a, quantity=4, lots={"L-P": ["P-SERIAL-1", "P-SERIAL-2"]}
    )
    po_p.notes = "Internal: 3 % discount negotiated"
    po_p.save(update_fields=["notes"])
    w = iso.World(
        t=tenants, order_a=order_a, order_b=order_b, part=order_a.configuration.lines.first().part, po_p=po_p
    )
    builds = iso._builds(w)
    gate = iso._burnin_gate(w)
    finding_waive(finding=gate.fail, actor=tenants.pm, reason="Riser reseated; x16 confirmed by hand")
    # A second failure, not waived: the gate lists it as blocking.
    Finding.objects.create(
        run=gate.fail.run, code="ecc_uncorrectable", severity="fail", subject="GPU 1", message="GPU 1: 3 DBE"
    )
    TelemetrySample.objects.create(run=gate.fail.run, gpu_index=0, at=gate.fail.run.started_at, temp_c=61.0)
    store_rollup(gate.fail.run)
    deployment = iso._deployment(w)
    RackPlacement.objects.filter(pk=deployment.placement.pk).update(
        power_override_reason="Internal: the colo lets us run this PDU hot"
    )
    HandoverPack.objects.create(server=deployment.ready, revision=1, language="en", generated_by=tenants.pm)
    world = World(iso=w, builds=builds, gate=gate, deployment=deployment, events_order=_events_order(tenants))
    world.warranty = iso._warranty(w)
    world.urls = _urls(world)
    return world


def _urls(w: World) -> dict[str, str]:
    b, d, order, po = w.builds, w.deployment, w.iso.order_a, w.iso.po_p
    lot = BatchLot.objects.get(lot_code="L-P")
    label_batch = label_batch_request(actor=w.t.user_p, lot=lot)
    run = w.gate.fail.run
    return {
        "organization-list": "/api/v1/organizations/",
        "organization-detail": "/api/v1/organizations/{org}/",
        "part-list": "/api/v1/inventory/parts/",
        "part-detail": f"/api/v1/inventory/parts/{w.iso.part.pk}/",
        "supplier-list": "/api/v1/inventory/suppliers/",
        "supplier-detail": f"/api/v1/inventory/suppliers/{po.supplier_id}/",
        "purchase-order-list": "/api/v1/inventory/purchase-orders/",
        "purchase-order-detail": f"/api/v1/inventory/purchase-orders/{po.pk}/",
        "purchase-order-line-list": "/api/v1/inventory/purchase-order-lines/",
        "purchase-order-line-detail": f"/api/v1/inventory/purchase-order-lines/{po.lines.get().pk}/",
        "label-batch-list": "/api/v1/inventory/label-batches/",
        "label-batch-detail": f"/api/v1/inventory/label-batches/{label_batch.pk}/",
        "lot-list": "/api/v1/inventory/lots/",
        "lot-detail": f"/api/v1/inventory/lots/{lot.pk}/",
        "component-list": "/api/v1/inventory/components/?serial_prefix=P-SERIAL",
        "component-detail": f"/api/v1/inventory/components/{Component.objects.get(serial='P-SERIAL-2').pk}/",
        "stock-movement-list": "/api/v1/inventory/stock-movements/",
        "stock-movement-detail": (
            f"/api/v1/inventory/stock-movements/{StockMovement.objects.order_by('pk').first().pk}/"
        ),
        "configuration-list": "/api/v1/configurations/",
        "configuration-detail": f"/api/v1/configurations/{order.configuration_id}/",
        "order-list": f"/api/v1/orders/?q={w.events_order.reference}",
        "order-detail": f"/api/v1/orders/{w.events_order.pk}/",
        "order-approval-checks": f"/api/v1/orders/{w.events_order.pk}/approval-checks/",
        "order-events": f"/api/v1/orders/{w.events_order.pk}/events/",
        "order-roi-assessments": f"/api/v1/orders/{order.pk}/roi-assessments/",
        "order-transition-checks": f"/api/v1/orders/{order.pk}/transition-checks/",
        "order-workload": f"/api/v1/orders/{order.pk}/workload/",
        "roi-assessment-list": "/api/v1/roi-assessments/",
        "roi-assessment-detail": f"/api/v1/roi-assessments/{order.roi_assessments.get().pk}/",
        "server-list": f"/api/v1/builds/servers/?q={order.reference}",
        "server-detail": f"/api/v1/builds/servers/{b.server.pk}/",
        "server-connector-map": f"/api/v1/builds/servers/{b.server.pk}/connector-map/",
        "server-steps": f"/api/v1/builds/servers/{b.server.pk}/steps/",
        "connector-list": f"/api/v1/builds/connectors/?server={b.server.pk}",
        "connector-detail": f"/api/v1/builds/connectors/{b.connector.pk}/",
        "installation-list": f"/api/v1/builds/installations/?server={b.server.pk}",
        "installation-detail": f"/api/v1/builds/installations/{b.installation.pk}/",
        "allocation-list": f"/api/v1/builds/allocations/?server={b.server.pk}",
        "allocation-detail": f"/api/v1/builds/allocations/{b.allocation.pk}/",
        "build-step-list": f"/api/v1/builds/steps/?server={b.server.pk}",
        "build-step-detail": f"/api/v1/builds/steps/{b.step.pk}/",
        "build-photo-list": f"/api/v1/builds/photos/?server={b.server.pk}",
        "build-photo-detail": f"/api/v1/builds/photos/{b.photo.pk}/",
        "chassis-layout-list": "/api/v1/builds/layouts/",
        "chassis-layout-detail": f"/api/v1/builds/layouts/{b.layout.pk}/",
        "burnin-run-list": f"/api/v1/burnin/runs/?server={b.server.pk}",
        "burnin-run-detail": f"/api/v1/burnin/runs/{run.pk}/",
        "burnin-finding-list": f"/api/v1/burnin/findings/?run={run.pk}",
        "burnin-finding-detail": f"/api/v1/burnin/findings/{w.gate.fail.pk}/",
        "burnin-server-gate-detail": f"/api/v1/burnin/server-gate/{b.server.asset_tag}/",
        "burnin-telemetry-detail": f"/api/v1/burnin/telemetry/{run.pk}/",
        "site-list": "/api/v1/sites/",
        "site-detail": f"/api/v1/sites/{d.site.pk}/",
        "rack-list": "/api/v1/racks/",
        "rack-detail": f"/api/v1/racks/{d.rack.pk}/",
        "rack-power": f"/api/v1/racks/{d.rack.pk}/power/",
        "power-feed-list": "/api/v1/power-feeds/",
        "power-feed-detail": f"/api/v1/power-feeds/{d.feed.pk}/",
        "placement-list": f"/api/v1/placements/?server={d.ready.pk}",
        "placement-detail": f"/api/v1/placements/{d.placement.pk}/",
        "network-list": "/api/v1/networks/",
        "network-detail": f"/api/v1/networks/{d.network.pk}/",
        "platform-listing-list": "/api/v1/platform-listings/",
        "platform-listing-detail": f"/api/v1/platform-listings/{d.listing.pk}/",
        "deployment-server-detail": f"/api/v1/deployment/servers/{d.ready.asset_tag}/",
        "warranty-record-list": "/api/v1/warranty/records/?serial=P-SERIAL-1",
        "warranty-record-detail": f"/api/v1/warranty/records/{w.warranty.record.pk}/",
        "warranty-registration-list": f"/api/v1/warranty/registrations/?server={b.server.pk}",
        "warranty-registration-detail": f"/api/v1/warranty/registrations/{w.warranty.registration.pk}/",
        "warranty-claim-list": "/api/v1/warranty/claims/",
        "warranty-claim-detail": f"/api/v1/warranty/claims/{w.warranty.claim.pk}/",
        "handover-server-detail": f"/api/v1/handover/servers/{w.warranty.deployed.asset_tag}/",
        "handover-pack-list": f"/api/v1/handover/packs/?server={d.ready.pk}",
        "handover-pack-detail": f"/api/v1/handover/packs/{HandoverPack.objects.get(server=d.ready).pk}/",
    }


# --- collecting the keys ---------------------------------------------------------------------------------

#: Fields whose value is a free-form JSON object (measurements, specs, numbers by name, series by GPU):
#: their keys are data, not fields, and are not walked.
OPAQUE = frozenset({"specs", "data", "measurements", "numbers", "evidence", "series"})


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key of a JSON value as a path: `a.b`, `lines[].part`."""
    paths: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            if key not in OPAQUE:
                paths |= key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            paths |= key_paths(item, f"{prefix}[]")
    return paths


ROLES = ("pm", "partner", "customer")


def _user(w: World, role: str) -> Any:
    return {"pm": w.t.pm, "partner": w.t.user_p, "customer": w.t.user_a}[role]


def observe(w: World, route: str, role: str) -> tuple[int, set[str]]:
    """GET the route as the role: the status, and the keys of the JSON answer."""
    own = {"pm": w.t.customer_a, "partner": w.t.partner_p, "customer": w.t.customer_a}[role]
    url = w.urls[route].replace("{org}", str(own.pk))
    response = api_client(_user(w, role)).get(url)
    if response.status_code != 200:
        return response.status_code, set()
    return 200, key_paths(response.json())


# --- the table -------------------------------------------------------------------------------------------


def page(row: set[str]) -> set[str]:
    """The keys of a paginated list whose rows have the keys `row`."""
    return {"count", "next", "previous", "results", *(f"results[].{key}" for key in row)}


def rows(row: set[str]) -> set[str]:
    """The keys of a bare JSON list whose rows have the keys `row`."""
    return {f"[].{key}" for key in row}


def nested(name: str, row: set[str], *, many: bool = False) -> set[str]:
    """A field `name` holding an object (or a list of objects, `many`) with the keys `row`."""
    prefix = f"{name}[]" if many else name
    return {name, *(f"{prefix}.{key}" for key in row)}


NO_ROWS = page(set())  # a list in which the role sees no row: it never sees the fields either


@dataclass(frozen=True)
class Shape:
    """What each role receives from a GET: its keys, or the status it is refused with (403 or 404)."""

    pm: set[str]
    partner: set[str] | int
    customer: set[str] | int


@dataclass(frozen=True)
class SameAs:
    """A write action that answers with the serializer (and so the rule) of a read route of the table."""

    route: str


@dataclass(frozen=True)
class Checked:
    """A write action with an answer of its own, checked by a named test of this module."""

    test: str


@dataclass(frozen=True)
class NotJson:
    """A file: no fields."""

    kind: str


# The internal fields, by the rule's words (werkbank/audiences.py). Every set below is a full set of fields
# minus these, so the table says by name what each role does not receive.
PURCHASING = {"list_price", "preferred_supplier"}  # the builder's prices and suppliers
PO_INTERNAL = {
    "supplier",
    "supplier_name",
    "supplier_country",
    "currency",
    "non_eu_override_reason",
    "notes",
    "lines[].unit_price",
}
SUPPLIER_NAME = {"supplier_name"}
ORDER_INTERNAL = {"approval_override_reason", "purchase_orders", "notes", "allowed_transitions"}
ROI_INTERNAL = {"note", "created_by"}
SUBCONTRACTOR = {"partner", "partner_name"}  # who built a server: not the customer's business

ORGANIZATION = {"id", "name", "kind", "contact_email", "language", "created_at"}
PART = {
    "id",
    "category",
    "manufacturer",
    "mpn",
    "name",
    "vram_gb",
    "tdp_w",
    "pcie_gen",
    "pcie_lanes",
    "u_height",
    "specs",
    "list_price",
    "preferred_supplier",
    "created_at",
}
SUPPLIER = {"id", "name", "vat_id", "country", "is_eu", "contact_name", "contact_email", "created_at"}
PO_LINE = {
    "id",
    "purchase_order",
    "part",
    "part_mpn",
    "part_name",
    "quantity",
    "unit_price",
    "quantity_received",
    "remaining",
}
PO = {
    "id",
    "number",
    "supplier",
    "supplier_name",
    "supplier_country",
    "status",
    "currency",
    "deliver_to",
    "non_eu_override_reason",
    "notes",
    "sent_at",
    "created_at",
} | nested("lines", PO_LINE, many=True)
LOT = {
    "id",
    "lot_code",
    "part",
    "part_mpn",
    "supplier_name",
    "date_code",
    "country_of_origin",
    "component_count",
    "created_at",
}
LABEL_BATCH = {
    "id",
    "title",
    "lot",
    "purchase_order",
    "count",
    "status",
    "progress",
    "error",
    "attempts",
    "pdf_url",
    "pdf_sha256",
    "pdf_size",
    "requested_by",
    "created_at",
    "started_at",
    "finished_at",
}
COMPONENT = {
    "id",
    "serial",
    "manufacturer",
    "part",
    "part_mpn",
    "lot",
    "lot_code",
    "purchase_order",
    "supplier_name",
    "country_of_origin",
    "status",
    "location",
    "received_at",
}
MOVEMENT = {
    "id",
    "component",
    "serial",
    "actor",
    "created_at",
    "from_status",
    "to_status",
    "from_location",
    "to_location",
    "reason",
}
CONFIGURATION = {
    "id",
    "name",
    "description",
    "psu_count",
    "psu_rating_w",
    "psu_redundant",
    "burnin_hours",
    "usable_psu_w",
    "created_at",
} | nested("lines", {"part", "part_mpn", "part_name", "category", "quantity"}, many=True)
ORDER = {
    "id",
    "reference",
    "customer",
    "customer_name",
    "configuration",
    "configuration_name",
    "server_count",
    "warranty_months",
    "status",
    "status_display",
    "allowed_transitions",
    "approval_override_reason",
    "circuit_v",
    "circuit_a",
    "circuit_phases",
    "spare_percent",
    "burnin_hours",
    "purchase_orders",
    "notes",
    "created_at",
    "updated_at",
}
APPROVAL = {"approvable", "override_reason"} | nested(
    "checks", {"name", "ok", "summary", "numbers"}, many=True
)
# The events order's trail: order.update (notes), submit, approve, approve_override, procure.
EVENTS_PM = rows(
    {
        "id",
        "created_at",
        "actor",
        "verb",
        "before",
        "before.status",
        "before.notes",
        "before.failed_checks",
        "after",
        "after.status",
        "after.notes",
        "after.override_reason",
        "after.purchase_orders",
        "note",
    }
)
# Status changes only, without the PM's note, the actor, the override or the purchase orders.
EVENTS_CUSTOMER = rows({"id", "created_at", "verb", "before", "before.status", "after", "after.status"})
ROI = {
    "id",
    "order",
    "order_reference",
    "version",
    "created_by",
    "created_at",
    "note",
    "currency",
    "capex",
    "gpu_count",
    "price_per_gpu_hour",
    "utilization",
    "platform_fee",
    "power_active_kw",
    "power_idle_kw",
    "energy_price_kwh",
    "pue",
    "colo_month",
    "other_opex_month",
    "horizon_months",
    "discount_rate_annual",
    "residual_value",
    "rent_price_per_gpu_hour",
    "target_payback_months",
    "hours_per_month",
    "revenue_month",
    "energy_month",
    "net_month",
    "payback_months",
    "npv",
    "irr_annual",
    "breakeven_utilization_target",
    "breakeven_utilization_opex",
    "buy_vs_rent_breakeven_utilization",
}
TRANSITION_CHECKS = {"order", "status"} | nested(
    "transitions", {"action", "target", "ready", "missing", "overridable", "needs_reason"}, many=True
)
WORKLOAD = nested(
    "workload",
    {
        "preset",
        "params_b",
        "layers",
        "kv_heads",
        "head_dim",
        "mla_latent_dim",
        "weights_dtype",
        "kv_dtype",
        "context_tokens",
        "concurrency",
        "tensor_parallel_gpus",
        "overhead_fraction",
        "updated_at",
    },
) | nested(
    "sizing",
    {
        "weights_gb",
        "weights_gib",
        "kv_bytes_per_token",
        "kv_cache_gb",
        "kv_cache_gib",
        "overhead_gb",
        "total_gb",
        "total_gib",
        "per_gpu_gb",
        "per_gpu_gib",
        "total_vram_gb",
        "fits",
        "headroom_gb",
    },
)
SERVER = {
    "id",
    "order",
    "order_reference",
    "sequence",
    "hostname",
    "asset_tag",
    "chassis_serial",
    "partner",
    "partner_name",
    "status",
    "connector_count",
    "installed_count",
    "blacklisted_count",
    "created_at",
}
CONNECTOR = {
    "id",
    "server",
    "server_hostname",
    "name",
    "kind",
    "position",
    "numa_node",
    "pcie_gen",
    "pcie_lanes",
    "cooling_block",
    "blacklist",  # null here: no connector of the world is blacklisted
}
CONNECTOR_MAP = {"server", "hostname", "status", "columns"} | nested(
    "connectors",
    {
        "id",
        "name",
        "kind",
        "position",
        "numa_node",
        "pcie_gen",
        "pcie_lanes",
        "cooling_block",
        "state",
        "serial",
        "part_mpn",
        "installation",
        "blacklist_reason",
        "blacklisted_at",
    },
    many=True,
)
INSTALLATION = {
    "id",
    "server",
    "server_hostname",
    "connector",
    "connector_name",
    "component",
    "serial",
    "part_mpn",
    "active",
    "installed_by",
    "installed_at",
    "removed_by",
    "removed_at",
    "removal_reason",
}
ALLOCATION = {
    "id",
    "server",
    "server_hostname",
    "component",
    "serial",
    "part_mpn",
    "lot_code",
    "allocated_by",
    "allocated_at",
    "lot_override_reason",
    "released_at",
}
STEP = {"id", "server", "kind", "actor", "created_at", "notes", "data", "photos"}
PHOTO = {"id", "server", "step", "content_type", "size_bytes", "uploaded_by", "created_at"}
LAYOUT = {"id", "chassis", "chassis_mpn", "chassis_name", "description", "columns"} | nested(
    "connectors",
    {"id", "name", "kind", "position", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"},
    many=True,
)
RUN = {
    "id",
    "server",
    "asset_tag",
    "hostname",
    "report_id",
    "probe_version",
    "schema_version",
    "started_at",
    "ended_at",
    "result",
    "rules_version",
    "binding",
    "full_load_s",
    "target_s",
    "uploaded_by",
    "created_at",
    "findings_fail",
    "findings_warn",
    "findings_info",
}
RUN_FINDING = {
    "id",
    "code",
    "severity",
    "subject",
    "gpu_index",
    "message",
    "text",
    "params",
    "explained_by",
    "evidence",
    "rule_version",
    "waived_by",
    "waived_at",
    "waiver_reason",
}
FINDING = RUN_FINDING | {"run", "server", "hostname", "waived"}
RUN_DETAIL = RUN | {"stages", "gpu_results"} | nested("findings", RUN_FINDING, many=True)
GATE = {"asset_tag", "hostname", "status", "passed", "ready", "missing"} | nested(
    "run", {"id", "report_id", "started_at", "ended_at", "result", "rules_version"}
)
TELEMETRY = {"run", "started_at", "span_s", "interval_s", "series"}
SITE = {
    "id",
    "name",
    "kind",
    "operator",
    "customer",
    "customer_name",
    "address",
    "country",
    "eu",
    "rack_count",
    "created_at",
}
FEED = {"id", "name", "leg", "voltage_v", "current_a", "phases", "rated_w", "continuous_limit_w"}
FEED_LOAD = FEED | {"load_w", "limit_w", "margin_w", "percent_of_limit", "percent_of_rated", "ok"}
RACK = {"id", "site", "site_name", "name", "height_u", "placement_count", "created_at"}
RACK_POWER = {"rack", "rack_name", "site_name"} | nested(
    "feeds",
    FEED_LOAD | nested("servers", {"hostname", "occupied", "wall_w", "source", "source_label"}, many=True),
    many=True,
)
POWER_FEED = FEED | {"rack", "rack_name"}
PLACEMENT = {
    "id",
    "server",
    "hostname",
    "asset_tag",
    "rack",
    "rack_name",
    "site_name",
    "lowest_u",
    "top_u",
    "height_u",
    "face",
    "measured_wall_w",
    "power_override_reason",
    "placed_at",
} | nested("feeds", {"id", "name"}, many=True)
NETWORK = {
    "id",
    "server",
    "hostname",
    "asset_tag",
    "management_ip",
    "bmc_ip",
    "bmc_mac",
    "bmc_credentials_set",  # never the credentials themselves
    "updated_at",
}
LISTING = {
    "id",
    "server",
    "hostname",
    "asset_tag",
    "platform",
    "machine_id",
    "verification",
    "reliability",
    "listed_on",
    "verified_on",
    "note",
    "is_current",
    "recorded_by",
    "recorded_at",
}
PACK = {
    "id",
    "server",
    "asset_tag",
    "hostname",
    "revision",
    "language",
    "status",
    "progress",
    "error",
    "attempts",
    "pdf_url",
    "pdf_sha256",
    "pdf_size",
    "zip_url",
    "zip_sha256",
    "zip_size",
    "generated_by",
    "created_at",
    "started_at",
    "finished_at",
}
PACK_INTERNAL = {"error", "attempts", "generated_by"}  # a failure's text, the retries, a PM's login
DEPLOY_STATE = (
    {"asset_tag", "hostname", "status", "deployed", "ready", "missing", "listing"}  # listing: null here
    | nested(
        "placement",
        {"id", "rack", "rack_name", "site_name", "lowest_u", "top_u", "face"}
        | nested("feeds", {"id", "name"}, many=True),
    )
    | nested("network", {"management_ip", "bmc_ip", "bmc_mac", "bmc_credentials_set"})
)


def _bench(full: set[str], *, internal: set[str] = frozenset(), list_route: bool = False) -> Shape:
    """A bench row: PMs all, the partner all but `internal`, the customer nothing (not its rows)."""
    if list_route:
        return Shape(pm=page(full), partner=page(full - internal), customer=NO_ROWS)
    return Shape(pm=full, partner=full - internal, customer=404)


def _customer_row(full: set[str], *, internal: set[str] = frozenset(), list_route: bool = False) -> Shape:
    """A row of the customer's order: PMs all, the customer all but `internal`, partners nothing."""
    if list_route:
        return Shape(pm=page(full), partner=NO_ROWS, customer=page(full - internal))
    return Shape(pm=full, partner=404, customer=full - internal)


def _shared(
    full: set[str], *, partner_lacks: set[str], customer_lacks: set[str], list_route: bool = False
) -> Shape:
    """A row both tenants see (the customer's server, as the partner builds it)."""
    wrap = page if list_route else (lambda keys: keys)
    return Shape(pm=wrap(full), partner=wrap(full - partner_lacks), customer=wrap(full - customer_lacks))


USERNAME = "usernames: login names stay with PMs and the bench"

WARRANTY_RECORD = {
    "id",
    "kind",
    "serial",
    "description",
    "server",
    "server_hostname",
    "order",
    "order_reference",
    "customer",
    "start_date",
    "term_months",
    "end_date",
    "replaces",
    "replaces_serial",
    "replaced_by",
    "replaced_by_serial",
    "replaced_at",
}
WARRANTY_REGISTRATION = {
    "id",
    "component",
    "serial",
    "server",
    "server_hostname",
    "customer",
    "customer_name",
    "registered_at",
}
WARRANTY_CLAIM = {
    "id",
    "number",
    "record",
    "serial",
    "customer",
    "status",
    "description",
    "decision_note",
    "replacement_record",
    "opened_by",
    "created_at",
    "updated_at",
}
HANDOVER_STATE = {"asset_tag", "hostname", "status", "handed_over", "ready", "missing"}

TABLE: dict[str, Shape | SameAs | Checked | NotJson] = {
    # core: each member sees its own organization in full
    "organization-list": _shared(ORGANIZATION, partner_lacks=set(), customer_lacks=set(), list_route=True),
    "organization-detail": _shared(ORGANIZATION, partner_lacks=set(), customer_lacks=set()),
    # inventory: the catalogue is shared, its purchasing data is not
    "part-list": _shared(PART, partner_lacks=PURCHASING, customer_lacks=PURCHASING, list_route=True),
    "part-detail": _shared(PART, partner_lacks=PURCHASING, customer_lacks=PURCHASING),
    "supplier-list": Shape(pm=page(SUPPLIER), partner=NO_ROWS, customer=NO_ROWS),
    "supplier-detail": Shape(pm=SUPPLIER, partner=404, customer=404),
    "purchase-order-list": _bench(PO, internal=PO_INTERNAL, list_route=True),
    "purchase-order-detail": _bench(PO, internal=PO_INTERNAL),
    "purchase-order-send": SameAs("purchase-order-detail"),
    "purchase-order-cancel": SameAs("purchase-order-detail"),
    "purchase-order-close": SameAs("purchase-order-detail"),
    "purchase-order-line-list": _bench(PO_LINE, internal={"unit_price"}, list_route=True),
    "purchase-order-line-detail": _bench(PO_LINE, internal={"unit_price"}),
    "purchase-order-line-receive": Checked("test_a_partners_receipt_names_no_supplier"),
    "lot-list": _bench(LOT, internal=SUPPLIER_NAME, list_route=True),
    "lot-detail": _bench(LOT, internal=SUPPLIER_NAME),
    "lot-labels": NotJson("PDF"),
    # a label batch is its requester's (partner P's here) and the PMs': all of its fields, nobody else's
    "label-batch-list": _bench(LABEL_BATCH, list_route=True),
    "label-batch-detail": _bench(LABEL_BATCH),
    "label-batch-pdf": NotJson("PDF"),
    "component-list": _bench(COMPONENT, internal=SUPPLIER_NAME, list_route=True),
    "component-detail": _bench(COMPONENT, internal=SUPPLIER_NAME),
    "stock-movement-list": _bench(MOVEMENT, list_route=True),
    "stock-movement-detail": _bench(MOVEMENT),
    # orders: the customer's, without the builder's internals
    "configuration-list": _customer_row(CONFIGURATION, list_route=True),
    "configuration-detail": _customer_row(CONFIGURATION),
    "order-list": _customer_row(ORDER, internal=ORDER_INTERNAL, list_route=True),
    "order-detail": _customer_row(ORDER, internal=ORDER_INTERNAL),
    "order-approval-checks": _customer_row(APPROVAL, internal={"override_reason"}),
    "order-events": Shape(pm=EVENTS_PM, partner=404, customer=EVENTS_CUSTOMER),
    "order-roi-assessments": Shape(pm=rows(ROI), partner=404, customer=rows(ROI - ROI_INTERNAL)),
    "order-transition-checks": Shape(pm=TRANSITION_CHECKS, partner=404, customer=403),
    "order-workload": _customer_row(WORKLOAD),
    **{
        f"order-{name}": SameAs("order-detail")
        for name in (
            "submit",
            "approve",
            "reject",
            "procure",
            "start-assembly",
            "start-burn-in",
            "start-deployment",
            "hand-over",
            "close",
            "cancel",
        )
    },
    "roi-assessment-list": _customer_row(ROI, internal=ROI_INTERNAL, list_route=True),
    "roi-assessment-detail": _customer_row(ROI, internal=ROI_INTERNAL),
    "roi-assessment-preview": Checked("test_pm_tools_refuse_tenants"),
    # builds: the bench is the partner's; the customer sees its servers, not who builds them
    "server-list": _shared(SERVER, partner_lacks=set(), customer_lacks=SUBCONTRACTOR, list_route=True),
    "server-detail": _shared(SERVER, partner_lacks=set(), customer_lacks=SUBCONTRACTOR),
    "server-assign": SameAs("server-detail"),
    "server-start-assembly": SameAs("server-detail"),
    "server-mark-assembled": SameAs("server-detail"),
    "server-allocate": SameAs("allocation-list"),
    "server-install": SameAs("installation-detail"),
    "server-remove": SameAs("installation-detail"),
    "server-move": SameAs("installation-detail"),
    "server-steps": Shape(pm=rows(STEP), partner=rows(STEP), customer=404),
    "server-photos": SameAs("build-photo-detail"),
    "server-connector-map": _bench(CONNECTOR_MAP),
    "connector-list": _bench(CONNECTOR, list_route=True),
    "connector-detail": _bench(CONNECTOR),
    "connector-blacklist": SameAs("connector-detail"),
    "installation-list": _bench(INSTALLATION, list_route=True),
    "installation-detail": _bench(INSTALLATION),
    "allocation-list": _bench(ALLOCATION, internal={"lot_override_reason"}, list_route=True),
    "allocation-detail": _bench(ALLOCATION, internal={"lot_override_reason"}),
    "build-step-list": _bench(STEP, list_route=True),
    "build-step-detail": _bench(STEP),
    "build-photo-list": _bench(PHOTO, list_route=True),
    "build-photo-detail": _bench(PHOTO),
    "build-photo-download": NotJson("the photo"),
    "chassis-layout-list": _bench(LAYOUT, list_route=True),
    "chassis-layout-detail": _bench(LAYOUT),
    # burn-in: results and findings for both; a waiver's reason too, not the PM's login
    "burnin-server-reports": SameAs("burnin-run-detail"),
    "burnin-run-list": _shared(RUN, partner_lacks=set(), customer_lacks={"uploaded_by"}, list_route=True),
    "burnin-run-detail": _shared(
        RUN_DETAIL, partner_lacks=set(), customer_lacks={"uploaded_by", "findings[].waived_by"}
    ),
    "burnin-finding-list": _shared(
        FINDING, partner_lacks=set(), customer_lacks={"waived_by"}, list_route=True
    ),
    "burnin-finding-detail": _shared(FINDING, partner_lacks=set(), customer_lacks={"waived_by"}),
    "burnin-finding-waive": SameAs("burnin-finding-detail"),
    "burnin-server-gate-detail": _shared(
        GATE | nested("blocking", FINDING, many=True),
        partner_lacks=set(),
        customer_lacks={"blocking[].waived_by"},
    ),
    "burnin-server-gate-pass": SameAs("burnin-server-gate-detail"),
    "burnin-server-gate-fail": SameAs("burnin-server-gate-detail"),
    "burnin-telemetry-detail": _shared(TELEMETRY, partner_lacks=set(), customer_lacks=set()),
    # deployment: both see where the servers stand; the PMs' reasons and notes stay with the PMs
    "site-list": _shared(SITE, partner_lacks=set(), customer_lacks=set(), list_route=True),
    "site-detail": _shared(SITE, partner_lacks=set(), customer_lacks=set()),
    "rack-list": _shared(
        RACK | nested("feeds", FEED, many=True), partner_lacks=set(), customer_lacks=set(), list_route=True
    ),
    "rack-detail": _shared(
        RACK | nested("feeds", FEED_LOAD, many=True), partner_lacks=set(), customer_lacks=set()
    ),
    "rack-power": _shared(RACK_POWER, partner_lacks=set(), customer_lacks=set()),
    "rack-elevation-svg": NotJson("SVG"),
    "power-feed-list": _shared(POWER_FEED, partner_lacks=set(), customer_lacks=set(), list_route=True),
    "power-feed-detail": _shared(POWER_FEED, partner_lacks=set(), customer_lacks=set()),
    "placement-list": _shared(
        PLACEMENT,
        partner_lacks={"power_override_reason"},
        customer_lacks={"power_override_reason"},
        list_route=True,
    ),
    "placement-detail": _shared(
        PLACEMENT, partner_lacks={"power_override_reason"}, customer_lacks={"power_override_reason"}
    ),
    "network-list": _shared(NETWORK, partner_lacks=set(), customer_lacks=set(), list_route=True),
    "network-detail": _shared(NETWORK, partner_lacks=set(), customer_lacks=set()),
    "platform-listing-list": _shared(
        LISTING, partner_lacks={"note"}, customer_lacks={"note", "recorded_by"}, list_route=True
    ),
    "platform-listing-detail": _shared(
        LISTING, partner_lacks={"note"}, customer_lacks={"note", "recorded_by"}
    ),
    "deployment-server-detail": _shared(DEPLOY_STATE, partner_lacks=set(), customer_lacks=set()),
    "deployment-server-deploy": SameAs("deployment-server-detail"),
    # warranty: the customer's records, registrations and claims; the partner built the server but holds no
    # warranty. Who opened a claim is a login name (PMs only).
    "warranty-record-list": _customer_row(WARRANTY_RECORD, list_route=True),
    "warranty-record-detail": _customer_row(WARRANTY_RECORD),
    "warranty-registration-list": _customer_row(WARRANTY_REGISTRATION, list_route=True),
    "warranty-registration-detail": _customer_row(WARRANTY_REGISTRATION),
    "warranty-claim-list": _customer_row(WARRANTY_CLAIM, internal={"opened_by"}, list_route=True),
    "warranty-claim-detail": _customer_row(WARRANTY_CLAIM, internal={"opened_by"}),
    **{
        f"warranty-claim-{name}": SameAs("warranty-claim-detail")
        for name in ("approve", "reject", "ship-replacement", "close")
    },
    "handover-server-detail": _shared(HANDOVER_STATE, partner_lacks=set(), customer_lacks=set()),
    "handover-server-hand-over": SameAs("handover-server-detail"),
    # warranty: the pack is the customer's document; the partner built the server but is not handed it
    "handover-pack-list": _customer_row(PACK, internal=PACK_INTERNAL, list_route=True),
    "handover-pack-detail": _customer_row(PACK, internal=PACK_INTERNAL),
    "handover-pack-pdf": NotJson("PDF"),
    "handover-pack-zip": NotJson("ZIP"),
    "warranty-certificate-detail": NotJson("PDF"),
}


def test_every_api_route_has_an_entry():
    routes = iso.router_route_names()
    assert not routes - set(TABLE), f"API routes without an audience entry: {sorted(routes - set(TABLE))}"
    assert not set(TABLE) - routes, f"Entries for routes that no longer exist: {sorted(set(TABLE) - routes)}"
    for route, entry in TABLE.items():
        if isinstance(entry, SameAs):
            assert isinstance(TABLE[entry.route], Shape), (route, entry)
        if isinstance(entry, Checked):
            assert callable(globals().get(entry.test)), (route, entry)


def test_the_table_withholds_every_internal_field():
    """The table itself, read against the rule: no tenant row of it holds a field the rule keeps internal."""
    never_for_tenants = {
        "list_price",
        "preferred_supplier",
        "unit_price",
        "supplier",
        "supplier_name",
        "supplier_country",
        "non_eu_override_reason",
        "approval_override_reason",
        "override_reason",
        "lot_override_reason",
        "power_override_reason",
        "purchase_orders",
        "note",
    }
    never_for_customers = {"partner", "partner_name", "uploaded_by", "waived_by", "recorded_by", "actor"}
    for route, entry in TABLE.items():
        if not isinstance(entry, Shape):
            continue
        for role, forbidden in (
            ("partner", never_for_tenants),
            ("customer", never_for_tenants | never_for_customers),
        ):
            keys = getattr(entry, role)
            if isinstance(keys, int):
                continue
            leaves = {path.rsplit(".", 1)[-1] for path in keys}
            assert not leaves & forbidden, (route, role, sorted(leaves & forbidden))


@pytest.mark.parametrize("role", ROLES)
def test_each_role_receives_the_tables_fields(world, role):
    mismatches = {}
    for route, entry in TABLE.items():
        if not isinstance(entry, Shape):
            continue
        expected = getattr(entry, role)
        status, keys = observe(world, route, role)
        if isinstance(expected, int):
            if status != expected:
                mismatches[route] = f"status {status}, expected {expected}"
        elif status != 200 or keys != expected:
            mismatches[route] = {
                "status": status,
                "unexpected": sorted(keys - expected),
                "missing": sorted(expected - keys),
            }
    assert not mismatches, mismatches


# --- the audit's examples --------------------------------------------------------------------------------


def test_partners_and_customers_get_no_purchase_price_or_preferred_supplier(world):
    url = world.urls["part-detail"]
    part = api_client(world.t.pm).get(url).json()
    assert (
        part["list_price"] == "1000.00" and part["preferred_supplier"] == world.iso.part.preferred_supplier_id
    )
    for user in (world.t.user_p, world.t.user_a):
        for response in (api_client(user).get(url), api_client(user).get("/api/v1/inventory/parts/")):
            assert response.status_code == 200
            assert "list_price" not in response.content.decode(), user.username
            assert "preferred_supplier" not in response.content.decode(), user.username
    # The PO a partner receives on is a delivery note: no price, no supplier.
    po = api_client(world.t.user_p).get(world.urls["purchase-order-detail"]).content.decode()
    assert "2400" not in po and world.iso.po_p.supplier.name not in po and "discount" not in po


def test_customer_events_carry_no_override_reason_note_or_po_number(world):
    order = world.events_order
    numbers = list(order.purchase_order_links.values_list("purchase_order__number", flat=True))
    assert numbers
    url = world.urls["order-events"]
    internal = ["Strategic account", "PM note", "Internal:", *numbers]
    pm_view = api_client(world.t.pm).get(url).content.decode()
    assert all(text in pm_view for text in internal)  # they are there to leak
    response = api_client(world.t.user_a).get(url)
    assert response.status_code == 200
    for text in internal:
        assert text not in response.content.decode(), text
    assert [(event["verb"], event["before"], event["after"]) for event in response.json()] == [
        ("order.submit", {"status": "draft"}, {"status": "roi_review"}),
        ("order.approve", {"status": "roi_review"}, {"status": "approved"}),
        ("order.procure", {"status": "approved"}, {"status": "procurement"}),
    ]
    # The order itself says nothing of it either.
    detail = api_client(world.t.user_a).get(world.urls["order-detail"]).content.decode()
    assert all(text not in detail for text in internal)
    checks = api_client(world.t.user_a).get(world.urls["order-approval-checks"]).content.decode()
    assert "Strategic account" not in checks


def test_customers_see_a_waiver_and_its_reason_but_not_who_waived(world):
    finding = api_client(world.t.user_a).get(world.urls["burnin-finding-detail"]).json()
    assert finding["waived"] is True and finding["waiver_reason"] == "Riser reseated; x16 confirmed by hand"
    assert "waived_by" not in finding
    assert api_client(world.t.pm).get(world.urls["burnin-finding-detail"]).json()["waived_by"] == "pm"


def test_placement_override_reason_is_left_out_not_nulled(world):
    for user in (world.t.user_a, world.t.user_p):
        placement = api_client(user).get(world.urls["placement-detail"]).json()
        assert "power_override_reason" not in placement
    reason = api_client(world.t.pm).get(world.urls["placement-detail"]).json()["power_override_reason"]
    assert reason == "Internal: the colo lets us run this PDU hot"


def test_a_partners_receipt_names_no_supplier(world):
    line = world.iso.po_p.lines.get()
    url = f"/api/v1/inventory/purchase-order-lines/{line.pk}/receive/"
    body = {"lot": "L-P2", "date_code": "2527", "origin": "TW", "serials": "P-SERIAL-3"}
    response = api_client(world.t.user_p).post(url, body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["lot"]["lot_code"] == "L-P2"
    assert "supplier_name" not in response.json()["lot"]
    assert world.iso.po_p.supplier.name not in response.content.decode()
    body = {"lot": "L-P2", "date_code": "2527", "origin": "TW", "serials": "P-SERIAL-4"}
    response = api_client(world.t.pm).post(url, body, format="json")
    assert response.json()["lot"]["supplier_name"] == world.iso.po_p.supplier.name


def test_pm_tools_refuse_tenants(world):
    body = iso.ROI_BODY
    for user in (world.t.user_p, world.t.user_a):
        response = api_client(user).post("/api/v1/roi-assessments/preview/", body, format="json")
        assert response.status_code == 403


def test_a_serializer_with_internal_fields_refuses_to_guess_its_audience(world):
    from django.core.exceptions import ImproperlyConfigured

    from inventory.api.serializers import PartSerializer
    from werkbank.audiences import Audience

    with pytest.raises(ImproperlyConfigured):
        PartSerializer(world.iso.part).data  # noqa: B018 - the read is the test
    data = PartSerializer(world.iso.part, context={"audience": {Audience.CUSTOMER}}).data
    assert "list_price" not in data and data["mpn"] == world.iso.part.mpn
