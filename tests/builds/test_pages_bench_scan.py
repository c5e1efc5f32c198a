"""The bench pages (/bench/): scanning a serial into a connector, removing and moving a component."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from builds.models import (
    BuildStep,
    ConnectorBlacklist,
    Installation,
)
from builds.services import (
    connector_blacklist,
)
from inventory.choices import PartCategory
from tests import factories
from tests.builds.bench_page_rig import X8_REASON, cell, installed, logged_in, make_build, page_of
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


# --- Scanning ---------------------------------------------------------------------------------------------


def test_scan_installs_and_redirects_with_a_message(tenants):
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    serial = build.gpu_serials[0]
    response = client.post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": serial, "connector": "GPU1"}
    )
    assert response.status_code == 302
    # The next free slot of the same kind is preselected: one scan per card in slot order.
    assert response["Location"] == f"{page_of(build.server)}?connector=GPU2"
    installation = Installation.objects.get(server=build.server, removed_at__isnull=True)
    assert (installation.component.serial, installation.connector.name) == (serial, "GPU1")
    html = client.get(response["Location"]).content.decode()
    assert f"Installed {serial} (RTX-PRO-6000-MQ-1652) in GPU1." in html
    assert cell(html, "GPU1")["data-state"] == "occupied"
    assert re.search(r'<input id="scan_serial"[^>]*value=""[^>]*autofocus>', html)
    assert '<option value="GPU2" selected>' in html


def test_a_typed_connector_name_wins_over_the_select(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/",
        {"serial": build.gpu_serials[0], "connector": "GPU1", "connector_name": " gpu3 "},
    )
    assert response.status_code == 302
    assert Installation.objects.get().connector.name == "GPU3"


def test_unknown_serial_is_named_and_nothing_is_written(tenants):
    build = make_build(tenants)
    events = AuditEvent.objects.count()
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": "NOPE-4711", "connector": "GPU1"}
    )
    assert response.status_code == 404
    html = response.content.decode()
    assert "no component with serial &#x27;NOPE-4711&#x27;." in html
    assert '<option value="GPU1" selected>' in html  # the connector stays picked for the next scan
    assert re.search(r'<input id="scan_serial"[^>]*value=""[^>]*autofocus>', html)
    assert not Installation.objects.exists()
    assert AuditEvent.objects.count() == events


def test_a_serial_in_another_partners_workshop_is_unknown_here(tenants):
    build = make_build(tenants)
    theirs = make_build(tenants, partner=tenants.partner_q, prefix="7788")
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": theirs.gpu_serials[0], "connector": "GPU1"}
    )
    assert response.status_code == 404
    assert not Installation.objects.exists()


def test_blacklisted_connector_is_refused_quoting_the_reason(tenants):
    build = make_build(tenants)
    connector_blacklist(
        connector=build.server.connectors.get(name="GPU2"), actor=tenants.user_p, reason=X8_REASON
    )
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/",
        {"serial": build.gpu_serials[0], "connector_name": "GPU2"},
    )
    assert response.status_code == 409
    assert f"is blacklisted: &quot;{X8_REASON}&quot;" in response.content.decode()
    assert not Installation.objects.exists()


def test_wrong_kind_of_connector_is_bad_input(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": build.gpu_serials[0], "connector": "CHASSIS"}
    )
    assert response.status_code == 400
    assert "CHASSIS is a Chassis" in response.content.decode()
    assert not Installation.objects.exists()


def test_a_scan_without_a_connector_keeps_the_serial_and_asks_for_one(tenants):
    build = make_build(tenants)
    serial = build.gpu_serials[0]
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": serial}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "pick a free connector or type its name." in html
    assert f'value="{serial}"' in html
    assert re.search(r'<select id="scan_connector" name="connector" autofocus>', html)
    assert not Installation.objects.exists()


def test_a_scan_in_lower_case_installs(tenants):
    build = make_build(tenants, prefix="ab")
    serial = build.gpu_serials[0]
    assert serial != serial.upper()
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": serial.upper(), "connector": "GPU1"}
    )
    assert response.status_code == 302
    assert Installation.objects.get().component.serial == serial


def test_a_serial_two_manufacturers_printed_asks_for_the_manufacturer(tenants):
    build = make_build(tenants)
    serial = build.gpu_serials[0]
    other = factories.PartFactory(category=PartCategory.GPU, manufacturer="PNY")
    factories.receive_stock(deliver_to=tenants.partner_p, part=other, lots={"L-PNY": [serial]}, origin="DE")
    client = logged_in(tenants.user_p)
    url = f"/bench/servers/{build.server.pk}/install/"

    response = client.post(url, {"serial": serial, "connector_name": "GPU2"})
    assert response.status_code == 400
    html = response.content.decode()
    assert f"serial {serial} is printed by 2 manufacturers (NVIDIA, PNY); say which one." in html
    assert re.search(rf'<input id="scan_serial"[^>]*value="{serial}"', html)
    assert re.search(r'<input id="scan_manufacturer" name="manufacturer"[^>]*autofocus>', html)
    assert re.search(r'<input id="scan_connector_name"[^>]*value="GPU2"', html)
    assert not Installation.objects.exists()

    response = client.post(url, {"serial": serial, "manufacturer": "NVIDIA", "connector_name": "GPU2"})
    assert response.status_code == 302
    assert Installation.objects.get().component.manufacturer == "NVIDIA"


def test_forms_need_the_csrf_token(tenants):
    build = make_build(tenants)
    client = Client(enforce_csrf_checks=True)
    client.force_login(tenants.user_p)
    response = client.post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": build.gpu_serials[0], "connector": "GPU1"}
    )
    assert response.status_code == 403
    assert not Installation.objects.exists()


def test_another_partner_cannot_post_to_the_server(tenants):
    build = make_build(tenants)
    client = logged_in(tenants.user_q)
    base = f"/bench/servers/{build.server.pk}"
    assert (
        client.post(f"{base}/install/", {"serial": build.gpu_serials[0], "connector": "GPU1"}).status_code
        == 404
    )
    assert client.post(f"{base}/steps/", {"kind": "note"}).status_code == 404
    assert client.post(f"{base}/blacklist/", {"connector": "GPU1", "reason": "x"}).status_code == 404
    assert client.post(f"{base}/mark-assembled/").status_code == 404
    assert not Installation.objects.exists() and not BuildStep.objects.exists()
    assert not ConnectorBlacklist.objects.exists()


# --- Remove and move --------------------------------------------------------------------------------------


def test_remove_needs_a_reason_then_frees_the_connector(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    url = f"/bench/servers/{build.server.pk}/remove/"
    refused = client.post(url, {"installation": installation.pk, "reason": ""})
    assert refused.status_code == 400
    assert (
        f'<details class="installed-item" id="installed-{installation.pk}" open>' in refused.content.decode()
    )
    assert Installation.objects.get(pk=installation.pk).removed_at is None
    response = client.post(url, {"installation": installation.pk, "reason": "fan shroud in the way"})
    assert response.status_code == 302
    html = client.get(response["Location"]).content.decode()
    assert f"Removed {build.gpu_serials[0]} from GPU1." in html
    assert cell(html, "GPU1")["data-state"] == "free"


def test_removing_from_a_stale_page_says_it_is_no_longer_installed(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    url = f"/bench/servers/{build.server.pk}/remove/"
    assert client.post(url, {"installation": installation.pk, "reason": "reseat"}).status_code == 302
    again = client.post(url, {"installation": installation.pk, "reason": "reseat"})
    assert again.status_code == 404
    assert "that component is no longer installed in this server." in again.content.decode()


def test_moving_onto_a_blacklisted_connector_is_refused_with_its_reason(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    gpu3 = build.server.connectors.get(name="GPU3")
    connector_blacklist(connector=gpu3, actor=tenants.user_p, reason=X8_REASON)
    # A stale page still offers GPU3: the move names it anyway.
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/move/",
        {"installation": installation.pk, "to_connector": "GPU3", "reason": "x"},
    )
    assert response.status_code == 400  # GPU3 is no longer a choice of the form
    assert "Select a valid choice. GPU3 is not one of the available choices." in response.content.decode()
    assert Installation.objects.get(removed_at__isnull=True).connector.name == "GPU1"


def test_move_to_a_free_connector(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    response = client.post(
        f"/bench/servers/{build.server.pk}/move/",
        {"installation": installation.pk, "to_connector": "GPU3", "reason": "balance the cooling blocks"},
    )
    assert response.status_code == 302
    html = client.get(response["Location"]).content.decode()
    assert f"Moved {build.gpu_serials[0]} from GPU1 to GPU3." in html
    assert cell(html, "GPU3")["data-serial"] == build.gpu_serials[0]
