"""What an order's export carries of the builds (see werkbank/exports.py): the order's servers with their
connectors, blacklist, allocations, installations, build steps and photos (with their files), the
configuration's checklist, and the chassis layouts of the record's parts."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from builds.models import (
        Allocation,
        BuildPhoto,
        BuildStep,
        ChassisLayout,
        ChecklistItem,
        Connector,
        ConnectorBlacklist,
        Installation,
        LayoutConnector,
        Server,
    )
    from inventory.models import Part

    exports.carry(Server, found=lambda record: Server.objects.filter(order=record.order))
    for model in (Connector, Allocation, Installation, BuildStep, BuildPhoto):
        exports.carry(
            model, found=lambda record, model=model: model.objects.filter(server__order=record.order)
        )
    exports.carry(
        ConnectorBlacklist,
        found=lambda record: ConnectorBlacklist.objects.filter(connector__server__order=record.order),
    )
    exports.carry(
        ChecklistItem,
        found=lambda record: ChecklistItem.objects.filter(configuration_id=record.order.configuration_id),
    )
    exports.carry(
        ChassisLayout, found=lambda record: ChassisLayout.objects.filter(chassis__in=record.pks(Part))
    )
    exports.carry(
        LayoutConnector,
        found=lambda record: LayoutConnector.objects.filter(layout__in=record.pks(ChassisLayout)),
    )
