"""Reads about a site's IP prefixes: the next free address of a role, the prefix an address lies in, and the
addresses servers use. Python's `ipaddress` does the arithmetic; the database only narrows what is read.

A "host address" of a prefix is one of `ip_network(...).hosts()`: IPv4 leaves out the network and the
broadcast address, IPv6 the subnet-router anycast address (RFC 4291 §2.6.1).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q

from deployment.models import IPPrefix, ServerNetwork, Site

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class FreeAddress:
    """The address offered, and the prefix it comes from (its VLAN and gateway)."""

    address: str
    prefix: IPPrefix


def network_of(prefix: IPPrefix) -> Network:
    """The stored prefix as a network (stored canonical by the service, so `strict` holds)."""
    return ipaddress.ip_network(prefix.prefix)


def _narrowing(networks: Iterable[Network]) -> Q:
    """A filter that keeps every ServerNetwork row with an address in one of `networks` (and maybe a few
    others, which the caller drops in Python): the whole leading octets of an IPv4 prefix as text
    ("10.20.0." for 10.20.0.0/25), any IPv6 address for an IPv6 prefix (its compressed text has no fixed
    leading part). PostgreSQL compares an inet column's HOST() text, SQLite the stored text."""
    narrow = Q(pk__in=[])
    for network in networks:
        if network.version == 6:
            narrow |= Q(management_ip__contains=":") | Q(bmc_ip__contains=":")
            continue
        octets = str(network.network_address).split(".")[: network.prefixlen // 8]
        start = ".".join(octets) + "." if octets else ""
        narrow |= Q(management_ip__startswith=start) | Q(bmc_ip__startswith=start)
    return narrow


def used_addresses(networks: list[Network]) -> set[Address]:
    """The management and BMC addresses of every server that lie in one of `networks`: one query."""
    if not networks:
        return set()
    rows = ServerNetwork.objects.filter(_narrowing(networks)).values_list("management_ip", "bmc_ip")
    found = {ipaddress.ip_address(value) for row in rows for value in row}
    return {address for address in found if any(address in network for network in networks)}


def site_prefixes(*, site: Site, role: str | None = None) -> list[IPPrefix]:
    """The site's prefixes (of one role when given), lowest network first."""
    prefixes = IPPrefix.objects.filter(site=site)
    if role is not None:
        prefixes = prefixes.filter(role=role)
    return sorted(prefixes, key=lambda prefix: _sort_key(network_of(prefix)))


def _sort_key(network: Network) -> tuple[int, int]:
    return network.version, int(network.network_address)


def next_free_address(*, site: Site, role: str) -> FreeAddress | None:
    """The lowest host address of the site's prefixes of `role` that is not a gateway and that no server
    uses as its management or BMC address (addresses are unique across all servers); None when every host
    address is taken, or the site has no prefix of that role. Two queries whatever the fleet's size."""
    prefixes = site_prefixes(site=site, role=role)
    networks = [network_of(prefix) for prefix in prefixes]
    taken = used_addresses(networks)
    taken |= {ipaddress.ip_address(prefix.gateway) for prefix in prefixes if prefix.gateway}
    for prefix, network in zip(prefixes, networks, strict=True):
        # At most len(taken) + 1 hosts are looked at per prefix, however large it is.
        for host in network.hosts():
            if host not in taken:
                return FreeAddress(address=str(host), prefix=prefix)
    return None


def prefix_holding(address: str, prefixes: Iterable[IPPrefix]) -> IPPrefix | None:
    """The prefix among `prefixes` that `address` lies in, or None."""
    value = ipaddress.ip_address(address)
    return next((prefix for prefix in prefixes if value in network_of(prefix)), None)
