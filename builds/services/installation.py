"""Installation, scanner-first: a serial into a named connector, out again, or moved, with its history."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from builds.choices import (
    KINDS_FOR_CATEGORY,
    ConnectorKind,
    ServerStatus,
)
from builds.models import (
    Allocation,
    Connector,
    ConnectorBlacklist,
    Installation,
    Server,
)
from builds.services.allocation import server_allocate
from builds.services.servers import lock_server, require_open
from builds.signals import components_allocated
from inventory.choices import ComponentStatus
from inventory.models import Component
from inventory.services import component_move
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.types import Actor


def _connector(server: Server, name: str, *, field: str = "connector") -> Connector:
    connector = (
        Connector.objects.select_for_update().filter(server=server, name__iexact=(name or "").strip()).first()
    )
    if connector is None:
        raise InvalidInput(field, f"{server.hostname} has no connector named {name!r}.")
    return connector


def _check_usable(connector: Connector) -> None:
    blacklist = ConnectorBlacklist.objects.filter(connector=connector).first()
    if blacklist is not None:
        raise RuleViolation(
            f"Connector {connector.name} of {connector.server.hostname} is blacklisted: "
            f'"{blacklist.reason}". '
            "It stays unused for the machine's whole life.",
            missing=["a connector that is not blacklisted"],
            code="connector_blacklisted",
        )
    occupant = Installation.objects.active().filter(connector=connector).select_related("component").first()
    if occupant is not None:
        raise RuleViolation(
            f"Connector {connector.name} already holds {occupant.component.serial}.",
            missing=[f"a free connector for the component (or remove {occupant.component.serial} first)"],
            code="connector_occupied",
        )


def _check_kind(component: Component, connector: Connector) -> None:
    allowed = KINDS_FOR_CATEGORY.get(component.part.category, frozenset())
    if connector.kind not in allowed:
        names = ", ".join(str(ConnectorKind(kind).label) for kind in sorted(allowed)) or "no connector"
        raise InvalidInput(
            "connector",
            f"{connector.name} is a {connector.get_kind_display()}; "
            f"a {component.part.get_category_display()} "
            f"goes into: {names}.",
        )


def find_component(
    *, serial: str, user: Actor, manufacturer: str = "", connector_kind: str = ""
) -> Component:
    """The component with this serial among those the user may see; 404-style error otherwise.

    Serials match in any letter case (serial identity: inventory.serials). When several manufacturers
    printed the serial, the connector's kind narrows them to the parts it takes; what is still ambiguous
    needs `manufacturer`: without it a 400 names the field and lists the manufacturers, of the components
    this user may see only.
    """
    serial, manufacturer = (serial or "").strip(), (manufacturer or "").strip()
    found = Component.objects.visible_to(user).with_serial(serial).select_related("part", "lot")
    if manufacturer:
        found = found.filter(manufacturer__iexact=manufacturer)
    candidates = list(found.order_by("manufacturer"))
    if not candidates:
        raise UnknownSerial(serial, manufacturer=manufacturer)
    if len(candidates) > 1 and connector_kind:
        fitting = [c for c in candidates if connector_kind in KINDS_FOR_CATEGORY.get(c.part.category, ())]
        candidates = fitting or candidates
    if len(candidates) > 1:
        names = ", ".join(component.manufacturer for component in candidates)
        raise InvalidInput(
            "manufacturer",
            f"serial {serial} is printed by {len(candidates)} manufacturers ({names}); say which one.",
        )
    return candidates[0]


class UnknownSerial(UnknownObject):
    """A scanned serial that is not in stock anywhere the user can see (HTTP 404)."""

    def __init__(self, serial: str, *, manufacturer: str = "") -> None:
        of = f" from {manufacturer!r}" if manufacturer else ""
        super().__init__("serial", f"no component with serial {serial!r}{of}.")
        self.serial = serial


def installation_of(*, server: Server, component: Component) -> Installation:
    """The installation of a scanned component in `server` now; 409 when it is not in one of its connectors
    (a removal by serial names what to remove, not where it sits)."""
    installation = Installation.objects.active().filter(server=server, component=component).first()
    if installation is None:
        raise RuleViolation(
            f"{component.serial} is not installed in {server.hostname}.",
            missing=[f"{component.serial} installed in {server.hostname}"],
            code="not_installed",
        )
    return installation


def _put_in(
    *, server: Server, connector: Connector, component: Component, actor: Actor, why: str = ""
) -> Installation:
    """The installation row and the component's move to installed, once the caller has checked the rules."""
    installation = Installation.objects.create(
        server=server, connector=connector, component=component, installed_by=user_or_none(actor)
    )
    component_move(
        components=[component],
        actor=actor,
        to_status=ComponentStatus.INSTALLED,
        reason=f"Installed in {server.hostname} {connector.name}{why}",
        location=f"{server.hostname} {connector.name}",
    )
    return installation


@transaction.atomic
def server_install(
    *, server: Server, actor: Actor, component: Component, connector_name: str
) -> Installation:
    """Put a component into a named connector, scanner-first. A component in stock is allocated on the way
    (with the same-lot rule); one allocated to another server is refused, naming that server."""
    locked_server = lock_server(server)
    require_open(locked_server)
    connector = _connector(locked_server, connector_name)
    component = (
        Component.objects.select_for_update(of=("self",)).select_related("part", "lot").get(pk=component.pk)
    )
    _check_kind(component, connector)
    _check_usable(connector)
    allocation = (
        Allocation.objects.filter(component=component, released_at__isnull=True)
        .select_related("server")
        .first()
    )
    if allocation is None:
        server_allocate(server=locked_server, actor=actor, components=[component])
    elif allocation.server_id != locked_server.pk:
        raise RuleViolation(
            f"{component.part.mpn} {component.serial} is allocated to server {allocation.server.hostname}, "
            f"not to {locked_server.hostname}.",
            missing=[f"a {component.part.mpn} allocated to {locked_server.hostname}"],
            code="component_taken",
        )
    elif Installation.objects.active().filter(component=component).exists():
        current = Installation.objects.active().get(component=component)
        raise RuleViolation(
            f"{component.serial} is already installed in {current.connector.name}; move it instead.",
            code="component_installed",
        )
    installation = _put_in(server=locked_server, connector=connector, component=component, actor=actor)
    audit(
        actor=actor,
        verb="server.install",
        obj=locked_server,
        after={"serial": component.serial, "connector": connector.name},
    )
    return installation


@transaction.atomic
def server_remove(
    *, installation: Installation, actor: Actor, reason: str, failed: bool = False
) -> Installation:
    """Take a component out of its connector, with a reason. It stays allocated to the server; a `failed` one
    (a card that failed its burn-in, found faulty on the bench) leaves the server's allocation instead, with
    status failed, ready to go back to its supplier (warranty's supplier returns)."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a removal needs a reason.")
    # Lock in the same order as install: the server first, then the installation row alone.
    lock_server(installation.server)
    locked = (
        Installation.objects.select_for_update(of=("self",))
        .select_related("server", "connector", "component")
        .get(pk=installation.pk)
    )
    require_open(locked.server)
    if locked.removed_at is not None:
        raise RuleViolation(f"{locked.component.serial} was already removed from {locked.connector.name}.")
    now = timezone.now()
    locked.removed_at, locked.removed_by, locked.removal_reason = now, user_or_none(actor), reason
    locked.save(update_fields=["removed_at", "removed_by", "removal_reason"])
    where = f"{locked.server.hostname} {locked.connector.name}"
    if failed:
        Allocation.objects.filter(
            component=locked.component, server=locked.server, released_at__isnull=True
        ).update(released_at=now)
        component_move(
            components=[locked.component],
            actor=actor,
            to_status=ComponentStatus.FAILED,
            reason=f"Removed as failed from {where}: {reason}",
            location=f"Failed, from {locked.server.hostname}",
        )
    else:
        component_move(
            components=[locked.component],
            actor=actor,
            to_status=ComponentStatus.ALLOCATED,
            reason=f"Removed from {where}: {reason}",
            location=f"Allocated to {locked.server.hostname}",
        )
    audit(
        actor=actor,
        verb="server.remove",
        obj=locked.server,
        after={"serial": locked.component.serial, "connector": locked.connector.name, "failed": failed},
        note=reason,
    )
    return locked


@transaction.atomic
def server_move(
    *, server: Server, actor: Actor, component: Component, to_connector_name: str, reason: str
) -> Installation:
    """A move is a removal plus an installation, in one transaction."""
    current = Installation.objects.active().filter(server=server, component=component).first()
    if current is None:
        raise RuleViolation(
            f"{component.serial} is not installed in {server.hostname}.", code="not_installed"
        )
    target = _connector(lock_server(server), to_connector_name, field="to_connector")
    _check_kind(component, target)
    _check_usable(target)
    server_remove(installation=current, actor=actor, reason=reason)
    return server_install(server=server, actor=actor, component=component, connector_name=target.name)


@transaction.atomic
def server_swap_component(
    *, installation: Installation, actor: Actor, component: Component, reason: str
) -> Installation:
    """Replace an installed component of a handed-over server under warranty, in the same connector.

    The one narrow path past `require_open`: a server with the customer changes only by a like-for-like
    replacement (the same part), which the warranty app ships for an approved claim. The failed component
    leaves its connector and its allocation (status failed, for the RMA); the replacement is allocated
    to the server (its warranty registered through `components_allocated`, like any allocation) and
    installed. The same-lot rule does not apply: a replacement comes from whatever lot is in stock. The
    swap is audited on the server as `server.swap_component`.
    """
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a replacement needs a reason.")
    locked_server = lock_server(installation.server)
    old = (
        Installation.objects.select_for_update(of=("self",))
        .select_related("connector", "component__part")
        .get(pk=installation.pk)
    )
    if locked_server.status != ServerStatus.HANDED_OVER:
        raise RuleViolation(
            f"Server {locked_server.hostname} is {locked_server.get_status_display().lower()}: a warranty "
            "replacement is for a handed-over server; before that the bench changes components.",
            missing=["server status handed over"],
            code="server_not_handed_over",
        )
    if old.removed_at is not None:
        raise RuleViolation(
            f"{old.component.serial} was already removed from {old.connector.name}.", code="not_installed"
        )
    new = Component.objects.select_for_update(of=("self",)).select_related("part").get(pk=component.pk)
    if new.part_id != old.component.part_id:
        raise RuleViolation(
            f"{new.serial} is a {new.part.mpn}; {old.component.serial} in {old.connector.name} is a "
            f"{old.component.part.mpn}. A warranty replacement is the same part.",
            missing=[f"a {old.component.part.mpn} in stock"],
            code="not_like_for_like",
        )
    if new.status != ComponentStatus.IN_STOCK:
        raise RuleViolation(
            f"{new.part.mpn} {new.serial} is {new.get_status_display().lower()}, not in stock.",
            missing=[f"a {new.part.mpn} in stock"],
            code="component_unavailable",
        )
    now = timezone.now()
    old.removed_at, old.removed_by, old.removal_reason = now, user_or_none(actor), reason[:500]
    old.save(update_fields=["removed_at", "removed_by", "removal_reason"])
    Allocation.objects.filter(component=old.component, server=locked_server, released_at__isnull=True).update(
        released_at=now
    )
    component_move(
        components=[old.component],
        actor=actor,
        to_status=ComponentStatus.FAILED,
        reason=f"Replaced under warranty in {locked_server.hostname} {old.connector.name}: {reason}",
        location=f"Returned from {locked_server.hostname}",
    )
    allocation = Allocation.objects.create(
        component=new, server=locked_server, allocated_by=user_or_none(actor)
    )
    components_allocated.send(
        sender=Server,
        server=locked_server,
        allocations=[allocation],
        customer=locked_server.order.customer,
        actor=actor,
    )
    component_move(
        components=[new],
        actor=actor,
        to_status=ComponentStatus.ALLOCATED,
        reason=(
            f"Allocated to {locked_server.hostname} as a warranty replacement for {old.component.serial}"
        ),
    )
    replacement = _put_in(
        server=locked_server,
        connector=old.connector,
        component=new,
        actor=actor,
        why=" (warranty replacement)",
    )
    audit(
        actor=actor,
        verb="server.swap_component",
        obj=locked_server,
        before={"serial": old.component.serial, "connector": old.connector.name},
        after={"serial": new.serial, "connector": old.connector.name},
        note=reason,
    )
    return replacement
