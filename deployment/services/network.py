"""A server's network record: hostname, management IP, BMC IP and MAC, and the encrypted BMC credentials."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q

from builds.models import Server
from builds.services import lock_server, server_rename
from deployment.addresses import network_of, prefix_holding
from deployment.choices import PrefixRole
from deployment.models import IPPrefix, ServerNetwork, Site
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.secrets import decrypt, encrypt
from werkbank.types import Actor

_MAC_DIGITS = re.compile(r"^[0-9a-f]{12}$")


def normalize_ip(field: str, value: Any) -> str:
    """An IPv4 or IPv6 address in its canonical form, or a 400 naming the field."""
    try:
        address = ipaddress.ip_address(str(value or "").strip())
    except ValueError:
        raise InvalidInput(field, f"{value!r} is not a valid IPv4 or IPv6 address.") from None
    if address.is_unspecified or address.is_multicast or address.is_loopback:
        raise InvalidInput(
            field, f"{address} cannot be a server's address (unspecified, multicast or loopback)."
        )
    return str(address)


def normalize_mac(value: Any) -> str:
    """A MAC address as six lower-case hex pairs joined by colons; accepts colons, hyphens, Cisco dots or
    bare hex."""
    digits = re.sub(r"[:\-.]", "", str(value or "").strip().lower())
    if not _MAC_DIGITS.match(digits):
        raise InvalidInput(
            "bmc_mac", f"{value!r} is not a MAC address (six hex pairs, e.g. 3c:ec:ef:12:34:56)."
        )
    if int(digits[:2], 16) & 1:
        raise InvalidInput("bmc_mac", f"{value!r} is a multicast address, not a BMC's.")
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))


#: How a sentence names each role's prefixes, and which address of the server they hold.
_ROLE_WORDS = {"management_ip": ("management", PrefixRole.MANAGEMENT), "bmc_ip": ("BMC", PrefixRole.BMC)}


def _check_prefixes(*, server: Server, addresses: dict[str, str]) -> None:
    """Each of `addresses` (field → address) lies in a prefix of its role at the site the server stands at,
    and is none of that prefix's network, broadcast or gateway address; a 400 naming the field and the
    site's prefixes otherwise. Not placed, or a site without prefixes of the role: any address is taken."""
    site = Site.objects.filter(racks__placements__server=server).first()
    if site is None or not addresses:
        return
    # Locked, so that a prefix is not changed or deleted under the address being recorded.
    prefixes = list(IPPrefix.objects.select_for_update().filter(site=site).order_by("pk"))
    for field, address in addresses.items():
        words, role = _ROLE_WORDS[field]
        of_role = [prefix for prefix in prefixes if prefix.role == role]
        if not of_role:
            continue
        holder = prefix_holding(address, of_role)
        if holder is None:
            listed = ", ".join(sorted(prefix.prefix for prefix in of_role))
            raise InvalidInput(field, f"{address} is outside the {words} prefixes of {site.name}: {listed}.")
        network = network_of(holder)
        value = ipaddress.ip_address(address)
        if value == network.network_address or (network.version == 4 and value == network.broadcast_address):
            raise InvalidInput(field, f"{address} is the network or broadcast address of {holder.prefix}.")
        if holder.gateway and value == ipaddress.ip_address(holder.gateway):
            raise InvalidInput(field, f"{address} is the gateway of {holder.prefix}.")


def _taken(*, server: Server, management_ip: str, bmc_ip: str, bmc_mac: str) -> list[str]:
    """Which of the addresses another server already uses, as sentences naming it."""
    taken = []
    others = ServerNetwork.objects.exclude(server=server).select_related("server")
    for address, field in ((management_ip, "management IP"), (bmc_ip, "BMC IP")):
        row = others.filter(Q(management_ip=address) | Q(bmc_ip=address)).first()
        if row is not None:
            role = "management IP" if row.management_ip == address else "BMC IP"
            taken.append(f"{address} ({field}) is already the {role} of server {row.server.hostname}.")
    row = others.filter(bmc_mac=bmc_mac).first()
    if row is not None:
        taken.append(f"{bmc_mac} (BMC MAC) is already the BMC MAC of server {row.server.hostname}.")
    return taken


@transaction.atomic
def network_set(
    *,
    server: Server,
    actor: Actor,
    management_ip: str,
    bmc_ip: str,
    bmc_mac: str,
    hostname: str | None = None,
    bmc_username: str | None = None,
    bmc_password: str | None = None,
    clear_bmc_credentials: bool = False,
    new: bool = False,
) -> ServerNetwork:
    """Record (or change) how to reach a server. Addresses are unique across every server, in either role:
    a duplicate is a 409 naming the server that has it. With `new` (a create, as the API's POST) a server
    that has a record already is a 409 naming it, checked before anything else: a create never overwrites.

    Where the server stands at a site (its placement's rack) that has prefixes of a role, an address of that
    role must lie in one of them and be none of its network, broadcast or gateway addresses: a 400 naming
    the field and the site's prefixes. A site without prefixes of a role takes any address of it, as does a
    server not placed yet. An address that does not change is not checked again, so a prefix added later
    does not lock a record made before it.

    BMC credentials are optional. Given, they are stored only as a Fernet token (`werkbank.secrets`); a
    username or password left out keeps the stored one. The audit row says whether they were set or
    cleared, never what they are.
    """
    existing = ServerNetwork.objects.filter(server=server).first() if new else None
    if existing is not None:
        raise RuleViolation(
            f"Server {server.hostname} has a network record already "
            f"(management IP {existing.management_ip}); change that one.",
            missing=[f"no network record of server {server.hostname}"],
            code="network_exists",
        )
    management_ip = normalize_ip("management_ip", management_ip)
    bmc_ip = normalize_ip("bmc_ip", bmc_ip)
    bmc_mac = normalize_mac(bmc_mac)
    if management_ip == bmc_ip:
        raise InvalidInput("bmc_ip", "the BMC has an address of its own, not the management IP.")
    for field, value in (("bmc_username", bmc_username), ("bmc_password", bmc_password)):
        if value is not None and (len(value) > 256 or "\x00" in value):
            raise InvalidInput(field, "at most 256 characters, no NUL.")
    if clear_bmc_credentials and (bmc_username or bmc_password):
        raise InvalidInput("clear_bmc_credentials", "clear the credentials or set new ones, not both.")

    locked = lock_server(server)
    if hostname is not None:
        locked = server_rename(server=locked, actor=actor, hostname=hostname)
    row = ServerNetwork.objects.filter(server=locked).only("management_ip", "bmc_ip").first()
    stored: dict[str, str] = {} if row is None else {"management_ip": row.management_ip, "bmc_ip": row.bmc_ip}
    wanted = {"management_ip": management_ip, "bmc_ip": bmc_ip}
    _check_prefixes(
        server=locked,
        addresses={
            field: address
            for field, address in wanted.items()
            if not stored or ipaddress.ip_address(stored[field]) != ipaddress.ip_address(address)
        },
    )
    taken = _taken(server=locked, management_ip=management_ip, bmc_ip=bmc_ip, bmc_mac=bmc_mac)
    if taken:
        raise RuleViolation(
            f"Server {locked.hostname}'s addresses are in use: {' '.join(taken)}",
            missing=taken,
            code="address_taken",
        )

    network = ServerNetwork.objects.select_for_update().filter(server=locked).first()
    before = (
        {}
        if network is None
        else {
            "management_ip": network.management_ip,
            "bmc_ip": network.bmc_ip,
            "bmc_mac": network.bmc_mac,
            "bmc_credentials": "set" if network.bmc_credentials else "none",
        }
    )
    network = network or ServerNetwork(server=locked)
    credentials = "unchanged"
    if clear_bmc_credentials:
        network.bmc_credentials, credentials = "", "cleared"
    elif bmc_username is not None or bmc_password is not None:
        stored = json.loads(decrypt(network.bmc_credentials)) if network.bmc_credentials else {}
        username = bmc_username if bmc_username is not None else stored.get("username", "")
        password = bmc_password if bmc_password is not None else stored.get("password", "")
        network.bmc_credentials = encrypt(json.dumps({"username": username, "password": password}))
        credentials = "set"
    network.management_ip, network.bmc_ip, network.bmc_mac = management_ip, bmc_ip, bmc_mac
    network.updated_by = user_or_none(actor)
    try:
        with transaction.atomic():
            network.save()
    except IntegrityError:
        # Another transaction took an address between the check and the write.
        taken = _taken(server=locked, management_ip=management_ip, bmc_ip=bmc_ip, bmc_mac=bmc_mac)
        raise RuleViolation(
            f"Server {locked.hostname}'s addresses are in use: {' '.join(taken) or 'by another server.'}",
            missing=taken or ["addresses no other server uses"],
            code="address_taken",
        ) from None
    audit(
        actor=actor,
        verb="deployment.network",
        obj=locked,
        before=before,
        after={
            "hostname": locked.hostname,
            "management_ip": management_ip,
            "bmc_ip": bmc_ip,
            "bmc_mac": bmc_mac,
            "bmc_credentials": credentials,
        },
    )
    return network


def bmc_credentials(*, network: ServerNetwork) -> dict[str, str] | None:
    """The decrypted BMC credentials, for the code that logs in to the BMC. No page, serializer or document
    calls this."""
    if not network.bmc_credentials:
        return None
    return json.loads(decrypt(network.bmc_credentials))
