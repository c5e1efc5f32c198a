"""Every save through the admin leaves an audit row (issue #16, defect 9).

Before, the user admin (staff status, the PM group, superuser, active), a server's chassis serial, chassis
layouts with their connectors and configuration checklists were saved by the admin itself, with no
AuditEvent. Each test here saves through the admin's own pages, as a PM does, and finds the row.

`ADMIN_SAVES` at the end maps every admin registered on admin.site whose model the project owns (or whose
admin class it wrote) to the test that saves through it and the verb that save writes, or says why the
admin cannot save at all; `test_every_admin_is_in_the_table` fails for an admin that is not in it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.forms import CheckboxInput, MultiWidget

from builds.models import ChassisLayout, ChecklistItem, LayoutConnector
from inventory.models import Part, Supplier
from orders.models import ServerConfiguration, Workload
from tests import factories
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

User = get_user_model()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pm_browser(client, tenants):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


def form_data(response: Any) -> dict[str, Any]:
    """The POST data a browser would send for an admin page as rendered: the main form and every inline
    formset (with its management form), each field at its current value."""
    data: dict[str, Any] = {}

    def add(form: Any) -> None:
        for bound in form:
            if bound.field.disabled:
                continue
            value, widget = bound.value(), bound.field.widget
            if isinstance(widget, CheckboxInput):
                if value:
                    data[bound.html_name] = "on"
            elif isinstance(widget, MultiWidget):
                parts = widget.decompress(value) if not isinstance(value, list) else value
                for index, part in enumerate(parts):
                    data[f"{bound.html_name}_{index}"] = "" if part is None else str(part)
            elif isinstance(value, list | tuple):
                data[bound.html_name] = [str(item) for item in value]
            else:
                data[bound.html_name] = "" if value is None else value

    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        add(inline.formset.management_form)
        for form in inline.formset.forms:
            add(form)
    return data


def submit(browser: Any, url: str, data: dict[str, Any]) -> Any:
    """Press Save: the admin redirects elsewhere after a save (a refusal by a service redirects back to the
    same page with the message, an invalid form answers 200)."""
    response = browser.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert response.url != url, [str(m) for m in browser.get(url).context["messages"]]
    return response


def save(browser: Any, url: str, **changes: Any) -> Any:
    """Open an admin page, change some fields, and save."""
    page = browser.get(url)
    assert page.status_code == 200, url
    return submit(browser, url, {**form_data(page), **changes})


def events(verb: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(verb=verb).order_by("pk"))


# --- users: who may log in, reach the admin, act as a PM --------------------------------------------------


def test_granting_staff_status_and_the_pm_group_is_audited(pm_browser, tenants):
    user = factories.UserFactory(username="carla")
    pm_group = Group.objects.get(name=settings.WERKBANK_PM_GROUP)

    save(pm_browser, f"/admin/auth/user/{user.pk}/change/", is_staff="on", groups=[str(pm_group.pk)])

    [event] = events("user.access")
    assert (event.actor, event.object_id) == (tenants.pm, str(user.pk))
    assert event.before == {"is_staff": False, "groups": []}
    assert event.after == {"is_staff": True, "groups": [settings.WERKBANK_PM_GROUP]}


def test_deactivating_a_user_and_taking_the_group_away_is_audited(pm_browser, tenants):
    colleague = factories.make_pm(username="dora")
    data = form_data(pm_browser.get(f"/admin/auth/user/{colleague.pk}/change/"))
    del data["is_active"]
    data["groups"] = []

    submit(pm_browser, f"/admin/auth/user/{colleague.pk}/change/", data)

    [event] = events("user.access")
    assert event.before == {"is_active": True, "groups": [settings.WERKBANK_PM_GROUP]}
    assert event.after == {"is_active": False, "groups": []}


def test_a_superuser_granting_superuser_status_is_audited(client, tenants):
    root = User.objects.create_superuser("root", "root@example.com", factories.PASSWORD)
    assert client.login(username="root", password=factories.PASSWORD)
    user = factories.UserFactory(username="erik")

    save(client, f"/admin/auth/user/{user.pk}/change/", is_superuser="on")

    [event] = events("user.access")
    assert (event.actor, event.before, event.after) == (root, {"is_superuser": False}, {"is_superuser": True})


def test_a_change_of_name_only_writes_no_access_row(pm_browser, tenants):
    user = factories.UserFactory(username="fritz")

    save(pm_browser, f"/admin/auth/user/{user.pk}/change/", first_name="Fritz")

    assert events("user.access") == []


def test_adding_a_user_is_audited(pm_browser, tenants):
    password = "a long enough passphrase 42"
    submit(
        pm_browser,
        "/admin/auth/user/add/",
        {"username": "gerda", "password1": password, "password2": password, "usable_password": "true"},
    )

    [event] = events("user.create")
    gerda = User.objects.get(username="gerda")
    assert (event.actor, event.object_id) == (tenants.pm, str(gerda.pk))
    assert event.after == {"is_active": True, "is_staff": False, "is_superuser": False, "groups": []}


# --- builds: a server's chassis serial, layouts and checklists -------------------------------------------


def test_a_chassis_serial_edited_in_the_admin_is_audited(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    server, other = factories.make_servers(order)

    save(pm_browser, f"/admin/builds/server/{server.pk}/change/", chassis_serial="  SN-ABC-001 ")

    server.refresh_from_db()
    assert server.chassis_serial == "SN-ABC-001"
    [event] = events("server.chassis_serial")
    assert (event.actor, event.object_id) == (tenants.pm, str(server.pk))
    assert (event.before, event.after) == ({"chassis_serial": ""}, {"chassis_serial": "SN-ABC-001"})

    # The same serial on a second server is refused with the service's words; nothing is written.
    page = pm_browser.get(f"/admin/builds/server/{other.pk}/change/")
    refused = pm_browser.post(
        f"/admin/builds/server/{other.pk}/change/",
        {**form_data(page), "chassis_serial": "SN-ABC-001"},
        follow=True,
    )
    assert f"SN-ABC-001 is the chassis serial of server {server.asset_tag}." in refused.content.decode()
    other.refresh_from_db()
    assert other.chassis_serial == "" and len(events("server.chassis_serial")) == 1


def test_a_layout_and_its_connectors_are_audited(pm_browser, tenants):
    chassis = factories.ChassisFactory()
    page = pm_browser.get("/admin/builds/chassislayout/add/")
    data = {
        **form_data(page),
        "chassis": chassis.pk,
        "description": "4U, 8 GPUs",
        "columns": 4,
        "connectors-TOTAL_FORMS": 1,
        "connectors-0-position": 1,
        "connectors-0-name": "GPU0",
        "connectors-0-kind": "pcie_slot",
        "connectors-0-pcie_gen": 5,
        "connectors-0-pcie_lanes": 16,
    }
    submit(pm_browser, "/admin/builds/chassislayout/add/", data)

    layout = ChassisLayout.objects.get(chassis=chassis)
    assert [event.after for event in events("layout.create")] == [
        {"chassis": chassis.mpn, "description": "4U, 8 GPUs", "columns": 4}
    ]
    assert [event.after["name"] for event in events("layout.connector_add")] == ["GPU0"]

    # Change the layout, rename its connector and add a second one, all in one save.
    url = f"/admin/builds/chassislayout/{layout.pk}/change/"
    data = form_data(pm_browser.get(url))
    data.update({"columns": 6, "connectors-0-name": "GPU-0", "connectors-TOTAL_FORMS": 2})
    data.update({"connectors-1-position": 2, "connectors-1-name": "DIMM0", "connectors-1-kind": "dimm_slot"})
    submit(pm_browser, url, data)

    assert [(e.before, e.after) for e in events("layout.update")] == [({"columns": 4}, {"columns": 6})]
    [renamed] = events("layout.connector_update")
    assert (renamed.before, renamed.after) == ({"connector": "GPU0", "name": "GPU0"}, {"name": "GPU-0"})
    assert [event.after["name"] for event in events("layout.connector_add")] == ["GPU0", "DIMM0"]

    # Delete one connector.
    data = form_data(pm_browser.get(url))
    dimm = LayoutConnector.objects.get(layout=layout, name="DIMM0")
    index = next(i for i in range(2) if str(data[f"connectors-{i}-id"]) == str(dimm.pk))
    data[f"connectors-{index}-DELETE"] = "on"
    submit(pm_browser, url, data)

    assert list(layout.connectors.values_list("name", flat=True)) == ["GPU-0"]
    [removed] = events("layout.connector_remove")
    assert removed.before["name"] == "DIMM0" and removed.object_id == str(layout.pk)


def test_checklist_items_added_changed_and_deleted_in_the_admin_are_audited(pm_browser, tenants):
    configuration = factories.ConfigurationFactory()
    page = pm_browser.get("/admin/builds/checklistitem/add/")
    data = {**form_data(page), "configuration": configuration.pk, "kind": "firmware"}
    submit(pm_browser, "/admin/builds/checklistitem/add/", data)
    item = ChecklistItem.objects.get(configuration=configuration)

    save(pm_browser, f"/admin/builds/checklistitem/{item.pk}/change/", kind="cable_routing")
    response = pm_browser.post(f"/admin/builds/checklistitem/{item.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302

    assert not ChecklistItem.objects.exists()
    assert [e.after for e in events("checklist.add")] == [{"step": "firmware"}]
    [update] = events("checklist.update")
    assert (update.before["step"], update.after["step"]) == ("firmware", "cable_routing")
    assert [e.before for e in events("checklist.remove")] == [{"step": "cable_routing"}]
    assert {e.object_id for e in AuditEvent.objects.filter(verb__startswith="checklist.")} == {
        str(configuration.pk)
    }


# --- the other admins that save: each through its service --------------------------------------------------


def test_parts_and_suppliers_saved_in_the_admin_are_audited(pm_browser, tenants):
    supplier = factories.SupplierFactory()
    part = factories.PartFactory()

    save(pm_browser, f"/admin/inventory/supplier/{supplier.pk}/change/", contact_name="Ines")
    save(pm_browser, f"/admin/inventory/part/{part.pk}/change/", name="Renamed GPU")

    assert [e.after for e in events("supplier.update")] == [{"contact_name": "Ines"}]
    assert [e.after["name"] for e in events("part.update")] == ["Renamed GPU"]
    assert (
        Supplier.objects.get().contact_name == "Ines" and Part.objects.get(pk=part.pk).name == "Renamed GPU"
    )


def test_a_configuration_saved_in_the_admin_is_audited(pm_browser, tenants):
    configuration = factories.ConfigurationFactory()

    save(pm_browser, f"/admin/orders/serverconfiguration/{configuration.pk}/change/", psu_count=6)

    [event] = events("configuration.update")
    assert event.object_id == str(configuration.pk) and event.actor == tenants.pm
    assert ServerConfiguration.objects.get().psu_count == 6


def test_a_workload_saved_in_the_admin_is_audited(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    page = pm_browser.get("/admin/orders/workload/add/")
    preset = next(value for value, _ in page.context["adminform"].form.fields["preset"].choices if value)
    data = {**form_data(page), "order": order.pk, "preset": preset, "context_tokens": 8192, "concurrency": 4}
    submit(pm_browser, "/admin/orders/workload/add/", data)

    assert Workload.objects.get().order == order
    [event] = events("order.workload_set")
    assert event.object_id == str(order.pk)


def test_an_organization_and_a_membership_saved_in_the_admin_are_audited(pm_browser, tenants):
    newcomer = factories.UserFactory(username="hanna")
    url = f"/admin/werkbank/organization/{tenants.customer_a.pk}/change/"
    data = form_data(pm_browser.get(url))
    prefix = next(key for key in data if key.endswith("-TOTAL_FORMS")).removesuffix("-TOTAL_FORMS")
    extra = int(data[f"{prefix}-TOTAL_FORMS"]) - 1
    data.update({"contact_email": "fleet@alpha.example", f"{prefix}-{extra}-user": newcomer.pk})

    submit(pm_browser, url, data)

    assert [e.after for e in events("organization.update")] == [{"contact_email": "fleet@alpha.example"}]
    assert [e.after["user"] for e in events("membership.add")] == ["hanna"]


def test_purchase_orders_sent_from_the_admin_are_audited(pm_browser, tenants):
    """The purchase order's form is read only; its change list's actions call the services."""
    po = factories.make_po(send=False)

    response = pm_browser.post(
        "/admin/inventory/purchaseorder/", {"action": "send_selected", "_selected_action": [po.pk]}
    )

    assert response.status_code == 302
    [event] = events("purchase_order.send")
    assert (event.actor, event.object_id) == (tenants.pm, str(po.pk))


# --- the table: every admin that can save, the test that saves through it, the verb it writes -----------

#: model label → ("tests/…::test_name", verbs the save writes) for an admin that adds or changes, or
#: (None, why) for one that cannot save at all (the meta-test checks that it indeed cannot).
ADMIN_SAVES: dict[str, tuple[str | None, Any]] = {
    "auth.user": (
        "tests/werkbank/test_admin_audit.py::test_granting_staff_status_and_the_pm_group_is_audited",
        ("user.access",),
    ),
    "werkbank.organization": (
        "tests/werkbank/test_admin_audit.py::test_an_organization_and_a_membership_saved_in_the_admin_are_audited",
        ("organization.update", "membership.add"),
    ),
    "werkbank.auditevent": (None, "the audit trail itself: read only"),
    "inventory.part": (
        "tests/werkbank/test_admin_audit.py::test_parts_and_suppliers_saved_in_the_admin_are_audited",
        ("part.update",),
    ),
    "inventory.supplier": (
        "tests/werkbank/test_admin_audit.py::test_parts_and_suppliers_saved_in_the_admin_are_audited",
        ("supplier.update",),
    ),
    "inventory.purchaseorder": (
        "tests/werkbank/test_admin_audit.py::test_purchase_orders_sent_from_the_admin_are_audited",
        ("purchase_order.send",),
    ),
    "inventory.batchlot": (None, "read only: lots come from receiving"),
    "inventory.component": (None, "read only: components come from receiving"),
    "inventory.labelbatch": (None, "read only: label batches come from the print-labels actions and the API"),
    "inventory.stockmovement": (None, "read only: the stock ledger"),
    "orders.serverconfiguration": (
        "tests/werkbank/test_admin_audit.py::test_a_configuration_saved_in_the_admin_is_audited",
        ("configuration.update",),
    ),
    "orders.order": (
        "tests/orders/test_admin.py::test_admin_create_goes_through_the_service",
        ("order.create",),
    ),
    "orders.roiassessment": (
        "tests/orders/test_admin.py::test_roi_assessment_added_in_the_admin_is_computed_by_the_service",
        ("order.roi_assess",),
    ),
    "orders.workload": (
        "tests/werkbank/test_admin_audit.py::test_a_workload_saved_in_the_admin_is_audited",
        ("order.workload_set",),
    ),
    "builds.server": (
        "tests/werkbank/test_admin_audit.py::test_a_chassis_serial_edited_in_the_admin_is_audited",
        ("server.chassis_serial",),
    ),
    "builds.chassislayout": (
        "tests/werkbank/test_admin_audit.py::test_a_layout_and_its_connectors_are_audited",
        (
            "layout.create",
            "layout.update",
            "layout.connector_add",
            "layout.connector_update",
            "layout.connector_remove",
        ),
    ),
    "builds.checklistitem": (
        "tests/werkbank/test_admin_audit.py::test_checklist_items_added_changed_and_deleted_in_the_admin_are_audited",
        ("checklist.add", "checklist.update", "checklist.remove"),
    ),
    "builds.connectorblacklist": (None, "read only for ever: the bench's blacklist service writes it"),
    "builds.connector": (None, "read only: copied from the layout when a server is created"),
    "builds.buildphoto": (None, "read only: photos come from the bench"),
    "burnin.burninrun": (None, "read only: runs come from the probe's reports"),
    "burnin.finding": (None, "read only: waivers go through actions that call the gate's service"),
    "deployment.site": (
        "tests/deployment/test_admin.py::test_a_site_and_a_rack_with_feeds_are_added_through_the_services",
        ("deployment.site_create",),
    ),
    "deployment.rack": (
        "tests/deployment/test_admin.py::test_a_site_and_a_rack_with_feeds_are_added_through_the_services",
        ("deployment.rack_create", "deployment.feed_create"),
    ),
    "deployment.rackplacement": (
        "tests/deployment/test_admin.py::test_a_placement_is_added_through_the_admin_form",
        ("deployment.place",),
    ),
    "deployment.servernetwork": (
        "tests/deployment/test_admin.py::test_network_form_writes_through_the_service_and_never_shows_the_password",
        ("deployment.network",),
    ),
    "deployment.platformlisting": (
        "tests/deployment/test_admin.py::test_listings_are_added_through_the_service_and_are_read_only",
        ("deployment.listing",),
    ),
    "deployment.ipprefix": (
        "tests/deployment/test_pages_prefixes.py::test_the_admin_writes_prefixes_through_the_services",
        ("deployment.prefix_create", "deployment.prefix_update"),
    ),
    "deployment.platformaccount": (
        "tests/deployment/test_vastai.py::test_the_admin_adds_an_account_through_the_service",
        ("deployment.platform_account",),
    ),
    "deployment.platformalert": (None, "read only: alerts come from the platform poll"),
    "deployment.platformearning": (
        "tests/deployment/test_income_pages.py::test_a_pm_adds_a_month_in_the_admin_through_the_service_and_cannot_edit_it",
        ("deployment.earning",),
    ),
    "warranty.warrantyrecord": (None, "read only: records come from the handover and the claims' services"),
    "warranty.warrantyregistration": (None, "read only: registrations come from allocation"),
    "warranty.warrantyclaim": (
        "tests/warranty/test_admin.py::test_a_claim_is_decided_and_shipped_through_the_admin",
        ("warranty.claim_approve", "warranty.claim_ship_replacement"),
    ),
    "warranty.supplierreturn": (
        "tests/warranty/test_supplier_returns.py::test_the_admin_ships_and_closes_a_return_and_the_claim_links_it",
        ("supplier_return.ship", "supplier_return.close"),
    ),
    "warranty.attribution": (
        "tests/warranty/test_attribution.py::test_the_admin_confirms_and_corrects_through_the_service",
        ("attribution.confirm", "attribution.correct"),
    ),
    "warranty.handoverpack": (
        "tests/warranty/test_admin_packs.py::test_a_pm_asks_for_a_pack_and_runs_a_failed_one_again_in_the_admin",
        ("pack.request", "pack.retry"),
    ),
}

PROJECT_APPS = {"werkbank", "inventory", "orders", "builds", "burnin", "deployment", "warranty"}


def _project_admins() -> dict[str, admin.ModelAdmin]:
    """The admins on admin.site for a model of the project's apps, or written by the project (the users)."""
    return {
        model._meta.label_lower: model_admin
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_label in PROJECT_APPS or type(model_admin).__module__.split(".")[0] in PROJECT_APPS
    }


def named_test(nodeid: str) -> Any:
    """The test function a node id names, or a failure saying that it does not exist."""
    path, _, name = nodeid.partition("::")
    assert (ROOT / path).is_file(), f"{nodeid}: no such file"
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    function = getattr(module, name, None)
    assert callable(function), f"{nodeid}: no such test"
    return function


def test_every_admin_is_in_the_table(tenants):
    """A new admin without an entry fails here: add the test that saves through it and the verb it writes."""
    registered = _project_admins()
    assert set(registered) == set(ADMIN_SAVES), (
        f"not in ADMIN_SAVES: {sorted(set(registered) - set(ADMIN_SAVES))}; "
        f"no longer registered: {sorted(set(ADMIN_SAVES) - set(registered))}"
    )


@pytest.mark.parametrize("label", sorted(ADMIN_SAVES))
def test_each_admin_save_is_proved_by_a_test_that_asserts_its_verb(rf, tenants, label):
    model_admin = _project_admins()[label]
    request = rf.get("/admin/")
    request.user = tenants.pm
    nodeid, verbs = ADMIN_SAVES[label]
    can_save = model_admin.has_add_permission(request) or model_admin.has_change_permission(request)
    if nodeid is None:
        assert not can_save, f"{label} saves for a PM, but the table says: {verbs}"
        return
    assert can_save, f"{label} cannot save; mark it read only in the table"
    source = inspect.getsource(named_test(nodeid))
    tree = ast.parse(inspect.cleandoc("\n" + source) if source.startswith(" ") else source)
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
    missing = [verb for verb in verbs if verb not in strings]
    assert not missing, f"{nodeid} does not assert the verb(s) {missing}"
    assert apps.get_model(label)  # the label names a model
