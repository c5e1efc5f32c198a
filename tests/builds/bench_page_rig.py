"""A server on the bench for the bench page tests (test_pages_bench*.py, test_labels.py): one server of
customer A's order with a chassis bay and four GPU slots, its parts in the partner's stock, and a logged-in
client."""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from django.test import Client

from builds.choices import BuildStepKind, ConnectorKind
from builds.models import (
    ChassisLayout,
    ChecklistItem,
    Installation,
    LayoutConnector,
    Server,
)
from builds.services import (
    find_component,
    server_assign_partner,
    server_install,
    servers_create_for_order,
)
from inventory.choices import PartCategory
from tests import factories

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
