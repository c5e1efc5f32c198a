"""The demo colocation's address plan: a management and a BMC prefix, each with its VLAN and gateway, that
fleet server 01's addresses (10.20.7.11, BMC 10.99.7.11) lie in. Made through the service, once."""

from __future__ import annotations

from typing import Any

from deployment.models import IPPrefix, Site
from deployment.services import prefix_create

DEMO_PREFIXES: list[dict[str, Any]] = [
    {
        "prefix": "10.20.7.0/24",
        "role": "management",
        "vlan": 207,
        "gateway": "10.20.7.1",
        "description": "Fleet management, racks SOF1-R07 and SOF1-R08",
    },
    {
        "prefix": "10.99.7.0/24",
        "role": "bmc",
        "vlan": 997,
        "gateway": "10.99.7.1",
        "description": "Out-of-band (IPMI) network, racks SOF1-R07 and SOF1-R08",
    },
]


def seed_prefixes(context: Any, site: Site) -> None:
    for values in DEMO_PREFIXES:
        if not IPPrefix.objects.filter(site=site, prefix=values["prefix"]).exists():
            prefix_create(site=site, actor=context.pm, **values)
            context.created += 1
