"""The deployment app's rows of `SERVICES` (tests/werkbank/test_audit_coverage.py): each public service
with the verbs it writes and the test that proves it, or `(None, reason)` where it writes none."""

from __future__ import annotations

from typing import Any

CORE = (
    "tests/werkbank/test_audit_coverage.py::"
    "test_core_inventory_orders_and_deployment_services_leave_a_row_each"
)

DEPLOYMENT_SERVICES: dict[str, tuple[Any, str]] = {
    "deployment.services:site_create": (("deployment.site_create",), CORE),
    "deployment.services:site_update": (
        ("deployment.site_update",),
        "tests/deployment/test_services_sites.py::test_moving_a_site_abroad_moves_its_flag",
    ),
    "deployment.services:rack_create": (("deployment.rack_create",), CORE),
    "deployment.services:rack_update": (("deployment.rack_update",), CORE),
    "deployment.services:feed_create": (("deployment.feed_create",), CORE),
    "deployment.services:feed_update": (
        ("deployment.feed_update",),
        "tests/deployment/test_services_sites.py::test_a_feed_is_created_and_changed_with_its_limit",
    ),
    "deployment.services:feed_delete": (("deployment.feed_delete",), CORE),
    "deployment.services:placement_create": (
        ("deployment.place",),
        "tests/deployment/test_api_placements.py::test_a_pm_places_a_server",
    ),
    "deployment.services:placement_set_phases": (
        ("deployment.phases",),
        "tests/deployment/test_phases.py::test_set_phases_corrects_confirms_and_is_audited",
    ),
    "deployment.services:placement_remove": (
        ("deployment.unplace",),
        "tests/deployment/test_api_placements.py::test_a_pm_removes_a_placement_with_a_reason",
    ),
    "deployment.services:network_set": (
        ("deployment.network",),
        "tests/deployment/test_api_network.py::test_a_pm_records_a_servers_network",
    ),
    "deployment.services:listing_record": (
        ("deployment.listing",),
        "tests/deployment/test_admin.py::test_listings_are_added_through_the_service_and_are_read_only",
    ),
    "deployment.services:earning_record": (
        ("deployment.earning",),
        "tests/deployment/test_income.py::test_an_earning_is_recorded_updated_and_an_unchanged_one_skipped",
    ),
    "deployment.services:bmc_credentials_reveal": (
        ("deployment.bmc_reveal",),
        "tests/deployment/test_credentials.py::test_the_service_checks_the_password_without_a_request",
    ),
    "deployment.services:bmc_credentials_rotate": (
        ("deployment.bmc_rotate",),
        "tests/deployment/test_credentials.py::test_a_rotation_before_the_handover_tells_nobody_and_only_pms_rotate",
    ),
    "deployment.services:bmc_rotated_notice_send": (
        None,
        "the customer's e-mail about an audited rotation (a task); writes a StatusNotice",
    ),
    "deployment.services:prefix_create": (
        ("deployment.prefix_create",),
        "tests/deployment/test_prefixes.py::test_a_prefix_is_stored_canonical_with_its_vlan_and_gateway_and_audited",
    ),
    "deployment.services:prefix_update": (
        ("deployment.prefix_update",),
        "tests/deployment/test_prefixes.py::test_prefix_update_changes_the_prefix_and_is_audited",
    ),
    "deployment.services:prefix_delete": (
        ("deployment.prefix_delete",),
        "tests/deployment/test_prefixes.py::test_a_prefix_is_deleted_only_while_no_server_address_lies_in_it",
    ),
    "deployment.services:platform_account_set": (
        ("deployment.platform_account",),
        "tests/deployment/test_vastai.py::test_the_account_is_for_customers_and_its_key_is_write_only",
    ),
    "deployment.services:platform_poll": (
        ("deployment.platform_poll", "deployment.listing"),
        "tests/deployment/test_vastai.py::test_a_deverification_appends_one_row_and_sends_one_alert",
    ),
    "deployment.services:platform_poll_failed": (
        ("deployment.platform_poll_failed",),
        "tests/deployment/test_vastai.py::test_a_failure_again_is_not_audited_twice_and_a_good_poll_clears_it",
    ),
    "deployment.services:platform_alert_send": (
        ("deployment.platform_alert",),
        "tests/deployment/test_vastai.py::test_a_deverification_appends_one_row_and_sends_one_alert",
    ),
    "deployment.services:server_deploy": (
        ("deployment.deploy",),
        "tests/deployment/test_deploy.py::test_deploy_when_everything_holds_then_never_again",
    ),
}
