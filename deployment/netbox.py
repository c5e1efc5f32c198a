"""The fleet as CSV files in NetBox's bulk-import format: racks, devices, their interfaces, prefixes and IP
addresses, imported in that order (Import on each object list of NetBox 4.x).

The columns are fields of NetBox's import forms (netbox/dcim/forms/bulk_import.py: RackImportForm,
DeviceImportForm, InterfaceImportForm; netbox/ipam/forms/bulk_import.py: PrefixImportForm,
IPAddressImportForm, as of NetBox 4.6). A column that names another object refers to it by name, so NetBox
must hold these before the import: the sites (by the same names), the device role `GPU server`, each
chassis's manufacturer and device type (its MPN as the model), and the VLANs (by id, at the site) that
prefixes name. Racks are 19-inch (a rack without a rack type needs its width). A device is a server placed
in a rack; its position is its lowest U, as NetBox counts it. Each device gets a management interface
(`mgmt0`, carrying its primary IP) and a BMC interface (`bmc0`, management only, carrying its out-of-band
IP). A gateway is an IP address of its own. The mask length of an address is its prefix's (/32 or /128 when
the site has no prefix holding it).

Text that a spreadsheet would read as a formula gets a leading apostrophe (`werkbank.spreadsheets`).
"""

from __future__ import annotations

import csv
import io
import ipaddress
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from builds.choices import ServerStatus
from deployment.addresses import network_of
from deployment.choices import PrefixRole
from deployment.models import IPPrefix, Rack, RackPlacement, ServerNetwork, Site
from inventory.choices import PartCategory
from orders.models import ConfigurationLine
from werkbank.spreadsheets import defused

RACK_FIELDS = ("site", "name", "status", "width", "u_height", "description")
DEVICE_FIELDS = (
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
)
INTERFACE_FIELDS = ("device", "name", "type", "mgmt_only", "description")
PREFIX_FIELDS = ("prefix", "status", "scope_type", "scope_name", "vlan_site", "vlan", "description")
IP_ADDRESS_FIELDS = (
    "address",
    "status",
    "device",
    "interface",
    "is_primary",
    "is_oob",
    "dns_name",
    "description",
)

#: NetBox's device role every server is imported with (it must exist in NetBox).
DEVICE_ROLE = "GPU server"
MANAGEMENT_INTERFACE, BMC_INTERFACE = "mgmt0", "bmc0"
#: A server's status as NetBox's DeviceStatusChoices says it.
DEVICE_STATUS = {
    ServerStatus.PLANNED: "planned",
    ServerStatus.ASSEMBLING: "planned",
    ServerStatus.ASSEMBLED: "staged",
    ServerStatus.BURN_IN: "staged",
    ServerStatus.BURN_IN_PASSED: "staged",
    ServerStatus.BURN_IN_FAILED: "failed",
    ServerStatus.DEPLOYED: "active",
    ServerStatus.HANDED_OVER: "active",
}
ROLE_WORDS = {PrefixRole.MANAGEMENT: "Management", PrefixRole.BMC: "BMC"}


@dataclass(frozen=True)
class Table:
    """One CSV file: its name, NetBox's column names, and the rows."""

    filename: str
    headers: Sequence[str]
    rows: list[list[Any]]


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _racks(racks: list[Rack]) -> Table:
    rows = [[rack.site.name, rack.name, "active", 19, rack.height_u, ""] for rack in racks]
    return Table("racks.csv", RACK_FIELDS, rows)


def _chassis(placements: list[RackPlacement]) -> dict[int, Any]:
    """The chassis part of each configuration the servers are built to, in one query."""
    lines = ConfigurationLine.objects.filter(
        configuration__in={placement.server.order.configuration_id for placement in placements},
        part__category=PartCategory.CHASSIS,
    ).select_related("part")
    return {line.configuration_id: line.part for line in lines}


def _devices(placements: list[RackPlacement]) -> tuple[Table, Table]:
    chassis = _chassis(placements)
    devices, interfaces = [], []
    for placement in placements:
        server = placement.server
        part = chassis.get(server.order.configuration_id)
        devices.append(
            [
                server.hostname,
                DEVICE_ROLE,
                part.manufacturer if part else "",
                part.mpn if part else "",
                DEVICE_STATUS.get(ServerStatus(server.status), "planned"),
                placement.rack.site.name,
                placement.rack.name,
                placement.lowest_u,
                placement.face,
                server.chassis_serial,
                server.asset_tag,
                f"Order {server.order.reference}",
            ]
        )
        interfaces += [
            [server.hostname, MANAGEMENT_INTERFACE, "1000base-t", _flag(False), "Management"],
            [server.hostname, BMC_INTERFACE, "1000base-t", _flag(True), "BMC (IPMI)"],
        ]
    return Table("devices.csv", DEVICE_FIELDS, devices), Table("interfaces.csv", INTERFACE_FIELDS, interfaces)


def _prefixes(prefixes: list[IPPrefix]) -> Table:
    rows = []
    for prefix in prefixes:
        words = [f"{ROLE_WORDS[PrefixRole(prefix.role)]} network"]
        if prefix.gateway:
            words.append(f"gateway {prefix.gateway}")
        if prefix.description:
            words.append(prefix.description)
        rows.append(
            [
                prefix.prefix,
                "active",
                "dcim.site",
                prefix.site.name,
                prefix.site.name if prefix.vlan else "",
                prefix.vlan or "",
                " · ".join(words),
            ]
        )
    return Table("prefixes.csv", PREFIX_FIELDS, rows)


def _with_mask(address: str, prefixes: Iterable[IPPrefix]) -> str:
    value = ipaddress.ip_address(address)
    holder = next((network_of(p) for p in prefixes if value in network_of(p)), None)
    length = holder.prefixlen if holder is not None else value.max_prefixlen
    return f"{value}/{length}"


def _addresses(placements: list[RackPlacement], prefixes: list[IPPrefix]) -> Table:
    by_site: dict[int, list[IPPrefix]] = {}
    for prefix in prefixes:
        by_site.setdefault(prefix.site_id, []).append(prefix)
    networks = {
        network.server_id: network
        for network in ServerNetwork.objects.filter(
            server__in=[placement.server_id for placement in placements]
        )
    }
    rows = []
    for prefix in prefixes:
        if prefix.gateway:
            rows.append(
                [
                    _with_mask(prefix.gateway, [prefix]),
                    "active",
                    "",
                    "",
                    "",
                    "",
                    "",
                    f"Gateway of {prefix.prefix} ({prefix.site.name})",
                ]
            )
    for placement in placements:
        network = networks.get(placement.server_id)
        if network is None:
            continue
        hostname, site_prefixes = placement.server.hostname, by_site.get(placement.rack.site_id, [])
        rows += [
            [
                _with_mask(network.management_ip, site_prefixes),
                "active",
                hostname,
                MANAGEMENT_INTERFACE,
                _flag(True),
                _flag(False),
                hostname,
                f"Management of {hostname}",
            ],
            [
                _with_mask(network.bmc_ip, site_prefixes),
                "active",
                hostname,
                BMC_INTERFACE,
                _flag(False),
                _flag(True),
                "",
                f"BMC of {hostname} ({network.bmc_mac})",
            ],
        ]
    return Table("ip-addresses.csv", IP_ADDRESS_FIELDS, rows)


def netbox_tables(*, sites: Iterable[Site]) -> list[Table]:
    """The five tables for the given sites, in NetBox's import order. A fixed number of queries."""
    site_ids = [site.pk for site in sites]
    racks = list(Rack.objects.filter(site__in=site_ids).select_related("site").order_by("site__name", "name"))
    placements = list(
        RackPlacement.objects.filter(rack__site__in=site_ids)
        .select_related("server__order", "rack__site")
        .order_by("rack__site__name", "rack__name", "lowest_u")
    )
    prefixes = sorted(
        IPPrefix.objects.filter(site__in=site_ids).select_related("site"),
        key=lambda prefix: (prefix.site.name, network_of(prefix).version, network_of(prefix)),
    )
    devices, interfaces = _devices(placements)
    return [_racks(racks), devices, interfaces, _prefixes(prefixes), _addresses(placements, prefixes)]


def csv_text(table: Table) -> str:
    """The table as CSV text (UTF-8 without a byte-order mark, which NetBox would read into the first
    column's name)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.headers)
    writer.writerows([[defused(cell) for cell in row] for row in table.rows])
    return out.getvalue()


def netbox_zip(tables: Sequence[Table]) -> bytes:
    """The tables as one ZIP archive of CSV files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for table in tables:
            archive.writestr(table.filename, csv_text(table))
    return buffer.getvalue()
