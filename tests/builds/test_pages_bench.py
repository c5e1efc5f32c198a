"""The bench pages (/bench/): the partner's builds, the connector map, scanning, steps, blacklist, gaps."""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.shortcuts import resolve_url
from django.test import Client

from builds.choices import BuildStepKind, ConnectorKind, ServerStatus
from builds.drawing import connector_map_svg, shorten
from builds.models import (
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    ChecklistItem,
    Connector,
    ConnectorBlacklist,
    Installation,
    LayoutConnector,
    Server,
)
from builds.selectors import connector_map
from builds.services import (
    connector_blacklist,
    find_component,
    server_assign_partner,
    server_install,
    server_start_assembly,
    servers_create_for_order,
)
from inventory.choices import PartCategory
from tests import factories
from tests.builds.conftest import pixels
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

# Seed 003: the two suspect connectors trained at x8: 13.9 GB/s host-to-device where the others gave 27.7.
X8_REASON = "intermittent link training at x8"


def png_1x1() -> bytes:
    """A valid 1×1 RGB PNG, built by hand so that the content check sees a real image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


@dataclass
class Build:
    server: Server
    gpu_serials: list[str]
    chassis_serial: str


def make_build(tenants: Any, *, partner: Any = None, prefix: str = "1652", gpus_in_stock: int = 3) -> Build:
    """One server of customer A's order, built by `partner` (P by default): a chassis bay and four GPU
    slots in two cooling blocks, a BOM of 1 chassis + 2 GPUs, and a QC sign-off on the checklist."""
    partner = partner or tenants.partner_p
    gpu = factories.PartFactory(category=PartCategory.GPU, mpn=f"RTX-PRO-6000-MQ-{prefix}")
    chassis = factories.ChassisFactory(mpn=f"KT-4GPU-{prefix}")
    layout = ChassisLayout.objects.create(chassis=chassis, columns=4)
    LayoutConnector.objects.create(layout=layout, name="CHASSIS", kind=ConnectorKind.CHASSIS, position=0)
    for position, (name, block, numa) in enumerate(
        [("GPU1", "A", 0), ("GPU2", "A", 0), ("GPU3", "B", 1), ("GPU4", "B", 1)], start=1
    ):
        LayoutConnector.objects.create(
            layout=layout,
            name=name,
            kind=ConnectorKind.PCIE_SLOT,
            position=position,
            numa_node=numa,
            pcie_gen=4,
            pcie_lanes=16,
            cooling_block=block,
        )
    configuration = factories.ConfigurationFactory(lines=[(chassis, 1), (gpu, 2)])
    ChecklistItem.objects.create(configuration=configuration, kind=BuildStepKind.QC_SIGNOFF)
    order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration, server_count=1)
    [server] = servers_create_for_order(order=order, actor=tenants.pm)
    server_assign_partner(server=server, actor=tenants.pm, partner=partner)
    gpu_serials = [f"{prefix}0002431{index}" for index in range(gpus_in_stock)]
    factories.receive_stock(deliver_to=partner, part=gpu, lots={"L-2291": gpu_serials}, origin="DE")
    chassis_serial = f"CH{prefix}01"
    factories.receive_stock(deliver_to=partner, part=chassis, lots={"L-CH-1": [chassis_serial]}, origin="DE")
    return Build(
        server=Server.objects.get(pk=server.pk), gpu_serials=gpu_serials, chassis_serial=chassis_serial
    )


def installed(build: Build, serial: str, connector: str, user: Any) -> Installation:
    return server_install(
        server=build.server,
        actor=user,
        component=find_component(serial=serial, user=user),
        connector_name=connector,
    )


def page_of(server: Server) -> str:
    return f"/bench/servers/{server.pk}/"


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def cell(html: str, connector: str) -> dict[str, str]:
    """The data attributes of one connector cell of the SVG map."""
    match = re.search(rf'<g id="connector-\d+" class="[^"]*" (data-connector="{connector}"[^>]*)>', html)
    assert match, f"no map cell for {connector}"
    return dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', match.group(1)))


# --- Who sees what ----------------------------------------------------------------------------------------


def test_partner_lists_its_builds_with_progress(tenants):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    other = make_build(tenants, partner=tenants.partner_q, prefix="7788")
    page = logged_in(tenants.user_p).get("/bench/")
    assert page.status_code == 200
    html = page.content.decode()
    assert build.server.hostname in html
    assert build.server.order.reference in html
    assert "Alpha Rentals GmbH" in html
    assert "Planned" in html
    assert '<span class="progress">1 / 3</span>' in html
    assert f'href="/bench/servers/{build.server.pk}/"' in html
    assert other.server.hostname not in html


def test_partner_q_sees_only_its_own_builds_and_not_ps_server(tenants):
    build = make_build(tenants)
    own = make_build(tenants, partner=tenants.partner_q, prefix="7788")
    client = logged_in(tenants.user_q)
    html = client.get("/bench/").content.decode()
    assert own.server.hostname in html
    assert build.server.hostname not in html
    assert client.get(page_of(build.server)).status_code == 404
    assert client.get(page_of(own.server)).status_code == 200


@pytest.mark.parametrize("who", ["user_a", "user_b", "outsider"])
def test_customers_and_outsiders_have_no_bench(tenants, who):
    build = make_build(tenants)
    client = logged_in(getattr(tenants, who))
    assert client.get("/bench/").status_code == 404
    assert client.get(page_of(build.server)).status_code == 404
    response = client.post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": build.gpu_serials[0], "connector": "GPU1"}
    )
    assert response.status_code == 404
    assert not Installation.objects.exists()


def test_pm_sees_every_partners_builds(tenants):
    build = make_build(tenants)
    other = make_build(tenants, partner=tenants.partner_q, prefix="7788")
    html = logged_in(tenants.pm).get("/bench/").content.decode()
    assert build.server.hostname in html and other.server.hostname in html
    assert "Quelle Assembly GmbH" in html  # a PM's list names the partner
    assert logged_in(tenants.pm).get(page_of(other.server)).status_code == 200


def test_a_partner_with_no_builds_gets_an_empty_list(tenants):
    make_build(tenants)
    response = logged_in(tenants.user_q).get("/bench/")
    assert response.status_code == 200
    assert "No builds are assigned to your workshop yet." in response.content.decode()


@pytest.mark.parametrize("path", ["/bench/", "server"])
def test_anonymous_is_sent_to_log_in(tenants, path):
    build = make_build(tenants)
    url = page_of(build.server) if path == "server" else path
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{resolve_url(settings.LOGIN_URL)}?next={url}"


def test_anonymous_post_writes_nothing(tenants):
    build = make_build(tenants)
    response = Client().post(
        f"/bench/servers/{build.server.pk}/install/", {"serial": build.gpu_serials[0], "connector": "GPU1"}
    )
    assert response.status_code == 302
    assert not Installation.objects.exists()


def test_a_partner_logs_in_on_the_plain_login_page_and_lands_on_the_bench(tenants):
    # The admin's login form refuses non-staff users, so partners log in at /accounts/login/.
    client = Client()
    refused = client.post(
        "/admin/login/?next=/bench/", {"username": "petr", "password": factories.PASSWORD, "next": "/bench/"}
    )
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    response = client.post(
        "/accounts/login/", {"username": "petr", "password": factories.PASSWORD, "next": "/bench/"}
    )
    assert response.status_code == 302 and response["Location"] == "/bench/"
    assert client.get("/bench/").status_code == 200


def test_list_query_count_is_constant(tenants, django_assert_num_queries):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    # session, user, the partner-membership check, the page's count, the page with its progress figures
    with django_assert_num_queries(5):
        client.get("/bench/")
    for prefix in ("2001", "2002", "2003"):
        more = make_build(tenants, prefix=prefix)
        installed(more, more.gpu_serials[0], "GPU1", tenants.user_p)
        installed(more, more.gpu_serials[1], "GPU2", tenants.user_p)
        connector_blacklist(
            connector=more.server.connectors.get(name="GPU4"), actor=tenants.user_p, reason="x8"
        )
    with django_assert_num_queries(5) as queries:
        response = client.get("/bench/")
    assert response.content.decode().count('class="progress"') == 4
    assert '<span class="progress">2 / 3</span>' in response.content.decode()
    assert len(queries.captured_queries) == 5


def test_server_page_query_count_does_not_grow_with_the_build(tenants, django_assert_max_num_queries):
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    steps = f"/bench/servers/{build.server.pk}/steps/"
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client.post(
        steps,
        {"kind": "firmware", "bios_version": "2.1.4", "photos": [SimpleUploadedFile("a.png", png_1x1())]},
    )
    with django_assert_max_num_queries(20) as small:
        client.get(page_of(build.server))
    installed(build, build.gpu_serials[1], "GPU2", tenants.user_p)
    installed(build, build.chassis_serial, "CHASSIS", tenants.user_p)
    connector_blacklist(connector=build.server.connectors.get(name="GPU4"), actor=tenants.user_p, reason="x8")
    for kind in ("note", "cable_routing"):
        client.post(
            steps, {"kind": kind, "photos": [SimpleUploadedFile(f"{n}.png", png_1x1()) for n in "ab"]}
        )
    with django_assert_max_num_queries(20) as large:
        client.get(page_of(build.server))
    assert len(large.captured_queries) == len(small.captured_queries)


# --- The server page --------------------------------------------------------------------------------------


def test_server_page_draws_the_map_with_states(tenants):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    connector_blacklist(
        connector=build.server.connectors.get(name="GPU4"),
        actor=tenants.user_p,
        reason=X8_REASON,
        measurements={"h2d_gbps": 13.9, "expected_gbps": 27.7},
    )
    response = logged_in(tenants.user_p).get(page_of(build.server))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in html
    assert cell(html, "GPU1") == {
        "data-connector": "GPU1",
        "data-state": "occupied",
        "data-serial": build.gpu_serials[0],
    }
    assert cell(html, "GPU2")["data-state"] == "free"
    assert cell(html, "GPU4")["data-state"] == "blacklisted"
    # The reason is the tooltip of the blacklisted cell, and the blacklist list says it with its figures.
    assert f"blacklisted: {X8_REASON}</title>" in html
    assert "H2D 13.9 GB/s, expected 27.7 GB/s" in html
    # Two cooling blocks, framed; the free GPU slot links to the scan form with itself preselected.
    assert 'data-cooling-block="A"' in html and 'data-cooling-block="B"' in html
    # One tile per connector, in a wrapping grid per block: never shrunk below its 132 × 74 px.
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg"') == build.server.connectors.count()
    assert 'class="map-block cooling-block cols-' in html
    assert 'href="?connector=GPU2#scan"' in html
    # The accessible table repeats it.
    assert re.search(r'<tr class="occupied" data-connector="GPU1">.*?Gen4 x16.*?</tr>', html, re.S)
    assert re.search(rf'<tr class="blacklisted" data-connector="GPU4">.*?{X8_REASON}.*?</tr>', html, re.S)
    # The scan form: autofocused serial, no autocomplete, free connectors only (GPU4 and GPU1 are not).
    scan = re.search(r'<section id="scan".*?</section>', html, re.S).group(0)
    assert re.search(r'<input id="scan_serial" name="serial"[^>]*autocomplete="off"[^>]*autofocus>', scan)
    assert 'inputmode="text"' in scan
    select = re.search(r'<select id="scan_connector".*?</select>', scan, re.S).group(0)
    assert '<option value="GPU2">' in select and '<option value="GPU4">' not in select
    assert '<option value="GPU1">' not in select
    assert '<option value="GPU4">' not in scan  # nor among the suggestions for a typed name
    assert "csrfmiddlewaretoken" in scan
    # Step photos are taken with the phone's camera.
    assert 'accept="image/*"' in html and 'capture="environment"' in html and "multiple" in html


def test_tapping_a_free_connector_preselects_it(tenants):
    build = make_build(tenants)
    html = logged_in(tenants.user_p).get(page_of(build.server) + "?connector=GPU3").content.decode()
    assert '<option value="GPU3" selected>' in html


def test_assembled_server_offers_no_scan_form(tenants):
    build = make_build(tenants)
    Server.objects.filter(pk=build.server.pk).update(status=ServerStatus.ASSEMBLED)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert 'name="serial"' not in html
    assert "its components can no longer change" in html


def test_long_serials_are_shortened_on_the_map_but_kept_in_full():
    cells = [
        {
            "id": 1,
            "name": "PCIE-A3",
            "kind": "pcie_slot",
            "kind_label": "PCIe slot",
            "position": 1,
            "numa_node": 0,
            "pcie_gen": 5,
            "pcie_lanes": 16,
            "cooling_block": "",
            "state": "occupied",
            "installation_id": 7,
            "serial": "1652024031234567890",
            "part_mpn": "900-2G153",
            "blacklist_reason": "",
        }
    ]
    svg = connector_map_svg(cells=cells, columns=8, label="map")
    assert shorten("1652024031234567890", 13) == "…031234567890"
    assert shorten("1652024031337", 13) == "1652024031337"
    assert ">…031234567890</text>" in svg  # the end of a serial tells the units of one lot apart
    assert 'data-serial="1652024031234567890"' in svg
    assert "<title>PCIE-A3 (PCIe slot, Gen5 x16 · NUMA 0): 1652024031234567890 (900-2G153)</title>" in svg
    # One 8-column panel, 1 cell wide here; no cooling-block frame when no block is set.
    assert svg.count("<svg ") == 1 and "cooling-block" not in svg


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


# --- Build steps ------------------------------------------------------------------------------------------


def test_step_log_with_photo(tenants, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/bench/servers/{build.server.pk}/steps/",
            {
                "kind": "cable_routing",
                "notes": "Riser cables along the left wall",
                "cable_ties": "12",
                "airflow_clear": "on",
                "photos": [SimpleUploadedFile("cables.png", png_1x1(), content_type="image/png")],
            },
        )
    assert response.status_code == 302
    step = BuildStep.objects.get(server=build.server)
    assert (step.kind, step.notes, step.data, step.actor) == (
        "cable_routing",
        "Riser cables along the left wall",
        {"cable_ties": 12, "airflow_clear": True},
        tenants.user_p,
    )
    photo = BuildPhoto.objects.get(step=step)
    assert photo.content_type == "image/png"
    assert pixels((tmp_path / photo.file.name).read_bytes()) == pixels(png_1x1())  # stored re-encoded
    html = client.get(response["Location"]).content.decode()
    assert "Logged Cable routing for airflow with 1 photo." in html
    assert f'<img src="/api/v1/builds/photos/{photo.pk}/download/"' in html
    assert "Cable ties used: <strong>12</strong>" in html
    assert "Airflow path clear: <strong>yes</strong>" in html


@pytest.mark.parametrize(
    ("fields", "photo", "message"),
    [
        # The form's own range check, from the step's definition (builds.steps).
        ({"kind": "qc_signoff", "cpu_idle_temp_c": "140"}, None, "less than or equal to 110"),
        ({"kind": "pcie_topology_check"}, None, "GPUs detected: This field is required."),
        ({"kind": "pcie_topology_check", "gpus_detected": "8", "link_width": "x12"}, None, "x12 is not one"),
        (
            {"kind": "note"},
            b"MZ\x90\x00 not an image",
            "notes.png is not a JPEG or PNG image that decodes in full",
        ),
    ],
)
def test_step_log_refuses_bad_input_and_writes_nothing(
    tenants, settings, tmp_path, django_capture_on_commit_callbacks, fields, photo, message
):
    settings.MEDIA_ROOT = tmp_path
    build = make_build(tenants)
    payload = dict(fields)
    if photo is not None:
        payload["photos"] = [SimpleUploadedFile("ok.png", png_1x1()), SimpleUploadedFile("notes.png", photo)]
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in(tenants.user_p).post(f"/bench/servers/{build.server.pk}/steps/", payload)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not BuildStep.objects.exists() and not BuildPhoto.objects.exists()
    assert not list(tmp_path.rglob("*.png"))


def test_step_form_shows_each_checklist_items_fields_with_units_and_ranges(tenants):
    build = make_build(tenants)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    qc = re.search(r'<details class="step-form" id="step-qc_signoff".*?</details>', html, re.S).group(0)
    assert "CPU temperature at idle (°C)" in qc
    cpu = re.search(r"<input[^>]*name=\"cpu_idle_temp_c\"[^>]*>", qc).group(0)
    for attribute in ('type="number"', 'min="0"', 'max="110"', 'step="0.1"', 'inputmode="decimal"'):
        assert attribute in cpu, attribute
    passes = re.search(r"<input[^>]*name=\"memory_test_passes\"[^>]*>", qc).group(0)
    assert 'inputmode="numeric"' in passes and 'step="1"' in passes
    firmware = re.search(r'<details class="step-form" id="step-firmware".*?</details>', html, re.S).group(0)
    assert re.search(r"<input[^>]*name=\"bios_version\"[^>]*required", firmware)
    steps = re.search(r'<section id="steps".*?</section>', html, re.S).group(0)
    assert re.findall(r'<textarea name="(\w+)"', steps) == ["notes"] * 6  # notes only, no JSON box
    assert "JSON" not in re.search(r'<section id="steps".*?</section>', html, re.S).group(0)


def test_a_step_logged_from_the_form_stores_typed_values(tenants):
    """Numbers as numbers, an unticked box as false, an empty optional field left out."""
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/steps/",
        {"kind": "chassis_preparation", "psu_count": "4", "standoff_torque_nm": "0.6", "fans_fitted": ""},
    )
    assert response.status_code == 302
    assert BuildStep.objects.get().data == {
        "standoff_torque_nm": 0.6,
        "psu_count": 4,
        "dust_filters_fitted": False,
    }


def test_old_free_form_step_data_stays_readable(tenants):
    build = make_build(tenants)
    BuildStep.objects.create(
        server=build.server, kind="pcie_topology_check", data={"link": "Gen4 x16", "cards": 6}
    )
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert "link: <strong>Gen4 x16</strong>" in html and "cards: <strong>6</strong>" in html


# --- Blacklist --------------------------------------------------------------------------------------------


def test_blacklisting_an_occupied_connector_needs_a_target_then_moves_and_blacklists(
    tenants, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    build = make_build(tenants)
    serial = build.gpu_serials[0]
    installed(build, serial, "GPU2", tenants.user_p)
    client = logged_in(tenants.user_p)
    url = f"/bench/servers/{build.server.pk}/blacklist/"
    form = {
        "connector": "GPU2",
        "reason": X8_REASON,
        "evidence": "probe: GPU in GPU2 at Gen4 x8 under load",
        "measured_gbps": "13.9",
        "expected_gbps": "27.7",
        "confirm": "on",
    }
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(url, {**form, "photo": SimpleUploadedFile("slot.png", png_1x1())})
    assert refused.status_code == 409
    assert f"Connector GPU2 holds {serial}: name a free target connector" in refused.content.decode()
    assert not ConnectorBlacklist.objects.exists() and not BuildPhoto.objects.exists()
    assert not list(tmp_path.rglob("*.png"))  # the photo's file went with the rolled-back row

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url, {**form, "target_connector": "GPU3", "photo": SimpleUploadedFile("slot.png", png_1x1())}
        )
    assert response.status_code == 302
    entry = ConnectorBlacklist.objects.get()
    assert (entry.connector.name, entry.reason, entry.created_by) == ("GPU2", X8_REASON, tenants.user_p)
    assert entry.measurements == {"h2d_gbps": 13.9, "expected_gbps": 27.7}
    assert entry.photo is not None and entry.photo.server_id == build.server.pk
    assert pixels((tmp_path / entry.photo.file.name).read_bytes()) == pixels(png_1x1())
    assert Installation.objects.get(removed_at__isnull=True).connector.name == "GPU3"
    html = client.get(response["Location"]).content.decode()
    assert f"Blacklisted GPU2: “{X8_REASON}”. {serial} moved to GPU3." in html
    assert cell(html, "GPU2")["data-state"] == "blacklisted"
    assert cell(html, "GPU3")["data-serial"] == serial
    entry_html = re.search(
        r'<div class="blacklist-entry" data-connector="GPU2">.*?</div>\s*</div>', html, re.S
    )
    assert entry_html and "H2D 13.9 GB/s, expected 27.7 GB/s" in entry_html.group(0)
    assert "probe: GPU in GPU2 at Gen4 x8 under load" in entry_html.group(0)
    assert "petr" in entry_html.group(0)
    # A blacklisted connector is offered neither for blacklisting again nor for scanning.
    blacklist_form = re.search(
        r'<select name="connector" required id="blacklist_connector">.*?</select>', html, re.S
    )
    assert '<option value="GPU2">' not in blacklist_form.group(0)


def test_blacklist_needs_a_reason(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/blacklist/", {"connector": "GPU1", "reason": "  "}
    )
    assert response.status_code == 400
    assert "reason: This field is required." in response.content.decode()
    assert not ConnectorBlacklist.objects.exists()


def test_blacklist_takes_named_measurements(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/blacklist/",
        {
            "connector": "GPU1",
            "reason": "bent pin",
            "link_gen": "Gen4",
            "link_width": "x8",
            "measured_gbps": "14",
            "confirm": "on",
        },
    )
    assert response.status_code == 302
    assert ConnectorBlacklist.objects.get().measurements == {"link": "Gen4 x8", "h2d_gbps": 14.0}
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert "Link trained at Gen4 x8" in html


def test_blacklist_without_the_confirmation_is_a_400_naming_the_field(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/blacklist/", {"connector": "GPU1", "reason": "bent pin"}
    )
    assert response.status_code == 400
    assert "confirm: confirm that the blacklist cannot be undone." in response.content.decode()
    assert not ConnectorBlacklist.objects.exists()


def test_blacklist_form_asks_for_the_confirmation_without_script_and_loads_the_dialog(tenants):
    build = make_build(tenants)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    form = re.search(r'<form [^>]*id="blacklist-form".*?</form>', html, re.S).group(0)
    assert re.search(r'<input type="checkbox" name="confirm"[^>]*required', form)
    assert "this cannot be undone" in form
    assert 'data-question="Blacklist {connector} for good?' in form
    assert "This cannot be undone." in form
    assert "Other measurements" not in html and "JSON" not in form
    assert re.search(r'<script src="/static/builds/blacklist-confirm.js" nonce="[^"]+"></script>', html)
    assert '<dialog id="blacklist-dialog"' in html


# --- Assembled --------------------------------------------------------------------------------------------


def test_mark_assembled_is_refused_with_the_list_of_gaps(tenants):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    html = client.get(page_of(build.server)).content.decode()
    assert "build step not logged: QC sign-off" in html
    assert "Mark assembled" not in html  # planned: the assembly starts first
    assert client.post(f"/bench/servers/{build.server.pk}/start-assembly/").status_code == 302
    response = client.post(f"/bench/servers/{build.server.pk}/mark-assembled/")
    assert response.status_code == 409
    refusal = re.search(
        r'<div class="error-box" role="alert" id="assembly-refusal">.*?</div>',
        response.content.decode(),
        re.S,
    )
    assert refusal
    for gap in (
        "build step not logged: QC sign-off",
        "1 of 2 RTX-PRO-6000-MQ-1652 not installed",
        "1 of 1 KT-4GPU-1652 not installed",
    ):
        assert f"<li>{gap}</li>" in refusal.group(0)
    assert Server.objects.get(pk=build.server.pk).status == ServerStatus.ASSEMBLING


def test_mark_assembled_once_nothing_is_missing(tenants):
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    server_start_assembly(server=build.server, actor=tenants.user_p)
    installed(build, build.chassis_serial, "CHASSIS", tenants.user_p)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    installed(build, build.gpu_serials[1], "GPU3", tenants.user_p)
    client.post(f"/bench/servers/{build.server.pk}/steps/", {"kind": "qc_signoff", "notes": "all seated"})
    assert "Nothing is missing." in client.get(page_of(build.server)).content.decode()
    response = client.post(f"/bench/servers/{build.server.pk}/mark-assembled/")
    assert response.status_code == 302
    assert Server.objects.get(pk=build.server.pk).status == ServerStatus.ASSEMBLED
    assert f"{build.server.hostname} is assembled." in client.get(response["Location"]).content.decode()


def test_connector_map_selector_has_a_fixed_query_count(tenants, django_assert_num_queries):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    installed(build, build.gpu_serials[1], "GPU2", tenants.user_p)
    with django_assert_num_queries(2):
        cells = connector_map(build.server)
    assert [c["state"] for c in cells] == ["free", "occupied", "occupied", "free", "free"]
    assert Connector.objects.filter(server=build.server).count() == 5


# --- German -----------------------------------------------------------------------------------------------


def test_the_bench_speaks_german(tenants):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    client.cookies["django_language"] = "de"
    html = client.get(page_of(build.server)).content.decode()
    for text in (
        "Anschlussplan",
        "Kühlblock A",
        "CPU-Temperatur im Leerlauf (°C)",
        "QS-Freigabe",
        "Endgültig sperren",
        "{connector} endgültig sperren? Der Anschluss wird in dieser Maschine nie wieder belegt.",
        "Server-Etikett drucken",
        "Geplant",
    ):
        assert text in html, text
    refused = client.post(
        f"/bench/servers/{build.server.pk}/steps/", {"kind": "qc_signoff", "cpu_idle_temp_c": "140"}
    )
    assert "Nicht erfasst." in refused.content.decode()
    listed = client.get("/bench/").content.decode()
    assert "Aufbauten an der Werkbank" in listed and "Suchen oder scannen" in listed


def test_a_pm_reaches_the_order_page_from_the_server_page_and_a_partner_does_not(tenants):
    build = make_build(tenants)
    order_url = f"/pm/orders/{build.server.order_id}/"
    assert f'href="{order_url}"' in logged_in(tenants.pm).get(page_of(build.server)).content.decode()
    partner_page = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert order_url not in partner_page and build.server.order.reference in partner_page
