"""CSV import of sites, racks and network records in the admin (issue #24, item 6): the preview refuses a row
with its line and the deployment service's rule, nothing is written until the PM confirms, and then every
row goes through `site_create`, `rack_create` / `rack_update` and `network_set`, with their audit rows.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from deployment.models import Rack, ServerNetwork, Site
from deployment.services import network_set
from tests.deployment import svc_rig
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _preview(client: Client, model: str, *lines: str) -> Any:
    upload = SimpleUploadedFile(f"{model}.csv", ("\n".join(lines) + "\n").encode(), content_type="text/csv")
    response = client.post(
        f"/admin/deployment/{model}/import/", {"format": 0, "resource": 0, "import_file": upload}
    )
    assert response.status_code == 200
    return response


def _refused(response: Any) -> dict[int, dict[str, list[str]]]:
    """The refused rows by their line in the file (the header is line 1)."""
    result = response.context["result"]
    refused = {row.number + 1: row.error_dict for row in result.invalid_rows}
    refused |= {number + 1: {"row": [str(e.error) for e in errors]} for number, errors in result.row_errors()}
    return refused


def _confirm(client: Client, model: str, preview: Any) -> Any:
    response = client.post(
        f"/admin/deployment/{model}/process_import/", preview.context["confirm_form"].initial
    )
    assert response.status_code == 302 and response["Location"] == f"/admin/deployment/{model}/"
    return response


@pytest.fixture
def pm(tenants: Any) -> Client:
    client = Client()
    client.force_login(tenants.pm)
    client.pm = tenants.pm
    return client


SITE_HEADER = "name,kind,operator,customer,address,country"


def test_sites_are_checked_by_site_create_and_written_only_when_confirmed(pm, tenants):
    lines = [
        SITE_HEADER,
        "Sofia Colo 2,colocation,Telehouse,,Sofia,BG",
        # A customer's own room must name its customer (site_create's rule).
        "Alpha basement,customer_room,Alpha facilities,,Munich,DE",
    ]
    refused = _refused(_preview(pm, "site", *lines))
    assert refused == {3: {"customer": ["a customer's own room names the customer."]}}
    assert not Site.objects.exists()

    lines[2] = f"Alpha basement,customer_room,Alpha facilities,{tenants.customer_a.name},Munich,DE"
    preview = _preview(pm, "site", *lines)
    assert not _refused(preview) and not Site.objects.exists()
    _confirm(pm, "site", preview)
    room = Site.objects.get(name="Alpha basement")
    assert (room.customer, room.eu) == (tenants.customer_a, True)
    assert svc_rig.events(room, "deployment.site_create")[0].actor == pm.pm
    assert Site.objects.get(name="Sofia Colo 2").country == "BG"


def test_racks_name_their_site_and_keep_the_height_rule(pm):
    site = svc_rig.site(pm.pm, name="Sofia Colo 1")
    header = "site,name,height_u"
    refused = _refused(
        _preview(pm, "rack", header, "Sofia Colo 1,R01,42", "Sofia Colo 1,R02,80", "Nowhere DC,R01,42")
    )
    assert refused == {
        3: {"height_u": ["a rack is 1 to 60 U high; got 80."]},
        4: {"site": ["no site is named 'Nowhere DC'."]},
    }
    assert not Rack.objects.exists()

    preview = _preview(pm, "rack", header, "Sofia Colo 1,R01,42", "Sofia Colo 1,R02,47")
    _confirm(pm, "rack", preview)
    assert sorted(Rack.objects.values_list("name", "height_u")) == [("R01", 42), ("R02", 47)]
    # The same rack again with another height: a change through rack_update, audited.
    _confirm(pm, "rack", _preview(pm, "rack", header, "Sofia Colo 1,R02,44"))
    rack = Rack.objects.get(site=site, name="R02")
    assert rack.height_u == 44
    assert svc_rig.events(rack, "deployment.rack_update")[0].after == {"name": "R02", "height_u": 44}


def test_network_records_go_through_network_set_and_its_unique_addresses(pm):
    first, second = svc_rig.servers(2)
    network_set(
        server=first, actor=pm.pm, management_ip="10.0.0.10", bmc_ip="10.0.1.10", bmc_mac="02:00:00:00:00:10"
    )
    header = "server,management_ip,bmc_ip,bmc_mac"
    preview = _preview(
        pm, "servernetwork", header, f"{second.hostname},10.0.0.10,10.0.1.20,02:00:00:00:00:20"
    )
    (texts,) = _refused(preview)[2].values()
    assert texts == [
        f"Server {second.hostname}'s addresses are in use: 10.0.0.10 (management IP) is already the "
        f"management IP of server {first.hostname}."
    ]
    assert not ServerNetwork.objects.filter(server=second).exists()

    preview = _preview(
        pm, "servernetwork", header, f"{second.hostname},10.0.0.20,10.0.1.20,02-00-00-00-00-20"
    )
    _confirm(pm, "servernetwork", preview)
    network = ServerNetwork.objects.get(server=second)
    assert network.bmc_mac == "02:00:00:00:00:20"  # normalised by the service
    assert AuditEvent.objects.filter(verb="deployment.network", object_id=str(second.pk)).count() == 1
