"""The handover packs' API and portal downloads: a PM asks for a pack, the server's customer downloads it
(API and portal), and everyone else gets 404 (an anonymous visitor of the portal: the login page)."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse

from tests.tenants_rig import api_client
from tests.warranty.packs_rig import load_demo, pdf_text
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PACKS = "/api/v1/handover/packs/"


@pytest.fixture
def demo(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return load_demo()


@pytest.fixture
def ready(demo, django_capture_on_commit_callbacks):
    """A ready pack of the fleet's first server, asked for by the PM through the API."""
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(demo.pm).post(PACKS, {"server": demo.fleet.pk}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == PackStatus.QUEUED  # as it was at the request's commit
    pack = HandoverPack.objects.get(pk=response.json()["id"])
    assert pack.status == PackStatus.READY
    return pack


def test_the_customer_reads_and_downloads_its_pack_and_nobody_else_does(demo, ready):
    detail = f"{PACKS}{ready.pk}/"
    as_pm = api_client(demo.pm).get(detail).json()
    as_member = api_client(demo.member).get(detail).json()
    assert set(as_pm) - set(as_member) == {"error", "attempts", "generated_by"}
    assert as_member["pdf_url"].endswith(f"{detail}pdf/") and as_member["zip_sha256"] == ready.zip_sha256
    assert [row["id"] for row in api_client(demo.member).get(PACKS).json()["results"]] == [ready.pk]

    pdf = api_client(demo.member).get(f"{detail}pdf/")
    assert (pdf.status_code, pdf["Content-Type"]) == (200, "application/pdf")
    assert pdf["Content-Disposition"].startswith("attachment;")
    assert "WB-2026-0001-01" in pdf_text(b"".join(pdf.streaming_content))[1]
    archive = api_client(demo.member).get(f"{detail}zip/")
    assert (archive.status_code, archive["Content-Type"]) == (200, "application/zip")
    assert "manifest.json" in zipfile.ZipFile(io.BytesIO(b"".join(archive.streaming_content))).namelist()

    for user in (demo.stranger, demo.partner):
        client = api_client(user)
        assert client.get(PACKS).json()["results"] == []
        for url in (detail, f"{detail}pdf/", f"{detail}zip/"):
            assert client.get(url).status_code == 404, (user.username, url)
    assert api_client(None).get(detail).status_code in {401, 403}


def test_only_a_pm_asks_for_a_pack_and_only_for_a_deployed_server(demo):
    events = AuditEvent.objects.count()
    assert api_client(demo.member).post(PACKS, {"server": demo.fleet.pk}, format="json").status_code == 403
    assert api_client(demo.stranger).post(PACKS, {"server": demo.fleet.pk}, format="json").status_code == 403
    refused = api_client(demo.pm).post(PACKS, {"server": demo.seven_u.pk}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "pack_server_not_deployed")
    assert api_client(demo.pm).post(PACKS, {"server": 999999}, format="json").status_code == 404
    bad = api_client(demo.pm).post(PACKS, {"server": demo.fleet.pk, "language": "fr"}, format="json")
    assert bad.status_code == 400 and "language" in bad.json()
    assert AuditEvent.objects.count() == events and not HandoverPack.objects.exists()


def test_a_pack_that_is_not_ready_has_no_file_yet(demo):
    pack = HandoverPack.objects.create(server=demo.fleet, revision=1, language="en")
    response = api_client(demo.member).get(f"{PACKS}{pack.pk}/pdf/")
    assert response.status_code == 404 and "has no pdf yet" in response.json()["detail"]
    assert api_client(demo.member).get(f"{PACKS}{pack.pk}/").json()["pdf_url"] is None


def test_the_certificate_is_the_customers_alone(demo):
    url = f"/api/v1/warranty/certificates/{demo.fleet.order_id}/"
    response = api_client(demo.member).get(url, {"language": "en"})
    assert (response.status_code, response["Content-Type"]) == (200, "application/pdf")
    _, text = pdf_text(response.content)
    assert "Warranty certificate" in text and demo.fleet.order.reference in text
    assert "Garantiezertifikat" in pdf_text(api_client(demo.member).get(url).content)[1]  # Vastfleet: de
    for user in (demo.stranger, demo.partner):
        assert api_client(user).get(url).status_code == 404


def test_a_customer_downloads_its_pack_through_the_portal(demo, ready, client):
    urls = [
        reverse("portal:pack-pdf", args=[ready.pk]),
        reverse("portal:pack-zip", args=[ready.pk]),
        reverse("portal:certificate", args=[demo.fleet.order_id]),
    ]
    for url in urls:  # anonymous: the login page
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
    client.force_login(demo.stranger)
    for url in urls:
        assert client.get(url).status_code == 404, url
    client.force_login(demo.member)
    pdf = client.get(urls[0])
    assert (pdf.status_code, pdf["Content-Type"]) == (200, "application/pdf")
    assert b"".join(pdf.streaming_content) == ready.pdf.open("rb").read()
    assert client.get(urls[1])["Content-Type"] == "application/zip"
    certificate = client.get(urls[2])
    assert certificate.status_code == 200 and "Garantiezertifikat" in pdf_text(certificate.content)[1]


def test_the_documents_block_lists_the_ready_packs_for_the_server_page(demo, ready):
    from portal.views.documents import documents_context

    request = RequestFactory().get("/portal/")
    request.user = demo.member
    HandoverPack.objects.create(server=demo.fleet, revision=2, language="en")  # queued: not listed
    context = documents_context(request, demo.fleet)
    assert context["show_documents"] is True
    assert [entry["revision"] for entry in context["handover_packs"]] == [ready.revision]
    html = render_to_string("portal/_server_documents.html", context)
    assert reverse("portal:pack-pdf", args=[ready.pk]) in html and ready.zip_sha256 in html
    assert reverse("portal:certificate", args=[demo.fleet.order_id]) in html


@pytest.mark.parametrize("count", [1, 20])
def test_the_pack_list_costs_the_same_queries_for_1_or_20_packs(count, django_assert_num_queries):
    from tests import factories
    from tests.deployment import svc_rig as rig

    pm = factories.make_pm(username="list-pm")
    servers = rig.servers(count, status="deployed")
    HandoverPack.objects.bulk_create(
        HandoverPack(server=server, revision=1, language="en", generated_by=pm) for server in servers
    )
    client = api_client(pm)
    # The PM group check, the count, the page (with server and the asking PM joined).
    with django_assert_num_queries(3):
        response = client.get(PACKS)
    assert response.json()["count"] == count
