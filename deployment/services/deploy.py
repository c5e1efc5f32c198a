"""burn_in_passed → deployed: a server goes live once it passed burn-in, stands in a rack and is reachable."""

from __future__ import annotations

from django.db import transaction

from builds.choices import ServerStatus
from builds.models import Server
from builds.services import lock_server, server_transition
from deployment.models import RackPlacement
from deployment.selectors import deploy_missing
from werkbank.audit import audit
from werkbank.errors import RuleViolation
from werkbank.types import Actor


@transaction.atomic
def server_deploy(*, server: Server, actor: Actor, note: str = "") -> Server:
    """Deploy a server: refused (409, everything missing at once) unless it has passed burn-in, has a rack
    placement and a network record. Moves through the builds transition (`server.deploy`) and audits
    `deployment.deploy` with where it went."""
    locked = lock_server(server)
    missing = deploy_missing(server=locked)  # none for a deployed server: the transition map refuses it
    if missing:
        raise RuleViolation(
            f"Server {locked.hostname} cannot be deployed yet: {' '.join(missing)}",
            missing=missing,
            code="deploy_missing",
        )
    deployed = server_transition(
        server=locked, actor=actor, target=ServerStatus.DEPLOYED, verb="deploy", note=note
    )
    placement = RackPlacement.objects.select_related("rack__site").get(server=deployed)
    audit(
        actor=actor,
        verb="deployment.deploy",
        obj=deployed,
        after={
            "site": placement.rack.site.name,
            "rack": placement.rack.name,
            "lowest_u": placement.lowest_u,
            "top_u": placement.top_u,
            "management_ip": deployed.network.management_ip,
        },
        note=note,
    )
    return deployed
