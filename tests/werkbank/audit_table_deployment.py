"""The deployment app's rows of `SERVICES` (tests/werkbank/test_audit_coverage.py): each public service
with the verbs it writes and the test that proves it, or `(None, reason)` where it writes none."""

from __future__ import annotations

from typing import Any

CORE = "tests/werkbank/test_audit_coverage.py::test_core_inventory_orders_and_deployment_services_leave_a_row_each"

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
    "deployment.services:server_deploy": (
        ("deployment.deploy",),
        "tests/deployment/test_deploy.py::test_deploy_when_everything_holds_then_never_again",
    ),
}
