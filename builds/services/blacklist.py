"""The connector blacklist: a faulty connector stays unused for the machine's whole life (seed 003)."""

from __future__ import annotations

from django.db import transaction

from builds.models import (
    BuildPhoto,
    Connector,
    ConnectorBlacklist,
    Installation,
)
from builds.services.installation import server_move
from builds.services.servers import lock_server
from builds.signals import connector_blacklisted
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor


@transaction.atomic
def connector_blacklist(
    *,
    connector: Connector,
    actor: Actor,
    reason: str,
    evidence: str = "",
    measurements: dict | None = None,
    photo: BuildPhoto | None = None,
    target_connector_name: str = "",
) -> ConnectorBlacklist:
    """Blacklist a faulty connector for the machine's whole life (seed 003). An occupied connector needs a
    free target connector: its component moves there in the same transaction. There is no way back."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "say why the connector is faulty.")
    server = lock_server(connector.server)
    locked = Connector.objects.select_for_update().get(pk=connector.pk)
    existing = ConnectorBlacklist.objects.filter(connector=locked).first()
    if existing is not None:
        raise RuleViolation(
            f'Connector {locked.name} is already blacklisted: "{existing.reason}".', code="blacklisted"
        )
    if photo is not None and photo.server_id != server.pk:
        raise InvalidInput("photo", "the photo belongs to another server.")
    occupant = Installation.objects.active().filter(connector=locked).select_related("component").first()
    moved_to = ""
    if occupant is not None:
        if not (target_connector_name or "").strip():
            raise RuleViolation(
                f"Connector {locked.name} holds {occupant.component.serial}: "
                "name a free target connector to move "
                "it to before blacklisting.",
                missing=["a free target connector"],
                code="connector_occupied",
            )
        moved = server_move(
            server=server,
            actor=actor,
            component=occupant.component,
            to_connector_name=target_connector_name,
            reason=f"Connector {locked.name} blacklisted: {reason}",
        )
        moved_to = moved.connector.name
    blacklist = ConnectorBlacklist.objects.create(
        connector=locked,
        reason=reason,
        evidence=evidence,
        measurements=measurements or {},
        photo=photo,
        created_by=user_or_none(actor),
    )
    audit(
        actor=actor,
        verb="server.blacklist_connector",
        obj=server,
        after={
            "connector": locked.name,
            "reason": reason,
            "measurements": measurements or {},
            "moved": {"serial": occupant.component.serial, "to": moved_to} if occupant else None,
        },
        note=evidence,
    )
    connector_blacklisted.send(sender=ConnectorBlacklist, blacklist=blacklist, actor=actor)
    return blacklist
