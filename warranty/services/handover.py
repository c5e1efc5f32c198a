"""Handing a server over to its customer, and the order that closes with its last server."""

from __future__ import annotations

from django.db import transaction

from builds.choices import ServerStatus
from builds.models import Server
from builds.services import lock_server, server_transition
from orders.choices import OrderStatus
from orders.models import Order
from orders.services import order_close, order_hand_over
from warranty.choices import PackStatus
from warranty.models import HandoverPack, WarrantyRecord
from warranty.selectors import hand_over_missing
from warranty.services.packs import pack_request
from warranty.services.records import warranty_records_create
from werkbank.errors import RuleViolation
from werkbank.tasks import enqueue_on_commit
from werkbank.types import Actor


@transaction.atomic
def server_hand_over(*, server: Server, actor: Actor, note: str = "") -> Server:
    """deployed → handed_over, once the server is deployed and a ready handover pack exists (a 409 lists
    every missing precondition at once).

    On commit the warranty records task creates the server's records (start: today) and asks for the pack
    revision that prints them (`handover_records_create`). When this was the
    order's last server not handed over, the order follows: deployment → handed_over → closed (the order
    map has no shortcut; both steps are audited and notified), or handed_over → closed.
    """
    locked = lock_server(server)
    missing = hand_over_missing(server=locked)
    if missing:
        raise RuleViolation(
            f"Server {locked.hostname} cannot be handed over yet. " + " ".join(missing),
            missing=missing,
            code="handover_incomplete",
        )
    handed = server_transition(
        server=locked, actor=actor, target=ServerStatus.HANDED_OVER, verb="hand_over", note=note
    )
    enqueue_on_commit("warranty.tasks.warranty_records_create_task", server_id=handed.pk)
    _close_order_when_complete(order=handed.order, actor=actor)
    return handed


def _close_order_when_complete(*, order: Order, actor: Actor) -> None:
    locked = Order.objects.select_for_update().get(pk=order.pk)
    if locked.servers.exclude(status=ServerStatus.HANDED_OVER).exists():
        return
    note = "Every server of the order is handed over."
    if locked.status == OrderStatus.DEPLOYMENT:
        locked = order_hand_over(order=locked, actor=actor, note=note)
    if locked.status == OrderStatus.HANDED_OVER:
        order_close(order=locked, actor=actor, note=note)


@transaction.atomic
def handover_records_create(*, server: Server) -> list[WarrantyRecord]:
    """After the handover (the task's service): the server's warranty records, and the pack revision that
    carries their dates, in every language the server has a ready pack in (the customer's, if none).

    The pack that the handover needed was made before it, so its warranty table says "from handover"; the
    customer is offered the newest revision. One transaction: the records and the revision's request commit
    together, and a repeated task creates no records and so asks for no revision.
    """
    records = warranty_records_create(server=server, actor=None)
    if records:
        ready = HandoverPack.objects.filter(server=server, status=PackStatus.READY)
        languages: list[str | None] = [*sorted(set(ready.values_list("language", flat=True)))]
        for language in languages or [None]:
            pack_request(server=server, actor=None, language=language, new_revision=True)
    return records
