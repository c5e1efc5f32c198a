"""The bench pages (/bench/): who sees the partner's builds, the server page and its connector map, German.

Scanning, removing and moving: test_pages_bench_scan.py; steps, the blacklist and the gaps:
test_pages_bench_steps.py; the list page: test_pages_bench_list.py.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.shortcuts import resolve_url
from django.test import Client

from builds.choices import ServerStatus
from builds.drawing import connector_map_svg, shorten
from builds.models import (
    Installation,
    Server,
)
from builds.selectors import ConnectorCell
from builds.services import (
    connector_blacklist,
)
from tests import factories
from tests.builds.bench_page_rig import X8_REASON, cell, installed, logged_in, make_build, page_of, png_1x1

pytestmark = pytest.mark.django_db


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
    # session, user, the partner-membership check, the page's count, the page with its progress figures,
    # the deliveries to receive
    with django_assert_num_queries(6):
        client.get("/bench/")
    for prefix in ("2001", "2002", "2003"):
        more = make_build(tenants, prefix=prefix)
        installed(more, more.gpu_serials[0], "GPU1", tenants.user_p)
        installed(more, more.gpu_serials[1], "GPU2", tenants.user_p)
        connector_blacklist(
            connector=more.server.connectors.get(name="GPU4"), actor=tenants.user_p, reason="x8"
        )
    with django_assert_num_queries(6) as queries:
        response = client.get("/bench/")
    assert response.content.decode().count('class="progress"') == 4
    assert '<span class="progress">2 / 3</span>' in response.content.decode()
    assert len(queries.captured_queries) == 6


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
        ConnectorCell(
            id=1,
            name="PCIE-A3",
            kind="pcie_slot",
            kind_label="PCIe slot",
            position=1,
            numa_node=0,
            pcie_gen=5,
            pcie_lanes=16,
            cooling_block="",
            state="occupied",
            installation_id=7,
            serial="1652024031234567890",
            part_mpn="900-2G153",
            blacklist_reason="",
            blacklisted_at=None,
        )
    ]
    svg = connector_map_svg(cells=cells, columns=8, label="map")
    assert shorten("1652024031234567890", 13) == "…031234567890"
    assert shorten("1652024031337", 13) == "1652024031337"
    assert ">…031234567890</text>" in svg  # the end of a serial tells the units of one lot apart
    assert 'data-serial="1652024031234567890"' in svg
    assert "<title>PCIE-A3 (PCIe slot, Gen5 x16 · NUMA 0): 1652024031234567890 (900-2G153)</title>" in svg
    # One 8-column panel, 1 cell wide here; no cooling-block frame when no block is set.
    assert svg.count("<svg ") == 1 and "cooling-block" not in svg


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
