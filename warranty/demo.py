"""Demo data of the warranty: the Vastfleet fleet's first server handed over, with its handover pack, its
warranty records and one claim its customer filed.

The fleet's first server is deployed by deployment/demo.py. Here:

- `seed` (inside seed_demo's transaction) asks for its handover pack through `pack_request`, in the
  customer's language (German). The pack's task is enqueued on commit, so the pack cannot be ready in
  this transaction, and the handover needs a ready pack.
- `seed_after_commit` (after that commit) takes the pack as it is: without REDIS_URL the task has already
  rendered it in-process; with a broker whose worker has not (yet), the demo renders it itself through
  `pack_generate`, which is safe next to the worker (row locks; a ready pack is left alone). Then, in one
  transaction, it hands the server over (`server_hand_over`), creates its warranty records (the records
  task enqueued by the handover does the same; both add nothing twice), and the customer's member opens
  one claim on a GPU: it dropped off the PCIe bus under renters' load. Then the customer's member posts the
  server's two weekly field checks (burnin/demo_field.py): the first healthy, the second with GPU 3 at x8,
  whose drift opens a draft claim.

The fleet's other servers stay where they are, so the order stays open. Running it again adds nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from builds.choices import ServerStatus
from builds.models import Installation, Server
from burnin.demo_field import seed_field_runs
from inventory.choices import PartCategory
from warranty.choices import PACK_SERVER_STATUSES, PackStatus
from warranty.demo_quality import seed_quality
from warranty.models import HandoverPack, WarrantyClaim, WarrantyRecord
from warranty.services import claim_open, handover_records_create, server_hand_over
from warranty.services.packs import pack_generate, pack_request
from werkbank.demo_context import DemoContext
from werkbank.models import Membership

CUSTOMER = "Vastfleet Rentals GmbH"

HAND_OVER_NOTE = "Handed over to Vastfleet's operations team with handover pack r{revision}."

#: What the customer's operations team writes about the failing GPU ({serial}: its serial). Vastfleet is a
#: German customer, so its team writes in German.
CLAIM_DESCRIPTION = (
    "Die GPU mit der Seriennummer {serial} in {hostname} ist seit der Inbetriebnahme auf Vast.ai dreimal "
    "vom Bus gefallen, jedes Mal nach einigen Stunden unter voller Last der Mieter: Das Kernel-Log zeigt "
    '"NVRM: Xid 79, GPU has fallen off the bus", danach listet nvidia-smi nur noch sieben GPUs. Ein '
    "Warmstart bringt sie nicht zurück, erst ein Aus- und Einschalten über den BMC; danach zeigt lspci "
    "sie wieder mit PCIe Gen5 x16, und ein kurzer Stresstest läuft fehlerfrei. Die anderen sieben GPUs "
    "laufen mit denselben Lasten ohne einen einzigen Fehler. Wir haben die Maschine vom Marktplatz "
    "genommen, bis die Karte ersetzt ist. Kernel-Logs und nvidia-bug-report stellen wir gern zur Verfügung."
)


def seed(context: DemoContext) -> None:
    server = _first_fleet_server(context)
    if server is None or server.status not in PACK_SERVER_STATUSES:
        return
    if not HandoverPack.objects.filter(server=server).exists():
        pack_request(server=server, actor=context.pm)
        context.created += 1


def seed_after_commit(context: DemoContext) -> None:
    server = _first_fleet_server(context)
    if server is None:
        return
    pack = HandoverPack.objects.filter(server=server).order_by("-revision").first()
    if pack is None:
        return
    if pack.status != PackStatus.READY:
        # Outside any transaction, as its task runs it: each step commits on its own.
        pack = pack_generate(pack_id=pack.pk) or pack
    with transaction.atomic():
        server.refresh_from_db()
        if server.status == ServerStatus.DEPLOYED:
            server = server_hand_over(
                server=server, actor=context.pm, note=HAND_OVER_NOTE.format(revision=pack.revision)
            )
            context.created += 1
        if server.status != ServerStatus.HANDED_OVER:
            return
        # The records and the pack revision that prints their dates (r2), as the handover's task makes them.
        context.created += len(handover_records_create(server=server))
        _open_claim(context, server)
    # Where the seeds' transaction does not commit (a test), r2's task has not run: render it as r1 was.
    for queued in HandoverPack.objects.filter(server=server, status=PackStatus.QUEUED).order_by("revision"):
        pack_generate(pack_id=queued.pk)
    # Under warranty now: the customer's weekly field checks, each posted on its own as an upload is (the
    # second one's drift opens a draft claim through warranty's receiver).
    member = _customer_member(context)
    if member is not None:
        context.created += len(seed_field_runs(server=server, actor=member))
    # The fleet's quality: the failed cards' supplier returns and spares near their supplier warranty's end.
    context.created += seed_quality(server=server, pm=context.pm)


def _first_fleet_server(context: DemoContext) -> Server | None:
    order = context.orders.get(CUSTOMER)
    return order.servers.order_by("sequence").first() if order is not None else None


def _open_claim(context: DemoContext, server: Server) -> None:
    """The customer's member files one claim on the server's first GPU (by connector position)."""
    if WarrantyClaim.objects.filter(record__server=server).exists():
        return
    gpu = (
        Installation.objects.active()
        .filter(server=server, component__part__category=PartCategory.GPU)
        .order_by("connector__position", "pk")
        .values_list("component_id", flat=True)
        .first()
    )
    record = WarrantyRecord.objects.filter(server=server, component_id=gpu).first() if gpu else None
    member = _customer_member(context)
    if record is None or member is None:
        return
    claim_open(
        record=record,
        actor=member,
        description=CLAIM_DESCRIPTION.format(serial=record.serial, hostname=server.hostname),
    )
    context.created += 1


def _customer_member(context: DemoContext) -> Any:
    membership = (
        Membership.objects.filter(organization=context.organizations[CUSTOMER])
        .select_related("user")
        .order_by("pk")
        .first()
    )
    return membership.user if membership is not None else None
