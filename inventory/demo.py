"""Demo data of the inventory: EU suppliers and the parts of the seeds' three configurations.

Where a seed is silent, a comment at the part says what we chose and why; part names stay what a catalogue
would print. Suppliers, list prices and lots are invented for the demo; the seeds only say "EU-Bezug, gleiche
Fertigungslose".
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from inventory.choices import PartCategory
from inventory.models import Part, Supplier
from inventory.services import part_create, supplier_create
from werkbank.demo_context import DemoContext

PARTS: dict[str, dict[str, Any]] = {
    "rtx5090": dict(
        category=PartCategory.GPU,
        manufacturer="NVIDIA",
        mpn="RTX5090-32G-SRV",
        name="GeForce RTX 5090 32 GB GDDR7 (passive server variant)",
        vram_gb=32,
        tdp_w=575,
        pcie_gen=5,
        pcie_lanes=16,
    ),
    "pro6000": dict(
        category=PartCategory.GPU,
        manufacturer="NVIDIA",
        mpn="RTXPRO6000-BW-96G",
        name="RTX PRO 6000 Blackwell 96 GB GDDR7",
        vram_gb=96,
        tdp_w=600,
        pcie_gen=5,
        pcie_lanes=16,
    ),
    "pro6000maxq": dict(
        category=PartCategory.GPU,
        manufacturer="NVIDIA",
        mpn="RTXPRO6000-BW-MAXQ-96G",
        name="RTX PRO 6000 Blackwell Max-Q 96 GB GDDR7",
        vram_gb=96,
        tdp_w=300,
        pcie_gen=5,
        pcie_lanes=16,
    ),
    "turin2d24g": dict(
        category=PartCategory.MOTHERBOARD,
        manufacturer="Supermicro",
        mpn="TURIN2D24G-2L+",
        name="TURIN2D24G-2L+ dual SP5 mainboard",
        pcie_gen=5,
    ),
    "epyc9754": dict(
        category=PartCategory.CPU,
        manufacturer="AMD",
        mpn="100-000001234",
        name="EPYC 9754 128C/256T",
        tdp_w=360,
        specs={"cores": 128, "threads": 256},
    ),
    "epyc9554": dict(
        category=PartCategory.CPU,
        manufacturer="AMD",
        mpn="100-000000790",
        # Seed 001 names the EPYC 9004 series only; the 9554 is our pick for the 4U-E10G-GENOAX2.
        name="EPYC 9554 64C/128T",
        tdp_w=360,
        specs={"cores": 64, "threads": 128},
    ),
    "epyc7643": dict(
        category=PartCategory.CPU,
        manufacturer="AMD",
        mpn="100-000000326",
        name="EPYC 7643 48C/96T",
        tdp_w=225,
        specs={"cores": 48, "threads": 96},
    ),
    "ddr5-64": dict(
        category=PartCategory.MEMORY,
        manufacturer="Samsung",
        mpn="M321R8GA0BB0-CQK",
        name="64 GB DDR5-4800 ECC RDIMM",
        tdp_w=10,
        specs={"capacity_gb": 64},
    ),
    "ddr5-32": dict(
        category=PartCategory.MEMORY,
        manufacturer="Samsung",
        mpn="M321R4GA3BB6-CQK",
        # The seeds give no DIMM size for the 4U machine: 24 slots × 32 GB = 768 GB, at least its VRAM.
        name="32 GB DDR5-4800 ECC RDIMM",
        tdp_w=8,
        specs={"capacity_gb": 32},
    ),
    "ddr4-32": dict(
        category=PartCategory.MEMORY,
        manufacturer="Samsung",
        mpn="M393A4K40DB3-CWE",
        name="32 GB DDR4-3200 ECC RDIMM",
        tdp_w=6,
        specs={"capacity_gb": 32},
    ),
    "990pro-4t": dict(
        category=PartCategory.STORAGE,
        manufacturer="Samsung",
        mpn="MZ-V9P4T0BW",
        name="990 PRO 4 TB NVMe",
        tdp_w=9,
        specs={"capacity_gb": 4000},
    ),
    "990pro-2t": dict(
        category=PartCategory.STORAGE,
        manufacturer="Samsung",
        mpn="MZ-V9P2T0BW",
        name="990 PRO 2 TB NVMe",
        tdp_w=9,
        specs={"capacity_gb": 2000},
    ),
    "crps1600": dict(
        category=PartCategory.PSU,
        manufacturer="Gospower",
        mpn="G1136-1600WNA",
        name="CRPS 1600 W 80 PLUS Platinum",
        specs={"rating_w": 1600},
    ),
    "chassis-6u": dict(
        category=PartCategory.CHASSIS,
        manufacturer="Aura Digital",
        mpn="AD-6U-8GPU",
        name="Custom 6U rack chassis, 8 GPUs, front-to-back pressure path",
        u_height=6,
    ),
    "chassis-4u": dict(
        category=PartCategory.CHASSIS,
        manufacturer="Aura Digital",
        mpn="4U-E10G-GENOAX2",
        name="4U-E10G-GENOAX2, dual EPYC 9004, up to 8 GPUs, 24 DIMM slots",
        u_height=4,
    ),
    "chassis-7u": dict(
        category=PartCategory.CHASSIS,
        manufacturer="Kentino",
        mpn="KT-7U-2x4GPU",
        name="Custom 7U chassis, two independently cooled blocks of four GPU bays",
        u_height=7,
    ),
}


SUPPLIERS = {
    "gpu": {
        "name": "EuroGPU Distribution GmbH",
        "country": "DE",
        "vat_id": "DE298765431",
        "contact_email": "orders@eurogpu.example",
    },
    "host": {
        "name": "Nordic Memory & Compute AB",
        "country": "SE",
        "vat_id": "SE556677889901",
        "contact_email": "sales@nordicmc.example",
    },
    "chassis": {
        "name": "Bohemia Server Parts s.r.o.",
        "country": "CZ",
        "vat_id": "CZ27654321",
        "contact_email": "obchod@bohemia-parts.example",
    },
    "non_eu": {
        "name": "Shenzhen Chassis Works Ltd.",
        "country": "CN",
        "vat_id": "",
        "contact_email": "export@szchassis.example",
    },
}

# Part key: (supplier key, list price in EUR)
PURCHASING = {
    "rtx5090": ("gpu", "2400"),
    "pro6000": ("gpu", "8200"),
    "pro6000maxq": ("gpu", "8200"),
    "epyc9754": ("host", "4500"),
    "epyc9554": ("host", "3800"),
    "epyc7643": ("host", "1300"),
    "ddr5-64": ("host", "420"),
    "ddr5-32": ("host", "210"),
    "ddr4-32": ("host", "90"),
    "turin2d24g": ("chassis", "1100"),
    "990pro-4t": ("chassis", "300"),
    "990pro-2t": ("chassis", "170"),
    "crps1600": ("chassis", "380"),
    "chassis-6u": ("chassis", "2200"),
    "chassis-4u": ("chassis", "4800"),
    "chassis-7u": ("chassis", "2600"),
}


def seed(context: DemoContext) -> None:
    suppliers = {}
    for key, values in SUPPLIERS.items():
        supplier = Supplier.objects.filter(name=values["name"]).first()
        if supplier is None:
            supplier = supplier_create(actor=context.pm, **values)
            context.created += 1
        suppliers[key] = supplier
    context.extra["suppliers"] = suppliers
    for key, values in PARTS.items():
        part = Part.objects.filter(manufacturer=values["manufacturer"], mpn=values["mpn"]).first()
        if part is None:
            supplier_key, price = PURCHASING[key]
            part = part_create(
                actor=context.pm,
                **values,
                preferred_supplier=suppliers[supplier_key],
                list_price=Decimal(price),
            )
            context.created += 1
        context.parts[key] = part
