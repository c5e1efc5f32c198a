"""Tenant isolation over the deployment, warranty and handover routes (the meta-test and the other routes'
cases: test_isolation.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from builds.choices import ServerStatus
from builds.models import (
    Server,
)
from tests import factories
from tests.tenants_rig import api_client
from tests.werkbank.isolation_rig import (
    CLAIM_LOG,
    World,
    _assert_404,
    _builds,
    _deployment,
    _ids,
    _warranty,
)
from tests.werkbank.isolation_rig import world as isolation_world
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

world = isolation_world


def _deployment_strangers(w: World) -> list[Any]:
    return [w.t.user_b, w.t.user_q, w.t.outsider]


def _deployment_list(path: str, attribute: str, server_filter: bool = False) -> Callable[[World], None]:
    def case(w: World) -> None:
        d = _deployment(w)
        mine = getattr(d, attribute).pk
        for user in (w.t.user_a, w.t.user_p):  # the servers' customer and partner
            assert mine in _ids(api_client(user).get(f"/api/v1/{path}/")), user.username
        for user in _deployment_strangers(w):
            assert _ids(api_client(user).get(f"/api/v1/{path}/")) == set(), user.username
        if server_filter:
            response = api_client(w.t.user_q).get(f"/api/v1/{path}/?server={d.ready.pk}")
            assert response.status_code == 400

    return case


def _deployment_detail(
    path: str, attribute: str, body: dict, delete: bool = False
) -> Callable[[World], None]:
    def case(w: World) -> None:
        d = _deployment(w)
        url = f"/api/v1/{path}/{getattr(d, attribute).pk}/"
        events = AuditEvent.objects.count()
        assert api_client(w.t.user_a).get(url).status_code == 200
        _assert_404(_deployment_strangers(w), "get", url)
        _assert_404(_deployment_strangers(w), "patch", url, body)
        if delete:
            _assert_404(_deployment_strangers(w), "delete", url)
        for user in (w.t.user_a, w.t.user_p):  # they see it, so they are told why not
            assert api_client(user).patch(url, body, format="json").status_code == 403
        assert AuditEvent.objects.count() == events
        assert type(getattr(d, attribute)).objects.filter(pk=getattr(d, attribute).pk).exists()

    return case


def rack_power(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/racks/{d.rack.pk}/power/"
    assert d.ready.hostname in api_client(w.t.user_p).get(url).content.decode()
    _assert_404(_deployment_strangers(w), "get", url)


def placement_detail(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/placements/{d.placement.pk}/"
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404(_deployment_strangers(w), "get", url)
    _assert_404(_deployment_strangers(w), "delete", url, {"reason": "x"})
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).delete(url).status_code == 403
    assert not AuditEvent.objects.filter(verb="deployment.unplace").exists()


def platform_listing_detail(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/platform-listings/{d.listing.pk}/"
    assert api_client(w.t.user_p).get(url).status_code == 200
    _assert_404(_deployment_strangers(w), "get", url)


def deployment_server_detail(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/deployment/servers/{d.ready.asset_tag}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).json()["ready"] is True
    _assert_404(_deployment_strangers(w), "get", url)


def deployment_server_deploy(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/deployment/servers/{d.ready.asset_tag}/deploy/"
    _assert_404(_deployment_strangers(w), "post", url, {"note": "x"})
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).post(url, {"note": "x"}, format="json").status_code == 403
    d.ready.refresh_from_db()
    assert d.ready.status == ServerStatus.BURN_IN_PASSED
    assert not AuditEvent.objects.filter(verb="deployment.deploy").exists()


def rack_elevation_svg(w: World) -> None:
    from deployment.services import feed_create, placement_create, rack_create, site_create

    order = factories.OrderFactory(customer=w.t.customer_a, server_count=1)
    [server] = factories.make_servers(order, status=ServerStatus.BURN_IN_PASSED)
    Server.objects.filter(pk=server.pk).update(partner=w.t.partner_p)
    site = site_create(
        actor=w.t.pm,
        name="Iso colo",
        kind="colocation",
        operator="Op",
        customer=None,
        address="x",
        country="BG",
    )
    rack = rack_create(site=site, actor=w.t.pm, name="R1", height_u=42)
    feed = feed_create(rack=rack, actor=w.t.pm, name="A1", leg="A", voltage_v=230, current_a=32, phases=3)
    placement_create(server=server, rack=rack, lowest_u=1, feeds=[feed], actor=w.t.pm)
    for url in (f"/api/v1/racks/{rack.pk}/elevation.svg/", f"/api/v1/racks/{rack.pk}/elevation.svg"):
        for user in (w.t.pm, w.t.user_a, w.t.user_p):
            response = api_client(user).get(url)
            assert (response.status_code, response["Content-Type"]) == (200, "image/svg+xml"), user.username
            assert server.hostname in response.content.decode()
        _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def _with_prefix(w: World) -> tuple[Any, Any]:
    from deployment.services import prefix_create

    d = _deployment(w)
    return d, prefix_create(site=d.site, prefix="10.0.0.0/24", role="management", actor=w.t.pm)


def ip_prefix_list(w: World) -> None:
    d, prefix = _with_prefix(w)
    for user in (w.t.user_a, w.t.user_p):  # their server stands at the prefix's site
        assert prefix.pk in _ids(api_client(user).get("/api/v1/prefixes/")), user.username
    for user in _deployment_strangers(w):
        assert _ids(api_client(user).get("/api/v1/prefixes/")) == set(), user.username
    assert api_client(w.t.user_q).get(f"/api/v1/prefixes/?site={d.site.pk}").status_code == 400


def ip_prefix_detail(w: World) -> None:
    _d, prefix = _with_prefix(w)
    url = f"/api/v1/prefixes/{prefix.pk}/"
    events = AuditEvent.objects.count()
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404(_deployment_strangers(w), "get", url)
    _assert_404(_deployment_strangers(w), "patch", url, {"vlan": 7})
    _assert_404(_deployment_strangers(w), "delete", url)
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).patch(url, {"vlan": 7}, format="json").status_code == 403
        assert api_client(user).delete(url).status_code == 403
    assert AuditEvent.objects.count() == events
    prefix.refresh_from_db()
    assert prefix.vlan is None


def site_next_address(w: World) -> None:
    d, _prefix = _with_prefix(w)
    url = f"/api/v1/sites/{d.site.pk}/next-address/?role=management"
    assert api_client(w.t.pm).get(url).json()["address"] == "10.0.0.2"  # 10.0.0.1 is the ready server's
    for user in (w.t.user_a, w.t.user_p):  # they see the site: told it is the PMs'
        assert api_client(user).get(url).status_code == 403, user.username
    _assert_404(_deployment_strangers(w), "get", url)


DEPLOYMENT_CASES: dict[str, Callable[[World], None]] = {
    "site-list": _deployment_list("sites", "site"),
    "site-detail": _deployment_detail("sites", "site", {"operator": "Taken over"}),
    "rack-list": _deployment_list("racks", "rack"),
    "rack-detail": _deployment_detail("racks", "rack", {"name": "Taken over"}),
    "rack-power": rack_power,
    "power-feed-list": _deployment_list("power-feeds", "feed"),
    "power-feed-detail": _deployment_detail("power-feeds", "feed", {"current_a": 16}, delete=True),
    "placement-list": _deployment_list("placements", "placement", server_filter=True),
    "placement-detail": placement_detail,
    "network-list": _deployment_list("networks", "network", server_filter=True),
    "network-detail": _deployment_detail("networks", "network", {"bmc_password": "taken-over"}),
    "platform-listing-list": _deployment_list("platform-listings", "listing", server_filter=True),
    "platform-listing-detail": platform_listing_detail,
    "deployment-server-detail": deployment_server_detail,
    "deployment-server-deploy": deployment_server_deploy,
    "rack-elevation-svg": rack_elevation_svg,
    "ip-prefix-list": ip_prefix_list,
    "ip-prefix-detail": ip_prefix_detail,
    "site-address-next-address": site_next_address,
}


def _warranty_strangers(w: World) -> list[Any]:
    """The records are the customer's: its partner built the server but holds no warranty."""
    return [w.t.user_b, w.t.user_p, w.t.user_q, w.t.outsider]


def _warranty_list(path: str, attribute: str, server_filter: bool = False) -> Callable[[World], None]:
    def case(w: World) -> None:
        mine = getattr(_warranty(w), attribute).pk
        assert mine in _ids(api_client(w.t.user_a).get(f"/api/v1/warranty/{path}/"))
        for user in _warranty_strangers(w):
            assert _ids(api_client(user).get(f"/api/v1/warranty/{path}/")) == set(), user.username
        if server_filter:
            response = api_client(w.t.user_b).get(f"/api/v1/warranty/{path}/?server={_builds(w).server.pk}")
            assert response.status_code == 400

    return case


def _warranty_detail(path: str, attribute: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        url = f"/api/v1/warranty/{path}/{getattr(_warranty(w), attribute).pk}/"
        assert api_client(w.t.user_a).get(url).status_code == 200
        _assert_404(_warranty_strangers(w), "get", url)

    return case


def warranty_record_lookup(w: World) -> None:
    _warranty_list("records", "record", server_filter=True)(w)
    for user in _warranty_strangers(w):  # another customer's serial is simply not found
        response = api_client(user).get("/api/v1/warranty/records/?serial=p-serial-1")
        assert _ids(response) == set(), user.username
    assert len(_ids(api_client(w.t.user_a).get("/api/v1/warranty/records/?serial=p-serial-1"))) == 1


def warranty_claim_list(w: World) -> None:
    _warranty_list("claims", "claim")(w)
    x = _warranty(w)
    # Opening a claim on A's record: 404 for whoever does not see it, nothing written.
    _assert_404(_warranty_strangers(w), "post", "/api/v1/warranty/claims/",
                {"record": x.record.pk, "description": "mine now"})  # fmt: skip
    assert x.record.claims.count() == 1


def _warranty_claim_action(action: str, body: dict) -> Callable[[World], None]:
    def case(w: World) -> None:
        x = _warranty(w)
        url = f"/api/v1/warranty/claims/{x.claim.pk}/{action}/"
        events = AuditEvent.objects.count()
        _assert_404(_warranty_strangers(w), "post", url, body)
        assert api_client(w.t.user_a).post(url, body, format="json").status_code == 403  # sees it: told why
        x.claim.refresh_from_db()
        assert x.claim.status == "open" and AuditEvent.objects.count() == events

    return case


def warranty_claim_attachments(w: World) -> None:
    """Attaching a file to A's claim: 404 for whoever does not see it, nothing written."""
    x = _warranty(w)
    url = f"/api/v1/warranty/claims/{x.claim.pk}/attachments/"
    events = AuditEvent.objects.count()
    for user in _warranty_strangers(w):
        upload = SimpleUploadedFile("mine.log", b"taken over\n", content_type="text/plain")
        response = api_client(user).post(url, {"file": upload}, format="multipart")
        assert response.status_code == 404, (user.username, response.status_code)
    assert x.claim.attachments.count() == 1 and AuditEvent.objects.count() == events


def warranty_claim_attachment_download(w: World) -> None:
    x = _warranty(w)
    url = f"/api/v1/warranty/claim-attachments/{x.attachment.pk}/download/"
    for user in (w.t.user_a, w.t.pm):
        response = api_client(user).get(url)
        assert response.status_code == 200, user.username
        assert b"".join(response.streaming_content) == CLAIM_LOG
    _assert_404(_warranty_strangers(w), "get", url)
    assert api_client(None).get(url).status_code in {401, 403}


def handover_server_detail(w: World) -> None:
    x = _warranty(w)
    url = f"/api/v1/handover/servers/{x.deployed.asset_tag}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).json()["ready"] is True
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def handover_server_hand_over(w: World) -> None:
    x = _warranty(w)
    url = f"/api/v1/handover/servers/{x.deployed.asset_tag}/hand-over/"
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "post", url, {"note": "x"})
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).post(url, {"note": "x"}, format="json").status_code == 403
    x.deployed.refresh_from_db()
    assert x.deployed.status == ServerStatus.DEPLOYED


def _supplier_return(w: World) -> Any:
    """A return of A's GPU P-SERIAL-2 to its supplier, as the PM's service leaves it (PMs only)."""
    from inventory.models import Component
    from warranty.models import SupplierReturn

    return SupplierReturn.objects.create(
        number="SR-2026-0001",
        component=Component.objects.get(serial="P-SERIAL-2"),
        supplier_id=w.po_p.supplier_id,
        reason="No PCIe link",
        created_by=w.t.pm,
    )


def _members(w: World) -> list[Any]:
    """Supplier returns are purchasing: even customer A, whose card it was, and partner P see none."""
    return [w.t.user_a, *w.intruders]


def supplier_return_list(w: World) -> None:
    returned = _supplier_return(w)
    assert returned.pk in _ids(api_client(w.t.pm).get("/api/v1/warranty/supplier-returns/"))
    for user in _members(w):
        assert _ids(api_client(user).get("/api/v1/warranty/supplier-returns/")) == set(), user.username
        body = {"component": returned.component_id, "reason": "mine"}
        response = api_client(user).post("/api/v1/warranty/supplier-returns/", body, format="json")
        assert response.status_code == 403, user.username


def _supplier_return_route(action: str, body: dict) -> Callable[[World], None]:
    def case(w: World) -> None:
        returned = _supplier_return(w)
        url = f"/api/v1/warranty/supplier-returns/{returned.pk}/{action}"
        events = AuditEvent.objects.count()
        _assert_404(_members(w), "post" if action else "get", url, body)
        returned.refresh_from_db()
        assert returned.status == "open" and AuditEvent.objects.count() == events

    return case


def _attribution(w: World) -> Any:
    """A connector of A's server blacklisted on the bench, attributed to it (PMs only, as purchasing)."""
    from django.utils import timezone

    from builds.models import ConnectorBlacklist
    from warranty.models import Attribution

    b = _builds(w)
    blacklist = ConnectorBlacklist.objects.create(connector=b.connector, reason="x8 link")
    return Attribution.objects.create(
        server=b.server, stage="bench", occurred_at=timezone.now(), blacklist=blacklist,
        proposed_cause="connector", proposed_reason="Blacklisted.", cause="connector", connector=b.connector,
    )  # fmt: skip


def attribution_list(w: World) -> None:
    attribution = _attribution(w)
    assert attribution.pk in _ids(api_client(w.t.pm).get("/api/v1/warranty/attributions/"))
    for user in _members(w):
        assert _ids(api_client(user).get("/api/v1/warranty/attributions/")) == set(), user.username


def _attribution_route(action: str, body: dict) -> Callable[[World], None]:
    def case(w: World) -> None:
        attribution = _attribution(w)
        url = f"/api/v1/warranty/attributions/{attribution.pk}/{action}"
        events = AuditEvent.objects.count()
        _assert_404(_members(w), "post" if action else "get", url, body)
        attribution.refresh_from_db()
        assert attribution.confirmed_at is None and AuditEvent.objects.count() == events

    return case


WARRANTY_CASES: dict[str, Callable[[World], None]] = {
    "warranty-record-list": warranty_record_lookup,
    "warranty-record-detail": _warranty_detail("records", "record"),
    "warranty-registration-list": _warranty_list("registrations", "registration", server_filter=True),
    "warranty-registration-detail": _warranty_detail("registrations", "registration"),
    "warranty-claim-list": warranty_claim_list,
    "warranty-claim-detail": _warranty_detail("claims", "claim"),
    "warranty-claim-confirm": _warranty_claim_action("confirm", {"note": "x"}),
    "warranty-claim-dismiss": _warranty_claim_action("dismiss", {"note": "x"}),
    "warranty-claim-approve": _warranty_claim_action("approve", {"note": "x"}),
    "warranty-claim-reject": _warranty_claim_action("reject", {"note": "x"}),
    "warranty-claim-ship-replacement": _warranty_claim_action("ship-replacement", {"component": 1}),
    "warranty-claim-close": _warranty_claim_action("close", {"note": "x"}),
    "warranty-claim-attachments": warranty_claim_attachments,
    "warranty-claim-attachment-download": warranty_claim_attachment_download,
    "warranty-supplier-return-list": supplier_return_list,
    "warranty-supplier-return-detail": _supplier_return_route("", {}),
    "warranty-supplier-return-ship": _supplier_return_route("ship/", {"supplier_rma_number": "X-1"}),
    "warranty-supplier-return-close": _supplier_return_route("close/", {"outcome": "refused", "note": "x"}),
    "warranty-attribution-list": attribution_list,
    "warranty-attribution-detail": _attribution_route("", {}),
    "warranty-attribution-attribute": _attribution_route("attribute/", {"cause": "connector"}),
    "handover-server-detail": handover_server_detail,
    "handover-server-hand-over": handover_server_hand_over,
}


# --- warranty: handover packs and certificates ----------------------------------------------------------


def _pack(w: World) -> Any:
    """A ready pack of a deployed server of customer A, built by partner P (who is not handed it)."""
    from django.core.files.base import ContentFile

    from warranty.models import HandoverPack

    order = factories.OrderFactory(customer=w.t.customer_a, server_count=1)
    [server] = factories.make_servers(order, status=ServerStatus.DEPLOYED)
    Server.objects.filter(pk=server.pk).update(partner=w.t.partner_p)
    pack = HandoverPack(server=server, revision=1, language="en", status="ready", progress=100)
    pack.pdf.save("handover.pdf", ContentFile(b"%PDF-1.4 pack"), save=False)
    pack.zip.save("handover.zip", ContentFile(b"PK pack"), save=False)
    pack.pdf_sha256 = pack.zip_sha256 = "0" * 64
    pack.save()
    return pack


def handover_pack_list(w: World) -> None:
    pack = _pack(w)
    assert pack.pk in _ids(api_client(w.t.user_a).get("/api/v1/handover/packs/"))
    for user in w.intruders:
        assert _ids(api_client(user).get("/api/v1/handover/packs/")) == set(), user.username
    # Asking for a pack is a PM's: the customer who sees it is told so, nobody else learns of the server.
    for user in [w.t.user_a, *w.intruders]:
        response = api_client(user).post("/api/v1/handover/packs/", {"server": pack.server_id}, format="json")
        assert response.status_code == 403, user.username
    assert not AuditEvent.objects.filter(verb="pack.request").exists()


def _pack_route(suffix: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        pack = _pack(w)
        url = f"/api/v1/handover/packs/{pack.pk}/{suffix}"
        assert api_client(w.t.user_a).get(url).status_code == 200
        _assert_404(w.intruders, "get", url)

    return case


def warranty_certificate_detail(w: World) -> None:
    url = f"/api/v1/warranty/certificates/{w.order_a.pk}/"
    response = api_client(w.t.user_a).get(url)
    assert (response.status_code, response["Content-Type"]) == (200, "application/pdf")
    _assert_404(w.intruders, "get", url)


PACK_CASES: dict[str, Callable[[World], None]] = {
    "handover-pack-list": handover_pack_list,
    "handover-pack-detail": _pack_route(""),
    "handover-pack-pdf": _pack_route("pdf/"),
    "handover-pack-zip": _pack_route("zip/"),
    "warranty-certificate-detail": warranty_certificate_detail,
}


#: The cases of this module's routes.
CASES: dict[str, Callable[[World], None]] = {
    **DEPLOYMENT_CASES,
    **WARRANTY_CASES,
    **PACK_CASES,
}


@pytest.mark.parametrize("route", sorted(CASES))
def test_isolation(world, route):
    CASES[route](world)
