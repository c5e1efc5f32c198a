"""Every service that changes something writes an audit row, and a test proves each (issue #16, defect 9).

`SERVICES` names every public service of werkbank, inventory, orders, builds, burnin and deployment
(`<app>.services.__all__`, or, where a services module has no `__all__`, every public function and class
it defines) with the verbs it writes and the test that proves it (`"tests/…::test_name"`, with a `[case]`
for one case of a parametrized test), or with the reason it writes none. The meta-tests fail for a service
missing from the table, for a named test that does not exist, and for a named test whose source does not
name the verb. The two tests below prove the services that no other test asserted a row for.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps

from deployment.services import feed_create, feed_delete, rack_create, rack_update, site_create
from inventory.choices import PartCategory
from inventory.services import part_create, supplier_create
from orders.services import configuration_create, order_update
from tests import factories
from tests.builds.bench_rig import CHASSIS, DIMMS, GPUS_L1, install, post
from tests.builds.bench_rig import bench as builds_bench
from tests.werkbank.audit_table_deployment import DEPLOYMENT_SERVICES
from werkbank.models import AuditEvent
from werkbank.services import membership_add, membership_remove, organization_create

pytestmark = pytest.mark.django_db

bench = builds_bench  # the builds tests' bench fixture, used here too

ROOT = Path(__file__).resolve().parents[2]
APPS = ("werkbank", "inventory", "orders", "builds", "burnin", "deployment", "warranty")
HERE = "tests/werkbank/test_audit_coverage.py"
ADMIN = "tests/werkbank/test_admin_audit.py"


def _verbs(event_source: Any) -> list[str]:
    return list(AuditEvent.objects.for_object(event_source).order_by("pk").values_list("verb", flat=True))


def test_a_server_built_on_the_bench_leaves_a_row_for_each_step(bench):
    """servers_create_for_order and server_assign_partner (the fixture), then the bench through its API:
    start, install, move, remove, log steps, mark assembled."""
    partner = bench.t.user_p
    assert post(partner, bench.url("start-assembly/")).status_code == 200
    install(bench, GPUS_L1[0], "PCIe-1")
    moved = post(
        partner, bench.url("move/"), {"serial": GPUS_L1[0], "to_connector": "PCIe-2", "reason": "air"}
    )
    assert moved.status_code == 200, moved.json()
    removed = post(partner, bench.url("remove/"), {"serial": GPUS_L1[0], "reason": "reseat"})
    assert removed.status_code == 200, removed.json()
    for serial, connector in zip(
        [*GPUS_L1, *DIMMS, CHASSIS],
        ["PCIe-1", "PCIe-2", "Riser-1", "DIMM-A1", "DIMM-A2", "Chassis"],
        strict=True,
    ):
        install(bench, serial, connector)
    for kind, data in (("pcie_topology_check", {"gpus_detected": 2}), ("qc_signoff", {})):
        assert post(partner, bench.url("steps/"), {"kind": kind, "data": data}).status_code == 201
    assert post(partner, bench.url("mark-assembled/")).status_code == 200

    verbs = _verbs(bench.server)
    assert verbs[:3] == ["server.create", "server.assign", "server.start_assembly"]
    assert verbs.count("server.install") == 8  # one, its move, and six for the build
    assert verbs.count("server.remove") == 2  # the move's and the removal
    assert verbs.count("server.step") == 2 and verbs[-1] == "server.mark_assembled"
    assert set(AuditEvent.objects.filter(verb__startswith="server.").values_list("actor", flat=True)) == {
        bench.t.pm.pk,
        partner.pk,
    }


def test_core_inventory_orders_and_deployment_services_leave_a_row_each(tenants):
    pm = tenants.pm
    organization = organization_create(actor=pm, name="Gamma Compute", kind="customer")
    membership = membership_add(actor=pm, organization=organization, user=tenants.user_a)
    membership_remove(actor=pm, membership=membership)
    assert _verbs(organization) == ["organization.create", "membership.add", "membership.remove"]

    supplier = supplier_create(actor=pm, name="Kabel GmbH", country="DE")
    part = part_create(
        actor=pm, category=PartCategory.MEMORY, manufacturer="Samsung", mpn="M321", name="64 GB RDIMM"
    )
    assert (_verbs(supplier), _verbs(part)) == (["supplier.create"], ["part.create"])

    po = factories.receive_stock(deliver_to=tenants.partner_p, lots={"L1": ["S-1", "S-2"]}, part=part)
    assert _verbs(po)[:2] == ["purchase_order.create", "purchase_order.send"]
    assert "purchase_order.receive" in _verbs(po)

    configuration = configuration_create(
        actor=pm, name="8×GPU", psu_count=4, psu_rating_w=3000, psu_redundant=1, lines=[(part, 16)]
    )
    order = order_update(
        order=factories.OrderFactory(customer=tenants.customer_a), actor=pm, notes="Rack by the window"
    )
    assert (_verbs(configuration), _verbs(order)) == (["configuration.create"], ["order.update"])

    site = site_create(
        actor=pm, name="Berlin 1", kind="colocation", operator="Hafen DC", country="DE", address="Am Hafen 1"
    )
    rack = rack_create(site=site, actor=pm, name="B-01")
    rack_update(rack=rack, actor=pm, height_u=48)
    feed = feed_create(rack=rack, actor=pm, name="A1", leg="A", voltage_v=230, current_a=16, phases=1)
    feed_delete(feed=feed, actor=pm)
    assert _verbs(site) == ["deployment.site_create"]
    assert _verbs(rack) == [
        "deployment.rack_create",
        "deployment.rack_update",
        "deployment.feed_create",
        "deployment.feed_delete",
    ]
    assert not AuditEvent.objects.filter(actor__isnull=True).exists()


# --- the table -------------------------------------------------------------------------------------------

BUILD = f"{HERE}::test_a_server_built_on_the_bench_leaves_a_row_for_each_step"
CORE = f"{HERE}::test_core_inventory_orders_and_deployment_services_leave_a_row_each"
ORDER_TRANSITIONS = "tests/orders/test_api_transitions.py::test_transition_allowed"
PO_TRANSITIONS = "tests/inventory/test_api_purchase_orders.py::test_po_transition_allowed"
PACK_SERVICES = "tests/warranty/test_services_packs.py"
PACKS = f"{PACK_SERVICES}::test_a_requested_pack_is_rendered_once_even_when_the_task_runs_twice"
PACK_FAILURE = (
    "tests/warranty/test_services_packs.py::test_a_failure_is_recorded_retried_by_the_pm_and_then_succeeds"
)
LABEL_BATCHES = (
    "tests/inventory/test_label_batches.py::test_a_batch_is_rendered_once_even_when_the_task_runs_twice"
)
LABEL_FAILURE = (
    "tests/inventory/test_label_batches.py::test_a_failed_render_is_recorded_and_the_next_run_finishes"
)
GATE = (
    "tests/burnin/test_gate.py::test_pass_is_refused_while_a_fail_is_unwaived_and_allowed_once_a_pm_waived_it"
)


CLAIM_PATH = (
    "tests/warranty/test_services_claims.py::test_full_claim_path_with_replacement_keeps_lineage_both_ways"
)
EXPIRY = "tests/warranty/test_services_expiry.py::test_digest_sent_once_per_threshold_90_then_30"
DRIFT_CLAIMS = "tests/warranty/test_services_drift_claims.py"
DRIFT_DRAFT = f"{DRIFT_CLAIMS}::test_each_fail_drift_drafts_one_claim_on_its_cards_record_and_tells_the_pms"


SUPPLIER_RETURN = (
    "tests/warranty/test_supplier_returns.py::"
    "test_a_return_from_a_claim_brings_a_replacement_into_the_same_lot"
)

ATTRIBUTION = "tests/warranty/test_attribution.py"


def exempt(reason: str) -> tuple[None, str]:
    return None, reason


#: "module:name" → (verbs, the test that proves them) or (None, why it writes no audit row).
SERVICES: dict[str, tuple[tuple[str, ...] | None, str]] = {
    # werkbank
    "werkbank.services:organization_create": (("organization.create",), CORE),
    "werkbank.services:organization_update": (
        ("organization.update",),
        f"{ADMIN}::test_an_organization_and_a_membership_saved_in_the_admin_are_audited",
    ),
    "werkbank.services:membership_add": (("membership.add",), CORE),
    "werkbank.services:membership_remove": (("membership.remove",), CORE),
    "werkbank.services:user_access": exempt("a read: the access fields of a user, for the audit row"),
    "werkbank.services:user_access_record": (
        ("user.access",),
        f"{ADMIN}::test_granting_staff_status_and_the_pm_group_is_audited",
    ),
    "werkbank.services:next_reference": exempt("numbers a new row inside its creating service, which audits"),
    "werkbank.services:live_api_tokens": exempt("a read: the user's unexpired API tokens"),
    "werkbank.services:api_token_limit_check": exempt(
        "a check: refuses a token beyond the cap, writes nothing"
    ),
    "werkbank.services:api_token_create": (
        ("api_token.create",),
        "tests/portal/test_pages_customer.py::test_a_customer_creates_a_token_sees_it_once_lists_and_revokes_it",
    ),
    "werkbank.services:api_token_revoke": (
        ("api_token.revoke",),
        "tests/portal/test_pages_customer.py::test_a_customer_creates_a_token_sees_it_once_lists_and_revokes_it",
    ),
    # inventory
    "inventory.services:part_create": (("part.create",), CORE),
    "inventory.services:part_update": (
        ("part.update",),
        f"{ADMIN}::test_parts_and_suppliers_saved_in_the_admin_are_audited",
    ),
    "inventory.services:supplier_create": (("supplier.create",), CORE),
    "inventory.services:supplier_update": (
        ("supplier.update",),
        f"{ADMIN}::test_parts_and_suppliers_saved_in_the_admin_are_audited",
    ),
    "inventory.services:po_create": (("purchase_order.create",), CORE),
    "inventory.services:po_send": (("purchase_order.send",), f"{PO_TRANSITIONS}[send]"),
    "inventory.services:po_cancel": (("purchase_order.cancel",), f"{PO_TRANSITIONS}[cancel]"),
    "inventory.services:po_close": (("purchase_order.close",), f"{PO_TRANSITIONS}[close]"),
    "inventory.services:po_line_receive": (("purchase_order.receive",), CORE),
    "inventory.services:po_line_add": (
        ("purchase_order.line_add",),
        "tests/inventory/test_quality_gate.py::test_po_line_add_adds_an_audited_line_to_a_draft",
    ),
    "inventory.services:warehouse_location": exempt("a read: the location text of a workshop"),
    "inventory.services:Receipt": exempt("the result of po_line_receive, a data class"),
    "inventory.services:label_batch_request": (("label_batch.request",), LABEL_BATCHES),
    "inventory.services:label_batch_generate": (("label_batch.generate", "label_batch.fail"), LABEL_FAILURE),
    "inventory.services:label_batch_progress": exempt(
        "the running task's progress column, written apart so a watcher sees it; the request and the "
        "outcome (label_batch.generate, label_batch.fail) are audited"
    ),
    "inventory.services:component_move": exempt(
        "a step of install, remove and allocate (which audit): it writes a StockMovement ledger row with "
        "the actor for every component"
    ),
    "inventory.services:component_receive_replacement": (("component.receive_replacement",), SUPPLIER_RETURN),
    # orders
    "orders.services:TRANSITION_SERVICES": exempt("a map of the transition services below"),
    "orders.services:configuration_create": (("configuration.create",), CORE),
    "orders.services:configuration_update": (
        ("configuration.update",),
        f"{ADMIN}::test_a_configuration_saved_in_the_admin_is_audited",
    ),
    "orders.services:order_create": (
        ("order.create",),
        "tests/orders/test_api_orders.py::test_pm_creates_orders_with_sequential_references",
    ),
    "orders.services:order_update": (("order.update",), CORE),
    "orders.services:order_submit": (("order.submit",), f"{ORDER_TRANSITIONS}[submit]"),
    "orders.services:order_approve": (("order.approve",), f"{ORDER_TRANSITIONS}[approve]"),
    "orders.services:order_reject": (("order.reject",), f"{ORDER_TRANSITIONS}[reject]"),
    "orders.services:order_procure": (("order.procure",), f"{ORDER_TRANSITIONS}[procure]"),
    "orders.services:order_start_assembly": (
        ("order.start_assembly",),
        f"{ORDER_TRANSITIONS}[start_assembly]",
    ),
    "orders.services:order_start_burn_in": (("order.start_burn_in",), f"{ORDER_TRANSITIONS}[start_burn_in]"),
    "orders.services:order_start_deployment": (
        ("order.start_deployment",),
        f"{ORDER_TRANSITIONS}[start_deployment]",
    ),
    "orders.services:order_hand_over": (("order.hand_over",), f"{ORDER_TRANSITIONS}[hand_over]"),
    "orders.services:order_close": (("order.close",), f"{ORDER_TRANSITIONS}[close]"),
    "orders.services:order_cancel": (("order.cancel",), f"{ORDER_TRANSITIONS}[cancel]"),
    "orders.services:order_status_notice_send": exempt(
        "sends the customer's e-mail for an existing audit row (a task); writes the StatusNotice only"
    ),
    "werkbank.services:organization_recipients": exempt("a read: who an organisation's e-mails go to"),
    "builds.services:order_assign_partner": (
        ("order.assign_partner", "server.assign", "po.set_delivery"),
        "tests/pm/test_order_steps_page.py::test_a_pm_gives_every_open_build_to_a_partner_who_is_emailed",
    ),
    "builds.services:partner_assigned_notice_send": exempt("the partner's e-mail (a task); a StatusNotice"),
    "inventory.services:po_document_send": (
        ("purchase_order.document",),
        "tests/inventory/test_po_document.py::test_send_mails_the_supplier_the_po_pdf_and_keeps_it",
    ),
    "inventory.services:po_set_delivery": (
        ("po.set_delivery",),
        "tests/pm/test_order_steps_page.py::test_a_pm_gives_every_open_build_to_a_partner_who_is_emailed",
    ),
    "warranty.services:handover_records_create": (
        ("warranty.records_create", "pack.request"),
        "tests/pm/test_order_steps_page.py::test_a_pm_hands_a_server_over_and_the_dated_pack_follows",
    ),
    "orders.services:notice_send_once": exempt("one e-mail for an existing audit row; writes a StatusNotice"),
    "orders.services:procurement_plan": exempt("a read: what order_procure would order"),
    "orders.services:roi_assess": (
        ("order.roi_assess",),
        "tests/orders/test_admin.py::test_roi_assessment_added_in_the_admin_is_computed_by_the_service",
    ),
    "orders.services:roi_inputs": exempt("a read: the inputs of the ROI formulas"),
    "orders.services:roi_preview": exempt("a read: the ROI computed, nothing stored"),
    "orders.services:workload_set": (
        ("order.workload_set",),
        f"{ADMIN}::test_a_workload_saved_in_the_admin_is_audited",
    ),
    # builds
    "builds.services:CheckedPhoto": exempt("the result of photo_check, a data class"),
    "builds.services:UnknownSerial": exempt("an exception class"),
    "builds.services:find_component": exempt("a read: a component by its scanned serial"),
    "builds.services:installation_of": exempt(
        "a read: where a scanned component sits in a server (409 if not)"
    ),
    "builds.services:lock_server": exempt("locks a server row for the calling service, which audits"),
    "builds.services:normalize_hostname": exempt("a pure check of a hostname"),
    "builds.services:photo_check": exempt("a pure check: decodes and re-encodes a photo, stores nothing"),
    "builds.services:photo_upload": (
        ("server.photo",),
        "tests/builds/test_photo_validation.py::test_a_valid_photo_is_stored_re_encoded_upright_and_without_metadata",
    ),
    "builds.services:servers_create_for_order": (("server.create",), BUILD),
    "builds.services:server_assign_partner": (("server.assign",), BUILD),
    "builds.services:server_start_assembly": (("server.start_assembly",), BUILD),
    "builds.services:server_mark_assembled": (("server.mark_assembled",), BUILD),
    "builds.services:server_swap_component": (("server.swap_component",), CLAIM_PATH),
    "builds.services:server_transition": (("server.start_assembly", "server.mark_assembled"), BUILD),
    "builds.services:server_install": (("server.install",), BUILD),
    "builds.services:server_move": (("server.install", "server.remove"), BUILD),
    "builds.services:server_remove": (("server.remove",), BUILD),
    "builds.services:step_log": (("server.step",), BUILD),
    "builds.services:server_rename": (
        ("server.rename",),
        "tests/deployment/test_services_network.py::test_the_hostname_is_renamed_with_the_network",
    ),
    "builds.services:server_record_burnin_power": (("server.record_burnin_power",), GATE),
    "builds.services:server_set_chassis_serial": (
        ("server.chassis_serial",),
        f"{ADMIN}::test_a_chassis_serial_edited_in_the_admin_is_audited",
    ),
    "builds.services:server_allocate": (
        ("server.allocate",),
        "tests/builds/test_api_install.py::test_allocation_registers_the_warranty_to_the_customer",
    ),
    "builds.services:connector_blacklist": (
        ("server.blacklist_connector",),
        "tests/builds/test_api_blacklist.py::test_blacklist_a_free_connector",
    ),
    "builds.services:layout_create": (
        ("layout.create",),
        f"{ADMIN}::test_a_layout_and_its_connectors_are_audited",
    ),
    "builds.services:layout_update": (
        ("layout.update",),
        f"{ADMIN}::test_a_layout_and_its_connectors_are_audited",
    ),
    "builds.services:layout_connector_add": (
        ("layout.connector_add",),
        f"{ADMIN}::test_a_layout_and_its_connectors_are_audited",
    ),
    "builds.services:layout_connector_update": (
        ("layout.connector_update",),
        f"{ADMIN}::test_a_layout_and_its_connectors_are_audited",
    ),
    "builds.services:layout_connector_remove": (
        ("layout.connector_remove",),
        f"{ADMIN}::test_a_layout_and_its_connectors_are_audited",
    ),
    "builds.services:checklist_item_add": (
        ("checklist.add",),
        f"{ADMIN}::test_checklist_items_added_changed_and_deleted_in_the_admin_are_audited",
    ),
    "builds.services:checklist_item_update": (
        ("checklist.update",),
        f"{ADMIN}::test_checklist_items_added_changed_and_deleted_in_the_admin_are_audited",
    ),
    "builds.services:checklist_item_remove": (
        ("checklist.remove",),
        f"{ADMIN}::test_checklist_items_added_changed_and_deleted_in_the_admin_are_audited",
    ),
    # burnin (its services package has no __all__: every public name of its modules)
    "burnin.services.gate:server_pass_burnin": (("burnin.pass",), GATE),
    "burnin.services.gate:server_fail_burnin": (
        ("server.fail_burn_in",),
        "tests/burnin/test_gate.py::test_fail_sends_the_server_back_to_its_partner_for_rework",
    ),
    "burnin.services.gate:finding_waive": (("burnin.finding_waive",), GATE),
    "burnin.services.ingest:report_ingest": (
        ("burnin.ingest",),
        "tests/burnin/test_api_ingest.py::test_seed003_report_ingests_as_rows",
    ),
    "burnin.services.upload:ReportTooLarge": exempt("an exception class"),
    "burnin.services.ingest:bound_by": exempt("a check: refuses a report of other hardware (409)"),
    "burnin.services.ingest:promised_burnin_s": exempt("a read: the burn-in the order promises"),
    "burnin.services.upload:ReportBody": exempt("a data class: a request body read within its limit"),
    "burnin.services.upload:read_report_body": exempt(
        "reads a request body within its limit; stores nothing"
    ),
    "burnin.services.upload:validation_errors": exempt("a pure check of a report against its schema"),
    "burnin.services.upload:parse_report": exempt("a pure parse of a report"),
    "burnin.services.upload:discard_unread_body": exempt("reads a refused upload's body to its end"),
    "burnin.services.ingest:Slot": exempt("a data class: an installed slot as the analysis sees it"),
    "burnin.services.ingest:installed_slots": exempt("a read: the server's installed GPU slots"),
    "burnin.services.ingest:platform_max_gen": exempt("a read: the platform's PCIe generation"),
    "burnin.services.ingest:expectations": exempt("a pure computation for the analysis"),
    "burnin.services.ingest:links": exempt("a pure computation for the analysis"),
    "burnin.services.ingest:Compared": exempt("a data class: a run's drift against its baseline"),
    "burnin.services.ingest:compare_with_baseline": exempt("a read and a pure computation: the drift"),
    "burnin.services.ingest:gpu_results": exempt("a pure computation: the report's GPU result rows"),
    "burnin.services.ingest:finding_rules_version": exempt("a pure lookup: which rules made a finding"),
    "burnin.services.ingest:may_post": exempt("a check: who may post which purpose (403)"),
    "burnin.services.ingest:report_purpose": exempt("a pure read of the report"),
    "burnin.services.ingest:slot_order_components": exempt("a read: serial-less cards by slot order"),
    "burnin.services.upload:report_id_of": exempt("a pure hash of a report"),
    "burnin.services.ingest:zlib_gzip": exempt("a pure compression helper"),
    "burnin.services.samples:report_time": exempt("a pure parse of a timestamp"),
    "burnin.services.samples:Series": exempt("a data class: one telemetry series"),
    "burnin.services.samples:telemetry_series": exempt("a pure reading of a report's telemetry"),
    "burnin.services.samples:store_samples": exempt("a step of report_ingest, which audits the run"),
    "burnin.services.samples:db_type": exempt("a pure helper: a column's database type"),
    "burnin.services.samples:store_rollup": exempt("a step of report_ingest, which audits the run"),
    **DEPLOYMENT_SERVICES,
    # warranty
    "warranty.services:registrations_record": (
        ("warranty.register",),
        "tests/warranty/test_services_records.py::test_allocation_registers_the_warranty_in_the_customers_name",
    ),
    "warranty.services:warranty_records_create": (
        ("warranty.records_create",),
        "tests/warranty/test_services_records.py::test_hand_over_creates_one_record_per_serial_plus_the_server",
    ),
    "warranty.services:server_hand_over": (
        ("server.hand_over", "order.hand_over", "order.close"),
        "tests/warranty/test_services_records.py::test_the_order_closes_with_its_last_server",
    ),
    "warranty.services:claim_open": (("warranty.claim_open",), CLAIM_PATH),
    "warranty.services:claim_approve": (("warranty.claim_approve",), CLAIM_PATH),
    "warranty.services:claim_attach": (
        ("warranty.claim_attach",),
        "tests/warranty/test_claim_attachments.py::test_a_log_attached_through_the_api_is_audited_and_listed",
    ),
    "warranty.services:Upload": exempt("a value: a file's name and bytes, as the services take them"),
    "warranty.services:claim_ship_replacement": (
        ("warranty.claim_ship_replacement", "warranty.record_replace", "server.swap_component"),
        CLAIM_PATH,
    ),
    "warranty.services:claim_close": (("warranty.claim_close",), CLAIM_PATH),
    "warranty.services:claim_reject": (
        ("warranty.claim_reject",),
        "tests/warranty/test_services_claims.py::test_one_claim_in_progress_per_record",
    ),
    "warranty.services:claim_draft_from_finding": (("warranty.claim_draft",), DRIFT_DRAFT),
    "warranty.services:claim_draft_notice_send": (("warranty.claim_draft_notice",), DRIFT_DRAFT),
    "warranty.services:claim_confirm": (
        ("warranty.claim_confirm",),
        f"{DRIFT_CLAIMS}::test_a_pm_confirms_a_draft_with_a_reason_and_it_goes_on_as_a_claim",
    ),
    "warranty.services:claim_dismiss": (
        ("warranty.claim_dismiss",),
        f"{DRIFT_CLAIMS}::test_a_pm_dismisses_a_draft_with_the_reason_the_customer_reads",
    ),
    "warranty.services:expiry_notice_send": (("warranty.expiry_notice",), EXPIRY),
    "warranty.services:expiry_notify": (("warranty.expiry_notice",), EXPIRY),
    # warranty: handover packs
    "warranty.services:pack_request": (("pack.request",), PACKS),
    "warranty.services:pack_retry": (("pack.retry",), PACK_FAILURE),
    "warranty.services:pack_generate": (("pack.generate", "pack.fail"), PACK_FAILURE),
    "warranty.services:pack_progress": exempt(
        "the running task's progress column, written apart so a watcher sees it; the request and the "
        "outcome (pack.generate, pack.fail) are audited"
    ),
    "warranty.services:pack_render": exempt("renders the PDF and ZIP in memory; stores nothing"),
    "warranty.services:supplier_return_open": (("supplier_return.open",), SUPPLIER_RETURN),
    "warranty.services:supplier_return_ship": (("supplier_return.ship",), SUPPLIER_RETURN),
    "warranty.services:supplier_return_close": (("supplier_return.close",), SUPPLIER_RETURN),
    # warranty: failure attribution (issue #29)
    "warranty.services:attribute_run": (
        ("attribution.repropose",),
        f"{ATTRIBUTION}::test_a_move_that_trains_x16_keeps_it_on_the_connector",
    ),
    "warranty.services:attribute_claim": exempt(
        "the rules' row is written in claim_open's transaction, whose warranty.claim_open row covers it; a "
        "PM's confirmation or correction is audited (attribution_confirm)"
    ),
    "warranty.services:attribute_blacklist": exempt(
        "the rules' row is written in the blacklisting's transaction, whose server.blacklist_connector row "
        "covers it; a PM's confirmation or correction is audited (attribution_confirm)"
    ),
    "warranty.services:attribution_confirm": (
        ("attribution.confirm", "attribution.correct"),
        f"{ATTRIBUTION}::test_the_admin_confirms_and_corrects_through_the_service",
    ),
    "warranty.services:pm_digest_send": (
        ("warranty.pm_digest",),
        "tests/warranty/test_pm_digest.py::test_the_digest_lists_what_ends_ended_and_waits",
    ),
}


def _public(module: Any) -> list[str]:
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module.__name__
    ]


def public_services() -> set[str]:
    """Every public service: `<app>.services.__all__`, else the public functions and classes its module (or
    each module of its package) defines."""
    found: set[str] = set()
    for app in APPS:
        module = importlib.import_module(f"{app}.services")
        if hasattr(module, "__all__"):
            found |= {f"{module.__name__}:{name}" for name in module.__all__}
        elif hasattr(module, "__path__"):
            for info in pkgutil.iter_modules(module.__path__):
                submodule = importlib.import_module(f"{module.__name__}.{info.name}")
                found |= {f"{submodule.__name__}:{name}" for name in _public(submodule)}
        else:
            found |= {f"{module.__name__}:{name}" for name in _public(module)}
    return found


def _strings(code: Any) -> set[str]:
    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(code)))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def proves(nodeid: str, verb: str) -> bool:
    """Whether the named test (which must exist) names `verb`: as a literal, or for `test[case]` as an
    f-string prefix ("order.") whose remainder is the case ("approve")."""
    path, _, name = nodeid.partition("::")
    name, _, case = name.partition("[")
    assert (ROOT / path).is_file(), f"{nodeid}: no such file"
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    function = getattr(module, name, None)
    assert callable(function) and name.startswith("test_"), f"{nodeid}: no such test"
    strings = _strings(function)
    if verb in strings:
        return True
    case = case.removesuffix("]")
    if not case:
        return False
    assert case in _strings(module), f"{nodeid}: no case {case!r} in its module"
    return any(s.endswith(".") and verb == f"{s}{case}" for s in strings)


def test_every_public_service_is_in_the_table():
    """A new service without an entry fails here: name the verb it writes and the test that proves it, or
    say why it writes none."""
    found = public_services()
    assert set(SERVICES) == found, (
        f"not in SERVICES: {sorted(found - set(SERVICES))}; "
        f"no longer a service: {sorted(set(SERVICES) - found)}"
    )


def test_every_app_with_services_is_walked():
    project = {config.name for config in apps.get_app_configs() if (ROOT / config.name).is_dir()}
    with_services = {name for name in project if importlib.util.find_spec(f"{name}.services") is not None}
    assert with_services <= set(APPS), f"add {sorted(with_services - set(APPS))} to APPS"


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_each_service_names_the_test_that_proves_its_audit_row(service):
    verbs, proof = SERVICES[service]
    if verbs is None:
        assert proof, f"{service}: say why it writes no audit row"
        return
    unproved = [verb for verb in verbs if not proves(proof, verb)]
    assert not unproved, f"{service}: {proof} does not name {unproved}"


def test_the_meta_test_catches_a_test_that_does_not_name_the_verb():
    assert proves(BUILD, "server.step")
    assert not proves(BUILD, "server.chassis_serial")
    assert proves(f"{ORDER_TRANSITIONS}[approve]", "order.approve")
    assert not proves(f"{ORDER_TRANSITIONS}[approve]", "order.reject")
    with pytest.raises(AssertionError, match="no such test"):
        proves(f"{HERE}::test_that_does_not_exist", "server.step")
