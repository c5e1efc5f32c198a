"""A site's IP prefixes: the management and BMC networks its servers' addresses come from.

Every prefix is checked with Python's `ipaddress`: a network given with host bits set (10.20.0.5/24) is
refused with its canonical form named, the canonical text is stored, the gateway lies inside the prefix and
is neither its network nor its broadcast address, a VLAN id lies in 1–4094 (IEEE 802.1Q: 0 and 4095 are
reserved), and no two prefixes of one site overlap, whatever their roles. A prefix that addresses of the
servers standing at the site lie in is not deleted, nor changed so that they fall outside.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django.db import transaction

from deployment.addresses import Address, Network, network_of
from deployment.choices import PrefixRole
from deployment.models import IPPrefix, ServerNetwork, Site
from werkbank.audit import audit
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor

#: The longest prefixes taken: an IPv4 /30 has two host addresses, an IPv6 /126 three.
MAX_PREFIXLEN = {4: 30, 6: 126}
#: Which address of a server each role's prefixes hold.
ROLE_FIELD = {PrefixRole.MANAGEMENT: "management_ip", PrefixRole.BMC: "bmc_ip"}


def parse_network(value: Any) -> Network:
    """A network in CIDR form, strictly: host bits set is a 400 naming the network they belong to."""
    text = str(value or "").strip()
    if "/" not in text:
        raise InvalidInput("prefix", f"{text!r} is not a network in CIDR form, e.g. 10.20.0.0/24.")
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError:
        try:
            loose = ipaddress.ip_network(text, strict=False)
        except ValueError:
            raise InvalidInput(
                "prefix", f"{text!r} is not a network in CIDR form, e.g. 10.20.0.0/24."
            ) from None
        raise InvalidInput(
            "prefix", f"{text} has host bits set; the network is {loose} (give that, or a longer prefix)."
        ) from None
    if network.is_multicast or network.is_loopback or network.is_unspecified or network.is_link_local:
        raise InvalidInput(
            "prefix", f"{network} is no network for servers (multicast, loopback or link-local)."
        )
    if network.prefixlen > MAX_PREFIXLEN[network.version]:
        raise InvalidInput(
            "prefix",
            f"{network} is too small: at most /{MAX_PREFIXLEN[network.version]} for IPv{network.version}.",
        )
    return network


def _gateway(value: Any, network: Network) -> str | None:
    text = str(value or "").strip()
    if not text:
        return None
    try:
        gateway = ipaddress.ip_address(text)
    except ValueError:
        raise InvalidInput("gateway", f"{text!r} is not an IPv4 or IPv6 address.") from None
    if gateway not in network:
        raise InvalidInput("gateway", f"{gateway} lies outside the prefix {network}.")
    if gateway == network.network_address:
        raise InvalidInput("gateway", f"{gateway} is the network address of {network}, not a host's.")
    if network.version == 4 and gateway == network.broadcast_address:
        raise InvalidInput("gateway", f"{gateway} is the broadcast address of {network}, not a host's.")
    return str(gateway)


def _vlan(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4094:
        raise InvalidInput("vlan", f"a VLAN id is a whole number from 1 to 4094; got {value!r}.")
    return value


def _clean(values: dict[str, Any]) -> tuple[Network, dict[str, Any]]:
    role = values.get("role")
    if role not in PrefixRole.values:
        raise InvalidInput("role", f"must be one of {', '.join(PrefixRole.values)}; got {role!r}.")
    network = parse_network(values.get("prefix"))
    description = str(values.get("description") or "").strip()
    if len(description) > 200:
        raise InvalidInput("description", "at most 200 characters.")
    cleaned = {
        "prefix": str(network),
        "role": role,
        "vlan": _vlan(values.get("vlan")),
        "gateway": _gateway(values.get("gateway"), network),
        "description": description,
    }
    return network, cleaned


def _check_overlap(site: Site, network: Network, *, excluding: int | None = None) -> None:
    others = IPPrefix.objects.filter(site=site)
    if excluding is not None:
        others = others.exclude(pk=excluding)
    for other in others:
        other_network = network_of(other)
        if other_network.version == network.version and other_network.overlaps(network):
            raise RuleViolation(
                f"{network} overlaps {other.prefix} ({other.get_role_display()}) of site {site.name}.",
                missing=[f"a prefix of {site.name} that overlaps none of its others"],
                code="prefix_overlap",
            )


def _servers_at(site: Site) -> list[tuple[str, Address, Address]]:
    """(hostname, management IP, BMC IP) of every server standing at the site that has a network record."""
    rows = ServerNetwork.objects.filter(server__placement__rack__site=site).values_list(
        "server__hostname", "management_ip", "bmc_ip"
    )
    return [
        (hostname, ipaddress.ip_address(management), ipaddress.ip_address(bmc))
        for hostname, management, bmc in rows
    ]


def _in_use(hostnames: list[str], sentence: str) -> RuleViolation:
    names = ", ".join(sorted(hostnames))
    return RuleViolation(
        f"{sentence} {names}.",
        missing=[f"no address of {hostname} in it" for hostname in sorted(hostnames)],
        code="prefix_in_use",
    )


def _check_gateway_free(site: Site, gateway: str | None) -> None:
    if gateway is None:
        return
    address = ipaddress.ip_address(gateway)
    users = [hostname for hostname, *addresses in _servers_at(site) if address in addresses]
    if users:
        raise RuleViolation(
            f"{gateway} cannot be the gateway: it is an address of server {', '.join(users)}.",
            missing=[f"{gateway} used by no server"],
            code="address_taken",
        )


def _lock_site(site: Site) -> Site:
    return Site.objects.select_for_update().get(pk=site.pk)


def _after(prefix: IPPrefix) -> dict[str, Any]:
    return {
        "prefix": prefix.prefix,
        "role": prefix.role,
        "vlan": prefix.vlan,
        "gateway": prefix.gateway,
        "description": prefix.description,
    }


@transaction.atomic
def prefix_create(
    *,
    site: Site,
    prefix: str,
    role: str,
    actor: Actor,
    vlan: int | None = None,
    gateway: str | None = None,
    description: str = "",
) -> IPPrefix:
    """A management or BMC prefix of a site, with its VLAN and gateway. Under a lock on the site, so two
    overlapping prefixes cannot both be created."""
    network, cleaned = _clean(
        {"prefix": prefix, "role": role, "vlan": vlan, "gateway": gateway, "description": description}
    )
    locked = _lock_site(site)
    _check_overlap(locked, network)
    _check_gateway_free(locked, cleaned["gateway"])
    created = IPPrefix.objects.create(site=locked, **cleaned)
    audit(
        actor=actor,
        verb="deployment.prefix_create",
        obj=locked,
        after={"prefix_id": created.pk, **_after(created)},
    )
    return created


def _stranded(site: Site, prefix: IPPrefix, network: Network, role: str) -> list[str]:
    """Servers at the site whose address the prefix holds now and would no longer lie in a prefix of its
    role after the change."""
    old_network, old_field = network_of(prefix), ROLE_FIELD[PrefixRole(prefix.role)]
    others = [network_of(other) for other in IPPrefix.objects.filter(site=site, role=prefix.role)]
    others = [other for other in others if other != old_network]
    stranded = []
    for hostname, management, bmc in _servers_at(site):
        address = management if old_field == "management_ip" else bmc
        if address not in old_network:
            continue
        still = (role == prefix.role and address in network) or any(address in other for other in others)
        if not still:
            stranded.append(hostname)
    return stranded


@transaction.atomic
def prefix_update(*, ip_prefix: IPPrefix, actor: Actor, **values: Any) -> IPPrefix:
    """Change a prefix (its site stays). A change that leaves the address of a server at the site outside
    every prefix of its role is refused (409 naming the servers), as is an overlap."""
    unknown = set(values) - {"prefix", "role", "vlan", "gateway", "description"}
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is no field of a prefix (its site stays).")
    locked_site = _lock_site(ip_prefix.site)
    locked = IPPrefix.objects.select_for_update().get(pk=ip_prefix.pk)
    before = _after(locked)
    merged = {field: values.get(field, before[field]) for field in before}
    network, cleaned = _clean(merged)
    _check_overlap(locked_site, network, excluding=locked.pk)
    stranded = _stranded(locked_site, locked, network, cleaned["role"])
    if stranded:
        raise _in_use(
            stranded, f"{locked.prefix} cannot change so: it holds the {locked.get_role_display()} address of"
        )
    if cleaned["gateway"] != locked.gateway:
        _check_gateway_free(locked_site, cleaned["gateway"])
    for field, value in cleaned.items():
        setattr(locked, field, value)
    locked.save(update_fields=list(cleaned))
    audit(
        actor=actor,
        verb="deployment.prefix_update",
        obj=locked_site,
        before={"prefix_id": locked.pk, **before},
        after={"prefix_id": locked.pk, **cleaned},
    )
    return locked


@transaction.atomic
def prefix_delete(*, ip_prefix: IPPrefix, actor: Actor) -> None:
    """Remove a prefix that holds no address (management or BMC) of a server standing at its site."""
    locked_site = _lock_site(ip_prefix.site)
    locked = IPPrefix.objects.select_for_update().get(pk=ip_prefix.pk)
    network = network_of(locked)
    users = [
        hostname
        for hostname, management, bmc in _servers_at(locked_site)
        if management in network or bmc in network
    ]
    if users:
        raise _in_use(users, f"{locked.prefix} of site {locked_site.name} holds addresses of")
    audit(
        actor=actor,
        verb="deployment.prefix_delete",
        obj=locked_site,
        before={"prefix_id": locked.pk, **_after(locked)},
    )
    locked.delete()
