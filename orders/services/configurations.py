"""Server configurations: a bill of materials and a PSU layout, created and edited by PMs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction

from inventory.models import Part
from orders.choices import (
    OrderStatus,
)
from orders.models import (
    ConfigurationLine,
    ServerConfiguration,
)
from werkbank.audit import audit
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor


def _check_psu_layout(*, psu_count: int, psu_rating_w: int, psu_redundant: int) -> None:
    if psu_count < 1:
        raise InvalidInput("psu_count", "must be at least 1.")
    if psu_rating_w < 1:
        raise InvalidInput("psu_rating_w", "must be a positive number of watts.")
    if not 0 <= psu_redundant < psu_count:
        raise InvalidInput(
            "psu_redundant", f"must be at least 0 and fewer than the {psu_count} installed PSUs."
        )


def _replace_lines(
    configuration: ServerConfiguration, lines: Iterable[tuple[Part, int]]
) -> list[dict[str, Any]]:
    seen: set[int] = set()
    rows = []
    for part, quantity in lines:
        if part.pk in seen:
            raise InvalidInput(
                "lines", f"part {part.mpn} is listed twice; give it once with its total quantity."
            )
        if quantity < 1:
            raise InvalidInput("lines", f"quantity of {part.mpn} must be at least 1.")
        seen.add(part.pk)
        rows.append(ConfigurationLine(configuration=configuration, part=part, quantity=quantity))
    if not rows:
        raise InvalidInput("lines", "a configuration needs at least one bill-of-materials line.")
    configuration.lines.all().delete()
    ConfigurationLine.objects.bulk_create(rows)
    return [{"part": row.part.mpn, "quantity": row.quantity} for row in rows]


def _check_burnin_hours(burnin_hours: int) -> None:
    if burnin_hours < 72:
        raise InvalidInput("burnin_hours", "must be at least 72: every customer is promised 72 h of burn-in.")


@transaction.atomic
def configuration_create(
    *,
    actor: Actor,
    name: str,
    psu_count: int,
    psu_rating_w: int,
    lines: Iterable[tuple[Part, int]],
    psu_redundant: int | None = None,
    description: str = "",
    burnin_hours: int = 72,
) -> ServerConfiguration:
    """Create a configuration with its bill of materials; `psu_redundant` defaults as the model's (N+1),
    `burnin_hours` (the burn-in every server of it gets) to seed 001's 72 h, the least it may be."""
    _check_burnin_hours(burnin_hours)
    if psu_redundant is None:
        psu_redundant = ServerConfiguration._meta.get_field("psu_redundant").get_default()
    _check_psu_layout(psu_count=psu_count, psu_rating_w=psu_rating_w, psu_redundant=psu_redundant)
    if ServerConfiguration.objects.filter(name=name).exists():
        raise InvalidInput("name", f"a configuration named {name!r} already exists.")
    configuration = ServerConfiguration.objects.create(
        name=name,
        description=description,
        psu_count=psu_count,
        psu_rating_w=psu_rating_w,
        psu_redundant=psu_redundant,
        burnin_hours=burnin_hours,
    )
    bom = _replace_lines(configuration, lines)
    audit(
        actor=actor,
        verb="configuration.create",
        obj=configuration,
        after={"psu": f"{psu_count}x{psu_rating_w}W N+{psu_redundant}", "lines": bom},
    )
    return configuration


@transaction.atomic
def configuration_update(
    *,
    configuration: ServerConfiguration,
    actor: Actor,
    lines: Iterable[tuple[Part, int]] | None = None,
    **fields: Any,
) -> ServerConfiguration:
    """Change a configuration. Once an order past draft uses it, it is frozen: copy it instead."""
    locked = ServerConfiguration.objects.select_for_update().get(pk=configuration.pk)
    committed = list(
        locked.orders.exclude(status__in=[OrderStatus.DRAFT, OrderStatus.CANCELLED]).values_list(
            "reference", flat=True
        )
    )
    if committed:
        raise RuleViolation(
            f"Configuration {locked.name} is used by orders past draft ({', '.join(committed)}); "
            "copy it into a new configuration instead of changing it.",
            code="configuration_frozen",
        )
    allowed = {"name", "description", "psu_count", "psu_rating_w", "psu_redundant", "burnin_hours"}
    unknown = set(fields) - allowed
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "cannot be changed here.")
    if "burnin_hours" in fields:
        _check_burnin_hours(fields["burnin_hours"])
    before = {key: getattr(locked, key) for key in fields}
    for key, value in fields.items():
        setattr(locked, key, value)
    _check_psu_layout(
        psu_count=locked.psu_count, psu_rating_w=locked.psu_rating_w, psu_redundant=locked.psu_redundant
    )
    if (
        "name" in fields
        and ServerConfiguration.objects.exclude(pk=locked.pk).filter(name=locked.name).exists()
    ):
        raise InvalidInput("name", f"a configuration named {locked.name!r} already exists.")
    after: dict[str, Any] = dict(fields)
    if fields:
        locked.save(update_fields=list(fields))
    if lines is not None:
        before["lines"] = [{"part": line.part.mpn, "quantity": line.quantity} for line in locked.lines.all()]
        after["lines"] = _replace_lines(locked, lines)
    audit(actor=actor, verb="configuration.update", obj=locked, before=before, after=after)
    return locked
