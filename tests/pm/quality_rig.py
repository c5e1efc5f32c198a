"""A small fleet for the tests of the fleet's quality (pm.quality, issue #29): servers of one chassis layout
with GPUs of known lots installed, and attributions of failures added directly with the ORM (as the
warranty services would have left them).

    fleet = quality_rig.fleet(servers=8, lots={"L-2291": 8})
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="burn_in")
    quality_rig.fail(fleet.servers[1], connector="PCIe-1", stage="bench")

Stock is received through the inventory services (so lots, suppliers and POs are real); servers come from
`servers_create_for_order` (so their connectors are copied from the layout); installations are ORM rows,
each GPU in the order given into the servers' PCIe connectors one after another.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from builds.choices import ConnectorKind, ServerStatus
from builds.models import ChassisLayout, Connector, ConnectorBlacklist, Installation, LayoutConnector, Server
from builds.services import servers_create_for_order
from burnin.models import Finding
from inventory.models import Component, Part, Supplier
from inventory.packing import parse_scanner
from inventory.services import po_create, po_line_receive, po_send
from tests import factories
from warranty.models import Attribution, WarrantyClaim, WarrantyRecord

#: When the rig's GPUs went in, unless told otherwise: a fixed day, so unit-years are exact.
INSTALLED_AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
#: When the failures showed, unless told otherwise.
OCCURRED_AT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)

_numbers = itertools.count(1)


@dataclass
class Fleet:
    """What `fleet` built. ``gpus`` in the order they were received (lot by lot); ``installed[server.pk]``
    the GPUs in that server, connector by connector."""

    order: Any
    servers: list[Server]
    part: Part
    chassis: Part
    layout: ChassisLayout
    supplier: Supplier
    gpus: list[Component]
    installed: dict[int, list[Component]] = field(default_factory=dict)
    pm: Any = None

    def connector(self, server: Server, name: str) -> Connector:
        return Connector.objects.get(server=server, name=name)

    def lot(self, code: str) -> list[Component]:
        return [gpu for gpu in self.gpus if gpu.lot.lot_code == code]

    def lot_key(self, code: str) -> str:
        return f"{self.part.pk}:{code}"

    def position_key(self, name: str) -> str:
        return f"{self.layout.pk}:{name}"

    def supplier_key(self) -> str:
        return f"{self.supplier.pk}:{self.part.category}"


def receive(
    *, part: Part, supplier: Supplier, lots: dict[str, int], prefix: str, pm: Any = None
) -> list[Component]:
    """`lots[code]` serials of `part` from `supplier` on one sent PO, received lot by lot through the
    services. Serials are ``<prefix>-<code>-<n>``."""
    pm = pm or factories.make_pm()
    po = po_create(
        actor=pm, supplier=supplier, lines=[(part, sum(lots.values()), Decimal("2400.00"))], deliver_to=None
    )
    # The rig's second fleet of a flagged supplier or lot needs a PM's reason to be sent: give one.
    po = po_send(po=po, actor=pm, quality_override_reason="test rig" if _warned(po) else "")
    line = po.lines.get()
    serials: list[str] = []
    for code, count in lots.items():
        batch = [f"{prefix}-{code}-{n:03d}" for n in range(1, count + 1)]
        po_line_receive(
            line=line,
            actor=pm,
            lot_code=code,
            date_code="2526",
            origin="TW",
            packing=parse_scanner("\n".join(batch)),
        )
        serials += batch
    by_serial = {
        c.serial: c for c in Component.objects.select_related("lot", "part").filter(serial__in=serials)
    }
    return [by_serial[serial] for serial in serials]


def _warned(po: Any) -> bool:
    from inventory.gates import po_quality_warnings

    return bool(po_quality_warnings(po))


def fleet(
    *,
    servers: int = 8,
    lots: dict[str, int] | None = None,
    gpus_per_server: int = 1,
    connectors: tuple[str, ...] = ("PCIe-1", "PCIe-2"),
    part: Part | None = None,
    supplier: Supplier | None = None,
    chassis_name: str = "7U GPU chassis",
    customer: Any = None,
    installed_at: datetime = INSTALLED_AT,
    status: str = ServerStatus.HANDED_OVER,
    prefix: str | None = None,
) -> Fleet:
    """`servers` servers of one new chassis layout (PCIe `connectors`, plus a chassis mount), and the lots'
    GPUs installed `gpus_per_server` to a server in the order received (GPUs beyond the slots stay in stock),
    all at `installed_at`. The servers are left in `status`."""
    lots = {"L-2291": servers * gpus_per_server} if lots is None else lots
    if gpus_per_server > len(connectors):
        raise ValueError("more GPUs per server than PCIe connectors")
    pm = factories.make_pm()
    number = next(_numbers)
    prefix = prefix or f"Q{number}"
    part = part or factories.PartFactory(name=f"RTX 5090 32 GB ({prefix})")
    supplier = supplier or factories.SupplierFactory()
    chassis = factories.ChassisFactory(name=chassis_name, u_height=7)
    configuration = factories.ConfigurationFactory(lines=[(part, gpus_per_server), (chassis, 1)])
    layout = ChassisLayout.objects.create(chassis=chassis, columns=len(connectors), description=chassis_name)
    LayoutConnector.objects.bulk_create(
        LayoutConnector(
            layout=layout,
            name=name,
            kind=ConnectorKind.PCIE_SLOT,
            position=position,
            numa_node=0,
            pcie_gen=5,
            pcie_lanes=16,
        )
        for position, name in enumerate(connectors, start=1)
    )
    LayoutConnector.objects.create(
        layout=layout, name="Chassis", kind=ConnectorKind.CHASSIS, position=len(connectors) + 1
    )
    order = factories.OrderFactory(
        customer=customer or factories.OrganizationFactory(),
        configuration=configuration,
        server_count=servers,
    )
    built = servers_create_for_order(order=order, actor=pm)
    Server.objects.filter(order=order).update(status=status)
    gpus = receive(part=part, supplier=supplier, lots=lots, prefix=prefix, pm=pm)
    result = Fleet(
        order=order,
        servers=list(Server.objects.filter(order=order).order_by("sequence")),
        part=part,
        chassis=chassis,
        layout=layout,
        supplier=supplier,
        gpus=gpus,
        pm=pm,
    )
    slots = [(server, name) for server in result.servers for name in connectors[:gpus_per_server]]
    pairs = list(zip(slots, gpus, strict=False))
    install_all([(server, name, gpu) for (server, name), gpu in pairs], actor=pm, installed_at=installed_at)
    for (server, _), gpu in pairs:
        result.installed.setdefault(server.pk, []).append(gpu)
    assert len(built) == servers
    return result


def install_all(
    triples: list[tuple[Server, str, Component]], *, actor: Any, installed_at: datetime = INSTALLED_AT
) -> list[Installation]:
    """Installation rows (server, connector name, component), all at `installed_at`, in two queries plus
    one to find the connectors."""
    connectors = {
        (c.server_id, c.name): c
        for c in Connector.objects.filter(server__in={server.pk for server, _, _ in triples})
    }
    rows = Installation.objects.bulk_create(
        Installation(
            server=server, connector=connectors[(server.pk, name)], component=gpu, installed_by=actor
        )
        for server, name, gpu in triples
    )
    Installation.objects.filter(pk__in=[row.pk for row in rows]).update(installed_at=installed_at)
    return rows


def remove(component: Component, *, at: datetime) -> None:
    """Take `component` out of its server at `at` (the installation stays, with its removal time)."""
    Installation.objects.filter(component=component, removed_at__isnull=True).update(
        removed_at=at, removal_reason="test rig"
    )


def fail(
    server: Server,
    *,
    component: Component | None = None,
    connector: str | Connector | None = None,
    stage: str = "burn_in",
    cause: str | None = None,
    occurred_at: datetime = OCCURRED_AT,
    confirmed_by: Any = None,
) -> Attribution:
    """One attribution of a failure of `server`, with a source of its stage: a `fail` finding of a run
    (burn_in, field), a claim (claim) or a blacklisting of `connector` (bench). The cause is the
    component's when one is named, else the connector's, unless `cause` says otherwise."""
    if isinstance(connector, str):
        connector = Connector.objects.get(server=server, name=connector)
    cause = cause or ("component" if component is not None else "connector")
    source: dict[str, Any] = {}
    if stage in ("burn_in", "field"):
        run = factories.make_burnin_run_row(
            server, started_at=occurred_at - timedelta(hours=1), ended_at=occurred_at, result="fail",
            purpose="field_check" if stage == "field" else "burn_in",
        )  # fmt: skip
        source["finding"] = Finding.objects.create(
            run=run,
            code="gpu_pcie_link_degraded" if cause == "connector" else "gpu_xid_errors",
            severity="fail",
            subject="GPU 0",
            gpu_index=0,
            message="Failure (test rig).",
            rule_version="test-1",
        )
    elif stage == "claim":
        source["claim"] = _claim(server, component)
    elif stage == "bench":
        if connector is None:
            raise ValueError("a bench failure is a blacklisted connector: name it")
        source["blacklist"] = ConnectorBlacklist.objects.create(
            connector=connector, reason="Test rig: x8 link"
        )
    else:
        raise ValueError(f"unknown stage {stage!r}")
    return Attribution.objects.create(
        server=server,
        stage=stage,
        occurred_at=occurred_at,
        proposed_cause=cause,
        proposed_reason="Test rig.",
        cause=cause,
        component=component,
        connector=connector,
        confirmed_by=confirmed_by,
        confirmed_at=occurred_at if confirmed_by else None,
        **source,
    )


def _claim(server: Server, component: Component | None) -> WarrantyClaim:
    order = server.order
    start = date(2026, 1, 1)
    record = WarrantyRecord.objects.create(
        kind="component" if component else "server",
        server=server,
        component=component,
        order=order,
        customer=order.customer,
        serial=component.serial if component else server.asset_tag,
        description="Test rig record",
        start_date=start,
        term_months=36,
        end_date=start + timedelta(days=1096),
    )
    return WarrantyClaim.objects.create(
        number=f"RMA-2026-{next(_numbers):05d}",
        record=record,
        customer=order.customer,
        description="Card dead (test rig).",
    )
