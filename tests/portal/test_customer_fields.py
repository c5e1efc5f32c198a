"""Every field a customer receives from the portal's pages, listed by hand, and the internals they never show.

The rule is portal/customer.py's docstring (the API's twin is werkbank/audiences.py, tested field by field
for every API route and role in tests/werkbank/test_audiences.py). Each portal view hands its template plain
rows, never a model instance: the paths of every key of the view's context (`response.context_data`) must
be exactly the table below, so a new field fails here until someone writes it in for customers. The pages
are rendered on a world whose rows carry the builder's internals (override reasons, PM and partner notes,
purchase orders, suppliers, prices, usernames, another customer's order), and none of them may appear.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import models
from django.utils import timezone

from deployment.services import earning_record
from inventory.models import Component
from orders.choices import OrderStatus
from orders.models import Order
from portal.customer import PAGE_FIELDS
from tests import factories
from tests.portal.portal_rig import BLACKLIST_EVIDENCE
from tests.tenants_rig import api_client
from tests.werkbank.audience_rig import key_paths
from warranty.choices import PackStatus
from warranty.models import HandoverPack, WarrantyRecord
from warranty.services import claim_approve, claim_open, claim_ship_replacement

pytestmark = pytest.mark.django_db

PAGER = {"pager", "pager.next", "pager.num_pages", "pager.number", "pager.previous"}
STAGES = {"stages", "stages[].label", "stages[].state", "stages[].status"}


def _fields(prefix: str, kind: str) -> set[str]:
    return {prefix, *(f"{prefix}.{name}" for name in PAGE_FIELDS[kind])}


#: What each page's view hands its template, key by key. Written out, not derived, except the row fields
#: named in PAGE_FIELDS (which the views enforce) — and those are listed in full just below the table.
EXPECTED: dict[str, set[str]] = {
    "orders": PAGER
    | {
        "orders",
        "orders[].configuration",
        "orders[].id",
        "orders[].last_change",
        "orders[].reference",
        "orders[].server_count",
        "orders[].servers_by_stage",
        "orders[].servers_by_stage[].count",
        "orders[].servers_by_stage[].label",
        "orders[].servers_by_stage[].status",
        "orders[].status",
        "orders[].status_label",
        "orders[].url",
    }
    | {f"orders[].{path}" for path in STAGES},
    "order": PAGER
    | {
        "order",
        "order.configuration",
        "order.created_at",
        "order.id",
        "order.last_change",
        "order.reference",
        "order.server_count",
        "order.status",
        "order.status_label",
        "order.warranty_months",
        "events",
        "events[].when",
        "events[].text",
        "events[].status",
        "events[].status_label",
        "business_case",
        "business_case.breakeven_month",
        "business_case.breakeven_utilization_opex",
        "business_case.breakeven_utilization_target",
        "business_case.buy_vs_rent_breakeven_utilization",
        "business_case.capex",
        "business_case.chart",
        "business_case.currency",
        "business_case.gpu_count",
        "business_case.horizon_months",
        "business_case.hours_per_month",
        "business_case.net_month",
        "business_case.npv",
        "business_case.payback_months",
        "business_case.price_per_gpu_hour",
        "business_case.rent_price_per_gpu_hour",
        "business_case.target_payback_months",
        "business_case.utilization",
        "business_case.version",
        "power",
        "power.circuit_limit_w",
        "power.circuit_margin_w",
        "power.circuit_ok",
        "power.installed_w",
        "power.load_w",
        "power.margin_w",
        "power.psu_ok",
        "power.usable_w",
        "power.usable_with_headroom_w",
        "power.wall_w",
        "servers",
        "servers[].asset_tag",
        "servers[].hostname",
        "servers[].id",
        "servers[].status",
        "servers[].status_label",
        "servers[].url",
        "sizing",
        "sizing.concurrency",
        "sizing.context_tokens",
        "sizing.fits",
        "sizing.gpu_vram_gb",
        "sizing.headroom_gb",
        "sizing.kv_cache_gb",
        "sizing.model",
        "sizing.per_gpu_gb",
        "sizing.total_gb",
        "sizing.weights_gb",
        # Income against the forecast (deployment.income): the deployment order's server has a month on
        # record (no ROI assessment there, so no forecast); the world's other orders show none yet.
        "income",
        "income.breakeven_month",
        "income.cashflow_chart",
        "income.chart",
        "income.converted",
        "income.currencies",
        "income.currency",
        "income.estimate_error",
        "income.forecast_month",
        "income.forecast_net_month",
        "income.forecast_payback_date",
        "income.forecast_payback_months",
        "income.mean_actual",
        "income.months",
        "income.months[].actual",
        "income.months[].difference",
        "income.months[].forecast",
        "income.months[].gpu_hours",
        "income.months[].in_progress",
        "income.months[].in_service",
        "income.months[].month",
        "income.months[].recorded",
        "income.months_missing",
        "income.net_month",
        "income.observed_price",
        "income.payback_date",
        "income.payback_months",
        "income.problem",
        "income.ratio_percent",
        "income.server_months",
        "income.servers",
        "income.servers[].actual",
        "income.servers[].forecast",
        "income.servers[].hostname",
        "income.servers[].months_recorded",
        "income.servers[].start",
        "income.start",
        "income.total_actual",
        "income.total_forecast",
        "income.utilization_from_hours",
        "income.utilization_percent",
    }
    | {f"order.{path}" for path in STAGES},
    "server": {
        "server",
        "server.asset_tag",
        "server.chassis_serial",
        "server.hostname",
        "server.id",
        "server.order_reference",
        "server.order_url",
        "server.status",
        "server.status_label",
        "slots",
        "slots[].category",
        "slots[].kind",
        "slots[].manufacturer",
        "slots[].part",
        "slots[].serial",
        "slots[].slot",
        "blacklist",
        "blacklist[].connector",
        "blacklist[].reason",
        "blacklist[].since",
        "burnin",
        "burnin.chart",
        "burnin.ended_at",
        "burnin.findings",
        "burnin.findings[].message",
        "burnin.findings[].severity",
        "burnin.findings[].severity_label",
        "burnin.findings[].subject",
        "burnin.findings[].waived",
        "burnin.findings[].waived_at",
        "burnin.findings[].waiver_reason",
        "burnin.full_load_h",
        "burnin.incomplete_stages",
        "burnin.result",
        "burnin.result_label",
        "burnin.stale_because",
        "burnin.started_at",
        "burnin.target_h",
        "burnin.url",
        # The handed-over server's health history: its runs, no field run yet (the GPU rows and drift
        # findings: tests/burnin/test_pages_health.py, which renders them and checks their fields).
        "health",
        "health.field_runs",
        "health.gpus",
        "health.handed_over",
        "health.last_field_check_at",
        "health.last_run_at",
        "health.max_age_days",
        "health.newest_field_run_at",
        "health.newest_findings",
        "health.overdue",
        "health.runs",
        "health.runs[].accepted_at",
        "health.runs[].drift_fails",
        "health.runs[].id",
        "health.runs[].is_baseline",
        "health.runs[].purpose",
        "health.runs[].purpose_label",
        "health.runs[].result",
        "health.runs[].result_label",
        "health.runs[].started_at",
        "health.runs[].uploaded_at",
        "health.runs[].url",
        "health.timeline",
        "placement",
        "placement.country",
        "placement.elevation_url",
        "placement.face",
        "placement.lowest_u",
        "placement.rack",
        "placement.rack_id",
        "placement.site",
        "placement.top_u",
        "show_documents",
        "show_warranty",
        "warranty_records",
        "warranty_records[].description",
        "warranty_records[].end_date",
        "warranty_records[].serial",
        "warranty_records[].start_date",
        "warranty_records[].state",
        "warranty_records[].url",
        "handover_packs",
        "handover_packs[].generated_at",
        "handover_packs[].newest",
        "handover_packs[].language",
        "handover_packs[].pdf_url",
        "handover_packs[].revision",
        "handover_packs[].zip_sha256",
        "handover_packs[].zip_url",
        "pack_coming",
        "certificate_url",
        # The BMC credentials' block: whether they can be revealed, never the credentials.
        "bmc",
        "bmc.handed_over",
        "bmc.reveal_url",
        "bmc.stored",
    },
    # The reveal page before a reveal; the revealed row (`bmc.revealed`: username, password) only in the
    # answer to a reveal with the password (tests/deployment/test_credentials.py).
    "bmc_credentials": {
        "server",
        "server.hostname",
        "server.id",
        "server.url",
        "bmc",
        "bmc.handed_over",
        "bmc.reveal_url",
        "bmc.stored",
        "error",
        "revealed",
    },
    "tokens": {"limit", "new_token", "tokens", "tokens[].created", "tokens[].expiry", "tokens[].token_key"},
    "warranty": {
        "serial",
        "records",
        "records[].description",
        "records[].end_date",
        "records[].hostname",
        "records[].serial",
        "records[].start_date",
        "records[].state",
        "records[].url",
    }
    | PAGER,
    "warranty_record": {
        "record",
        "record.asset_tag",
        "record.description",
        "record.end_date",
        "record.hostname",
        "record.order_reference",
        "record.replaced_at",
        "record.serial",
        "record.start_date",
        "record.state",
        "record.term_months",
        "replaces",
        "replaces.serial",
        "replaces.url",
        "replaced_by",
        "replaced_by.serial",
        "replaced_by.url",
        "claims",
        "claims[].created_at",
        "claims[].decision_note",
        "claims[].description",
        "claims[].drift",  # None here: a claim drafted from drift (tests/warranty/test_api_claims_drift.py)
        "claims[].number",
        "claims[].replacement",
        "claims[].replacement.serial",
        "claims[].replacement.url",
        "claims[].status",
        "claims[].status_label",
        "claims[].attachments",  # the world's claim was filed with a log (the replacement's with none)
        "claims[].attachments[].kind",
        "claims[].attachments[].kind_label",
        "claims[].attachments[].name",
        "claims[].attachments[].size_bytes",
        "claims[].attachments[].url",
        "claims[].attach_url",
        "claims[].attach_form",  # a Django form (AttachForm): the customer's own file
        "form",  # a Django form (ClaimForm): the customer's own description and files
        "can_claim",
    },
}

#: Field names the rule keeps from customers (werkbank/audiences.py, "Customer"), as keys anywhere.
NEVER_FOR_CUSTOMERS = {
    "notes",
    "note",
    "approval_override_reason",
    "override_reason",
    "lot_override_reason",
    "power_override_reason",
    "purchase_orders",
    "purchase_order",
    "supplier",
    "supplier_name",
    "list_price",
    "unit_price",
    "preferred_supplier",
    "partner",
    "partner_name",
    "evidence",
    "actor",
    "created_by",
    "installed_by",
    "uploaded_by",
    "waived_by",
    "placed_by",
    "recorded_by",
    "digest",
}


#: The decision note on the world's claim: written for the customer, so the record's page shows it.
DECISION_NOTE = "The fan log shows a seized bearing: a new card is on its way."
#: Another member of customer A, who opened the claim on the replacement: who opened a claim is a login
#: name, which the portal does not show.
COLLEAGUE = "carol-buyer"


@pytest.fixture
def warranty_world(portal_world: Any) -> Any:
    """The portal world, whose claim on P-SERIAL-1 (customer A's) is approved with a decision note and
    answered by a replacement (P-SERIAL-2, from partner P's stock; the PM's shipping note is internal),
    and whose replacement has a claim of its own, opened by a colleague of the customer's user."""
    w = portal_world
    claim = claim_approve(claim=w.warranty.claim, actor=w.t.pm, note=DECISION_NOTE)
    claim_ship_replacement(
        claim=claim,
        actor=w.t.pm,
        component=Component.objects.get(serial="P-SERIAL-2"),
        note="PM note: taken from the B-stock shelf",
    )
    colleague = factories.make_member(w.t.customer_a, username=COLLEAGUE)
    claim_open(record=_replacement(w), actor=colleague, description="The new card is loud too")
    # The deployment order stands where its servers do, and its deployed server has a month on record.
    Order.objects.filter(pk=w.deployment.ready.order_id).update(status=OrderStatus.DEPLOYMENT)
    earning_record(
        server=w.deployment.listing.server,
        platform="vast_ai",
        month=timezone.localdate(),
        amount=Decimal("1234.50"),
        gpu_hours=Decimal("1500"),
        actor=w.t.pm,
    )
    return w


def _replacement(w: Any) -> WarrantyRecord:
    return WarrantyRecord.objects.get(replaces=w.warranty.record)


def _pages(w: Any) -> dict[str, list[str]]:
    """The pages rendered on the warranty world, by the EXPECTED table's name."""
    return {
        "orders": ["/portal/"],
        "order": [
            f"/portal/orders/{w.iso.order_a.pk}/",
            f"/portal/orders/{w.events_order.pk}/",
            f"/portal/orders/{w.deployment.ready.order_id}/",  # a month of earnings on record
        ],
        "server": [f"/portal/servers/{w.builds.server.pk}/", f"/portal/servers/{w.deployment.ready.pk}/"],
        "bmc_credentials": [f"/portal/servers/{w.builds.server.pk}/bmc-credentials/"],
        "tokens": ["/portal/tokens/"],
        "warranty": ["/portal/warranty/", "/portal/warranty/?serial=p-serial-2"],
        "warranty_record": [
            f"/portal/warranty/records/{w.warranty.record.pk}/",  # replaced: a claim with its answer
            f"/portal/warranty/records/{_replacement(w).pk}/",  # the replacement: a claim in progress
        ],
    }


def _no_model_instances(value: Any, path: str = "") -> list[str]:
    """Paths at which a model instance (or a queryset) would reach a template."""
    if isinstance(value, models.Model | models.QuerySet):
        return [path or "<root>"]
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in _no_model_instances(item, f"{path}.{key}")]
    if isinstance(value, list | tuple):
        return [hit for item in value for hit in _no_model_instances(item, f"{path}[]")]
    return []


def _internal_texts(w: Any) -> list[str]:
    po = w.iso.po_p
    return [
        "Strategic account",  # the PM's approval override reason
        "PM note",  # transition notes and the ROI note
        "Internal:",  # order notes, PO notes, the placement's power override reason
        "discount",
        BLACKLIST_EVIDENCE,
        po.number,
        po.supplier.name,
        w.t.partner_p.name,  # the subcontractor
        "petr",  # the partner's username (installer, uploader)
        w.iso.order_b.reference,  # another customer's order
        COLLEAGUE,  # who opened a claim
        "2400.00",  # the price paid per part
        "2.400,00",
    ]


def test_the_table_keeps_every_internal_field_out():
    for page, paths in EXPECTED.items():
        leaves = {path.rsplit(".", 1)[-1].removesuffix("[]") for path in paths}
        assert not leaves & NEVER_FOR_CUSTOMERS, (page, sorted(leaves & NEVER_FOR_CUSTOMERS))
    for kind, names in PAGE_FIELDS.items():
        assert not names & NEVER_FOR_CUSTOMERS, (kind, sorted(names & NEVER_FOR_CUSTOMERS))


@pytest.mark.parametrize("language", ["en", "de"])
def test_each_page_hands_its_template_exactly_the_listed_fields(client, warranty_world, language):
    w = warranty_world
    # The deployed server's pack is ready: the documents block lists it with its downloads.
    HandoverPack.objects.filter(server=w.deployment.ready).update(
        status=PackStatus.READY,
        progress=100,
        pdf="handover/pack.pdf",
        zip="handover/pack.zip",
        pdf_sha256="a" * 64,
        zip_sha256="b" * 64,
        finished_at=timezone.now(),
    )
    client.force_login(w.t.user_a)
    client.cookies["django_language"] = language
    assert client.post("/portal/tokens/").status_code == 200  # one token to list
    internal = _internal_texts(w)
    for page, urls in _pages(w).items():
        seen: set[str] = set()
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            assert not _no_model_instances(response.context_data), (
                url,
                _no_model_instances(response.context_data),
            )
            seen |= key_paths(response.context_data)
            html = response.content.decode()
            leaked = [text for text in internal if text in html]
            assert not leaked, (url, leaked)
        assert seen == EXPECTED[page], {
            "page": page,
            "unexpected": sorted(seen - EXPECTED[page]),
            "missing": sorted(EXPECTED[page] - seen),
        }


def test_the_internal_texts_are_there_to_leak(portal_world):
    """The world really carries the internals the test above looks for (else it would prove nothing)."""
    from builds.models import ConnectorBlacklist
    from deployment.models import RackPlacement

    w = portal_world
    assert w.events_order.approval_override_reason == "Strategic account"
    assert "Internal:" in w.events_order.notes
    assert ConnectorBlacklist.objects.get(connector=w.builds.connector).evidence == BLACKLIST_EVIDENCE
    assert RackPlacement.objects.get(pk=w.deployment.placement.pk).power_override_reason.startswith(
        "Internal:"
    )
    assert w.events_order.purchase_order_links.exists()


def test_the_customers_order_list_in_the_api_has_no_override_reason_or_purchase_orders(portal_world):
    w = portal_world
    body = api_client(w.t.user_a).get(f"/api/v1/orders/?q={w.events_order.reference}").json()
    [order] = body["results"]
    assert "approval_override_reason" not in order and "purchase_orders" not in order
    assert "notes" not in order
    pm_view = api_client(w.t.pm).get(f"/api/v1/orders/?q={w.events_order.reference}").json()["results"][0]
    assert pm_view["approval_override_reason"] == "Strategic account" and pm_view["purchase_orders"]


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_warranty_pages_show_the_decision_note_and_the_lineage(client, warranty_world, language):
    """The decision note is written for the customer: it is shown, with the replacement both ways; who
    opened a claim and the PM's shipping note are not (the leak check above), though the world has them."""
    from werkbank.models import AuditEvent

    w = warranty_world
    old, new = w.warranty.record, _replacement(w)
    assert new.claims.get().opened_by.username == COLLEAGUE
    assert AuditEvent.objects.filter(note__startswith="PM note: taken from the B-stock shelf").exists()
    client.force_login(w.t.user_a)
    client.cookies["django_language"] = language
    html = client.get(f"/portal/warranty/records/{old.pk}/").content.decode()
    assert DECISION_NOTE in html and w.warranty.claim.number in html
    assert f'href="/portal/warranty/records/{new.pk}/"' in html and "P-SERIAL-2" in html
    html = client.get(f"/portal/warranty/records/{new.pk}/").content.decode()
    assert f'href="/portal/warranty/records/{old.pk}/"' in html and "The new card is loud too" in html
    listed = client.get("/portal/warranty/?serial=p-serial-2").context_data["records"]
    assert [(r["serial"], r["state"], r["url"]) for r in listed] == [
        ("P-SERIAL-2", "active", f"/portal/warranty/records/{new.pk}/")
    ]
