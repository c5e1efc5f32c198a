"""A small bench for the builds API tests: one order of customer A, built by partner P, with parts in stock.

The layout has 2 PCIe slots, 1 riser port, 2 DIMM slots and 1 chassis mount. In stock at P's workshop: 3 GPUs
of lot L1, 1 GPU of lot L2, 2 DIMMs and 1 chassis. Customer B's order has one server built by partner Q.

The `bench` and `built` fixtures live here beside their helpers; tests/builds/conftest.py registers them for
this folder, and other folders import them from here.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from builds.choices import BuildStepKind, ConnectorKind
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    ChecklistItem,
    ConnectorBlacklist,
    Installation,
    LayoutConnector,
    Server,
)
from builds.services import server_assign_partner, servers_create_for_order
from inventory.choices import PartCategory
from inventory.models import StockMovement
from tests import factories
from tests.tenants_rig import Tenants, api_client
from werkbank.models import AuditEvent

LAYOUT = [
    ("PCIe-1", ConnectorKind.PCIE_SLOT),
    ("PCIe-2", ConnectorKind.PCIE_SLOT),
    ("Riser-1", ConnectorKind.RISER_PORT),
    ("DIMM-A1", ConnectorKind.DIMM_SLOT),
    ("DIMM-A2", ConnectorKind.DIMM_SLOT),
    ("Chassis", ConnectorKind.CHASSIS),
]
CHECKLIST = [BuildStepKind.PCIE_TOPOLOGY_CHECK, BuildStepKind.QC_SIGNOFF]
GPUS_L1 = ["GPU-L1-1", "GPU-L1-2", "GPU-L1-3"]
GPU_L2 = "GPU-L2-1"
DIMMS = ["DIMM-1", "DIMM-2"]
CHASSIS = "CHS-1"


@dataclass
class Bench:
    t: Tenants
    order: Any
    server: Any
    other_server: Any
    server_q: Any
    gpu: Any
    dimm: Any
    chassis: Any
    layout: Any

    def url(self, route: str = "", server: Any = None) -> str:
        return f"/api/v1/builds/servers/{(server or self.server).pk}/{route}"

    def connector(self, name: str, server: Any = None) -> Any:
        return (server or self.server).connectors.get(name=name)


@pytest.fixture
def bench(tenants: Tenants) -> Bench:
    gpu = factories.PartFactory(name="RTX 5090 32 GB")
    dimm = factories.PartFactory(category=PartCategory.MEMORY, manufacturer="Samsung", name="64 GB RDIMM")
    chassis = factories.ChassisFactory(name="6U GPU chassis")
    configuration = factories.ConfigurationFactory(lines=[(gpu, 3), (dimm, 2), (chassis, 1)])
    for kind in CHECKLIST:
        ChecklistItem.objects.create(configuration=configuration, kind=kind)
    layout = ChassisLayout.objects.create(chassis=chassis, columns=3, description="Test chassis")
    LayoutConnector.objects.bulk_create(
        LayoutConnector(
            layout=layout,
            name=name,
            kind=kind,
            position=position,
            numa_node=0 if kind == ConnectorKind.PCIE_SLOT else None,
            pcie_gen=5 if kind == ConnectorKind.PCIE_SLOT else None,
            pcie_lanes=16 if kind == ConnectorKind.PCIE_SLOT else None,
        )
        for position, (name, kind) in enumerate(LAYOUT, start=1)
    )
    order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration, server_count=2)
    server, other_server = servers_create_for_order(order=order, actor=tenants.pm)
    for each in (server, other_server):
        server_assign_partner(server=each, actor=tenants.pm, partner=tenants.partner_p)

    order_b = factories.OrderFactory(customer=tenants.customer_b, server_count=1)
    (server_q,) = servers_create_for_order(order=order_b, actor=tenants.pm)
    server_assign_partner(server=server_q, actor=tenants.pm, partner=tenants.partner_q)

    factories.receive_stock(part=gpu, deliver_to=tenants.partner_p, lots={"L1": GPUS_L1, "L2": [GPU_L2]})
    factories.receive_stock(part=dimm, deliver_to=tenants.partner_p, lots={"L-DIMM": DIMMS})
    factories.receive_stock(part=chassis, deliver_to=tenants.partner_p, lots={"L-CHS": [CHASSIS]})
    return Bench(
        t=tenants,
        order=order,
        server=Server.objects.get(pk=server.pk),
        other_server=Server.objects.get(pk=other_server.pk),
        server_q=Server.objects.get(pk=server_q.pk),
        gpu=gpu,
        dimm=dimm,
        chassis=chassis,
        layout=layout,
    )


def snapshot() -> tuple[int, ...]:
    """Row counts of everything a bench action writes: a refused action leaves them all unchanged."""
    return tuple(
        model.objects.count()
        for model in (
            Installation,
            Allocation,
            StockMovement,
            AuditEvent,
            ConnectorBlacklist,
            BuildStep,
            BuildPhoto,
        )
    )


def post(user: Any, url: str, body: dict | None = None, **kwargs: Any) -> Any:
    kwargs.setdefault("format", "json")
    return api_client(user).post(url, body or {}, **kwargs)


def get(user: Any, url: str, **params: Any) -> Any:
    return api_client(user).get(url, params)


def install(bench: Bench, serial: str, connector: str, *, user: Any = None, server: Any = None) -> Any:
    response = post(
        user or bench.t.user_p, bench.url("install/", server), {"serial": serial, "connector": connector}
    )
    assert response.status_code == 201, response.json()
    return response


def blacklist(bench: Bench, connector: str, reason: str, **body: Any) -> Any:
    """Partner P blacklists a connector of the bench's server; the caller checks the answer."""
    return post(
        bench.t.user_p,
        f"/api/v1/builds/connectors/{bench.connector(connector).pk}/blacklist/",
        {"reason": reason, **body},
    )


def connector_map(bench: Bench, user: Any = None) -> dict[str, dict]:
    response = get(user or bench.t.user_p, bench.url("connector-map/"))
    assert response.status_code == 200, response.content
    return {entry["name"]: entry for entry in response.json()["connectors"]}


# --- Images, built byte by byte ------------------------------------------------------------------------

#: A 1×1 grey baseline JPEG (159 bytes), as Pillow writes it; starts with FF D8 FF and ends with FF D9.
JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300100b0c0e0c0a100e0d0e1211101318281a181616183123251d"
    "283a333d3c3933383740485c4e404457453738506d51575f626768673e4d71797064785c656763ffc0000b0800010001010111"
    "00ffc40014000100000000000000000000000000000000ffc40014100100000000000000000000000000000000ffda00080101"
    "00003f003fffd9"
)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pixels(data: bytes) -> tuple[str, tuple[int, int], str, bytes]:
    """What an image shows, whatever its encoding: format, size and its pixels as RGB(A) bytes.

    Stored photos are re-encoded, so tests compare them with the upload by this, not byte for byte. The
    1×1 test images re-encode without loss (a flat colour survives JPEG at quality 90).
    """
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        rgb = image.convert("RGBA" if "A" in image.mode else "RGB")
        return image.format, image.size, rgb.mode, rgb.tobytes()


def png(*, size: int | None = None) -> bytes:
    """A valid 1×1 RGB PNG; with `size`, padded by a text chunk to exactly that many bytes."""
    head = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    body = _png_chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    tail = _png_chunk(b"IEND", b"")
    if size is not None:
        keyword = b"Comment\x00"
        padding = size - len(head + body + tail) - 12 - len(keyword)  # 12: a chunk's length, type and CRC
        assert padding >= 0, f"a padded PNG has at least {size - padding} bytes"
        body += _png_chunk(b"tEXt", keyword + b"x" * padding)
    return head + body + tail


@pytest.fixture
def built(bench: Bench, django_capture_on_commit_callbacks: Any) -> tuple[Bench, BuildStep, BuildPhoto]:
    """P's server with an installed GPU, an allocated DIMM, a step with a photo and a blacklisted slot.
    Files go to the test's media folder (tests/conftest.py), where the bench's sent POs already put their
    supplier copies."""
    install(bench, "GPU-L1-1", "PCIe-1")
    assert post(bench.t.user_p, bench.url("allocate/"), {"serials": ["DIMM-1"]}).status_code == 201
    assert blacklist(bench, "DIMM-A2", "cracked latch").status_code == 201
    step = post(bench.t.user_p, bench.url("steps/"), {"kind": "note", "notes": "started"}).json()["id"]
    upload = SimpleUploadedFile("p.png", png(), content_type="image/png")
    with django_capture_on_commit_callbacks(execute=True):  # the photo's file is written on commit
        response = post(
            bench.t.user_p, bench.url("photos/"), {"photo": upload, "step": step}, format="multipart"
        )
    assert response.status_code == 201, response.json()
    return bench, BuildStep.objects.get(pk=step), BuildPhoto.objects.get(pk=response.json()["id"])
