"""A handed-over order with a ready handover pack, exported and restored into an empty database and an empty
file storage: every table comes back with the same rows (ids and field values), and every stored file with
the same bytes (the pack's PDF and ZIP matching the SHA-256 its row recorded)."""

from __future__ import annotations

import base64
import hashlib
import json
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.core.management import CommandError, call_command
from django.db import models

from builds.models import Server
from orders.models import Order
from tests.builds.bench_rig import bench, built  # noqa: F401  (the bench fixture and its builder)
from tests.ops.export_rig import project_models, rich_order
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from warranty.services.packs import pack_generate, pack_request

pytestmark = pytest.mark.django_db(transaction=True)


def _handed_over_order(built: Any) -> tuple[Order, HandoverPack]:  # noqa: F811
    """The rich order with a rendered, ready pack for its built server, and the order handed over."""
    order = rich_order(built)
    server = built[0].server
    pack, _ = pack_request(server=server, actor=built[0].t.pm)  # rendered in-process on commit (eager)
    pack.refresh_from_db()
    if pack.status != PackStatus.READY:
        pack = pack_generate(pack_id=pack.pk) or pack
    Server.objects.filter(order=order).update(status="handed_over")
    Order.objects.filter(pk=order.pk).update(status="handed_over")
    pack.refresh_from_db()
    assert pack.status == PackStatus.READY and pack.pdf.name and pack.zip.name
    return order, pack


def _tables() -> list[type[models.Model]]:
    return [*project_models(), get_user_model()]


def _row(model: type[models.Model], obj: Any) -> tuple[Any, ...]:
    """A row's ids and field values; content types by natural key (ids may differ between databases), the
    password apart (the bundle withholds it), and its many-to-many targets (groups by name)."""
    values: list[Any] = []
    for field in model._meta.concrete_fields:
        value = getattr(obj, field.attname)
        if field.is_relation and field.related_model is ContentType and value is not None:
            value = ContentType.objects.get_for_id(value).natural_key()
        if field.name != "password":
            values.append((field.name, value))
    for field in model._meta.many_to_many:
        targets = getattr(obj, field.name).all()
        if field.related_model is Group:
            values.append((field.name, sorted(group.name for group in targets)))
        else:
            values.append((field.name, sorted(target.pk for target in targets)))
    return tuple(values)


def _snapshot(pks: dict[str, set[Any]] | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows (or only those whose ids `pks` names, per model label), in key order."""
    snapshot = {}
    for model in _tables():
        rows = model._base_manager.order_by("pk")
        if pks is not None:
            rows = rows.filter(pk__in=pks.get(model._meta.label_lower, set()))
        snapshot[model._meta.label] = [_row(model, obj) for obj in rows]
    return snapshot


def _stored_files() -> dict[tuple[str, Any, str], tuple[str, str]]:
    """(label, pk, field) → (name, SHA-256) of every stored file that a row of the tables names."""
    files = {}
    for model in _tables():
        for field in model._meta.concrete_fields:
            if isinstance(field, models.FileField):
                for obj in model._base_manager.exclude(**{field.name: ""}):
                    name = getattr(obj, field.name).name
                    with field.storage.open(name, "rb") as stored:
                        digest = hashlib.sha256(stored.read()).hexdigest()
                    files[(model._meta.label, obj.pk, field.name)] = (name, digest)
    return files


def _delete_files(files: dict[tuple[str, Any, str], tuple[str, str]]) -> None:
    for (label, _pk, field), (name, _digest) in files.items():
        storage = apps.get_model(label)._meta.get_field(field).storage
        storage.delete(name)
        assert not storage.exists(name)


def test_a_handed_over_order_with_its_pack_comes_back_whole(built, tmp_path_factory):  # noqa: F811
    order, pack = _handed_over_order(built)
    path = tmp_path_factory.mktemp("bundle") / "order.json"
    call_command("export-order", order.reference, "--output", str(path), stderr=StringIO())
    bundle = json.loads(path.read_text())
    assert not [line for line in bundle["left_out"] if "missing from the storage" in line]

    pks: dict[str, set[Any]] = {}
    for item in bundle["objects"]:
        pks.setdefault(item["model"], set()).add(item.get("pk"))
    before = _snapshot(pks)
    assert before["warranty.HandoverPack"] and before["builds.BuildPhoto"] and before["burnin.BurnInRun"]
    assert before["orders.Order"] == _snapshot({"orders.order": {order.pk}})["orders.Order"]
    files = {key: value for key, value in _stored_files().items() if key[1] in pks.get(key[0].lower(), set())}
    assert {key[0] for key in files} >= {"warranty.HandoverPack", "builds.BuildPhoto", "burnin.BurnInRun"}
    assert files[("warranty.HandoverPack", pack.pk, "pdf")][1] == pack.pdf_sha256
    assert files[("warranty.HandoverPack", pack.pk, "zip")][1] == pack.zip_sha256
    assert len(bundle["files"]) == len(files)

    call_command("flush", interactive=False, verbosity=0)
    _delete_files(files)  # an empty storage too: the restore must bring every file back itself
    call_command("import-order", str(path), stdout=StringIO())

    assert _snapshot() == before  # every table: the same rows with the same ids and values, nothing more
    assert _stored_files() == files  # every file under its name, with its bytes
    restored = HandoverPack.objects.get(pk=pack.pk)
    assert hashlib.sha256(restored.zip.read()).hexdigest() == restored.zip_sha256
    assert all(user.password == UNUSABLE_PASSWORD_PREFIX for user in get_user_model().objects.all())


def test_a_damaged_file_is_refused_before_anything_is_written_and_a_bundle_without_files_still_reads(
    built,  # noqa: F811
    tmp_path_factory,
):
    rig, _step, photo = built
    path = tmp_path_factory.mktemp("bundle") / "order.json"
    call_command("export-order", rig.order.reference, "--output", str(path), stderr=StringIO())
    bundle = json.loads(path.read_text())
    [entry] = [item for item in bundle["files"] if item["model"] == "builds.buildphoto"]
    assert (entry["pk"], entry["name"]) == (photo.pk, photo.file.name)
    call_command("flush", interactive=False, verbosity=0)

    entry["content"] = base64.b64encode(b"not the photo").decode()
    path.write_text(json.dumps(bundle))
    with pytest.raises(CommandError, match="does not match its SHA-256"):
        call_command("import-order", str(path), stdout=StringIO())
    assert not Order.objects.exists()

    # A version 1 bundle from before files were carried: its rows come back, its files stay where they are.
    del bundle["files"]
    path.write_text(json.dumps(bundle))
    call_command("import-order", str(path), stdout=StringIO())
    assert Order.objects.filter(reference=rig.order.reference).exists()
