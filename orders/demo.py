"""Demo data of the orders: the seeds' three configurations and one order for each.

- Seed 000: the rental customer's 8 servers of 8× RTX 5090, walked to approved.
- Seed 001: one 4U-E10G-GENOAX2 with 8× RTX PRO 6000 (6400 W, 3+1), in ROI review.
- Seed 003: one 7U machine with 6× RTX PRO 6000 Max-Q, a draft.
"""

from __future__ import annotations

from typing import Any

from orders.choices import WarrantyTerm
from orders.models import Order, ServerConfiguration
from orders.services import configuration_create, order_approve, order_create, order_submit
from werkbank.demo_context import DemoContext

CONFIGURATIONS: list[dict[str, Any]] = [
    {
        "name": "Vast.ai rental 6U · 8× RTX 5090",
        "description": "Seed 000: 6U, TURIN2D24G-2L+, 2× EPYC 9754, 768 GB DDR5 ECC, 8 TB NVMe, "
        "5× CRPS 1600 W N+1.",
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
        "description": "Seed 001: the large configuration, redundant power 6400 W (3+1).",
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
        "description": "Seed 003: 7U, 2× EPYC 7643, 512 GB DDR4 ECC, 576 GB VRAM, 2 TB + 4 TB NVMe; "
        "~2.9 kW measured at the wall. "
        "PSUs assumed: 3× CRPS 1600 W N+1 (the seed names none).",
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

# customer, configuration, servers, warranty, the transitions the demo walks it through
ORDERS = [
    (
        "Vastfleet Rentals GmbH",
        "Vast.ai rental 6U · 8× RTX 5090",
        8,
        WarrantyTerm.THREE_YEARS,
        [order_submit, order_approve],
    ),
    ("NEOXIS AD", "4U-E10G-GENOAX2 · 8× RTX PRO 6000", 1, WarrantyTerm.FIVE_YEARS, [order_submit]),
    ("Inferenzlabor Demo GmbH", "Inference 7U · 6× RTX PRO 6000 Max-Q", 1, WarrantyTerm.THREE_YEARS, []),
]


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

    for customer_name, configuration_name, servers, warranty, steps in ORDERS:
        customer, configuration = context.organizations[customer_name], configurations[configuration_name]
        order = Order.objects.filter(customer=customer, configuration=configuration).first()
        if order is None:
            order = order_create(
                actor=pm,
                customer=customer,
                configuration=configuration,
                server_count=servers,
                warranty_months=warranty,
            )
            for step in steps:
                order = step(order=order, actor=pm, note="Demo walk-through")
            context.created += 1
        context.orders[customer_name] = order
