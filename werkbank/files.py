"""Stored files follow the transaction: a row plus a file, through one helper.

`save_with_file` saves a row whose file field names a stored file (a bench photo, a handover pack), and
writes the file's bytes only once the transaction that saved the row has committed. A Celery task that
renders a handover pack calls it from the service that marks the pack ready, on the locked row:
`save_with_file(pack, field="pdf", content=pdf, filename="handover.pdf", update_fields=("status",))`.

Why after commit, and not "write now, delete on rollback": Django has no rollback hook. A file written
inside the transaction could be deleted by a guard around the helper's own block, but not when an
enclosing block rolls back later (a view's `atomic()` that refuses the request after the service
returned, a second service that fails, a lost connection at COMMIT), and not when the process dies
before it commits. Each of those would leave a file without its row, which nothing shows. An
`on_commit` callback, by contrast, is dropped by Django on every rollback, of the outermost block and
of any savepoint around the call, so a write that only happens there cannot outlive a rolled-back row,
at any nesting depth.

The price is on the other side, and the helper pays it:

- Within the transaction the row names a file that is not there yet: code in the same transaction uses
  the bytes it has in hand, not the storage. The bytes stay in memory until the commit.
- The file is written right after COMMIT, in the same thread, before the request answers; only another
  transaction reading in that moment can find the row before its file, and only a process killed in
  that moment leaves a row without its file (visible on the row, unlike an orphan file).
- Writing can fail after the commit (a full disk, storage down). Then the row is taken back: a new row
  is deleted (or, where another row protects it, its file field is cleared), a row that had a file
  names that file again; the error is logged.
- The name is planned in the transaction (the field's `upload_to`, which gives unique names). Should the
  storage still pick another name when writing, the row is updated to it.
- A row that had a file gets the new one under a new name; the old file is deleted only once the new
  one is written, so a failed write leaves the row with its old, existing file.

- The file appears whole or not at all. On local storage (FileSystemStorage) the bytes are first written
  to a temporary file under MEDIA_ROOT (`.incoming/`, the same filesystem) and then moved to their name
  by Django's `file_move_safe`, an `os.rename`: atomic, so a reader never opens a half-written file. (By
  default Django writes a ContentFile in place, chunk by chunk.) On S3-compatible storage an object PUT is
  atomic by itself.

A restore (of an order's bundle) puts rows back with the names they had, and their files with
them: `restore_file` writes such a row's file after the commit under the name the row already holds.

Everything goes through the field's storage (`default_storage` unless the field names another), never
through paths, so S3-compatible storage works unchanged. Callers validate uploads before they call it:
it stores what it is given.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.core.files.base import ContentFile, File
from django.core.files.storage import FileSystemStorage, Storage
from django.db import DatabaseError, models, transaction

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=models.Model)


@transaction.atomic
def save_with_file(
    instance: M,
    *,
    field: str,
    content: bytes,
    filename: str = "file",
    update_fields: tuple[str, ...] = (),
) -> M:
    """Save `instance` with `content` as its file in `field`; the bytes are written once the transaction
    commits, and never if it rolls back.

    A new row is inserted; an existing row is updated (its `field` plus `update_fields`) and gets the new
    file in place of its old one, which is deleted after the commit. `filename` is handed to the field's
    `upload_to`. The caller holds any lock the row needs (a task attaching a pack to a locked row).
    """
    file_field = instance._meta.get_field(field)
    if not isinstance(file_field, models.FileField):
        raise TypeError(f"{type(instance).__name__}.{field} is not a FileField.")
    model = type(instance)
    adding = instance._state.adding
    previous = (
        "" if adding else model._default_manager.values_list(field, flat=True).get(pk=instance.pk) or ""
    )
    name = file_field.generate_filename(instance, filename)
    # A plain name: the field's pre_save writes nothing, the row only names the file to come.
    setattr(instance, field, name)
    if adding:
        instance.save()
    else:
        instance.save(update_fields=[field, *update_fields])
    pk, storage, max_length = instance.pk, file_field.storage, file_field.max_length

    def write_file() -> None:
        _write(
            model,
            pk,
            field=field,
            name=name,
            content=content,
            previous=previous,
            created=adding,
            storage=storage,
            max_length=max_length,
        )

    transaction.on_commit(write_file, robust=True)
    return instance


def restore_file(instance: models.Model, *, field: str, content: bytes, using: str | None = None) -> None:
    """Store `content` as the file that a restored row names in `field` (a row put back from a backup with
    its ids and stored names, already saved), once the transaction commits, and never if it rolls back.

    After the commit the bytes are written whole under that name, unless the storage holds a file of that
    name with the same bytes already (a restore beside the storage it was exported from), which is kept.
    Where the name is taken by other bytes, the storage picks another and the row is updated to it. A failed
    write is logged and leaves the row naming its missing file: unlike a new upload it cannot be taken back,
    as the other restored rows point at it; the restore checks its files afterwards and says which are
    missing. `using` is the database the row was saved to.
    """
    file_field = instance._meta.get_field(field)
    if not isinstance(file_field, models.FileField):
        raise TypeError(f"{type(instance).__name__}.{field} is not a FileField.")
    name = getattr(instance, field).name
    if not name:
        raise ValueError(f"{type(instance).__name__} {instance.pk} names no file in {field}.")
    model, pk, storage, max_length = type(instance), instance.pk, file_field.storage, file_field.max_length

    def write_file() -> None:
        try:
            if storage.exists(name) and _holds(storage, name, content):
                return
            with _whole(storage, content) as whole:
                stored = storage.save(name, whole, max_length=max_length)
        except Exception:
            logger.exception(
                "Could not restore %s for %s %s; the row names a missing file.", name, model.__name__, pk
            )
            return
        if stored != name:
            model._default_manager.using(using).filter(pk=pk).update(**{field: stored})

    transaction.on_commit(write_file, using=using, robust=True)


def _holds(storage: Storage, name: str, content: bytes) -> bool:
    with storage.open(name, "rb") as stored:
        return stored.read() == content


def _write(
    model: type[models.Model],
    pk: Any,
    *,
    field: str,
    name: str,
    content: bytes,
    previous: str,
    created: bool,
    storage: Storage,
    max_length: int | None,
) -> None:
    """The after-commit half of `save_with_file`: write the bytes, or take the row back."""
    rows = model._default_manager.filter(pk=pk)
    try:
        with _whole(storage, content) as whole:
            stored = storage.save(name, whole, max_length=max_length)
    except Exception:
        logger.exception("Could not store %s for %s %s; the row is taken back.", name, model.__name__, pk)
        _take_back(rows, field=field, previous=previous, created=created)
        return
    if stored != name:
        rows.update(**{field: stored})
    if previous and previous != stored:
        storage.delete(previous)


class _MovableFile(File):
    """A file already on disk: FileSystemStorage moves it into place (os.rename) instead of copying."""

    def temporary_file_path(self) -> str:
        return self.name


@contextmanager
def _whole(storage: Storage, content: bytes) -> Iterator[File]:
    """The content as the storage saves it whole: on local storage, a temporary file on the same filesystem
    that the storage renames into place; elsewhere the bytes."""
    if not isinstance(storage, FileSystemStorage):
        yield ContentFile(content)
        return
    incoming = os.path.join(storage.location, ".incoming")
    os.makedirs(incoming, exist_ok=True)
    handle, path = tempfile.mkstemp(dir=incoming, prefix="part-")
    try:
        with os.fdopen(handle, "wb") as temporary:
            temporary.write(content)
        with open(path, "rb") as readable:
            yield _MovableFile(readable, name=path)
    finally:
        if os.path.exists(path):  # not moved: the save failed
            os.unlink(path)


def _take_back(rows: models.QuerySet, *, field: str, previous: str, created: bool) -> None:
    """A new row goes (or, where another row protects it, loses its file); an old one gets its file back."""
    if created:
        try:
            with transaction.atomic():
                rows.delete()
            return
        except DatabaseError:  # ProtectedError and RestrictedError are among them, as is a trigger's refusal
            logger.exception("%s is kept without a file: it cannot be deleted.", rows.model.__name__)
    rows.update(**{field: previous})
