"""Demo data of the orders: the seeds' three configurations and one order for each.

Each order gets an ROI assessment and a workload, then walks through the approval gate:

- Seed 000: the rental customer's 8 servers of 8× RTX 5090 on 5× 1600 W in N+1. Every check passes, so
  the PM approves without an override: a DC load of 5458 W (8 × 575 + 2 × 360 + 12 × 10 + 2 × 9) against
  6400 W × 0.9 = 5760 W leaves 302 W; 5806 W at the wall (÷ 0.94), no circuit given.
- Seed 001: one 4U-E10G-GENOAX2 with 8× RTX PRO 6000 (6400 W, 3+1). It stays in ROI review: its PSU check
  fails, which the PM page shows: a DC load of 5730 W (8 × 600 + 2 × 360 + 24 × 8 + 2 × 9) against
  4800 W × 0.9 = 4320 W, 1410 W short. Its circuit (3 × 230 V × 32 A) holds the 6096 W at the wall.
- Seed 003: one 7U machine with 6× RTX PRO 6000 Max-Q on a 16 A / 230 V circuit: passes every check
  (DC load 2364 W against 2880 W; 2515 W at the wall against 2944 W).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from inventory.packing import parse_scanner
from inventory.services import po_line_receive, po_send
from orders.choices import WarrantyTerm
from orders.models import Order, ServerConfiguration
from orders.services import (
    configuration_create,
    order_approve,
    order_create,
    order_procure,
    order_submit,
    order_update,
    roi_assess,
    workload_set,
)
from werkbank.demo_context import DemoContext

CONFIGURATIONS: list[dict[str, Any]] = [
    {
        "name": "Vast.ai rental 6U · 8× RTX 5090",
        # Seed 000's rental machine.
        "description": "6U, TURIN2D24G-2L+, 2× EPYC 9754, 768 GB DDR5 ECC, 8 TB NVMe, 5× CRPS 1600 W N+1.",
        "psu_count": 5,
        "psu_rating_w": 1600,
        "psu_redundant": 1,
        "lines": [
            ("chassis-6u", 1),
            ("turin2d24g", 1),
            ("epyc9754", 2),
            ("rtx5090", 8),
            ("ddr5-64", 12),
            ("990pro-4t", 2),
            ("crps1600", 5),
        ],
    },
    {
        "name": "4U-E10G-GENOAX2 · 8× RTX PRO 6000",
        # Seed 001's large configuration.
        "description": "2× EPYC 9554, 768 GB DDR5 ECC, 8 TB NVMe, 8× RTX PRO 6000 96 GB; "
        "redundant power 6400 W (3+1).",
        "psu_count": 4,
        "psu_rating_w": 1600,
        "psu_redundant": 1,
        "lines": [
            ("chassis-4u", 1),
            ("epyc9554", 2),
            ("pro6000", 8),
            ("ddr5-32", 24),
            ("990pro-4t", 2),
            ("crps1600", 4),
        ],
    },
    {
        "name": "Inference 7U · 6× RTX PRO 6000 Max-Q",
        # Seed 003's machine. The seed names no PSUs: 3× CRPS 1600 W in N+1 is our choice for ~2.9 kW.
        "description": "7U, 2× EPYC 7643, 512 GB DDR4 ECC, 576 GB VRAM, 2 TB + 4 TB NVMe, "
        "3× CRPS 1600 W N+1; ~2.9 kW measured at the wall under full load.",
        "psu_count": 3,
        "psu_rating_w": 1600,
        "psu_redundant": 1,
        "lines": [
            ("chassis-7u", 1),
            ("epyc7643", 2),
            ("pro6000maxq", 6),
            ("ddr4-32", 16),
            ("990pro-2t", 1),
            ("990pro-4t", 1),
            ("crps1600", 3),
        ],
    },
]

# Per server: ROI inputs, the customer's workload, the circuit, and how far the demo walks the order.
ORDERS: list[dict[str, Any]] = [
    {
        "customer": "Vastfleet Rentals GmbH",
        "configuration": "Vast.ai rental 6U · 8× RTX 5090",
        "server_count": 8,
        "warranty_months": WarrantyTerm.THREE_YEARS,
        "roi": {
            "currency": "EUR",
            "capex": "42000",
            "gpu_count": 8,
            "price_per_gpu_hour": "0.85",
            "utilization": "0.70",
            "platform_fee": "0",
            "power_active_kw": "5.8",
            "power_idle_kw": "0.9",
            "energy_price_kwh": "0.15",
            "pue": "1.3",
            "colo_month": "600",
            "horizon_months": 36,
            "discount_rate_annual": "0.10",
            "residual_value": "8000",
            "rent_price_per_gpu_hour": "0.60",
            "note": "Vast.ai host-side price, median of the last weeks",
        },
        "workload": {
            "preset": "llama-3.1-8b",
            "weights_dtype": "bf16",
            "kv_dtype": "fp16",
            "context_tokens": 8192,
            "concurrency": 8,
            "tensor_parallel_gpus": 1,
            "overhead_fraction": "0.12",
        },
        "circuit": {},
        "steps": ["submit", "approve", "procure"],
        "spare_percent": 5,
    },
    {
        "customer": "NEOXIS AD",
        "configuration": "4U-E10G-GENOAX2 · 8× RTX PRO 6000",
        "server_count": 1,
        "warranty_months": WarrantyTerm.FIVE_YEARS,
        "roi": {
            "currency": "USD",
            "capex": "95000",
            "gpu_count": 8,
            "price_per_gpu_hour": "1.70",
            "utilization": "0.60",
            "platform_fee": "0",
            "power_active_kw": "6.5",
            "power_idle_kw": "1.2",
            "energy_price_kwh": "0.12",
            "pue": "1.3",
            "colo_month": "700",
            "horizon_months": 60,
            "discount_rate_annual": "0.10",
            "residual_value": "15000",
            "note": "Customer's target: private rental from 1.70 $ per GPU-hour",  # seed 001
        },
        "workload": {
            "preset": "llama-3.1-70b",
            "weights_dtype": "fp8",
            "kv_dtype": "fp16",
            "context_tokens": 32768,
            "concurrency": 16,
            "tensor_parallel_gpus": 8,
            "overhead_fraction": "0.12",
        },
        "circuit": {"circuit_v": 230, "circuit_a": 32, "circuit_phases": 3},
        "steps": ["submit"],  # the PSU check fails: 3+1 × 1600 W cannot feed 5730 W of TDP
    },
    {
        "customer": "Inferenzlabor GmbH",
        "configuration": "Inference 7U · 6× RTX PRO 6000 Max-Q",
        "server_count": 1,
        "warranty_months": WarrantyTerm.THREE_YEARS,
        "roi": {
            "currency": "EUR",
            "capex": "75000",
            "gpu_count": 6,
            "price_per_gpu_hour": "1.40",
            "utilization": "0.65",
            "platform_fee": "0",
            "power_active_kw": "2.9",
            "power_idle_kw": "0.6",
            "energy_price_kwh": "0.20",
            "pue": "1.2",
            "colo_month": "400",
            "horizon_months": 36,
            "discount_rate_annual": "0.10",
            "residual_value": "15000",
            "note": "~2.9 kW measured at the wall under full load (workshop test run)",  # seed 003
        },
        "workload": {
            "preset": "glm-4.6",
            "weights_dtype": "int4",
            "kv_dtype": "fp16",
            "context_tokens": 131072,
            "concurrency": 1,
            "tensor_parallel_gpus": 6,
            "overhead_fraction": "0.12",
        },
        "circuit": {"circuit_v": 230, "circuit_a": 16, "circuit_phases": 1},
        "steps": ["submit", "approve", "procure"],
        "spare_percent": 0,
    },
]


def _walk(order: Order, step: str, pm: Any, context: DemoContext) -> Order:
    if step == "procure":
        return _procure_and_receive(order, pm, context)
    if step == "submit":
        return order_submit(order=order, actor=pm, note="ROI and workload entered; ready for review")
    if step == "approve":
        return order_approve(order=order, actor=pm, note="All gate checks pass")
    raise ValueError(f"Unknown demo step {step!r}.")


def seed(context: DemoContext) -> None:
    pm = context.pm
    configurations = {}
    for spec in CONFIGURATIONS:
        configuration = ServerConfiguration.objects.filter(name=spec["name"]).first()
        if configuration is None:
            configuration = configuration_create(
                actor=pm,
                **{key: value for key, value in spec.items() if key != "lines"},
                lines=[(context.parts[key], quantity) for key, quantity in spec["lines"]],
            )
            context.created += 1
        configurations[spec["name"]] = configuration

    for spec in ORDERS:
        customer, configuration = (
            context.organizations[spec["customer"]],
            configurations[spec["configuration"]],
        )
        order = Order.objects.filter(customer=customer, configuration=configuration).first()
        if order is None:
            order = order_create(
                actor=pm,
                customer=customer,
                configuration=configuration,
                server_count=spec["server_count"],
                warranty_months=spec["warranty_months"],
                **spec["circuit"],
            )
            roi_assess(order=order, actor=pm, **{key: _number(value) for key, value in spec["roi"].items()})
            workload_set(
                order=order, actor=pm, **{key: _number(value) for key, value in spec["workload"].items()}
            )
            if spec.get("spare_percent"):
                order = order_update(order=order, actor=pm, spare_percent=spec["spare_percent"])
            for step in spec["steps"]:
                order = _walk(order, step, pm, context)
            context.created += 1
        context.orders[spec["customer"]] = order


def _number(value: Any) -> Any:
    """Decimal for the demo's decimal strings, as the API's serializers give them to the services."""
    if isinstance(value, str) and value.replace(".", "", 1).isdigit():
        return Decimal(value)
    return value


# Country of origin and serial prefix per part category, for the demo's lots.
ORIGIN = {
    "gpu": "TW",
    "cpu": "TW",
    "memory": "KR",
    "storage": "KR",
    "psu": "CN",
    "chassis": "CZ",
    "motherboard": "TW",
}


def _procure_and_receive(order: Order, pm: Any, context: DemoContext) -> Order:
    """Procure the order's parts, send the POs, and receive every line by lot.

    The GPUs of each server come from one lot (seed 000: "gleiche Fertigungslose"); spares form a lot of
    their own. Serials are generated, deterministic per order.
    """
    partner = context.organizations["Kentino Werkstatt"]
    order = order_procure(
        order=order,
        actor=pm,
        note="Ordered from EU suppliers, delivery to Kentino Werkstatt",
        deliver_to=partner,
    )
    gpus_per_server = order.configuration.lines.get(part__category="gpu").quantity
    for link in order.purchase_order_links.select_related("purchase_order"):
        po = po_send(po=link.purchase_order, actor=pm, note="Sent by e-mail to the supplier")
        for line in po.lines.select_related("part"):
            part = line.part
            batch = gpus_per_server if part.category == "gpu" else line.quantity
            for lot_index, start in enumerate(range(0, line.quantity, batch), start=1):
                count = min(batch, line.quantity - start)
                serials = [
                    f"{order.reference[-4:]}{part.pk:03d}{start + i + 1:05d}"
                    if part.category != "gpu"
                    else f"16{order.pk:02d}{part.pk:03d}{start + i + 1:06d}"
                    for i in range(count)
                ]
                po_line_receive(
                    line=line,
                    actor=pm,
                    lot_code=f"{part.mpn[:10]}-{order.reference[-4:]}-{lot_index:02d}",
                    date_code="2526",
                    origin=ORIGIN.get(part.category, "DE"),
                    packing=parse_scanner("\n".join(serials)),
                )
    return order
