"""The registry of what an order's export carries (werkbank/exports.py): every model of every app is carried
or left out with a reason, a carried row points only at rows a bundle can hold, and a forgotten model stops
the export instead of vanishing from it."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import models

from tests.builds.bench_rig import bench  # noqa: F401  (the bench fixture)
from tests.ops.export_rig import project_models
from warranty.exports import register_exports as register_warranty_exports
from warranty.models import HandoverPack
from werkbank import exports


def _references(model: type[models.Model]) -> list[type[models.Model]]:
    fields = [*model._meta.concrete_fields, *model._meta.many_to_many]
    return [field.related_model for field in fields if field.is_relation]


def test_every_model_of_every_app_is_carried_or_left_out_with_a_reason():
    assert len(project_models()) > 40  # every app's models, not an empty list
    assert exports.undeclared(project_models()) == []
    assert exports.undeclared() == []  # the exporter's own check sees the same apps
    left_out = exports.left_out()
    for model in project_models():
        declaration = exports.declaration_for(model)
        assert declaration is not None and not declaration.referred, model._meta.label
        if not declaration.carried:
            assert declaration.reason and declaration.reason in left_out, model._meta.label


def test_a_carried_row_points_only_at_rows_a_bundle_can_hold():
    carried = [declaration for declaration in exports.declarations() if declaration.carried]
    for declaration in carried:
        for target in _references(declaration.model):
            target_declaration = exports.declaration_for(target)
            assert target_declaration is not None, (declaration.label, target._meta.label)
            assert target_declaration.carried or target_declaration.referred, (
                declaration.label,
                target._meta.label,
            )


def test_a_model_carried_without_a_finder_is_reached_by_a_reference():
    carried = [declaration for declaration in exports.declarations() if declaration.carried]
    referenced = {target for declaration in carried for target in _references(declaration.model)}
    for declaration in carried:
        if declaration.found is None:
            assert declaration.model in referenced, declaration.label
    assert exports.declaration_for(get_user_model()).withheld  # the password hashes stay behind


@pytest.mark.django_db
def test_a_forgotten_model_stops_the_export(bench, tmp_path):  # noqa: F811
    exports.unregister(HandoverPack)
    try:
        assert exports.undeclared(project_models()) == ["warranty.HandoverPack"]
        with pytest.raises(CommandError, match=r"no export declaration.*warranty\.HandoverPack"):
            call_command("export-order", bench.order.reference, "--output", str(tmp_path / "b.json"))
    finally:
        register_warranty_exports()
    assert exports.undeclared(project_models()) == []
    call_command(
        "export-order", bench.order.reference, "--output", str(tmp_path / "b.json"), stderr=StringIO()
    )
