"""Servers: one per unit of an order, connectors copied from the chassis layout; assignment, status."""

from __future__ import annotations

import re

from django.db import transaction

from builds.choices import (
    BENCH_OPEN,
    SERVER_TRANSITIONS,
    ServerStatus,
)
from builds.gates import assembly_gaps, assembly_start_missing
from builds.models import ChassisLayout, Connector, Server
from inventory.choices import PartCategory
from orders.models import Order
from werkbank.audit import audit
from werkbank.choices import OrganizationKind
from werkbank.columns import max_length
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.transitions import record_transition, require_transition
from werkbank.types import Actor


def _chassis_layout(order: Order) -> ChassisLayout | None:
    line = (
        order.configuration.lines.filter(part__category=PartCategory.CHASSIS).select_related("part").first()
    )
    return ChassisLayout.objects.filter(chassis=line.part).first() if line else None


@transaction.atomic
def servers_create_for_order(*, order: Order, actor: Actor) -> list[Server]:
    """One server per unit of the order, each with its own connectors copied from the chassis layout.

    Idempotent: existing units are kept, missing ones are added, and servers created before their chassis
    had a layout get the layout's connectors now.
    """
    locked = Order.objects.select_for_update(of=("self",)).select_related("configuration").get(pk=order.pk)
    layout = _chassis_layout(locked)
    existing = set(locked.servers.values_list("sequence", flat=True))
    created = []
    if layout is not None:
        for server in locked.servers.filter(connectors__isnull=True):
            _copy_connectors(server, layout)
    for sequence in range(1, locked.server_count + 1):
        if sequence in existing:
            continue
        server = Server.objects.create(
            order=locked,
            sequence=sequence,
            hostname=f"{locked.reference.lower()}-{sequence:02d}",
            asset_tag=f"{locked.reference}-{sequence:02d}",
        )
        if layout is not None:
            _copy_connectors(server, layout)
        audit(
            actor=actor,
            verb="server.create",
            obj=server,
            after={"order": locked.reference, "sequence": sequence},
        )
        created.append(server)
    return created


def _copy_connectors(server: Server, layout: ChassisLayout) -> None:
    Connector.objects.bulk_create(
        Connector(
            server=server,
            name=c.name,
            kind=c.kind,
            position=c.position,
            numa_node=c.numa_node,
            pcie_gen=c.pcie_gen,
            pcie_lanes=c.pcie_lanes,
            cooling_block=c.cooling_block,
        )
        for c in layout.connectors.all()
    )


def lock_server(server: Server) -> Server:
    return (
        Server.objects.select_for_update(of=("self",))
        .select_related("order__customer", "partner")
        .get(pk=server.pk)
    )


@transaction.atomic
def server_transition(*, server: Server, actor: Actor, target: str, verb: str, note: str = "") -> Server:
    """Move a server along the lifecycle map (`SERVER_TRANSITIONS`), audited as `server.<verb>`.

    The one way to change a server's status: the apps above builds (burn-in, deployment, handover) call it
    after checking their own preconditions; they never write the status themselves.
    """
    locked = lock_server(server)
    require_transition(
        transitions=SERVER_TRANSITIONS,
        choices=ServerStatus,
        current=locked.status,
        target=target,
        subject=f"Server {locked.hostname}",
        verb=verb,
    )
    record_transition(obj=locked, target=target, actor=actor, verb=f"server.{verb}", note=note)
    return locked


#: A hostname (RFC 1123): dot-separated labels of letters, digits and inner hyphens, each 1–63 characters;
#: stored in lower case.
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
HOSTNAME_RE = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")


def normalize_hostname(hostname: str) -> str:
    """A hostname in lower case, or InvalidInput naming the rule it breaks."""
    value = (hostname or "").strip().lower().rstrip(".")
    if not HOSTNAME_RE.match(value):
        raise InvalidInput(
            "hostname",
            f"{hostname!r} is not a valid hostname: letters, digits and hyphens in dot-separated labels of "
            "1–63 characters, no hyphen at either end of a label (RFC 1123).",
        )
    if len(value) > max_length(Server, "hostname"):
        raise InvalidInput("hostname", f"{hostname!r} is longer than 63 characters.")
    return value


@transaction.atomic
def server_rename(*, server: Server, actor: Actor, hostname: str) -> Server:
    """Give a server the hostname it has in the customer's network (at deployment, say). Unique across all
    servers: a hostname in use is a 409 naming its server."""
    value = normalize_hostname(hostname)
    locked = lock_server(server)
    if value == locked.hostname:
        return locked
    taken = Server.objects.filter(hostname=value).exclude(pk=locked.pk).values_list("asset_tag", flat=True)
    if taken:
        raise RuleViolation(
            f"Hostname {value} is already used by server {taken[0]}.",
            missing=[f"a hostname no other server uses instead of {value}"],
            code="hostname_taken",
        )
    before = locked.hostname
    locked.hostname = value
    locked.save(update_fields=["hostname"])
    audit(
        actor=actor, verb="server.rename", obj=locked, before={"hostname": before}, after={"hostname": value}
    )
    return locked


@transaction.atomic
def server_set_chassis_serial(*, server: Server, actor: Actor, chassis_serial: str) -> Server:
    """Record the serial printed on a server's chassis (the admin's one editable field of a server).

    The serial identifies the machine for the vendor's warranty, so every change is audited. A serial that
    another server already carries is refused, naming that server.
    """
    value = (chassis_serial or "").strip()
    limit = max_length(Server, "chassis_serial")
    if len(value) > limit:
        raise InvalidInput("chassis_serial", f"has {len(value)} characters; at most {limit}.")
    locked = lock_server(server)
    if value == locked.chassis_serial:
        return locked
    if value:
        taken = Server.objects.filter(chassis_serial=value).exclude(pk=locked.pk).values_list("asset_tag")
        if taken:
            raise InvalidInput("chassis_serial", f"{value} is the chassis serial of server {taken[0][0]}.")
    before = locked.chassis_serial
    locked.chassis_serial = value
    locked.save(update_fields=["chassis_serial"])
    audit(
        actor=actor,
        verb="server.chassis_serial",
        obj=locked,
        before={"chassis_serial": before},
        after={"chassis_serial": value},
    )
    return locked


@transaction.atomic
def server_record_burnin_power(*, server: Server, actor: Actor, gpu_power_w: float | None) -> Server:
    """Keep the GPUs' measured power from the burn-in that passed on the server, where the apps that do not
    read burn-in (deployment's circuit check) find it. Audited as `server.record_burnin_power`."""
    if gpu_power_w is not None and gpu_power_w < 0:
        raise InvalidInput("gpu_power_w", f"must not be negative; got {gpu_power_w:g}.")
    locked = lock_server(server)
    before = locked.burnin_gpu_power_w
    locked.burnin_gpu_power_w = gpu_power_w
    locked.save(update_fields=["burnin_gpu_power_w"])
    audit(
        actor=actor,
        verb="server.record_burnin_power",
        obj=locked,
        before={"burnin_gpu_power_w": before},
        after={"burnin_gpu_power_w": gpu_power_w},
    )
    return locked


@transaction.atomic
def server_assign_partner(*, server: Server, actor: Actor, partner: Organization) -> Server:
    """Give the build to an assembly partner; from now on its members see the server on their bench."""
    if partner.kind != OrganizationKind.PARTNER:
        raise InvalidInput("partner", f"{partner.name} is not an assembly partner.")
    locked = lock_server(server)
    if locked.status not in BENCH_OPEN:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}: "
            "its build can no longer move "
            "to another partner.",
            code="server_not_open",
        )
    before = locked.partner.name if locked.partner else None
    locked.partner = partner
    locked.save(update_fields=["partner"])
    audit(
        actor=actor,
        verb="server.assign",
        obj=locked,
        before={"partner": before},
        after={"partner": partner.name},
    )
    return locked


@transaction.atomic
def server_start_assembly(*, server: Server, actor: Actor, note: str = "") -> Server:
    """planned (or burn_in_failed, for rework) → assembling: needs an assigned partner."""
    missing = assembly_start_missing(server)
    if missing:
        raise RuleViolation(f"Server {server.hostname} has no assembly partner yet.", missing=missing)
    return server_transition(
        server=server, actor=actor, target=ServerStatus.ASSEMBLING, verb="start_assembly", note=note
    )


@transaction.atomic
def server_mark_assembled(*, server: Server, actor: Actor, note: str = "") -> Server:
    """assembling → assembled, once every required step is logged, every BOM line is installed, and no
    component sits on a blacklisted connector."""
    locked = lock_server(server)
    gaps = assembly_gaps(locked)
    if gaps:
        raise RuleViolation(
            f"Server {locked.hostname} is not assembled yet: " + "; ".join(gaps) + ".",
            missing=gaps,
            code="assembly_incomplete",
        )
    return server_transition(
        server=locked, actor=actor, target=ServerStatus.ASSEMBLED, verb="mark_assembled", note=note
    )


def require_open(server: Server) -> None:
    if server.status not in BENCH_OPEN:
        raise RuleViolation(
            f"Server {server.hostname} is {server.get_status_display().lower()}: "
            "its components can no longer change.",
            missing=["server status planned, assembling or burn-in failed"],
            code="server_not_open",
        )
