"""Backup and restore of one order: a versioned JSON bundle (`manage.py export-order` / `import-order`).

The bundle is ``{"format": "werkbank-order", "version": 1, "order": "WB-…", "exported_at": …,
"left_out": [...], "objects": [...], "files": [...]}``. ``objects`` are Django's serialisation of every row
that makes up the order's record, in an order that loads. What that record holds, each app declares for its
own models (``<app>/exports.py``, in the registry of werkbank/exports.py); today:

- the order, its ROI assessments, workload, status notices and purchase-order links;
- its configuration with the bill of materials, the checklist and the chassis layouts of its parts;
- its servers with connectors, blacklist, allocations, installations, build steps and photos;
- every component allocated, installed or tested in them, with their stock movements, lots, purchase-order
  lines and purchase orders (all lines of those), parts and suppliers, and the label batches of those lots
  and purchase orders;
- burn-in runs with stages, GPU results, findings and BMC events;
- placements with their racks, sites and power feeds, the network rows and the platform listings;
- the handover packs, the warranty registrations, records (with their replacement lineage), claims and
  expiry notices;
- the organisations and users these rows name, the users' memberships in those organisations and their
  groups, and the number sequences of the order and purchase-order references (so new numbers do not clash);
- the audit events of every one of these objects.

``files`` carries the stored files of those rows (handover pack PDFs and ZIPs, build photos, raw burn-in
reports, label PDFs), each as ``{"model", "pk", "field", "name", "sha256", "size", "content"}`` with the
bytes in base64: a restore that left them behind would bring back rows that name files it does not have.

Row ids are kept: the bundle restores only into an empty database, where they cannot clash. Rows the
migrations create (content types, permissions) go by their natural keys, groups are matched by name, and
every reference to a user goes by username.

Left out, and said so in ``left_out``: what the apps declare left out (burn-in telemetry: the samples and
rollups; the runs' verdicts, stages, GPU results, findings and raw reports are kept; the task outbox), the
withheld fields (users' password hashes: restored users get an unusable password and set one by the reset
flow), and any file a row names that was missing from the storage at export (the row keeps its name). BMC
credentials stay the encrypted Fernet token they are in the database: never decrypted, and readable after a
restore only where the same ``WERKBANK_SECRETS_KEYS`` is configured.

Import checks every file against its SHA-256 before it writes anything, restores the rows in one
transaction, and stores the files through the core's file helper once that transaction commits
(``werkbank.files.restore_file``: files follow the transaction). It then checks that every file is stored
and refuses, naming them, where one is not. A version 1 bundle without ``files`` (written before files were
carried) restores its rows only.

The collection follows the registry: every declaration's finder, then every reference of the rows found
(foreign keys and many-to-many), again and again until nothing new turns up. A row of a model that no app
declared, or a reference to a left-out model, stops the export with a BundleError rather than drop it.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.db.models import Model
from django.utils import timezone

from orders.models import Order
from werkbank import exports
from werkbank.files import restore_file

FORMAT = "werkbank-order"
VERSION = 1


class BundleError(Exception):
    """The bundle cannot be written or restored; the message says why."""


class _Record:
    """The rows of one order's record (`werkbank.exports.Record`), closed over their references."""

    def __init__(self, order: Model) -> None:
        self.order = order
        self.rows: dict[type[Model], dict[Any, Model]] = {}

    def of(self, model: type[Model]) -> list[Model]:
        return list(self.rows.get(_concrete(model), {}).values())

    def pks(self, model: type[Model]) -> list[Any]:
        return list(self.rows.get(_concrete(model), {}))

    def models(self) -> set[type[Model]]:
        return {model for model, rows in self.rows.items() if rows}

    def add(self, objects: Iterable[Model], *, via: str) -> list[Model]:
        """Add the rows not yet held; the new ones. A referred model's rows are skipped (natural keys)."""
        new = []
        for obj in objects:
            model = _concrete(type(obj))
            declaration = exports.declaration_for(model)
            if declaration is None:
                raise BundleError(
                    f"{model._meta.label} (reached by {via}) has no export declaration: its app must say "
                    "whether an order's export carries it (werkbank/exports.py)."
                )
            if declaration.referred:
                continue
            if not declaration.carried:
                raise BundleError(f"{via} leads to {model._meta.label} rows, which are left out of exports.")
            rows = self.rows.setdefault(model, {})
            if obj.pk not in rows:
                rows[obj.pk] = obj
                new.append(obj)
        return new

    def close(self, objects: list[Model]) -> None:
        """Add every row that `objects` point at (foreign keys and many-to-many), and theirs, until nothing
        is new; one query per referenced table and round."""
        pending = objects
        while pending:
            found: list[Model] = []
            wanted: dict[tuple[type[Model], str], set[Any]] = defaultdict(set)
            for obj in pending:
                for field in obj._meta.concrete_fields:
                    value = getattr(obj, field.attname)
                    if isinstance(field, models.ForeignKey) and value is not None:
                        wanted[(field.related_model, field.target_field.attname)].add(value)
                for field in obj._meta.many_to_many:
                    if not _referred(field.related_model):
                        label = f"{obj._meta.label}.{field.name}"
                        found += self.add(getattr(obj, field.name).all(), via=label)
            for (model, attname), values in wanted.items():
                if _referred(model):
                    continue
                if attname == model._meta.pk.attname:
                    values -= set(self.rows.get(_concrete(model), {}))
                if values:
                    targets = model._base_manager.filter(**{f"{attname}__in": values})
                    found += self.add(targets, via=f"a reference to {model._meta.label}")
            pending = found


def _concrete(model: type[Model]) -> type[Model]:
    return model._meta.concrete_model or model


def _referred(model: type[Model]) -> bool:
    declaration = exports.declaration_for(model)
    return declaration is not None and declaration.referred


def collect(order: Model) -> _Record:
    """Every row of ``order``'s record: the declarations' finders and the references of the rows, until a
    round finds nothing new (see the module docstring)."""
    record = _Record(order)
    finders = [declaration for declaration in exports.declarations() if declaration.found is not None]
    while True:
        new: list[Model] = []
        for declaration in finders:
            assert declaration.found is not None
            new += record.add(
                declaration.found(record), via=f"the declaration of {declaration.model._meta.label}"
            )
        if not new:
            return record
        record.close(new)


def _sorted_models(record: _Record) -> list[type[Model]]:
    present = record.models()
    by_app: dict[Any, list[type[Model]]] = {}
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
    order = Order.objects.filter(reference=reference).first()
    if order is None:
        raise BundleError(f"No order {reference!r}.")
    forgotten = exports.undeclared()
    if forgotten:
        raise BundleError(
            "These models have no export declaration, so the bundle could drop their rows unsaid: "
            + ", ".join(forgotten)
            + ". Their apps must carry or leave them out (werkbank/exports.py)."
        )
    record = collect(order)
    objects: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    missing: list[str] = []
    for model in _sorted_models(record):
        declaration = exports.declaration_for(model)
        assert declaration is not None  # collect() holds declared rows only
        rows = sorted(record.of(model), key=lambda obj: str(obj.pk).zfill(20))
        text = serializers.serialize(
            "json",
            rows,
            use_natural_foreign_keys=True,
            use_natural_primary_keys=declaration.match_by_natural_key,
            cls=_ExactEncoder,
        )
        for item in json.loads(text):
            for name, (value, _reason) in declaration.withheld.items():
                item["fields"][name] = value
            objects.append(item)
        _add_files(rows, files=files, missing=missing)
    return {
        "format": FORMAT,
        "version": VERSION,
        "order": reference,
        "exported_at": timezone.now().isoformat(),
        "left_out": exports.left_out() + missing,
        "objects": objects,
        "files": files,
    }


def _add_files(rows: list[Model], *, files: list[dict[str, Any]], missing: list[str]) -> None:
    """The stored files the rows name, with their bytes; a file the storage lacks is named in `missing`."""
    for obj in rows:
        for field in obj._meta.concrete_fields:
            if not isinstance(field, models.FileField):
                continue
            name = getattr(obj, field.attname).name
            if not name:
                continue
            label = obj._meta.label_lower
            if not field.storage.exists(name):
                missing.append(f"the file {name!r} of {label} {obj.pk}: missing from the storage at export")
                continue
            with field.storage.open(name, "rb") as stored:
                content = stored.read()
            files.append(
                {
                    "model": label,
                    "pk": obj.pk,
                    "field": field.name,
                    "name": name,
                    "sha256": hashlib.sha256(content).hexdigest(),
                    "size": len(content),
                    "content": base64.b64encode(content).decode("ascii"),
                }
            )


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


@dataclass(frozen=True)
class _File:
    """One file of the bundle, its bytes checked against its SHA-256."""

    label: str
    pk: str
    field: str
    name: str
    sha256: str
    content: bytes


def _check_files(bundle: dict[str, Any], objects: list[dict[str, Any]]) -> list[_File]:
    """The bundle's files, each matching its SHA-256 and named by a row of the bundle; BundleError else."""
    entries = bundle.get("files", [])
    if not isinstance(entries, list):
        raise BundleError("The bundle's files are not a list.")
    named = {
        (str(item.get("model")), str(item.get("pk")), field): value
        for item in objects
        for field, value in (item.get("fields") or {}).items()
        if isinstance(value, str)
    }
    files = []
    for entry in entries:
        try:
            file = _File(
                label=str(entry["model"]),
                pk=str(entry["pk"]),
                field=str(entry["field"]),
                name=str(entry["name"]),
                sha256=str(entry["sha256"]),
                content=base64.b64decode(entry["content"], validate=True),
            )
        except (KeyError, TypeError, binascii.Error) as exc:
            raise BundleError(f"A file entry of the bundle is malformed: {exc!r}.") from exc
        where = f"the file {file.name!r} of {file.label} {file.pk}"
        if hashlib.sha256(file.content).hexdigest() != file.sha256:
            raise BundleError(f"{where} does not match its SHA-256: the bundle is damaged.")
        if named.get((file.label, file.pk, file.field)) != file.name:
            raise BundleError(f"{where} is named by no row of the bundle.")
        files.append(file)
    return files


def import_order(bundle: Any, *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Restore a bundle into an empty database; the number of rows written.

    Refuses (BundleError) when any table the bundle writes already holds a row: ids are kept, so a
    restore next to other data could clash or merge records. Groups are matched by name. Files are
    checked before anything is written and stored once the rows have committed (see the module docstring).
    """
    objects = _check_header(bundle)
    files = _check_files(bundle, objects)
    labels = sorted({str(item.get("model", "")) for item in objects})
    try:
        written_models = [apps.get_model(label) for label in labels]
    except (LookupError, ValueError) as exc:
        raise BundleError(f"The bundle names an unknown model: {exc}") from exc
    occupied = [
        model._meta.label
        for model in written_models
        if not _matched(model) and model._default_manager.using(using).exists()
    ]
    if occupied:
        raise BundleError(
            "import-order restores only into an empty database; these tables already hold rows: "
            + ", ".join(occupied)
            + "."
        )
    connection = connections[using]
    with transaction.atomic(using=using):
        count, saved = _restore_rows(objects, using=using)
        connection.check_constraints(table_names=[model._meta.db_table for model in written_models])
        statements = connection.ops.sequence_reset_sql(no_style(), written_models)
        if statements:
            with connection.cursor() as cursor:
                for statement in statements:
                    cursor.execute(statement)
        for file in files:
            restore_file(saved[(file.label, file.pk)], field=file.field, content=file.content, using=using)
    if not connection.in_atomic_block:  # committed: the files have been written (or have failed)
        _check_stored(files, count=count, using=using)
    return count


def _matched(model: type[Model]) -> bool:
    declaration = exports.declaration_for(model)
    return declaration is not None and declaration.match_by_natural_key


def _restore_rows(objects: list[dict[str, Any]], *, using: str) -> tuple[int, dict[tuple[str, str], Any]]:
    """Save every row of the bundle (references may point forward); the count and the rows by (label, pk)."""
    connection = connections[using]
    saved: dict[tuple[str, str], Any] = {}
    count = 0
    with connection.constraint_checks_disabled():
        deferred = []
        for restored in serializers.deserialize(
            "python", objects, using=using, handle_forward_references=True
        ):
            restored.save(using=using)
            if restored.deferred_fields:
                deferred.append(restored)
            saved[(restored.object._meta.label_lower, str(restored.object.pk))] = restored.object
            count += 1
        for restored in deferred:
            restored.save_deferred_fields(using=using)
    return count, saved


def _check_stored(files: list[_File], *, count: int, using: str) -> None:
    """Every restored file is in its storage with its bytes; BundleError naming those that are not."""
    failed = []
    for file in files:
        model = apps.get_model(file.label)
        storage = model._meta.get_field(file.field).storage
        name = (
            model._default_manager.using(using).filter(pk=file.pk).values_list(file.field, flat=True).first()
        )
        stored = bool(name) and storage.exists(name)
        if stored:
            with storage.open(name, "rb") as handle:
                stored = hashlib.sha256(handle.read()).hexdigest() == file.sha256
        if not stored:
            failed.append(f"{file.name!r} of {file.label} {file.pk}")
    if failed:
        raise BundleError(
            f"Restored {count} rows, but could not store these files (their rows name files that are "
            f"missing; the log says why): {', '.join(failed)}."
        )
