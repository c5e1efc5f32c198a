"""The part catalogue and the suppliers: every part and supplier is created and changed here, audited."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from inventory.choices import PartCategory
from inventory.countries import check_country
from inventory.models import Part, Supplier
from werkbank.audit import audit
from werkbank.errors import InvalidInput
from werkbank.types import Actor

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
    "list_price",
    "preferred_supplier",
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
def part_create(*, actor: Actor, **values: Any) -> Part:
    """Add a part to the catalogue."""
    unknown = set(values) - set(PART_FIELDS)
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not a part field.")
    _check_part(values)
    part = Part.objects.create(**values)
    audit(actor=actor, verb="part.create", obj=part, after={"category": part.category, "mpn": part.mpn})
    return part


@transaction.atomic
def part_update(*, part: Part, actor: Actor, **values: Any) -> Part:
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


# --- Suppliers -----------------------------------------------------------------------------------------

SUPPLIER_FIELDS = ("name", "vat_id", "country", "contact_name", "contact_email")


@transaction.atomic
def supplier_create(*, actor: Actor, name: str, country: str, **values: Any) -> Supplier:
    """Register a supplier; its EU membership follows from the country."""
    country = check_country("country", country)
    if Supplier.objects.filter(name=name).exists():
        raise InvalidInput("name", f"a supplier named {name!r} already exists.")
    supplier = Supplier.objects.create(name=name, country=country, **values)
    audit(actor=actor, verb="supplier.create", obj=supplier, after={"country": country, "eu": supplier.is_eu})
    return supplier


@transaction.atomic
def supplier_update(*, supplier: Supplier, actor: Actor, **values: Any) -> Supplier:
    locked = Supplier.objects.select_for_update().get(pk=supplier.pk)
    if "country" in values:
        values["country"] = check_country("country", values["country"])
    if "name" in values and Supplier.objects.exclude(pk=locked.pk).filter(name=values["name"]).exists():
        raise InvalidInput("name", f"a supplier named {values['name']!r} already exists.")
    before = {key: getattr(locked, key) for key in values}
    for key, value in values.items():
        setattr(locked, key, value)
    if values:
        locked.save(update_fields=list(values))
    audit(actor=actor, verb="supplier.update", obj=locked, before=before, after=values)
    return locked
