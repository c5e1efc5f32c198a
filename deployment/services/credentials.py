"""BMC credentials handed over (issue #28, item 3): revealed to the customer's members, rotated by a PM.

The credentials are stored only as a Fernet token (`werkbank.secrets`, the same JSON as `network_set`
writes). They leave the database decrypted in exactly one place: the answer to a customer member's reveal,
after the member has typed the password again. Each reveal is audited on the server
(`deployment.bmc_reveal`: who, when, from which client address); a rotation is audited
(`deployment.bmc_rotate`) and, once the server is handed over, the customer is told by e-mail that the
credentials changed and where to reveal them. No audit row, e-mail, pack or log line carries them.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.db import transaction
from django.urls import reverse

from builds.choices import ServerStatus
from builds.models import Server
from builds.services import lock_server
from deployment.models import ServerNetwork
from orders.models import StatusNotice
from orders.services import notice_send_once
from werkbank.access import Purpose, is_pm
from werkbank.audit import audit, user_or_none
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.models import AuditEvent, member_organizations
from werkbank.secrets import decrypt, encrypt
from werkbank.services import organization_recipients
from werkbank.tasks import enqueue_on_commit
from werkbank.types import Actor

REVEAL_VERB = "deployment.bmc_reveal"
ROTATE_VERB = "deployment.bmc_rotate"
#: What a wrong password answers; the portal shows it (translated) beside the password field.
WRONG_PASSWORD = "The password is not correct."


def _member_server(*, server: Server, actor: Actor) -> Server:
    """The server, if `actor` is a member of its order's customer (not a PM, not its partner): else 404."""
    found = None
    if not is_pm(actor):
        found = (
            Server.objects.visible_to(actor, purpose=Purpose.VIEW)
            .filter(
                pk=server.pk,
                order__customer__in=member_organizations(actor, kind=OrganizationKind.CUSTOMER),
            )
            .select_related("order__customer")
            .first()
        )
    if found is None:
        raise UnknownObject("server", "No such server.")
    return found


def _revealable(server: Server) -> ServerNetwork:
    """The server's network record with stored credentials, once it is handed over; else a 409."""
    if server.status != ServerStatus.HANDED_OVER:
        raise RuleViolation(
            f"Server {server.hostname} is not handed over yet; its BMC credentials are revealed from the "
            "handover on.",
            missing=[f"server {server.hostname} handed over"],
            code="bmc_not_handed_over",
        )
    network = ServerNetwork.objects.filter(server=server).first()
    if network is None or not network.bmc_credentials:
        raise RuleViolation(
            f"Server {server.hostname} has no BMC credentials on record.",
            missing=[f"BMC credentials of server {server.hostname}"],
            code="bmc_no_credentials",
        )
    return network


def _password_matches(*, actor: Actor, password: str, request: Any) -> bool:
    """Whether `password` is the actor's, checked as a login: with the request, django-axes counts a wrong
    one toward the lockout and refuses while the user is locked out at this address (its middleware then
    answers 429); without one (a shell, a test) only the password is checked."""
    member = user_or_none(actor)
    if not password or member is None:
        return False
    user = authenticate(request, username=member.get_username(), password=password)
    return user is not None and user.pk == member.pk


def bmc_credentials_reveal(
    *, server: Server, actor: Actor, password: str, client_ip: str | None, request: Any = None
) -> dict[str, str]:
    """The server's BMC credentials, `{"username", "password"}`, for a member of its order's customer who
    typed the password again; audited as `deployment.bmc_reveal` with the client address.

    Anyone else (another customer, its assembly partner, a PM, an anonymous caller) gets a 404, as for a
    server it does not have. Before the handover, or without stored credentials: 409. A wrong password:
    400 on `password`, nothing revealed, nothing audited here (the login audit and axes record the failed
    attempt). Each call needs the password: nothing is remembered between reveals.

    The password is checked before the transaction, so that axes' failure count is not rolled back with
    the refusal; call it outside a transaction for the same reason.
    """
    found = _member_server(server=server, actor=actor)
    _revealable(found)
    member = user_or_none(actor)
    if member is None:  # _member_server lets through only a signed-in member; this tells mypy
        raise UnknownObject("server", "No such server.")
    if not _password_matches(actor=actor, password=password, request=request):
        raise InvalidInput("password", WRONG_PASSWORD)
    with transaction.atomic():
        locked = lock_server(found)
        network = _revealable(locked)
        stored = json.loads(decrypt(network.bmc_credentials))
        audit(
            actor=actor,
            verb=REVEAL_VERB,
            obj=locked,
            after={"user": member.get_username(), "ip": client_ip or ""},
        )
    return {"username": stored.get("username", ""), "password": stored.get("password", "")}


def _credential(field: str, value: str) -> str:
    if not value or not value.strip():
        raise InvalidInput(field, "required: a rotation stores a new username and password.")
    if len(value) > 256 or "\x00" in value:
        raise InvalidInput(field, "at most 256 characters, no NUL.")
    return value


@transaction.atomic
def bmc_credentials_rotate(*, server: Server, actor: Actor, username: str, password: str) -> ServerNetwork:
    """A PM stores new BMC credentials for a server (after changing them on the BMC), encrypted as
    `network_set` stores them; audited as `deployment.bmc_rotate`, never with the credentials.

    Once the server is handed over, its customer's members and contact address are told by e-mail (a task
    on commit, once per rotation) that the credentials changed and can be revealed in the portal; the mail
    carries no credentials. Only PMs rotate (409 otherwise); a server without a network record is a 409.
    """
    if not is_pm(actor):
        raise RuleViolation(
            "Only project managers rotate BMC credentials.",
            missing=["a project manager's decision"],
            code="pm_only",
        )
    username, password = _credential("username", username), _credential("password", password)
    locked = lock_server(server)
    network = ServerNetwork.objects.select_for_update().filter(server=locked).first()
    if network is None:
        raise RuleViolation(
            f"Server {locked.hostname} has no network record; record its BMC address first.",
            missing=[f"a network record of server {locked.hostname}"],
            code="bmc_no_network",
        )
    had = bool(network.bmc_credentials)
    network.bmc_credentials = encrypt(json.dumps({"username": username, "password": password}))
    network.updated_by = user_or_none(actor)
    network.save(update_fields=["bmc_credentials", "updated_by", "updated_at"])
    tell = locked.status == ServerStatus.HANDED_OVER
    event = audit(
        actor=actor,
        verb=ROTATE_VERB,
        obj=locked,
        before={"bmc_credentials": "set" if had else "none"},
        after={"bmc_credentials": "set", "customer_told": tell},
    )
    if tell:
        enqueue_on_commit("deployment.tasks.bmc_rotated_notify_task", event_id=event.pk)
    return network


@transaction.atomic
def bmc_rotated_notice_send(*, event_id: int) -> StatusNotice | None:
    """E-mail the customer of the server once about one `deployment.bmc_rotate` event: that the BMC
    credentials changed and where to reveal them; the notice row, unique per event, makes a repeated task
    send nothing."""
    event = AuditEvent.objects.get(pk=event_id, verb=ROTATE_VERB)
    server = Server.objects.select_related("order__customer").get(pk=int(event.object_id))
    customer = server.order.customer
    language = customer.language if customer.language in ("en", "de") else "en"

    def context() -> dict[str, Any]:
        return {
            "server": server,
            "order": server.order,
            "when": event.created_at,
            "portal_url": settings.WERKBANK_PUBLIC_URL
            + reverse("portal:server-bmc-credentials", args=[server.pk]),
        }

    return notice_send_once(
        event=event,
        order=server.order,
        recipients=organization_recipients(customer),
        language=language,
        template="bmc_rotated",
        context=context,
    )
