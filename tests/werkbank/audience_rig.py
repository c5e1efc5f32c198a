"""The audience tests' world and how a role's answer is read (test_audiences.py; the portal tests reuse both).

Customer A's orders, built by partner P, in burn-in and deployed, on the isolation tests' world
(tests/werkbank/isolation_rig.py), with notes a PM wrote for PMs at every step. `observe` GETs a route as a
role and collects the keys of the JSON answer as paths; `Shape` and its helpers write down what each role
receives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from dateutil.relativedelta import relativedelta
from django.utils import timezone

from burnin.models import Finding, TelemetrySample
from burnin.services.gate import finding_waive
from burnin.services.samples import store_rollup
from deployment.models import RackPlacement
from inventory.models import BatchLot, Component, StockMovement
from inventory.services import label_batch_request
from orders.choices import OrderStatus
from orders.models import Workload
from orders.services import order_approve, order_procure, order_submit, order_update
from pm.quality.rows import KINDS
from pm.quality.selectors import quality_rows
from tests import factories
from tests.tenants_rig import Tenants, api_client
from tests.warranty.report_rig import records_ending, stock, supplier
from tests.werkbank import isolation_rig as iso
from warranty.models import Attribution, HandoverPack, SupplierReturn

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


def _prefix(w: World) -> Any:
    """The management prefix of the site the customer's servers stand at (issue #28)."""
    from deployment.services import prefix_create

    return prefix_create(
        site=w.deployment.site,
        prefix="10.0.0.0/24",
        role="management",
        actor=w.t.pm,
        vlan=10,
        gateway="10.0.0.254",
    )


def _urls(w: World) -> dict[str, str]:
    b, d, order, po = w.builds, w.deployment, w.iso.order_a, w.iso.po_p
    lot = BatchLot.objects.get(lot_code="L-P")
    label_batch = label_batch_request(actor=w.t.user_p, lot=lot)
    supplier_return = SupplierReturn.objects.create(  # a row as the PM's service leaves it: PMs only
        number="SR-2026-0001",
        component=Component.objects.get(serial="P-SERIAL-2"),
        supplier_id=po.supplier_id,
        reason="No PCIe link",
        created_by=w.t.pm,
    )
    # The rules' row of the filed claim (PMs only).
    attribution = Attribution.objects.get(claim=w.warranty.claim)
    run = w.gate.fail.run
    # A record of customer A ending within 90 days and a spare near its supplier warranty's end (PMs only).
    records_ending(w.t.customer_a, {"AUD-REPORT-1": 30})
    stock(
        supplier("Audience Parts GmbH", 36),
        {"AUD-SPARE-1": timezone.localdate() + timedelta(days=20) - relativedelta(months=36)},
    )
    # The fleet's quality: each table's first row (the world's installations and its claim's attribution).
    quality = {kind: quality_rows(kind)[0].key for kind in KINDS}
    return {
        **{f"quality-{kind[:-1]}-list": f"/api/v1/quality/{kind}/" for kind in KINDS},
        **{f"quality-{kind[:-1]}-detail": f"/api/v1/quality/{kind}/{key}/" for kind, key in quality.items()},
        "warranty-report-list": "/api/v1/warranty/report/",
        "warranty-spares-ending-list": "/api/v1/warranty/spares-ending/",
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
        "ip-prefix-list": "/api/v1/prefixes/",
        "ip-prefix-detail": f"/api/v1/prefixes/{_prefix(w).pk}/",
        "site-address-next-address": f"/api/v1/sites/{d.site.pk}/next-address/?role=management",
        "platform-listing-list": "/api/v1/platform-listings/",
        "platform-listing-detail": f"/api/v1/platform-listings/{d.listing.pk}/",
        "deployment-server-detail": f"/api/v1/deployment/servers/{d.ready.asset_tag}/",
        "warranty-record-list": "/api/v1/warranty/records/?serial=P-SERIAL-1",
        "warranty-record-detail": f"/api/v1/warranty/records/{w.warranty.record.pk}/",
        "warranty-registration-list": f"/api/v1/warranty/registrations/?server={b.server.pk}",
        "warranty-registration-detail": f"/api/v1/warranty/registrations/{w.warranty.registration.pk}/",
        "warranty-claim-list": "/api/v1/warranty/claims/",
        "warranty-claim-detail": f"/api/v1/warranty/claims/{w.warranty.claim.pk}/",
        "warranty-supplier-return-list": "/api/v1/warranty/supplier-returns/",
        "warranty-supplier-return-detail": f"/api/v1/warranty/supplier-returns/{supplier_return.pk}/",
        "warranty-attribution-list": "/api/v1/warranty/attributions/",
        "warranty-attribution-detail": f"/api/v1/warranty/attributions/{attribution.pk}/",
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
    """A write action with an answer of its own, checked by a named test of test_audiences.py."""

    test: str


@dataclass(frozen=True)
class NotJson:
    """A file: no fields."""

    kind: str


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
