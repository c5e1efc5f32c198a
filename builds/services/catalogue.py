"""The builds catalogue a PM keeps: chassis layouts with their connectors, and configurations' checklists.

Catalogue data is not tenant data, but it decides what every later server gets (its connectors are copied
from the layout when it is created) and what a partner must do before a server counts as assembled (the
checklist). So each change is audited like any other write, on the layout or on the configuration.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from builds.choices import BuildStepKind, ConnectorKind
from builds.models import ChassisLayout, ChecklistItem, LayoutConnector
from inventory.choices import PartCategory
from inventory.models import Part
from orders.models import ServerConfiguration
from werkbank.audit import audit, audit_value
from werkbank.errors import InvalidInput
from werkbank.types import Actor

LAYOUT_FIELDS = ("description", "columns")
CONNECTOR_FIELDS = ("name", "kind", "position", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block")


def _lock_layout(layout: ChassisLayout) -> ChassisLayout:
    return ChassisLayout.objects.select_for_update().get(pk=layout.pk)


def _check_values(values: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise InvalidInput(unknown[0], "cannot be changed here.")


@transaction.atomic
def layout_create(*, actor: Actor, chassis: Part, description: str = "", columns: int = 8) -> ChassisLayout:
    """Give a chassis part its layout (one per chassis)."""
    if chassis.category != PartCategory.CHASSIS:
        raise InvalidInput("chassis", f"{chassis} is not a chassis.")
    if ChassisLayout.objects.filter(chassis=chassis).exists():
        raise InvalidInput("chassis", f"{chassis} already has a layout.")
    layout = ChassisLayout.objects.create(chassis=chassis, description=description, columns=columns)
    audit(
        actor=actor,
        verb="layout.create",
        obj=layout,
        after={"chassis": chassis.mpn, "description": description, "columns": columns},
    )
    return layout


@transaction.atomic
def layout_update(*, layout: ChassisLayout, actor: Actor, **values: Any) -> ChassisLayout:
    """Change a layout's description or drawing width; its chassis never changes."""
    _check_values(values, LAYOUT_FIELDS)
    locked = _lock_layout(layout)
    changed = {key: value for key, value in values.items() if getattr(locked, key) != value}
    if not changed:
        return locked
    before = {key: getattr(locked, key) for key in changed}
    for key, value in changed.items():
        setattr(locked, key, value)
    locked.save(update_fields=list(changed))
    audit(actor=actor, verb="layout.update", obj=locked, before=before, after=changed)
    return locked


def _check_connector(layout: ChassisLayout, values: dict[str, Any], *, exclude_pk: int | None = None) -> None:
    if "kind" in values and values["kind"] not in ConnectorKind.values:
        raise InvalidInput("kind", f"unknown connector kind {values['kind']!r}.")
    if "name" in values:
        others = LayoutConnector.objects.filter(layout=layout, name=values["name"])
        if exclude_pk is not None:
            others = others.exclude(pk=exclude_pk)
        if others.exists():
            raise InvalidInput("name", f"the layout already has a connector named {values['name']!r}.")


@transaction.atomic
def layout_connector_add(*, layout: ChassisLayout, actor: Actor, **values: Any) -> LayoutConnector:
    """Add a named connector to a layout. Servers created from now on get it; existing servers keep theirs."""
    _check_values(values, CONNECTOR_FIELDS)
    locked = _lock_layout(layout)
    _check_connector(locked, values)
    connector = LayoutConnector.objects.create(layout=locked, **values)
    audit(
        actor=actor,
        verb="layout.connector_add",
        obj=locked,
        after={key: audit_value(value) for key, value in values.items()},
    )
    return connector


@transaction.atomic
def layout_connector_update(*, connector: LayoutConnector, actor: Actor, **values: Any) -> LayoutConnector:
    """Change a layout connector (its name, kind, place or PCIe data)."""
    _check_values(values, CONNECTOR_FIELDS)
    locked_layout = _lock_layout(connector.layout)
    current = LayoutConnector.objects.get(pk=connector.pk, layout=locked_layout)
    changed = {key: value for key, value in values.items() if getattr(current, key) != value}
    if not changed:
        return current
    _check_connector(locked_layout, changed, exclude_pk=current.pk)
    before = {"connector": current.name, **{key: getattr(current, key) for key in changed}}
    for key, value in changed.items():
        setattr(current, key, value)
    current.save(update_fields=list(changed))
    audit(actor=actor, verb="layout.connector_update", obj=locked_layout, before=before, after=changed)
    return current


@transaction.atomic
def layout_connector_remove(*, connector: LayoutConnector, actor: Actor) -> None:
    """Take a connector off a layout. Servers already created keep their copy of it."""
    locked_layout = _lock_layout(connector.layout)
    current = LayoutConnector.objects.get(pk=connector.pk, layout=locked_layout)
    before = {key: getattr(current, key) for key in CONNECTOR_FIELDS}
    current.delete()
    audit(actor=actor, verb="layout.connector_remove", obj=locked_layout, before=before)


def _lock_configuration(configuration: ServerConfiguration) -> ServerConfiguration:
    return ServerConfiguration.objects.select_for_update().get(pk=configuration.pk)


def _check_kind(configuration: ServerConfiguration, kind: str, *, exclude_pk: int | None = None) -> None:
    if kind not in BuildStepKind.values:
        raise InvalidInput("kind", f"unknown step {kind!r}; one of {', '.join(BuildStepKind.values)}.")
    others = ChecklistItem.objects.filter(configuration=configuration, kind=kind)
    if exclude_pk is not None:
        others = others.exclude(pk=exclude_pk)
    if others.exists():
        raise InvalidInput("kind", "this step is already on the configuration's checklist.")


@transaction.atomic
def checklist_item_add(*, configuration: ServerConfiguration, actor: Actor, kind: str) -> ChecklistItem:
    """Require a build step of every server of this configuration before it may be marked assembled."""
    locked = _lock_configuration(configuration)
    _check_kind(locked, kind)
    item = ChecklistItem.objects.create(configuration=locked, kind=kind)
    audit(actor=actor, verb="checklist.add", obj=locked, after={"step": kind})
    return item


@transaction.atomic
def checklist_item_update(
    *, item: ChecklistItem, actor: Actor, kind: str, configuration: ServerConfiguration | None = None
) -> ChecklistItem:
    """Change which step a checklist item requires (or, from the admin, which configuration it belongs to)."""
    current = ChecklistItem.objects.select_for_update().get(pk=item.pk)
    target = _lock_configuration(configuration or current.configuration)
    if (kind, target.pk) == (current.kind, current.configuration_id):
        return current
    _check_kind(target, kind, exclude_pk=current.pk)
    before = {"configuration": str(current.configuration), "step": current.kind}
    current.configuration, current.kind = target, kind
    current.save(update_fields=["configuration", "kind"])
    audit(
        actor=actor,
        verb="checklist.update",
        obj=target,
        before=before,
        after={"configuration": str(target), "step": kind},
    )
    return current


@transaction.atomic
def checklist_item_remove(*, item: ChecklistItem, actor: Actor) -> None:
    """No longer require this step of the configuration's servers."""
    current = ChecklistItem.objects.select_for_update().get(pk=item.pk)
    configuration = _lock_configuration(current.configuration)
    kind = current.kind
    current.delete()
    audit(actor=actor, verb="checklist.remove", obj=configuration, before={"step": kind})
