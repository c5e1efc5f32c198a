"""Build services: servers, allocation, installation by scanned serial, blacklist, build steps, photos.

Every service is atomic, locks what it changes, checks its rules and raises a domain error that says what
is missing, and writes an audit event. Component status changes go through inventory.services.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from builds.choices import (
    BENCH_OPEN,
    KINDS_FOR_CATEGORY,
    SERVER_TRANSITIONS,
    BuildStepKind,
    ConnectorKind,
    ServerStatus,
)
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    Connector,
    ConnectorBlacklist,
    Installation,
    Server,
)
from inventory.choices import ComponentStatus, PartCategory
from inventory.models import Component
from inventory.services import component_move
from orders.models import Order
from werkbank.access import is_pm
from werkbank.audit import audit, user_or_none
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.files import save_with_file
from werkbank.models import Organization
from werkbank.transitions import require_transition

# --- Servers -------------------------------------------------------------------------------------------


def _chassis_layout(order: Order) -> ChassisLayout | None:
    line = (
        order.configuration.lines.filter(part__category=PartCategory.CHASSIS).select_related("part").first()
    )
    return ChassisLayout.objects.filter(chassis=line.part).first() if line else None


@transaction.atomic
def servers_create_for_order(*, order: Order, actor: Any) -> list[Server]:
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


def _lock_server(server: Server) -> Server:
    return (
        Server.objects.select_for_update(of=("self",))
        .select_related("order__customer", "partner")
        .get(pk=server.pk)
    )


def _server_transition(*, server: Server, actor: Any, target: str, verb: str, note: str = "") -> Server:
    locked = _lock_server(server)
    require_transition(
        transitions=SERVER_TRANSITIONS,
        choices=ServerStatus,
        current=locked.status,
        target=target,
        subject=f"Server {locked.hostname}",
        verb=verb,
    )
    before = locked.status
    locked.status = target
    locked.save(update_fields=["status"])
    audit(
        actor=actor,
        verb=f"server.{verb}",
        obj=locked,
        before={"status": before},
        after={"status": target},
        note=note,
    )
    return locked


@transaction.atomic
def server_assign_partner(*, server: Server, actor: Any, partner: Organization) -> Server:
    """Give the build to an assembly partner; from now on its members see the server on their bench."""
    if partner.kind != OrganizationKind.PARTNER:
        raise InvalidInput("partner", f"{partner.name} is not an assembly partner.")
    locked = _lock_server(server)
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
def server_start_assembly(*, server: Server, actor: Any, note: str = "") -> Server:
    """planned (or burn_in_failed, for rework) → assembling: needs an assigned partner."""
    if server.partner_id is None:
        raise RuleViolation(
            f"Server {server.hostname} has no assembly partner yet.", missing=["an assigned assembly partner"]
        )
    return _server_transition(
        server=server, actor=actor, target=ServerStatus.ASSEMBLING, verb="start_assembly", note=note
    )


def assembly_gaps(server: Server) -> list[str]:
    """What stands between the server and `assembled`: missing steps, uninstalled BOM, blacklisted use."""
    gaps = []
    logged = set(server.steps.values_list("kind", flat=True))
    for item in server.order.configuration.checklist.all():
        if item.kind not in logged:
            gaps.append(f"build step not logged: {item.get_kind_display()}")
    installed = Counter(
        Installation.objects.filter(server=server, removed_at__isnull=True).values_list(
            "component__part_id", flat=True
        )
    )
    for line in server.order.configuration.lines.select_related("part"):
        have = installed.get(line.part_id, 0)
        if have < line.quantity:
            gaps.append(f"{line.quantity - have} of {line.quantity} {line.part.mpn} not installed")
    on_blacklisted = Installation.objects.filter(
        server=server, removed_at__isnull=True, connector__blacklist__isnull=False
    ).select_related("component", "connector")
    gaps += [
        f"{inst.component.serial} sits in blacklisted connector {inst.connector.name}"
        for inst in on_blacklisted
    ]
    return gaps


@transaction.atomic
def server_mark_assembled(*, server: Server, actor: Any, note: str = "") -> Server:
    """assembling → assembled, once every required step is logged, every BOM line is installed, and no
    component sits on a blacklisted connector."""
    locked = _lock_server(server)
    gaps = assembly_gaps(locked)
    if gaps:
        raise RuleViolation(
            f"Server {locked.hostname} is not assembled yet: " + "; ".join(gaps) + ".",
            missing=gaps,
            code="assembly_incomplete",
        )
    return _server_transition(
        server=locked, actor=actor, target=ServerStatus.ASSEMBLED, verb="mark_assembled", note=note
    )


def _require_open(server: Server) -> None:
    if server.status not in BENCH_OPEN:
        raise RuleViolation(
            f"Server {server.hostname} is {server.get_status_display().lower()}: "
            "its components can no longer change.",
            missing=["server status planned, assembling or burn-in failed"],
            code="server_not_open",
        )


# --- Allocation ----------------------------------------------------------------------------------------


@transaction.atomic
def allocate(
    *, server: Server, actor: Any, components: Iterable[Component], override_reason: str = ""
) -> list[Allocation]:
    """Set components aside for a server under row locks, registering their warranty to the customer.

    All GPUs of one server come from one lot (seed 000: "gleiche Fertigungslose"); a mixed lot needs a PM's
    written override.
    """
    locked_server = _lock_server(server)
    _require_open(locked_server)
    ids = sorted({component.pk for component in components})
    if not ids:
        raise InvalidInput("components", "name at least one component.")
    locked = list(
        Component.objects.select_for_update(of=("self",))
        .select_related("part", "lot")
        .filter(pk__in=ids)
        .order_by("pk")
    )
    taken = {
        allocation.component_id: allocation.server
        for allocation in Allocation.objects.filter(
            component__in=locked, released_at__isnull=True
        ).select_related("server")
    }
    for component in locked:
        if component.pk in taken:
            other = taken[component.pk]
            where = "this server" if other.pk == locked_server.pk else f"server {other.hostname}"
            raise RuleViolation(
                f"{component.part.mpn} {component.serial} is already allocated to {where}.",
                missing=[f"a free {component.part.mpn}"],
                code="component_taken",
            )
        if component.status != ComponentStatus.IN_STOCK:
            raise RuleViolation(
                f"{component.part.mpn} {component.serial} is "
                f"{component.get_status_display().lower()}, not in stock.",
                code="component_unavailable",
            )
    elsewhere = [c for c in locked if c.holder_id is not None and c.holder_id != locked_server.partner_id]
    if elsewhere:
        raise RuleViolation(
            f"{elsewhere[0].part.mpn} {elsewhere[0].serial} is at {elsewhere[0].location}, "
            f"not at the workshop that builds {locked_server.hostname}.",
            missing=[f"{c.serial}: stock at the server's workshop or our warehouse" for c in elsewhere],
            code="component_elsewhere",
        )
    bom = set(locked_server.order.configuration.lines.values_list("part_id", flat=True))
    foreign = [component for component in locked if component.part_id not in bom]
    if foreign:
        raise RuleViolation(
            f"{foreign[0].part.mpn} {foreign[0].serial} is not on the bill of materials of "
            f"{locked_server.order.configuration.name}.",
            missing=[f"{c.serial}: a part of the configuration's bill of materials" for c in foreign],
            code="not_on_bom",
        )
    gpu_lots = {
        lot_code
        for lot_code in Allocation.objects.filter(
            server=locked_server, released_at__isnull=True, component__part__category=PartCategory.GPU
        ).values_list("component__lot__lot_code", flat=True)
    } | {component.lot.lot_code for component in locked if component.part.category == PartCategory.GPU}
    override_reason = (override_reason or "").strip()
    if len(gpu_lots) > 1:
        if not override_reason:
            raise RuleViolation(
                f"The GPUs of {locked_server.hostname} would come from {len(gpu_lots)} lots "
                f"({', '.join(sorted(gpu_lots))}); one server takes GPUs of one lot unless a PM overrides it "
                "with a written reason.",
                missing=["GPUs of a single lot, or a PM's override reason"],
                code="mixed_lot",
            )
        if not is_pm(actor):
            raise RuleViolation(
                f"Mixing GPU lots on {locked_server.hostname} needs a project manager's override.",
                missing=["a project manager's override"],
                code="mixed_lot",
            )
    customer = locked_server.order.customer
    allocations = Allocation.objects.bulk_create(
        Allocation(
            component=component,
            server=locked_server,
            allocated_by=user_or_none(actor),
            warranty_registered_to=customer,
            lot_override_reason=override_reason if len(gpu_lots) > 1 else "",
        )
        for component in locked
    )
    component_move(
        components=locked,
        actor=actor,
        to_status=ComponentStatus.ALLOCATED,
        reason=f"Allocated to {locked_server.hostname}; warranty registered to {customer.name}",
    )
    audit(
        actor=actor,
        verb="server.allocate",
        obj=locked_server,
        after={
            "serials": [c.serial for c in locked],
            "warranty_registered_to": customer.name,
            "lots": sorted({c.lot.lot_code for c in locked}),
        },
        note=override_reason,
    )
    return allocations


# --- Installation --------------------------------------------------------------------------------------


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
    occupant = (
        Installation.objects.filter(connector=connector, removed_at__isnull=True)
        .select_related("component")
        .first()
    )
    if occupant is not None:
        raise RuleViolation(
            f"Connector {connector.name} already holds {occupant.component.serial}.",
            missing=[f"a free connector for the component (or remove {occupant.component.serial} first)"],
            code="connector_occupied",
        )


def _check_kind(component: Component, connector: Connector) -> None:
    allowed = KINDS_FOR_CATEGORY.get(component.part.category, frozenset())
    if connector.kind not in allowed:
        names = ", ".join(ConnectorKind(kind).label for kind in sorted(allowed)) or "no connector"
        raise InvalidInput(
            "connector",
            f"{connector.name} is a {connector.get_kind_display()}; "
            f"a {component.part.get_category_display()} "
            f"goes into: {names}.",
        )


def find_component(*, serial: str, user: Any, manufacturer: str = "", connector_kind: str = "") -> Component:
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


@transaction.atomic
def install(*, server: Server, actor: Any, component: Component, connector_name: str) -> Installation:
    """Put a component into a named connector, scanner-first. A component in stock is allocated on the way
    (with the same-lot rule); one allocated to another server is refused, naming that server."""
    locked_server = _lock_server(server)
    _require_open(locked_server)
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
        allocate(server=locked_server, actor=actor, components=[component])
    elif allocation.server_id != locked_server.pk:
        raise RuleViolation(
            f"{component.part.mpn} {component.serial} is allocated to server {allocation.server.hostname}, "
            f"not to {locked_server.hostname}.",
            missing=[f"a {component.part.mpn} allocated to {locked_server.hostname}"],
            code="component_taken",
        )
    elif Installation.objects.filter(component=component, removed_at__isnull=True).exists():
        current = Installation.objects.get(component=component, removed_at__isnull=True)
        raise RuleViolation(
            f"{component.serial} is already installed in {current.connector.name}; move it instead.",
            code="component_installed",
        )
    installation = Installation.objects.create(
        server=locked_server, connector=connector, component=component, installed_by=user_or_none(actor)
    )
    component_move(
        components=[component],
        actor=actor,
        to_status=ComponentStatus.INSTALLED,
        reason=f"Installed in {locked_server.hostname} {connector.name}",
        location=f"{locked_server.hostname} {connector.name}",
    )
    audit(
        actor=actor,
        verb="server.install",
        obj=locked_server,
        after={"serial": component.serial, "connector": connector.name},
    )
    return installation


@transaction.atomic
def remove(*, installation: Installation, actor: Any, reason: str) -> Installation:
    """Take a component out of its connector, with a reason. It stays allocated to the server."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a removal needs a reason.")
    # Lock in the same order as install: the server first, then the installation row alone.
    _lock_server(installation.server)
    locked = (
        Installation.objects.select_for_update(of=("self",))
        .select_related("server", "connector", "component")
        .get(pk=installation.pk)
    )
    _require_open(locked.server)
    if locked.removed_at is not None:
        raise RuleViolation(f"{locked.component.serial} was already removed from {locked.connector.name}.")
    locked.removed_at, locked.removed_by, locked.removal_reason = timezone.now(), user_or_none(actor), reason
    locked.save(update_fields=["removed_at", "removed_by", "removal_reason"])
    component_move(
        components=[locked.component],
        actor=actor,
        to_status=ComponentStatus.ALLOCATED,
        reason=f"Removed from {locked.server.hostname} {locked.connector.name}: {reason}",
        location=f"Allocated to {locked.server.hostname}",
    )
    audit(
        actor=actor,
        verb="server.remove",
        obj=locked.server,
        after={"serial": locked.component.serial, "connector": locked.connector.name},
        note=reason,
    )
    return locked


@transaction.atomic
def move(
    *, server: Server, actor: Any, component: Component, to_connector_name: str, reason: str
) -> Installation:
    """A move is a removal plus an installation, in one transaction."""
    current = Installation.objects.filter(server=server, component=component, removed_at__isnull=True).first()
    if current is None:
        raise RuleViolation(
            f"{component.serial} is not installed in {server.hostname}.", code="not_installed"
        )
    target = _connector(_lock_server(server), to_connector_name, field="to_connector")
    _check_kind(component, target)
    _check_usable(target)
    remove(installation=current, actor=actor, reason=reason)
    return install(server=server, actor=actor, component=component, connector_name=target.name)


# --- Blacklist -----------------------------------------------------------------------------------------


@transaction.atomic
def connector_blacklist(
    *,
    connector: Connector,
    actor: Any,
    reason: str,
    evidence: str = "",
    measurements: dict | None = None,
    photo: BuildPhoto | None = None,
    target_connector_name: str = "",
) -> ConnectorBlacklist:
    """Blacklist a faulty connector for the machine's whole life (seed 003). An occupied connector needs a
    free target connector: its component moves there in the same transaction. There is no way back."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "say why the connector is faulty.")
    server = _lock_server(connector.server)
    locked = Connector.objects.select_for_update().get(pk=connector.pk)
    existing = ConnectorBlacklist.objects.filter(connector=locked).first()
    if existing is not None:
        raise RuleViolation(
            f'Connector {locked.name} is already blacklisted: "{existing.reason}".', code="blacklisted"
        )
    if photo is not None and photo.server_id != server.pk:
        raise InvalidInput("photo", "the photo belongs to another server.")
    occupant = (
        Installation.objects.filter(connector=locked, removed_at__isnull=True)
        .select_related("component")
        .first()
    )
    moved_to = ""
    if occupant is not None:
        if not (target_connector_name or "").strip():
            raise RuleViolation(
                f"Connector {locked.name} holds {occupant.component.serial}: "
                "name a free target connector to move "
                "it to before blacklisting.",
                missing=["a free target connector"],
                code="connector_occupied",
            )
        moved = move(
            server=server,
            actor=actor,
            component=occupant.component,
            to_connector_name=target_connector_name,
            reason=f"Connector {locked.name} blacklisted: {reason}",
        )
        moved_to = moved.connector.name
    blacklist = ConnectorBlacklist.objects.create(
        connector=locked,
        reason=reason,
        evidence=evidence,
        measurements=measurements or {},
        photo=photo,
        created_by=user_or_none(actor),
    )
    audit(
        actor=actor,
        verb="server.blacklist_connector",
        obj=server,
        after={
            "connector": locked.name,
            "reason": reason,
            "measurements": measurements or {},
            "moved": {"serial": occupant.component.serial, "to": moved_to} if occupant else None,
        },
        note=evidence,
    )
    return blacklist


# --- Build steps and photos ----------------------------------------------------------------------------

JPEG_MAGIC = b"\xff\xd8\xff"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HEIC_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}


def detect_image_type(data: bytes) -> str | None:
    """The image type by content, not by name: a JPEG, PNG or HEIC file, else None."""
    if data.startswith(JPEG_MAGIC) and data.rstrip(b"\x00").endswith(b"\xff\xd9"):
        return "image/jpeg"
    if data.startswith(PNG_MAGIC) and data[12:16] == b"IHDR" and data[-8:-4] == b"IEND":
        return "image/png"
    if data[4:8] == b"ftyp" and data[8:12] in HEIC_BRANDS:
        return "image/heic"
    return None


def _check_photo(data: bytes, *, field: str = "photo", which: str = "") -> str:
    """The content type of an acceptable photo; else a 400 naming the field, and `which` photo it was."""
    limit = settings.WERKBANK_MAX_PHOTO_BYTES
    if len(data) > limit:
        raise InvalidInput(field, f"{which}is {len(data):,} bytes; a photo may have at most {limit:,} bytes.")
    content_type = detect_image_type(data)
    if content_type is None:
        raise InvalidInput(field, f"{which}is not a JPEG, PNG or HEIC image (checked by its content).")
    return content_type


@transaction.atomic
def photo_upload(*, server: Server, actor: Any, data: bytes, step: BuildStep | None = None) -> BuildPhoto:
    """Store a bench photo under a generated name after checking its content and size.

    The file is written once the transaction commits, through `save_with_file`: a rolled-back upload leaves
    no file behind.
    """
    content_type = _check_photo(data)
    if step is not None and step.server_id != server.pk:
        raise InvalidInput("step", "the step belongs to another server.")
    photo = save_with_file(
        BuildPhoto(
            server=server,
            step=step,
            content_type=content_type,
            size_bytes=len(data),
            uploaded_by=user_or_none(actor),
        ),
        field="file",
        content=data,
        filename="upload",
    )
    audit(
        actor=actor,
        verb="server.photo",
        obj=server,
        after={"photo": photo.pk, "type": content_type, "bytes": len(data)},
    )
    return photo


@transaction.atomic
def step_log(
    *,
    server: Server,
    actor: Any,
    kind: str,
    notes: str = "",
    data: dict | None = None,
    photos: Iterable[bytes] = (),
) -> BuildStep:
    """Log one build step, with optional measurements (`data`) and photos, each checked before anything is
    saved."""
    if kind not in BuildStepKind.values:
        raise InvalidInput("kind", f"unknown step {kind!r}; one of {', '.join(BuildStepKind.values)}.")
    photos = list(photos)
    for number, photo in enumerate(photos, start=1):
        _check_photo(photo, field="photos", which=f"photo {number} of {len(photos)} ")
    locked = _lock_server(server)
    step = BuildStep.objects.create(
        server=locked, kind=kind, actor=user_or_none(actor), notes=notes, data=data or {}
    )
    for photo in photos:
        photo_upload(server=locked, actor=actor, data=photo, step=step)
    audit(actor=actor, verb="server.step", obj=locked, after={"kind": kind}, note=notes)
    return step
