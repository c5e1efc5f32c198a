"""Which fields each role receives from each API route: the rule of `werkbank/audiences.py`, as a table.

For every route of the API router, a PM, a partner member (P, who builds customer A's servers) and a customer
member (A) GET it on one world of realistic data, and the set of JSON keys each receives (recursively, as
paths like `lines[].unit_price`; `results[].` for a list's rows) must be exactly the table's. The tables are
written by hand: each role's set is the full set minus the fields the rule withholds, named explicitly, and
a new field fails the test until someone writes it into the table for the roles that may receive it. A
route with no entry fails the meta-test. Write actions answer with the serializer of a read route
(`SameAs`) or are checked by a named test (`Checked`); files are not JSON.

Below the table, the audit's examples as regression tests (issue #16, defect 10).

The world and the key collection are tests/werkbank/audience_rig.py, the fields by serializer
tests/werkbank/audience_fields_rig.py.
"""

from __future__ import annotations

import pytest

from inventory.models import PurchaseOrder
from tests import factories
from tests.tenants_rig import api_client
from tests.werkbank import isolation_rig as iso
from tests.werkbank.audience_fields_report import (
    CLAIM_FILES,
    CLAIM_FILES_INTERNAL,
    REPORT_RECORD,
    SPARE_ENDING,
)
from tests.werkbank.audience_fields_rig import (
    ALLOCATION,
    APPROVAL,
    ATTRIBUTION,
    CLAIM_INTERNAL,
    COMPONENT,
    CONFIGURATION,
    CONNECTOR,
    CONNECTOR_MAP,
    DEPLOY_STATE,
    EVENTS_CUSTOMER,
    EVENTS_PM,
    FEED,
    FEED_LOAD,
    FINDING,
    GATE,
    HANDOVER_STATE,
    INSTALLATION,
    LABEL_BATCH,
    LAYOUT,
    LISTING,
    LOT,
    MOVEMENT,
    NETWORK,
    ORDER,
    ORDER_INTERNAL,
    ORGANIZATION,
    PACK,
    PACK_INTERNAL,
    PART,
    PHOTO,
    PLACEMENT,
    PO,
    PO_DETAIL,
    PO_INTERNAL,
    PO_LINE,
    POWER_FEED,
    PURCHASING,
    QUALITY_ROW,
    RACK,
    RACK_POWER,
    ROI,
    ROI_INTERNAL,
    RUN,
    RUN_DETAIL,
    SERVER,
    SITE,
    STEP,
    SUBCONTRACTOR,
    SUPPLIER,
    SUPPLIER_NAME,
    SUPPLIER_RETURN,
    TELEMETRY,
    TRANSITION_CHECKS,
    WARRANTY_CLAIM,
    WARRANTY_RECORD,
    WARRANTY_REGISTRATION,
    WORKLOAD,
)
from tests.werkbank.audience_rig import (
    NO_ROWS,
    ROLES,
    Checked,
    NotJson,
    SameAs,
    Shape,
    _bench,
    _customer_row,
    _shared,
    nested,
    observe,
    page,
    rows,
)
from tests.werkbank.audience_rig import world as audience_world

pytestmark = pytest.mark.django_db

world = audience_world


#: A site's IP prefix, and the next free address of a role (deployment/api/prefixes.py, issue #28).
IP_PREFIX = {"id", "site", "site_name", "prefix", "role", "vlan", "gateway", "description", "created_at"}
NEXT_ADDRESS = {"site", "role", "address", "prefix", "prefix_id", "vlan", "gateway", "detail"}

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
    "purchase-order-detail": _bench(PO_DETAIL, internal=PO_INTERNAL | {"quality_warnings"}),
    "purchase-order-lines": Checked("test_a_line_added_to_a_po_answers_a_pm_only"),
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
    # A prefix is seen with its site; the next free address is for PMs (a member who sees the site: 403).
    "ip-prefix-list": _shared(IP_PREFIX, partner_lacks=set(), customer_lacks=set(), list_route=True),
    "ip-prefix-detail": _shared(IP_PREFIX, partner_lacks=set(), customer_lacks=set()),
    "site-address-next-address": Shape(pm=NEXT_ADDRESS, partner=403, customer=403),
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
    # Its supplier return is the builder's business with its supplier (PMs only).
    # Its attachments: who uploaded one is a login name (PMs only).
    "warranty-claim-list": _customer_row(
        WARRANTY_CLAIM | CLAIM_FILES, internal=CLAIM_INTERNAL | CLAIM_FILES_INTERNAL, list_route=True
    ),
    "warranty-claim-detail": _customer_row(
        WARRANTY_CLAIM | CLAIM_FILES, internal=CLAIM_INTERNAL | CLAIM_FILES_INTERNAL
    ),
    **{
        f"warranty-claim-{name}": SameAs("warranty-claim-detail")
        for name in ("confirm", "dismiss", "approve", "reject", "ship-replacement", "close", "attachments")
    },
    "warranty-claim-attachment-download": NotJson("the log or photo"),
    # Returns of failed components to their suppliers: purchasing, PMs only.
    "warranty-supplier-return-list": Shape(pm=page(SUPPLIER_RETURN), partner=NO_ROWS, customer=NO_ROWS),
    "warranty-supplier-return-detail": Shape(pm=SUPPLIER_RETURN, partner=404, customer=404),
    "warranty-supplier-return-ship": SameAs("warranty-supplier-return-detail"),
    "warranty-supplier-return-close": SameAs("warranty-supplier-return-detail"),
    "warranty-attribution-list": Shape(pm=page(ATTRIBUTION), partner=NO_ROWS, customer=NO_ROWS),
    "warranty-attribution-detail": Shape(pm=ATTRIBUTION, partner=404, customer=404),
    "warranty-attribution-attribute": SameAs("warranty-attribution-detail"),
    # The PM's warranty report and the spares near their supplier warranty's end: PMs only.
    "warranty-report-list": Shape(pm=page(REPORT_RECORD), partner=NO_ROWS, customer=NO_ROWS),
    "warranty-spares-ending-list": Shape(pm=page(SPARE_ENDING), partner=NO_ROWS, customer=NO_ROWS),
    # The fleet's quality (pm/api): every customer's failures, every supplier's lots: PMs only.
    **{
        f"quality-{stem}-list": Shape(pm=page(QUALITY_ROW), partner=NO_ROWS, customer=NO_ROWS)
        for stem in ("lot", "supplier", "part", "position")
    },
    **{
        f"quality-{stem}-detail": Shape(pm=QUALITY_ROW | {"evidence"}, partner=404, customer=404)
        for stem in ("lot", "supplier", "part", "position")
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
        "quality_override_reason",
        "quality_warnings",
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


def test_a_line_added_to_a_po_answers_a_pm_only(world):
    """A PM's answer is the line with its price and the PO's quality warnings; a partner who sees the PO
    may not add to it, a customer does not see it."""
    po = world.iso.po_p
    PurchaseOrder.objects.filter(pk=po.pk).update(status="draft")
    url = f"/api/v1/inventory/purchase-orders/{po.pk}/lines/"
    body = {"part": factories.PartFactory().pk, "quantity": 2, "unit_price": "10.00"}
    assert api_client(world.t.user_p).post(url, body, format="json").status_code == 403
    assert api_client(world.t.user_a).post(url, body, format="json").status_code == 404
    response = api_client(world.t.pm).post(url, body, format="json")
    assert response.status_code == 201, response.content
    assert set(response.json()) == PO_LINE | {"quality_warnings"}


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
