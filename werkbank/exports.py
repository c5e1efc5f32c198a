"""What an order's export carries: each app declares it for its own models (a registry, as the gates are).

The export of one order (`manage.py export-order`, in `ops`) writes every row that makes up the order's
record. The core knows no app, so each app says, in its `AppConfig.ready()`, how its rows of one order are
found:

    from werkbank import exports

    exports.carry(Server, found=lambda record: Server.objects.filter(order=record.order))
    exports.carry(Connector, found=lambda record: Connector.objects.filter(server__in=record.pks(Server)))
    exports.carry(Part)  # only the parts a carried row points at
    exports.leave_out(TelemetrySample, reason="the raw telemetry samples (millions of rows …)")

Rules:
- Every model of every app has one declaration: carried or left out. The exporter refuses to write a
  bundle while a model of the project's apps has none (`undeclared`), and a test walks every model of every
  app, so a new model cannot be dropped from the export unnoticed.
- A carried model's rows are those its `found` returns, and every row that a carried row points at
  (foreign keys and many-to-many): the exporter follows the references itself. `found` reads the record as
  collected so far (`record.order`, `record.pks(model)`, `record.of(model)`); the exporter asks every
  declaration again, and follows the references again, until nothing new turns up. So declarations need no
  order among themselves, and each may build on the rows of any other.
- A left-out model is never exported; its `reason` goes into the bundle's `left_out`, which says what the
  bundle does not hold. A carried row must not point at a left-out one (the restore could not load it).
- The files of a carried row (its FileFields) travel with it. `withheld` fields are exported with a stand-in
  value instead of their own (users' password hashes), and their reason goes into `left_out` too.
- `numbered_by` names a field that holds a reference from `werkbank.services.next_reference`
  (WB-2026-0001): the number sequence it was taken from travels with the row, so that new numbers after a
  restore do not clash.
- Rows the migrations create (content types, permissions) are `referred` to by natural key and never
  exported; `match_by_natural_key` rows (groups) are exported without their ids and matched on restore.

Registering a model again replaces its declaration, so a `ready()` that runs twice adds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from django.apps import apps
from django.conf import settings
from django.db import models


class Record(Protocol):
    """The rows of one order's record as collected so far (the exporter's collector)."""

    order: models.Model

    def of(self, model: type[models.Model]) -> list[models.Model]: ...

    def pks(self, model: type[models.Model]) -> list[Any]: ...

    def models(self) -> set[type[models.Model]]: ...


Finder = Callable[[Record], Iterable[models.Model]]


@dataclass(frozen=True)
class Declaration:
    """What an order's export does with one model's rows: `carried` (found by `found` and by the references
    of carried rows), left out (with the `reason` the bundle gives), or `referred` to by natural key."""

    model: type[models.Model]
    carried: bool
    found: Finder | None = None
    reason: str = ""
    referred: bool = False
    match_by_natural_key: bool = False
    withheld: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    numbered_by: str = ""

    @property
    def label(self) -> str:
        return self.model._meta.label_lower


_REGISTRY: dict[str, Declaration] = {}


def _register(declaration: Declaration) -> Declaration:
    _REGISTRY[declaration.label] = declaration
    return declaration


def carry(
    model: type[models.Model],
    *,
    found: Finder | None = None,
    match_by_natural_key: bool = False,
    withheld: Mapping[str, tuple[Any, str]] | None = None,
    numbered_by: str = "",
) -> Declaration:
    """Carry `model`'s rows: those `found` returns for a record (none: only the rows carried rows point
    at). `withheld` maps a field to (the value exported instead, the reason `left_out` gives)."""
    return _register(
        Declaration(
            model=model,
            carried=True,
            found=found,
            match_by_natural_key=match_by_natural_key,
            withheld=dict(withheld or {}),
            numbered_by=numbered_by,
        )
    )


def leave_out(model: type[models.Model], *, reason: str) -> Declaration:
    """Never export `model`'s rows; `reason` says in the bundle what is missing and why."""
    if not reason:
        raise ValueError(f"Leaving out {model._meta.label} needs a reason for the bundle.")
    return _register(Declaration(model=model, carried=False, reason=reason))


def refer(model: type[models.Model]) -> Declaration:
    """Rows the migrations create in every database: never exported, referred to by natural key."""
    return _register(Declaration(model=model, carried=False, referred=True))


def unregister(model: type[models.Model]) -> None:
    """Forget a model's declaration (for tests that show what a forgotten one does)."""
    _REGISTRY.pop(model._meta.label_lower, None)


def declaration_for(model: type[models.Model]) -> Declaration | None:
    return _REGISTRY.get(model._meta.label_lower)


def declarations() -> list[Declaration]:
    """Every declaration, in registration order (the apps' `ready()`, bottom to top)."""
    return list(_REGISTRY.values())


def local_models() -> list[type[models.Model]]:
    """The models of this project's apps: those whose package sits at the repository's top
    (settings.BASE_DIR), not Django's or a library's (which an in-repository virtualenv holds deeper)."""
    root = Path(settings.BASE_DIR).resolve()
    return [
        model
        for app_config in apps.get_app_configs()
        if Path(app_config.path).resolve().parent == root
        for model in app_config.get_models()
    ]


def undeclared(candidates: Iterable[type[models.Model]] | None = None) -> list[str]:
    """The labels of the models among `candidates` (by default every model of the project's apps) that no
    app has declared. The exporter refuses to write a bundle while there is one."""
    models_ = local_models() if candidates is None else candidates
    return sorted(model._meta.label for model in models_ if declaration_for(model) is None)


def left_out() -> list[str]:
    """What no bundle holds, as the bundle's `left_out` says it: the left-out models' and withheld fields'
    reasons, in registration order."""
    reasons: list[str] = []
    for declaration in declarations():
        reasons += [declaration.reason] if declaration.reason else []
        reasons += [reason for _value, reason in declaration.withheld.values()]
    return reasons


#: A reference from `werkbank.services.next_reference`: prefix and year.
_REFERENCE = re.compile(r"^([A-Z]+)-([0-9]{4})-")


def register_exports() -> None:
    """The core's own rows, and Django's that they point at."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    from werkbank.models import AuditEvent, Membership, NumberSequence, Organization, TaskOutbox

    user_model = get_user_model()
    refer(ContentType)
    refer(Permission)
    carry(
        user_model,
        withheld={
            "password": (
                UNUSABLE_PASSWORD_PREFIX,
                "users' password hashes (restored users have an unusable password)",
            )
        },
    )
    carry(
        Group,
        found=lambda record: Group.objects.filter(user__in=record.pks(user_model)).distinct(),
        match_by_natural_key=True,
    )
    carry(Organization)
    carry(
        Membership,
        found=lambda record: Membership.objects.filter(
            user__in=record.pks(user_model), organization__in=record.pks(Organization)
        ),
    )
    carry(AuditEvent, found=_audit_events)
    carry(NumberSequence, found=_number_sequences)
    leave_out(
        TaskOutbox,
        reason="werkbank.TaskOutbox rows (Celery tasks the exporting system had still to publish: its work, "
        "not the order's record)",
    )


def _audit_events(record: Record) -> Iterable[models.Model]:
    """The audit events of every row of the record."""
    from django.contrib.contenttypes.models import ContentType

    from werkbank.models import AuditEvent

    events: list[models.Model] = []
    for model in record.models():
        if model is AuditEvent:
            continue
        content_type = ContentType.objects.get_for_model(model)
        pks = [str(pk) for pk in record.pks(model)]
        events += AuditEvent.objects.filter(content_type=content_type, object_id__in=pks)
    return events


def _number_sequences(record: Record) -> Iterable[models.Model]:
    """The number sequences the record's references were taken from."""
    from werkbank.models import NumberSequence

    keys: set[tuple[str, int]] = set()
    for declaration in declarations():
        if not declaration.numbered_by:
            continue
        for obj in record.of(declaration.model):
            match = _REFERENCE.match(str(getattr(obj, declaration.numbered_by)))
            if match:
                keys.add((match.group(1), int(match.group(2))))
    return [
        row
        for prefix, year in sorted(keys)
        for row in NumberSequence.objects.filter(prefix=prefix, year=year)
    ]
