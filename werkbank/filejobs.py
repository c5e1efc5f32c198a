"""Rendered-file jobs: a row that a Celery task renders into stored files (a server's handover pack, a set of
labels), with its status, progress, error, attempts and the files' SHA-256 and sizes.

`FileJob.run` is the task's service and is safe to run twice, at once or after a worker died:
1. Claim: lock the row (`select_for_update`). A ready job whose files are stored is left alone. Otherwise
   mark it running (attempts + 1, started_at, progress 0) and commit, so a watcher sees it.
2. Render outside any lock, writing the progress in small transactions of their own (an UPDATE of one
   column, committed at once), so a watcher sees it move.
3. Finish: lock the row again. If another run made it ready meanwhile, stop. Else store every file through
   `werkbank.files.save_with_file` and mark the row ready with their SHA-256 and sizes in one transaction.
   The files are written once that transaction commits, each first under a temporary name and then renamed
   into place (see werkbank/files.py), so a file appears whole or not at all; the names are new for every
   attempt (the storage never overwrites), so a job's files are swapped, never edited.
4. On an error: mark the row failed with the error (its own transaction) and re-raise, so that the task
   retries transient errors (a lost database connection, a storage hiccup) with backoff.
A worker killed in step 2 leaves the row running; the broker gives the message back (`acks_late`,
`reject_on_worker_lost`) and the next run claims it again.

The model inherits `RenderedFileJob`: `status` (`FileJobStatus`: queued → running → ready, or failed and
running again: `TRANSITIONS`), `progress` (0–100), `error`, `attempts`, `created_at`, `started_at`,
`finished_at`; it adds per file a FileField `<name>` with `<name>_sha256` and `<name>_size`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import models, transaction
from django.db.models import F, Q
from django.utils import timezone

from werkbank.audit import audit
from werkbank.choices import FILE_JOB_TRANSITIONS, FileJobStatus
from werkbank.files import save_with_file

logger = logging.getLogger(__name__)

# Plain strings, as they go into the audit rows' JSON.
QUEUED, RUNNING, READY, FAILED = (
    FileJobStatus.QUEUED.value,
    FileJobStatus.RUNNING.value,
    FileJobStatus.READY.value,
    FileJobStatus.FAILED.value,
)
TRANSITIONS = FILE_JOB_TRANSITIONS


class RenderedFileJob(models.Model):
    """A row that a task renders into stored files, with what the steps above read and write. A concrete
    job adds its file fields and its Meta, whose constraints start with `file_job_constraints`."""

    status = models.CharField(max_length=16, choices=FileJobStatus.choices, default=FileJobStatus.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0, help_text="0–100 %")
    error = models.TextField(blank=True, help_text="Why the last attempt failed.")
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


def file_job_constraints(noun: str) -> list[models.BaseConstraint]:
    """The rules every file job's row keeps, named per model (`<app>_<model>_status_valid` and
    `<app>_<model>_progress_range`); `noun` names the job in the messages. The rule that a ready job has its
    files stays with each model, which names its own file fields."""
    return [
        models.CheckConstraint(
            condition=Q(status__in=FileJobStatus.values),
            name="%(app_label)s_%(class)s_status_valid",
            violation_error_message=f"Unknown {noun} status.",
        ),
        models.CheckConstraint(
            condition=Q(progress__gte=0, progress__lte=100),
            name="%(app_label)s_%(class)s_progress_range",
            violation_error_message="Progress is 0–100 %.",
        ),
    ]


#: What a render returns: per file field, the file's name and its bytes.
Rendered = Mapping[str, tuple[str, bytes]]


@dataclass(frozen=True)
class FileJob:
    """The steps above for one model: `noun` names it in the log, `verb` prefixes its audit verbs
    (`<verb>.generate`, `<verb>.fail`), `files` are its file fields, and `summary` adds to the audited
    result of a ready job (the label count, say)."""

    model: type[RenderedFileJob]
    noun: str
    verb: str
    files: tuple[str, ...]
    summary: Callable[[Any], dict[str, Any]] = lambda _job: {}

    def stored(self, job: Any) -> bool:
        """Whether every file of `job` is named and present in its storage."""
        return all(
            bool(getattr(job, name).name) and getattr(job, name).field.storage.exists(getattr(job, name).name)
            for name in self.files
        )

    def claim(self, job_id: int) -> Any | None:
        """Step 1: the job marked running, or None when there is nothing to do."""
        with transaction.atomic():
            job = self.model._default_manager.select_for_update().filter(pk=job_id).first()
            if job is None:
                logger.warning("%s %s no longer exists; nothing to render.", self.noun, job_id)
                return None
            if job.status == READY and self.stored(job):
                return None
            if RUNNING not in TRANSITIONS[job.status] and job.status != READY:
                return None
            job.status, job.progress, job.started_at = RUNNING, 0, timezone.now()
            job.attempts = F("attempts") + 1
            job.save(update_fields=["status", "progress", "started_at", "attempts"])
            job.refresh_from_db(fields=["attempts"])
            return job

    def progress(self, job_id: int, value: int) -> None:
        """Write a running job's progress (kept within 0–99 until it is ready) in a transaction of its own."""
        self.model._default_manager.filter(pk=job_id, status=RUNNING).update(progress=max(0, min(value, 99)))

    def finish(self, job_id: int, rendered: Rendered) -> Any:
        """Step 3: store the files and mark the job ready, unless another run did already."""
        with transaction.atomic():
            job = self.model._default_manager.select_for_update().get(pk=job_id)
            if job.status == READY and self.stored(job):
                return job
            before = {"status": job.status}
            job.status, job.progress, job.error, job.finished_at = READY, 100, "", timezone.now()
            for name in self.files:
                content = rendered[name][1]
                setattr(job, f"{name}_sha256", hashlib.sha256(content).hexdigest())
                setattr(job, f"{name}_size", len(content))
            fields = ["status", "progress", "error", "finished_at"]
            fields += [f"{name}_{part}" for name in self.files for part in ("sha256", "size")]
            for number, name in enumerate(self.files, start=1):
                filename, content = rendered[name]
                # The row's other fields go with the last file's save; every file is written on commit.
                others = tuple(fields) if number == len(self.files) else ()
                save_with_file(job, field=name, content=content, filename=filename, update_fields=others)
            audit(
                actor=None,
                verb=f"{self.verb}.generate",
                obj=job,
                before=before,
                after={
                    "status": READY,
                    **self.summary(job),
                    **{f"{name}_sha256": getattr(job, f"{name}_sha256") for name in self.files},
                },
            )
            return job

    def fail(self, job_id: int, error: BaseException) -> None:
        """Step 4: record the failure in a transaction of its own (best effort: the database may be the
        cause)."""
        message = f"{type(error).__name__}: {error}"[:2000]
        try:
            with transaction.atomic():
                job = self.model._default_manager.select_for_update().filter(pk=job_id).first()
                if job is None or job.status == READY:
                    return
                job.status, job.error, job.finished_at = FAILED, message, timezone.now()
                job.save(update_fields=["status", "error", "finished_at"])
                audit(
                    actor=None, verb=f"{self.verb}.fail", obj=job, after={"status": FAILED, "error": message}
                )
        except Exception:
            logger.exception("Could not record the failure of %s %s.", self.noun.lower(), job_id)

    def run(self, job_id: int, render: Callable[[Any], Rendered]) -> Any | None:
        """Steps 1–4: claim, `render(job)`, finish; the ready job, or None when there was nothing to do.
        Re-raises what failed, after marking the job failed, so that the task retries transient errors."""
        job = self.claim(job_id)
        if job is None:
            return self.model._default_manager.filter(pk=job_id, status=READY).first()
        try:
            return self.finish(job_id, render(job))
        except Exception as error:
            self.fail(job_id, error)
            raise
