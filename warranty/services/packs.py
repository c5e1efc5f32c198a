"""Handover packs: a PM asks for one (`pack_request`), a Celery task renders it (`pack_generate`).

`pack_generate` is the task's service, in the steps of a rendered-file job (werkbank/filejobs.py), safe to
run twice, at once or after a worker died: claim the row, render the PDF and ZIP outside any lock
(warranty/documents/) with the progress in small transactions, then store both files and mark the pack
ready with their SHA-256 and sizes in one transaction (each file written whole after the commit), or mark
it failed and re-raise, so that the task retries transient errors. The unique (server, revision)
constraint keeps a repeated `pack_request` from making two packs of one revision: a revision is numbered
under the server's row lock.

A request while a revision of the same server and language is queued or running returns that revision
instead of a new one (issue #26: 20 requests at once made 20 revisions); a PM who wants a fresh render of a
running one (the data changed while it renders) asks for a new revision explicitly. A queued revision has
not read the server's data yet, so it already is the new one: the partial unique constraint
`warranty_handoverpack_one_queued_per_language` keeps it at one queued revision per server and language,
whatever path writes the row.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from builds.models import Server
from builds.services import lock_server
from burnin.selectors import TELEMETRY_CSV_COLUMNS, telemetry_csv
from warranty.choices import PACK_PENDING, PACK_QUEUED, PACK_SERVER_STATUSES, PackLanguage, PackStatus
from warranty.documents import pack_pdf, pack_zip, probe_report_json
from warranty.models import HandoverPack
from warranty.selectors import pack_data
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.filejobs import FileJob
from werkbank.tasks import enqueue_on_commit
from werkbank.types import Actor


def _language(server: Server, language: str | None) -> str:
    if language in (None, ""):
        customer_language = server.order.customer.language
        return customer_language if customer_language in PackLanguage.values else PackLanguage.EN
    if language not in PackLanguage.values:
        raise InvalidInput("language", f"must be one of {', '.join(PackLanguage.values)}, not {language!r}.")
    return language


def _pending(server: Server, language: str, *, statuses: frozenset[str]) -> HandoverPack | None:
    """The server's newest revision in `language` whose status is one of `statuses`, if any."""
    return (
        HandoverPack.objects.filter(server=server, language=language, status__in=sorted(statuses))
        .order_by("-revision")
        .first()
    )


@transaction.atomic
def pack_request(
    *, server: Server, actor: Actor, language: str | None = None, new_revision: bool = False
) -> tuple[HandoverPack, bool]:
    """Queue a new revision of the server's handover pack (the PM's request), rendered by a Celery task;
    returns the pack and whether this request made it (like `get_or_create`).

    The language defaults to the customer's (Organization.language). Refused (409) unless the server is
    deployed or handed over: the pack prints the rack placement, the addresses and the monitoring access,
    which a server has once it is deployed, and the handover itself needs a ready pack. The revision is
    the server's highest + 1, numbered under the server's row lock.

    While a revision in that language is queued or running, that revision is returned and nothing is
    written. `new_revision` asks for a new one even while one is running (a queued one is still returned:
    it renders the data as it is when its task starts).
    """
    locked = lock_server(server)
    chosen = _language(locked, language)
    if locked.status not in PACK_SERVER_STATUSES:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; a handover pack is made "
            "once it is deployed (it prints the rack placement, the addresses and the monitoring access).",
            code="pack_server_not_deployed",
        )
    waiting = PACK_QUEUED if new_revision else PACK_PENDING
    pending = _pending(locked, chosen, statuses=waiting)
    if pending is not None:
        return pending, False
    latest = HandoverPack.objects.filter(server=locked).aggregate(latest=Max("revision"))["latest"] or 0
    try:
        with transaction.atomic():  # a savepoint: a queued revision written past the server's lock
            pack = HandoverPack.objects.create(
                server=locked,
                revision=latest + 1,
                language=chosen,
                status=PackStatus.QUEUED,
                generated_by=user_or_none(actor),
            )
    except IntegrityError:
        queued = _pending(locked, chosen, statuses=PACK_QUEUED)
        if queued is None:
            raise
        return queued, False
    audit(
        actor=actor,
        verb="pack.request",
        obj=pack,
        after={"server": locked.asset_tag, "revision": pack.revision, "language": chosen},
    )
    enqueue_on_commit("warranty.tasks.handover_pack_generate_task", pack_id=pack.pk)
    return pack, True


@transaction.atomic
def pack_retry(*, pack: HandoverPack, actor: Actor) -> HandoverPack:
    """Queue a failed pack again (the PM's re-run): the same revision, rendered by a new task. Refused
    (409) while another revision in its language is queued: that one renders the server's current data."""
    lock_server(pack.server)  # the lock `pack_request` takes: a queued revision cannot appear meanwhile
    locked = HandoverPack.objects.select_for_update().get(pk=pack.pk)
    if locked.status != PackStatus.FAILED:
        raise RuleViolation(
            f"Pack r{locked.revision} of {locked.server} is {locked.get_status_display().lower()}; only a "
            "failed pack is run again.",
            code="pack_not_failed",
        )
    queued = _pending(locked.server, locked.language, statuses=PACK_QUEUED)
    if queued is not None:
        raise RuleViolation(
            f"Pack r{queued.revision} of {locked.server} in the same language is queued; it renders the "
            f"server's current data, so r{locked.revision} is not run again.",
            code="pack_already_queued",
        )
    locked.status, locked.progress = PackStatus.QUEUED, 0
    locked.save(update_fields=["status", "progress"])
    audit(
        actor=actor,
        verb="pack.retry",
        obj=locked,
        before={"status": PackStatus.FAILED, "error": locked.error},
    )
    enqueue_on_commit("warranty.tasks.handover_pack_generate_task", pack_id=locked.pk)
    return locked


#: The steps of werkbank.filejobs for handover packs: a PDF and a ZIP.
PACK_JOB = FileJob(model=HandoverPack, noun="Handover pack", verb="pack", files=("pdf", "zip"))


def pack_progress(*, pack_id: int, progress: int) -> None:
    """Write a running pack's progress (0–99) in a transaction of its own, so that a watcher sees it."""
    PACK_JOB.progress(pack_id, progress)


def pack_render(pack: HandoverPack, *, progress: Any = None) -> tuple[bytes, bytes]:
    """The pack's PDF and ZIP, rendered from the server's data (no writes but the progress callback's)."""
    report = progress or (lambda _value: None)
    generated_at = timezone.now()
    data = pack_data(server=pack.server)
    report(30)
    pdf = pack_pdf(data, revision=pack.revision, language=pack.language, generated_at=generated_at)
    report(70)
    csv = telemetry_csv(run=data.run) if data.run else (",".join(TELEMETRY_CSV_COLUMNS) + "\n").encode()
    report(85)
    archive = pack_zip(
        pdf=pdf,
        telemetry_csv=csv,
        report=probe_report_json(data.run),
        server=data.server,
        revision=pack.revision,
        language=pack.language,
        generated_at=generated_at,
    )
    report(95)
    return pdf, archive


def pack_generate(*, pack_id: int) -> HandoverPack | None:
    """Render and store one handover pack (the task's service); see the module docstring for the steps.
    Returns the ready pack, or None when there was nothing to do. Re-raises what failed, after marking
    the pack failed, so that the task retries transient errors."""

    def render(pack: HandoverPack) -> dict[str, tuple[str, bytes]]:
        pdf, archive = pack_render(
            pack, progress=lambda value: pack_progress(pack_id=pack_id, progress=value)
        )
        stem = f"{pack.server.asset_tag}-r{pack.revision}-{pack.language}"
        return {"pdf": (f"{stem}.pdf", pdf), "zip": (f"{stem}.zip", archive)}

    return PACK_JOB.run(pack_id, render)
