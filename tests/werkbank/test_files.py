"""The one helper for a row plus a stored file: the file is written when the transaction commits, and never
when it rolls back, at any depth; a failed write takes the row back."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage
from django.db import transaction

from builds.choices import ConnectorKind
from builds.models import BuildPhoto, Connector, ConnectorBlacklist, Server
from builds.services import photo_upload
from tests import factories
from tests.builds.bench_rig import png
from werkbank.files import save_with_file

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


@pytest.fixture
def server() -> Server:
    return Server.objects.create(
        order=factories.OrderFactory(), sequence=1, hostname="files-01", asset_tag="FILES-01"
    )


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """The end of the test's transaction, as far as on-commit work goes: it runs what waits for the commit."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def stored(settings) -> list[str]:
    """Every file in storage, by its storage name."""
    root = Path(settings.MEDIA_ROOT)
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())


def new_photo(server: Server, content: bytes = b"one", **fields) -> BuildPhoto:
    photo = BuildPhoto(server=server, content_type="image/png", size_bytes=len(content), **fields)
    return save_with_file(photo, field="file", content=content, filename="upload")


def read(name: str) -> bytes:
    with default_storage.open(name) as handle:
        return handle.read()


def fail_to_store(monkeypatch) -> None:
    def full_disk(self, name, content):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FileSystemStorage, "_save", full_disk)


def test_the_file_is_written_when_the_transaction_commits(server, settings, committed):
    with committed():
        photo = new_photo(server)
        assert BuildPhoto.objects.filter(pk=photo.pk, file=photo.file.name).exists()
        assert stored(settings) == []

    assert photo.file.name.startswith(f"build-photos/{server.pk}/")
    assert stored(settings) == [photo.file.name]
    assert read(photo.file.name) == b"one"


def test_an_error_inside_the_block_leaves_neither_row_nor_file(server, settings, committed):
    with committed() as callbacks, pytest.raises(Boom), transaction.atomic():
        new_photo(server)
        raise Boom

    assert callbacks == []
    assert not BuildPhoto.objects.exists()
    assert stored(settings) == []


def test_an_enclosing_rollback_after_the_service_returned_leaves_no_file(server, settings, committed):
    pm = factories.make_pm()
    with committed(), pytest.raises(Boom), transaction.atomic():
        photo_upload(server=server, actor=pm, data=png())
        raise Boom

    assert not BuildPhoto.objects.exists()
    assert stored(settings) == []


def test_a_rolled_back_savepoint_drops_only_its_own_file(server, settings, committed):
    with committed(), transaction.atomic():
        kept = new_photo(server, b"kept")
        with pytest.raises(Boom), transaction.atomic():
            new_photo(server, b"dropped")
            raise Boom

    assert list(BuildPhoto.objects.values_list("pk", flat=True)) == [kept.pk]
    assert stored(settings) == [kept.file.name]
    assert read(kept.file.name) == b"kept"


def test_a_failed_write_takes_the_new_row_back(server, settings, committed, monkeypatch, caplog):
    fail_to_store(monkeypatch)
    with committed():
        photo = new_photo(server)

    assert not BuildPhoto.objects.filter(pk=photo.pk).exists()
    assert stored(settings) == []
    assert f"Could not store {photo.file.name} for BuildPhoto {photo.pk}" in caplog.text


def test_a_row_that_cannot_go_keeps_no_file_name(server, settings, committed, monkeypatch):
    connector = Connector.objects.create(
        server=server, name="PCIe-1", kind=ConnectorKind.PCIE_SLOT, position=1
    )
    fail_to_store(monkeypatch)
    with committed():
        photo = new_photo(server)
        ConnectorBlacklist.objects.create(connector=connector, reason="x8 link", photo=photo)

    photo.refresh_from_db()
    assert photo.file.name == ""
    assert stored(settings) == []


def test_a_new_file_replaces_the_old_one_only_after_the_commit(server, settings, committed):
    with committed():
        photo = new_photo(server, b"old")
    old = photo.file.name

    with committed():
        photo.size_bytes = 3
        save_with_file(photo, field="file", content=b"new", update_fields=("size_bytes",))
        assert stored(settings) == [old]

    photo.refresh_from_db()
    assert photo.file.name != old
    assert stored(settings) == [photo.file.name]
    assert read(photo.file.name) == b"new"


def test_a_failed_replacement_keeps_the_old_file(server, settings, committed, monkeypatch):
    with committed():
        photo = new_photo(server, b"old")
    old = photo.file.name

    fail_to_store(monkeypatch)
    with committed():
        save_with_file(photo, field="file", content=b"new")

    photo.refresh_from_db()
    assert photo.file.name == old
    assert stored(settings) == [old]
    assert read(old) == b"old"


def test_a_name_taken_before_the_commit_is_recorded_on_the_row(server, settings, committed):
    with committed():
        photo = new_photo(server, b"ours")
        planned = photo.file.name
        default_storage.save(planned, ContentFile(b"someone else's"))

    photo.refresh_from_db()
    assert photo.file.name != planned
    assert read(photo.file.name) == b"ours"
    assert read(planned) == b"someone else's"


def test_only_a_file_field_takes_a_file(server):
    with pytest.raises(TypeError, match=r"BuildPhoto\.content_type is not a FileField"):
        save_with_file(BuildPhoto(server=server), field="content_type", content=b"x")
    assert not BuildPhoto.objects.exists()
