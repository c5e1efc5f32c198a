"""Backup and restore of one order: a versioned JSON bundle (`manage.py export-order` / `import-order`).

The bundle is ``{"format": "werkbank-order", "version": 1, "order": "WB-…", "exported_at": …,
"left_out": [...], "objects": [...]}``; ``objects`` are Django's serialisation of every row that makes up the
order's record, in an order that loads:

- the order, its ROI assessments, workload, status notices and purchase-order links;
- its configuration with the bill of materials, the checklist and the chassis layouts of its parts;
- its servers with connectors, blacklist, allocations, installations, build steps and photos (rows only);
- every component allocated, installed or tested in them, with their stock movements, lots, purchase-order
  lines and purchase orders (all lines of those), parts and suppliers;
- burn-in runs with stages, GPU results, findings and BMC events;
- placements with their racks, sites and power feeds, the network rows and the platform listings;
- the warranty registrations, records (with their replacement lineage), claims and expiry notices;
- the organisations and users these rows name, the users' memberships in those organisations, and the
  number sequences of the order and purchase-order references (so new numbers do not clash);
- the audit events of every one of these objects.

Row ids are kept: the bundle restores only into an empty database, where they cannot clash. Rows the
migrations create (content types, permissions, groups) go by their natural keys, and so does every
reference to a user.

Left out, and said so in ``left_out``: burn-in telemetry (samples and rollups; the runs' verdicts,
stages, GPU results and findings are kept), the files behind photos and burn-in reports (their paths are
kept), and users' password hashes (restored users get an unusable password and set one by the reset
flow). BMC credentials stay the encrypted Fernet token they are in the database: never decrypted, and
readable after a restore only where the same ``WERKBANK_SECRETS_KEYS`` is configured.

This module lives in the core and names the apps' models by label (``apps.get_model``), so the core still
imports no app.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.utils import timezone

FORMAT = "werkbank-order"
VERSION = 1

LEFT_OUT = [
    "burnin.TelemetrySample and burnin.TelemetryRollup rows (the raw telemetry; verdicts, stages, GPU "
    "results and findings are kept)",
    "the files behind build photos and burn-in reports (their stored paths are kept)",
    "users' password hashes (restored users have an unusable password)",
]

#: Rows the migrations create: referred to by natural key, never exported as rows of their own.
_BY_NATURAL_KEY = {"contenttypes.contenttype", "auth.permission"}
#: Rows that are matched by natural key on import (created when missing).
_MATCHED = {"auth.group"}
#: Never followed from an exported row: telemetry is left out.
_SKIPPED = {"burnin.telemetrysample", "burnin.telemetryrollup"}


class BundleError(Exception):
    """The bundle cannot be written or restored; the message says why."""


def _model(label: str) -> type[models.Model]:
    return apps.get_model(label)


class _Collector:
    """The set of rows that make up an order's record, closed over their forward references."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, Any], models.Model] = {}

    def add(self, objects: Iterable[models.Model]) -> None:
        for obj in objects:
            label = obj._meta.label_lower
            if label in _BY_NATURAL_KEY or label in _SKIPPED:
                continue
            self.rows.setdefault((label, obj.pk), obj)

    def of(self, label: str) -> list[models.Model]:
        return [obj for (row_label, _), obj in self.rows.items() if row_label == label.lower()]

    def pks(self, label: str) -> list[Any]:
        return [obj.pk for obj in self.of(label)]

    def close(self) -> None:
        """Add every row an added row points at (foreign keys and many-to-many), until nothing is new."""
        queue = list(self.rows.values())
        while queue:
            obj = queue.pop()
            targets: list[models.Model] = []
            for field in obj._meta.concrete_fields:
                if field.is_relation and getattr(obj, field.attname) is not None:
                    targets.append(getattr(obj, field.name))
            for field in obj._meta.many_to_many:
                targets.extend(getattr(obj, field.name).all())
            for target in targets:
                label = target._meta.label_lower
                if label in _BY_NATURAL_KEY or label in _SKIPPED:
                    continue
                key = (label, target.pk)
                if key not in self.rows:
                    self.rows[key] = target
                    queue.append(target)


def collect(order: models.Model) -> _Collector:
    """Every row of ``order``'s record (see the module docstring)."""
    c = _Collector()
    c.add([order])
    for label, lookup in (
        ("orders.ROIAssessment", "order"),
        ("orders.Workload", "order"),
        ("orders.StatusNotice", "order"),
        ("orders.OrderPurchaseOrder", "order"),
        ("builds.Server", "order"),
    ):
        c.add(_model(label).objects.filter(**{lookup: order}))
    c.add(_model("orders.ConfigurationLine").objects.filter(configuration_id=order.configuration_id))
    c.add(_model("builds.ChecklistItem").objects.filter(configuration_id=order.configuration_id))
    servers = c.pks("builds.Server")
    for label in (
        "builds.Connector",
        "builds.Allocation",
        "builds.Installation",
        "builds.BuildStep",
        "builds.BuildPhoto",
        "burnin.BurnInRun",
        "deployment.RackPlacement",
        "deployment.ServerNetwork",
        "deployment.PlatformListing",
        "warranty.WarrantyRegistration",
        "warranty.WarrantyRecord",
    ):
        c.add(_model(label).objects.filter(server__in=servers))
    records = c.pks("warranty.WarrantyRecord")
    for label in ("warranty.WarrantyClaim", "warranty.ExpiryNotice"):
        c.add(_model(label).objects.filter(record__in=records))
    c.add(_model("builds.ConnectorBlacklist").objects.filter(connector__in=c.pks("builds.Connector")))
    runs = c.pks("burnin.BurnInRun")
    for label in ("burnin.BurnInStage", "burnin.GpuResult", "burnin.Finding", "burnin.BmcEvent"):
        c.add(_model(label).objects.filter(run__in=runs))
    c.close()  # components, lots, PO lines, parts, racks, feeds, organisations, users …
    c.add(
        _model("inventory.PurchaseOrderLine").objects.filter(
            purchase_order__in=c.pks("inventory.PurchaseOrder")
        )
    )
    c.add(_model("inventory.StockMovement").objects.filter(component__in=c.pks("inventory.Component")))
    layouts = _model("builds.ChassisLayout").objects.filter(chassis__in=c.pks("inventory.Part"))
    c.add(layouts)
    c.add(_model("builds.LayoutConnector").objects.filter(layout__in=layouts))
    c.close()
    _add_audit_events(c)
    c.close()  # the events' actors
    user_model = get_user_model()
    c.add(
        _model("werkbank.Membership").objects.filter(
            user__in=c.pks(user_model._meta.label), organization__in=c.pks("werkbank.Organization")
        )
    )
    c.add(_model("auth.Group").objects.filter(user__in=c.pks(user_model._meta.label)).distinct())
    _add_sequences(c)
    return c


def _add_audit_events(c: _Collector) -> None:
    from django.contrib.contenttypes.models import ContentType

    event_model = _model("werkbank.AuditEvent")
    by_type: dict[type[models.Model], list[str]] = {}
    for (_, pk), obj in list(c.rows.items()):
        by_type.setdefault(type(obj), []).append(str(pk))
    for model, pks in by_type.items():
        content_type = ContentType.objects.get_for_model(model)
        c.add(event_model.objects.filter(content_type=content_type, object_id__in=pks))


def _add_sequences(c: _Collector) -> None:
    """The number sequences of the order's and its purchase orders' references."""
    references = [obj.reference for obj in c.of("orders.Order")] + [
        obj.number for obj in c.of("inventory.PurchaseOrder")
    ]
    sequence = _model("werkbank.NumberSequence")
    for reference in references:
        match = re.match(r"^([A-Z]+)-([0-9]{4})-", reference)
        if match:
            c.add(sequence.objects.filter(prefix=match.group(1), year=int(match.group(2))))


def _sorted_models(c: _Collector) -> list[type[models.Model]]:
    present = {type(obj) for obj in c.rows.values()}
    by_app: dict[Any, list[type[models.Model]]] = {}
    for model in present:
        by_app.setdefault(model._meta.app_config, []).append(model)
    ordered = serializers.sort_dependencies(list(by_app.items()), allow_cycles=True)
    return [model for model in ordered if model in present]


class _ExactEncoder(DjangoJSONEncoder):
    """Django's encoder, but times keep their microseconds: Django cuts them to milliseconds, so a row written
    at …:00.000500 exported as ".000Z" and came back as …:00 (a second export then read "Z"): the bundle did
    not survive its own round trip."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime.datetime):
            text = o.isoformat()
            return text[:-6] + "Z" if text.endswith("+00:00") else text
        if isinstance(o, datetime.time) and o.utcoffset() is None:
            return o.isoformat()
        return super().default(o)


def export_order(reference: str) -> dict[str, Any]:
    """The bundle of the order with this reference; BundleError when there is none."""
    order_model = _model("orders.Order")
    order = order_model.objects.filter(reference=reference).first()
    if order is None:
        raise BundleError(f"No order {reference!r}.")
    c = collect(order)
    user_label = get_user_model()._meta.label_lower
    objects: list[dict[str, Any]] = []
    for model in _sorted_models(c):
        label = model._meta.label_lower
        rows = sorted(c.of(label), key=lambda obj: str(obj.pk).zfill(20))
        text = serializers.serialize(
            "json",
            rows,
            use_natural_foreign_keys=True,
            use_natural_primary_keys=label in _MATCHED,
            cls=_ExactEncoder,
        )
        for item in json.loads(text):
            if label == user_label:
                item["fields"]["password"] = UNUSABLE_PASSWORD_PREFIX
            objects.append(item)
    return {
        "format": FORMAT,
        "version": VERSION,
        "order": reference,
        "exported_at": timezone.now().isoformat(),
        "left_out": LEFT_OUT,
        "objects": objects,
    }


def _check_header(bundle: Any) -> list[dict[str, Any]]:
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise BundleError(f"Not a Werkbank order bundle (expected format {FORMAT!r}).")
    if bundle.get("version") != VERSION:
        raise BundleError(
            f"Bundle version {bundle.get('version')!r} is not supported; "
            f"this Werkbank reads version {VERSION}."
        )
    objects = bundle.get("objects")
    if not isinstance(objects, list):
        raise BundleError("The bundle has no list of objects.")
    return objects


def import_order(bundle: Any, *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Restore a bundle into an empty database; the number of rows written.

    Refuses (BundleError) when any table the bundle writes already holds a row: ids are kept, so a
    restore next to other data could clash or merge records. Groups are matched by name.
    """
    objects = _check_header(bundle)
    labels = sorted({str(item.get("model", "")) for item in objects})
    try:
        written_models = [_model(label) for label in labels]
    except LookupError as exc:
        raise BundleError(f"The bundle names an unknown model: {exc}") from exc
    occupied = [
        model._meta.label
        for model in written_models
        if model._meta.label_lower not in _MATCHED and model._default_manager.using(using).exists()
    ]
    if occupied:
        raise BundleError(
            "import-order restores only into an empty database; these tables already hold rows: "
            + ", ".join(occupied)
            + "."
        )
    connection = connections[using]
    with transaction.atomic(using=using):
        with connection.constraint_checks_disabled():
            deferred = []
            count = 0
            for restored in serializers.deserialize(
                "python", objects, using=using, handle_forward_references=True
            ):
                restored.save(using=using)
                if restored.deferred_fields:
                    deferred.append(restored)
                count += 1
            for restored in deferred:
                restored.save_deferred_fields(using=using)
        connection.check_constraints(table_names=[model._meta.db_table for model in written_models])
        statements = connection.ops.sequence_reset_sql(no_style(), written_models)
        if statements:
            with connection.cursor() as cursor:
                for statement in statements:
                    cursor.execute(statement)
    return count
