"""Label batches: asked for through the API or the admin, rendered by a Celery task into one stored PDF with
its SHA-256 and progress; a repeated task changes nothing; another tenant gets 404; every step is audited."""

from __future__ import annotations

import hashlib
import io
import re

import pytest
from django.conf import settings
from pypdf import PdfReader

from inventory.choices import LabelBatchStatus
from inventory.models import BatchLot, Component, LabelBatch
from inventory.services import label_batch_generate, label_batch_request, label_batches
from inventory.tasks import label_batch_render_task
from tests import factories
from tests.tenants_rig import api_client
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent, TaskOutbox

pytestmark = pytest.mark.django_db

URL = "/api/v1/inventory/label-batches/"


@pytest.fixture
def stock(tenants):
    """30 serials in two lots delivered to partner P, and 2 delivered to partner Q."""
    po = factories.receive_stock(
        deliver_to=tenants.partner_p,
        lots={"L-B1": [f"LB-{i:03d}" for i in range(25)], "L-B2": [f"LB-{i:03d}" for i in range(25, 30)]},
    )
    other = factories.receive_stock(deliver_to=tenants.partner_q, lots={"L-Q": ["LQ-1", "LQ-2"]})
    return po, other


def _serials(pdf: bytes) -> tuple[int, list[str]]:
    reader = PdfReader(io.BytesIO(pdf))
    text = "\n".join(page.extract_text() for page in reader.pages)
    return len(reader.pages), re.findall(r"L[BQ]-\d+", text)


def _verbs(batch: LabelBatch) -> list[str]:
    return list(AuditEvent.objects.for_object(batch).order_by("pk").values_list("verb", flat=True))


def _stored_files() -> list[str]:
    root = settings.MEDIA_ROOT / "labels"
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def test_a_batch_is_rendered_once_even_when_the_task_runs_twice(
    tenants, stock, django_capture_on_commit_callbacks
):
    lot = BatchLot.objects.get(lot_code="L-B1")
    with django_capture_on_commit_callbacks(execute=True):
        batch = label_batch_request(actor=tenants.user_p, lot=lot)
    outbox = TaskOutbox.objects.get(task=label_batch_render_task.name)
    assert (outbox.kwargs, outbox.sent_at is not None) == ({"batch_id": batch.pk}, True)
    with django_capture_on_commit_callbacks(execute=True):
        assert label_batch_render_task.delay(batch_id=batch.pk).get() is True  # the second run

    batch.refresh_from_db()
    assert (batch.status, batch.progress, batch.attempts, batch.count) == (LabelBatchStatus.READY, 100, 1, 25)
    assert (batch.title, batch.requested_by) == (f"Labels of lot L-B1 ({lot.part.mpn})", tenants.user_p)
    pdf = batch.pdf.read()
    assert (hashlib.sha256(pdf).hexdigest(), len(pdf)) == (batch.pdf_sha256, batch.pdf_size)
    assert _serials(pdf) == (2, [f"LB-{i:03d}" for i in range(25)])  # 24 a sheet, in serial order
    assert _stored_files() == [batch.pdf.name.removeprefix("labels/")]  # one file, not one per run
    assert _verbs(batch) == ["label_batch.request", "label_batch.generate"]


def test_progress_is_written_while_the_pages_are_drawn(tenants, monkeypatch):
    factories.receive_stock(deliver_to=None, lots={"L-BIG": [f"LB-{i:03d}" for i in range(240)]})
    written: list[int] = []
    monkeypatch.setattr(
        label_batches, "label_batch_progress", lambda *, batch_id, progress: written.append(progress)
    )
    batch = label_batch_request(actor=tenants.pm, lot=BatchLot.objects.get(lot_code="L-BIG"))

    label_batch_generate(batch_id=batch.pk)

    # Ten pages: after pages 1 to 9 (10 % to 90 %), one row update every 5 % at most, then ready at 100 %.
    assert written == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    batch.refresh_from_db()
    assert (batch.status, batch.progress) == (LabelBatchStatus.READY, 100)


def test_a_failed_render_is_recorded_and_the_next_run_finishes(
    tenants, stock, monkeypatch, django_capture_on_commit_callbacks
):
    batch = label_batch_request(actor=tenants.user_p, purchase_order=stock[0])

    def broken(**kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(label_batches, "label_batch_pdf", broken)
    with pytest.raises(OSError, match="disk full"):
        label_batch_generate(batch_id=batch.pk)
    batch.refresh_from_db()
    assert (batch.status, batch.error, batch.attempts) == (LabelBatchStatus.FAILED, "OSError: disk full", 1)
    assert not batch.pdf

    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):
        assert label_batch_generate(batch_id=batch.pk) is not None
    batch.refresh_from_db()
    assert (batch.status, batch.error, batch.attempts, batch.count) == (LabelBatchStatus.READY, "", 2, 30)
    assert _verbs(batch) == ["label_batch.request", "label_batch.fail", "label_batch.generate"]


def test_a_list_of_components_prints_in_the_given_order(tenants, stock, django_capture_on_commit_callbacks):
    ids = list(
        Component.objects.filter(serial__in=["LB-007", "LB-002", "LB-029"]).values_list("pk", flat=True)
    )
    wanted = [ids[2], ids[0], ids[1]]
    order = dict(Component.objects.filter(pk__in=ids).values_list("pk", "serial"))

    with django_capture_on_commit_callbacks(execute=True):  # the request's task renders it, eagerly
        batch = label_batch_request(actor=tenants.user_p, components=wanted)
    batch.refresh_from_db()

    assert (batch.title, batch.status) == ("Labels of 3 components", LabelBatchStatus.READY)
    assert _serials(batch.pdf.read()) == (1, [order[pk] for pk in wanted])


def test_what_a_requester_may_not_see_is_refused(tenants, stock):
    foreign = Component.objects.get(serial="LQ-1")
    with pytest.raises(InvalidInput, match="components: 1 component id\\(s\\) not found"):
        label_batch_request(actor=tenants.user_p, components=[foreign.pk])
    with pytest.raises(InvalidInput, match="lot: no lot with id"):
        label_batch_request(actor=tenants.user_p, lot=BatchLot.objects.get(lot_code="L-Q"))
    with pytest.raises(InvalidInput, match="purchase_order: no purchase order with id"):
        label_batch_request(actor=tenants.user_p, purchase_order=stock[1])
    with pytest.raises(InvalidInput, match="give exactly one of lot, purchase_order or components"):
        label_batch_request(
            actor=tenants.pm, lot=BatchLot.objects.get(lot_code="L-Q"), purchase_order=stock[1]
        )
    # A customer sees no stock: nothing to label.
    with pytest.raises(RuleViolation, match="there are no components to label") as empty:
        label_batch_request(actor=tenants.pm, purchase_order=factories.make_po(deliver_to=None))
    assert empty.value.code == "empty_batch"
    assert not LabelBatch.objects.exists()


def test_api_request_poll_and_download(tenants, stock, django_capture_on_commit_callbacks):
    lot = BatchLot.objects.get(lot_code="L-B2")
    client = api_client(tenants.user_p)
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(URL, {"lot": lot.pk}, format="json")
    assert created.status_code == 201, created.json()
    assert (created.json()["status"], created.json()["count"], created.json()["pdf_url"]) == (
        "queued",
        5,
        None,
    )

    polled = client.get(f"{URL}{created.json()['id']}/").json()  # the task ran on commit (eager)
    assert (polled["status"], polled["progress"], polled["requested_by"]) == ("ready", 100, "petr")
    assert polled["pdf_url"].endswith(f"{URL}{polled['id']}/pdf/")
    download = client.get(polled["pdf_url"])
    assert (download.status_code, download["Content-Type"]) == (200, "application/pdf")
    pdf = b"".join(download.streaming_content)
    assert hashlib.sha256(pdf).hexdigest() == polled["pdf_sha256"]
    assert _serials(pdf) == (1, [f"LB-{i:03d}" for i in range(25, 30)])
    assert [row["id"] for row in client.get(URL).json()["results"]] == [polled["id"]]


def test_another_tenant_gets_404_and_cannot_point_at_foreign_rows(
    tenants, stock, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        batch = label_batch_request(actor=tenants.user_p, lot=BatchLot.objects.get(lot_code="L-B1"))
    for user in (tenants.user_q, tenants.user_a, tenants.outsider):
        client = api_client(user)
        assert client.get(f"{URL}{batch.pk}/").status_code == 404
        assert client.get(f"{URL}{batch.pk}/pdf/").status_code == 404
        assert client.get(URL).json()["results"] == []
    assert api_client(tenants.pm).get(f"{URL}{batch.pk}/pdf/").status_code == 200

    refused = api_client(tenants.user_q).post(URL, {"lot": batch.lot_id}, format="json")
    assert refused.status_code == 400 and "lot" in refused.json(), refused.json()
    both = api_client(tenants.user_p).post(
        URL, {"lot": batch.lot_id, "purchase_order": stock[0].pk}, format="json"
    )
    assert both.status_code == 400 and "exactly one" in str(both.json())


def test_a_queued_batch_has_no_pdf_yet(tenants, stock):
    batch = label_batch_request(actor=tenants.user_p, purchase_order=stock[0])

    response = api_client(tenants.user_p).get(f"{URL}{batch.pk}/pdf/")

    assert response.status_code == 404
    assert "is queued: it has no PDF yet" in str(response.json())


def test_the_admin_action_queues_a_batch_per_lot(client, tenants, stock, django_capture_on_commit_callbacks):
    client.force_login(tenants.pm)
    lots = BatchLot.objects.filter(lot_code__in=["L-B1", "L-Q"]).order_by("lot_code")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/inventory/batchlot/",
            {"action": "print_labels", "_selected_action": [lot.pk for lot in lots]},
            follow=True,
        )
    assert response.status_code == 200
    assert sorted(LabelBatch.objects.values_list("title", "count", "status")) == [
        (f"Labels of lot L-B1 ({lots[0].part.mpn})", 25, "ready"),
        (f"Labels of lot L-Q ({lots[1].part.mpn})", 2, "ready"),
    ]
    assert "25 labels queued as" in response.content.decode()
    page = client.get("/admin/inventory/labelbatch/").content.decode()
    assert page.count("/pdf/") == 2


def test_a_lot_of_more_than_200_serials_is_not_rendered_in_the_request(tenants):
    factories.receive_stock(deliver_to=tenants.partner_p, lots={"L-201": [f"LB-{i:03d}" for i in range(201)]})
    lot = BatchLot.objects.get(lot_code="L-201")

    response = api_client(tenants.user_p).get(f"/api/v1/inventory/lots/{lot.pk}/labels/")

    assert response.status_code == 409
    assert response.json()["code"] == "too_many_labels"
    assert f'POST {{"lot": {lot.pk}}} to /api/v1/inventory/label-batches/' in response.json()["detail"]
    Component.objects.filter(serial="LB-200").delete()  # 200: still rendered at once
    assert api_client(tenants.user_p).get(f"/api/v1/inventory/lots/{lot.pk}/labels/").status_code == 200
