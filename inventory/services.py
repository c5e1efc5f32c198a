"""Inventory services: the part catalogue."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from inventory.choices import PartCategory
from inventory.models import Part
from werkbank.audit import audit
from werkbank.errors import InvalidInput

PART_FIELDS = (
    "category",
    "manufacturer",
    "mpn",
    "name",
    "vram_gb",
    "tdp_w",
    "pcie_gen",
    "pcie_lanes",
    "u_height",
    "specs",
)


def _check_part(values: dict[str, Any], *, exclude_pk: int | None = None) -> None:
    category = values.get("category")
    if values.get("vram_gb") is not None and category != PartCategory.GPU:
        raise InvalidInput("vram_gb", "only a GPU has VRAM.")
    if values.get("u_height") is not None and category != PartCategory.CHASSIS:
        raise InvalidInput("u_height", "only a chassis has a U height.")
    duplicates = Part.objects.filter(manufacturer=values["manufacturer"], mpn=values["mpn"])
    if exclude_pk is not None:
        duplicates = duplicates.exclude(pk=exclude_pk)
    if duplicates.exists():
        raise InvalidInput("mpn", f"{values['manufacturer']} {values['mpn']} is already in the catalogue.")


@transaction.atomic
def part_create(*, actor: Any, **values: Any) -> Part:
    """Add a part to the catalogue."""
    unknown = set(values) - set(PART_FIELDS)
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not a part field.")
    _check_part(values)
    part = Part.objects.create(**values)
    audit(actor=actor, verb="part.create", obj=part, after={"category": part.category, "mpn": part.mpn})
    return part


@transaction.atomic
def part_update(*, part: Part, actor: Any, **values: Any) -> Part:
    """Change a catalogue entry."""
    locked = Part.objects.select_for_update().get(pk=part.pk)
    unknown = set(values) - set(PART_FIELDS)
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not a part field.")
    before = {key: getattr(locked, key) for key in values}
    for key, value in values.items():
        setattr(locked, key, value)
    _check_part({field: getattr(locked, field) for field in PART_FIELDS}, exclude_pk=locked.pk)
    if values:
        locked.save(update_fields=list(values))
    audit(actor=actor, verb="part.update", obj=locked, before=before, after=values)
    return locked
