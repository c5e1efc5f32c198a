"""The NetBox export (`deployment.netbox`): `manage.py netbox-export` and the PM's ZIP from the site page.

The columns are checked against NetBox's own import forms, copied into
tests/fixtures/netbox_import_fields.json (NetBox 4.6.8): every column is a field the form takes, every
field a row must fill is there, and each choice written is one NetBox offers.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from deployment.services import network_set, prefix_create, rack_create
from tests.deployment.api_rig import make_rig

pytestmark = pytest.mark.django_db

FIELDS = json.loads((Path(__file__).parent.parent / "fixtures" / "netbox_import_fields.json").read_text())
FILES = {
    "racks.csv": "dcim.rack",
    "devices.csv": "dcim.device",
    "interfaces.csv": "dcim.interface",
    "prefixes.csv": "ipam.prefix",
    "ip-addresses.csv": "ipam.ipaddress",
}
EXPECTED_HEADERS = {
    "racks.csv": ["site", "name", "status", "width", "u_height", "description"],
    "devices.csv": [
        "name",
        "role",
        "manufacturer",
        "device_type",
        "status",
        "site",
        "rack",
        "position",
        "face",
        "serial",
        "asset_tag",
        "description",
    ],
    "interfaces.csv": ["device", "name", "type", "mgmt_only", "description"],
    "prefixes.csv": ["prefix", "status", "scope_type", "scope_name", "vlan_site", "vlan", "description"],
    "ip-addresses.csv": [
        "address",
        "status",
        "device",
        "interface",
        "is_primary",
        "is_oob",
        "dns_name",
        "description",
    ],
}


def _fleet(tenants):
    """The API rig's colocation (b1 at U1, a1 at U10 of rack R1) with prefixes and a1's network."""
    r = make_rig(tenants)
    pm = r.t.pm
    prefix_create(
        site=r.site, prefix="10.20.0.0/24", role="management", actor=pm, vlan=20, gateway="10.20.0.1"
    )
    prefix_create(site=r.site, prefix="10.99.0.0/24", role="bmc", actor=pm)
    network_set(
        server=r.a1, actor=pm, management_ip="10.20.0.11", bmc_ip="10.99.0.11", bmc_mac="3c:ec:ef:00:00:11"
    )
    rack_create(site=r.site, actor=pm, name="=1+2", height_u=47)  # a name a spreadsheet would compute
    return r


def _read(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def _check_against_netbox(filename: str, text: str) -> list[dict[str, str]]:
    assert not text.startswith("\ufeff"), "NetBox would read a byte-order mark into the first column's name"
    headers, rows = _read(text)
    form = FIELDS[FILES[filename]]
    assert headers == EXPECTED_HEADERS[filename]
    assert set(headers) <= set(form["fields"]), set(headers) - set(form["fields"])
    assert set(form["required"]) <= set(headers), set(form["required"]) - set(headers)
    for field, choices in form.get("choices", {}).items():
        for row in rows:
            if row.get(field):
                assert row[field] in {str(choice) for choice in choices}, (filename, field, row[field])
    for row in rows:
        for field in form["required"]:
            assert row[field] != "", (filename, field, row)
    return rows


def test_the_command_writes_the_five_files_in_netboxs_format(tenants, tmp_path):
    r = _fleet(tenants)
    out = io.StringIO()
    call_command("netbox-export", "--out", str(tmp_path / "nb"), stdout=out)
    assert "devices.csv: 2 rows" in out.getvalue()
    written = {path.name: path.read_text(encoding="utf-8") for path in (tmp_path / "nb").iterdir()}
    assert set(written) == set(FILES)
    rows = {name: _check_against_netbox(name, text) for name, text in written.items()}

    assert [(row["site"], row["name"], row["u_height"], row["width"]) for row in rows["racks.csv"]] == [
        ("Sofia Colo 1", "'=1+2", "47", "19"),
        ("Sofia Colo 1", "R1", "42", "19"),
    ]
    devices = {row["name"]: row for row in rows["devices.csv"]}
    assert set(devices) == {r.a1.hostname, r.b1.hostname}
    a1 = devices[r.a1.hostname]
    assert (a1["rack"], a1["position"], a1["face"], a1["status"], a1["role"], a1["asset_tag"]) == (
        "R1",
        "10",
        "front",
        "staged",
        "GPU server",
        r.a1.asset_tag,
    )
    assert a1["manufacturer"] and a1["device_type"]  # the chassis part's manufacturer and MPN
    assert devices[r.b1.hostname]["position"] == "1"
    assert len(rows["interfaces.csv"]) == 4
    assert {row["prefix"]: (row["scope_name"], row["vlan"]) for row in rows["prefixes.csv"]} == {
        "10.20.0.0/24": ("Sofia Colo 1", "20"),
        "10.99.0.0/24": ("Sofia Colo 1", ""),
    }
    addresses = {row["address"]: row for row in rows["ip-addresses.csv"]}
    assert set(addresses) == {"10.20.0.1/24", "10.20.0.11/24", "10.99.0.11/24"}
    management, bmc = addresses["10.20.0.11/24"], addresses["10.99.0.11/24"]
    assert (
        management["device"],
        management["interface"],
        management["is_primary"],
        management["dns_name"],
    ) == (
        r.a1.hostname,
        "mgmt0",
        "true",
        r.a1.hostname,
    )
    assert (bmc["interface"], bmc["is_oob"], bmc["is_primary"]) == ("bmc0", "true", "false")
    assert "Gateway of 10.20.0.0/24" in addresses["10.20.0.1/24"]["description"]
    # No credentials in any file.
    assert all("bmc_credentials" not in text and "password" not in text.lower() for text in written.values())


def test_the_command_exports_one_site_and_refuses_an_unknown_one(tenants, tmp_path):
    _fleet(tenants)
    call_command("netbox-export", "--out", str(tmp_path), "--site", "Sofia Colo 1", stdout=io.StringIO())
    assert len(_read((tmp_path / "devices.csv").read_text())[1]) == 2
    with pytest.raises(CommandError, match="No site named 'Mars'"):
        call_command("netbox-export", "--out", str(tmp_path), "--site", "Mars", stdout=io.StringIO())


def test_a_pm_downloads_the_sites_zip_and_nobody_else_finds_it(tenants):
    r = _fleet(tenants)
    url = f"/deployment/sites/{r.site.pk}/netbox.zip"
    client = Client()
    client.force_login(r.t.pm)
    page = client.get(f"/deployment/sites/{r.site.pk}/")
    assert url in page.content.decode()
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert 'filename="netbox-sofia-colo-1.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert sorted(archive.namelist()) == sorted(FILES)
        for name in FILES:
            _check_against_netbox(name, archive.read(name).decode("utf-8"))
    assert client.get("/deployment/sites/999999/netbox.zip").status_code == 404
    for user in (r.t.user_a, r.t.user_p, r.t.user_b, r.t.outsider):
        other = Client()
        other.force_login(user)
        assert other.get(url).status_code == 404, user.username
        assert url not in other.get(f"/deployment/sites/{r.site.pk}/").content.decode()
    assert Client().get(url).status_code == 404
