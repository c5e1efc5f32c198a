"""Handover packs: a PM asks for one (`pack_request`), a Celery task renders it (`pack_generate`).

`pack_generate` is the task's service and is safe to run twice, at once or after a worker died:

1. Claim: lock the pack row (`select_for_update`). A ready pack whose files are stored is left alone.
   Otherwise mark it running (attempts + 1, started_at) and commit, so a watcher sees it.
2. Render outside any lock (warranty/documents.py), writing the progress in small transactions of their
   own (an UPDATE of one column, committed at once), so a watcher sees it move.
3. Finish: lock the row again. If another run made it ready meanwhile, stop. Else store both files through
   `werkbank.files.save_with_file` and mark the pack ready with their SHA-256 and sizes in one
   transaction. The files are written once that transaction commits, each first under a temporary name
   and then renamed into place (see werkbank/files.py), so a file appears whole or not at all; the names
   are new for every attempt (the storage never overwrites), so a pack's files are swapped, never edited.
4. On an error: mark the pack failed with the error (its own transaction) and re-raise, so that the task
   retries transient errors (a lost database connection, a storage hiccup) with backoff.

A worker killed in step 2 leaves the pack running; the broker gives the message back
(`acks_late`, `reject_on_worker_lost`) and the next run claims it again. The unique (server, revision)
constraint keeps a repeated `pack_request` from making two packs of one revision: a revision is numbered
under the server's row lock.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from builds.models import Server
from builds.services import lock_server
from burnin.selectors import TELEMETRY_CSV_COLUMNS, telemetry_csv
from warranty.choices import PACK_SERVER_STATUSES, PACK_TRANSITIONS, PackLanguage, PackStatus
from warranty.documents import pack_pdf, pack_zip, probe_report_json
from warranty.models import HandoverPack
from warranty.selectors import pack_data
from werkbank.audit import audit
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.files import save_with_file
from werkbank.tasks import enqueue_on_commit

logger = logging.getLogger(__name__)


def _language(server: Server, language: str | None) -> str:
    if language in (None, ""):
        customer_language = server.order.customer.language
        return customer_language if customer_language in PackLanguage.values else PackLanguage.EN
    if language not in PackLanguage.values:
        raise InvalidInput("language", f"must be one of {', '.join(PackLanguage.values)}, not {language!r}.")
    return language


@transaction.atomic
def pack_request(*, server: Server, actor: Any, language: str | None = None) -> HandoverPack:
    """Queue a new revision of the server's handover pack (the PM's request), rendered by a Celery task.

    The language defaults to the customer's (Organization.language). Refused (409) unless the server is
    deployed or handed over: the pack prints the rack placement, the addresses and the monitoring access,
    which a server has once it is deployed, and the handover itself needs a ready pack. The revision is
    the server's highest + 1, numbered under the server's row lock.
    """
    locked = lock_server(server)
    chosen = _language(locked, language)
    if locked.status not in PACK_SERVER_STATUSES:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; a handover pack is made "
            "once it is deployed (it prints the rack placement, the addresses and the monitoring access).",
            code="pack_server_not_deployed",
        )
    latest = HandoverPack.objects.filter(server=locked).aggregate(latest=Max("revision"))["latest"] or 0
    pack = HandoverPack.objects.create(
        server=locked,
        revision=latest + 1,
        language=chosen,
        status=PackStatus.QUEUED,
        generated_by=actor if getattr(actor, "is_authenticated", False) else None,
    )
    audit(
        actor=actor,
        verb="pack.request",
        obj=pack,
        after={"server": locked.asset_tag, "revision": pack.revision, "language": chosen},
    )
    from warranty.tasks import handover_pack_generate_task

    enqueue_on_commit(handover_pack_generate_task, pack_id=pack.pk)
    return pack


@transaction.atomic
def pack_retry(*, pack: HandoverPack, actor: Any) -> HandoverPack:
    """Queue a failed pack again (the PM's re-run): the same revision, rendered by a new task."""
    locked = HandoverPack.objects.select_for_update().get(pk=pack.pk)
    if locked.status != PackStatus.FAILED:
        raise RuleViolation(
            f"Pack r{locked.revision} of {locked.server} is {locked.get_status_display().lower()}; only a "
            "failed pack is run again.",
            code="pack_not_failed",
        )
    locked.status, locked.progress = PackStatus.QUEUED, 0
    locked.save(update_fields=["status", "progress"])
    audit(
        actor=actor,
        verb="pack.retry",
        obj=locked,
        before={"status": PackStatus.FAILED, "error": locked.error},
    )
    from warranty.tasks import handover_pack_generate_task

    enqueue_on_commit(handover_pack_generate_task, pack_id=locked.pk)
    return locked


def _files_stored(pack: HandoverPack) -> bool:
    return all(
        bool(name) and field.storage.exists(name)
        for field, name in ((pack.pdf.field, pack.pdf.name), (pack.zip.field, pack.zip.name))
    )


def _claim(pack_id: int) -> HandoverPack | None:
    """Step 1: the pack marked running, or None when there is nothing to do."""
    with transaction.atomic():
        pack = HandoverPack.objects.select_for_update().filter(pk=pack_id).first()
        if pack is None:
            logger.warning("Handover pack %s no longer exists; nothing to render.", pack_id)
            return None
        if pack.status == PackStatus.READY and _files_stored(pack):
            return None
        if PackStatus.RUNNING not in PACK_TRANSITIONS[pack.status] and pack.status != PackStatus.READY:
            return None
        pack.status = PackStatus.RUNNING
        pack.attempts = F("attempts") + 1
        pack.started_at = timezone.now()
        pack.progress = 0
        pack.save(update_fields=["status", "attempts", "started_at", "progress"])
        pack.refresh_from_db(fields=["attempts"])
        return pack


def pack_progress(*, pack_id: int, progress: int) -> None:
    """Write a running pack's progress (0–100) in a transaction of its own, so that a watcher sees it."""
    HandoverPack.objects.filter(pk=pack_id, status=PackStatus.RUNNING).update(
        progress=max(0, min(progress, 99))
    )


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


def _finish(pack_id: int, pdf: bytes, archive: bytes) -> HandoverPack:
    """Step 3: store the files and mark the pack ready, unless another run did already."""
    with transaction.atomic():
        pack = HandoverPack.objects.select_for_update().select_related("server").get(pk=pack_id)
        if pack.status == PackStatus.READY and _files_stored(pack):
            return pack
        before = {"status": pack.status}
        pack.status, pack.progress, pack.error = PackStatus.READY, 100, ""
        pack.pdf_sha256, pack.pdf_size = hashlib.sha256(pdf).hexdigest(), len(pdf)
        pack.zip_sha256, pack.zip_size = hashlib.sha256(archive).hexdigest(), len(archive)
        pack.finished_at = timezone.now()
        stem = f"{pack.server.asset_tag}-r{pack.revision}-{pack.language}"
        save_with_file(pack, field="pdf", content=pdf, filename=f"{stem}.pdf")
        save_with_file(
            pack,
            field="zip",
            content=archive,
            filename=f"{stem}.zip",
            update_fields=(
                "status",
                "progress",
                "error",
                "pdf_sha256",
                "pdf_size",
                "zip_sha256",
                "zip_size",
                "finished_at",
            ),
        )
        audit(
            actor=None,
            verb="pack.generate",
            obj=pack,
            before=before,
            after={"status": PackStatus.READY, "pdf_sha256": pack.pdf_sha256, "zip_sha256": pack.zip_sha256},
        )
        return pack


def _fail(pack_id: int, error: BaseException) -> None:
    """Step 4: record the failure in a transaction of its own (best effort: the database may be the cause)."""
    message = f"{type(error).__name__}: {error}"[:2000]
    try:
        with transaction.atomic():
            pack = HandoverPack.objects.select_for_update().filter(pk=pack_id).first()
            if pack is None or pack.status == PackStatus.READY:
                return
            pack.status, pack.error, pack.finished_at = PackStatus.FAILED, message, timezone.now()
            pack.save(update_fields=["status", "error", "finished_at"])
            audit(
                actor=None, verb="pack.fail", obj=pack, after={"status": PackStatus.FAILED, "error": message}
            )
    except Exception:
        logger.exception("Could not record the failure of handover pack %s.", pack_id)


def pack_generate(*, pack_id: int) -> HandoverPack | None:
    """Render and store one handover pack (the task's service); see the module docstring for the steps.
    Returns the ready pack, or None when there was nothing to do. Re-raises what failed, after marking
    the pack failed, so that the task retries transient errors."""
    pack = _claim(pack_id)
    if pack is None:
        return HandoverPack.objects.filter(pk=pack_id, status=PackStatus.READY).first()
    try:
        pdf, archive = pack_render(
            pack, progress=lambda value: pack_progress(pack_id=pack_id, progress=value)
        )
        return _finish(pack_id, pdf, archive)
    except Exception as error:
        _fail(pack_id, error)
        raise
