"""Registration at allocation, hand-over, and the warranty records it starts."""

from __future__ import annotations

from datetime import date

import pytest
from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Allocation
from orders.choices import OrderStatus
from orders.services import order_close
from tests.warranty.handover_rig import INSTALLED, ready_pack
from warranty.choices import PackStatus, RecordKind
from warranty.models import HandoverPack, WarrantyRecord, WarrantyRegistration
from warranty.services import server_hand_over, warranty_records_create
from warranty.services.records import remaining_months, warranty_end
from warranty.tasks import warranty_records_create_task
from werkbank.errors import RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_allocation_registers_the_warranty_in_the_customers_name(world):
    registrations = WarrantyRegistration.objects.filter(server=world.server)
    assert registrations.count() == len(INSTALLED) == Allocation.objects.filter(server=world.server).count()
    assert {r.customer for r in registrations} == {world.t.customer_a}
    assert {r.component.serial for r in registrations} == {serial for serial, _ in INSTALLED}
    event = AuditEvent.objects.for_object(world.server).filter(verb="warranty.register").first()
    assert event.after["customer"] == world.t.customer_a.name


def test_hand_over_lists_every_missing_precondition_at_once(world):
    server = world.bench.other_server  # deployed, but no pack
    server.__class__.objects.filter(pk=server.pk).update(status=ServerStatus.BURN_IN_PASSED)
    with pytest.raises(RuleViolation) as refused:
        server_hand_over(server=server, actor=world.t.pm)
    assert refused.value.code == "handover_incomplete"
    assert len(refused.value.missing) == 2
    assert "must be deployed" in refused.value.missing[0]
    assert "no ready handover pack" in refused.value.missing[1]


def test_a_pack_that_is_not_ready_does_not_count(world):
    server = world.bench.other_server
    HandoverPack.objects.create(server=server, revision=1, status=PackStatus.RUNNING, progress=40)
    with pytest.raises(RuleViolation) as refused:
        server_hand_over(server=server, actor=world.t.pm)
    assert refused.value.missing == [
        f"Server {server.hostname} has no ready handover pack; generate one first."
    ]


def test_hand_over_creates_one_record_per_serial_plus_the_server(handed):
    server = handed.server
    assert server.status == ServerStatus.HANDED_OVER
    records = WarrantyRecord.objects.filter(server=server)
    assert records.filter(kind=RecordKind.COMPONENT).count() == len(INSTALLED)
    own = records.get(kind=RecordKind.SERVER)
    assert own.serial == server.asset_tag  # no chassis serial recorded: the asset tag
    today = timezone.localdate()
    term = server.order.warranty_months
    assert {(r.start_date, r.term_months, r.end_date, r.customer_id) for r in records} == {
        (today, term, warranty_end(today, term), handed.t.customer_a.pk)
    }
    assert AuditEvent.objects.for_object(server).filter(verb="warranty.records_create").count() == 1


def test_records_are_idempotent_run_twice_same_count(handed):
    before = WarrantyRecord.objects.count()
    assert warranty_records_create_task.delay(server_id=handed.server.pk).get() == 0
    assert warranty_records_create(server=handed.server, actor=None) == []
    assert WarrantyRecord.objects.count() == before


def test_records_only_for_a_handed_over_server(world):
    with pytest.raises(RuleViolation):
        warranty_records_create(server=world.server, actor=world.t.pm)
    assert not WarrantyRecord.objects.exists()


def test_the_order_closes_with_its_last_server(handed, django_capture_on_commit_callbacks):
    order = handed.server.order
    order.refresh_from_db()
    assert order.status == OrderStatus.DEPLOYMENT  # one of its two servers is still deployed
    with pytest.raises(RuleViolation) as refused:
        order_close(order=order, actor=handed.t.pm)
    assert refused.value.code in {"invalid_transition", "order_gate"}
    last = handed.bench.other_server
    ready_pack(last)
    with django_capture_on_commit_callbacks(execute=True):
        server_hand_over(server=last, actor=handed.t.pm, note="All done")
    order.refresh_from_db()
    assert order.status == OrderStatus.CLOSED
    verbs = list(AuditEvent.objects.for_object(order).order_by("pk").values_list("verb", flat=True))
    assert verbs[-2:] == ["order.hand_over", "order.close"]
    assert AuditEvent.objects.for_object(last).filter(verb="server.hand_over").get().note == "All done"
    # customer B's single-server order closed with its server
    handed.server_b.order.refresh_from_db()
    assert handed.server_b.order.status == OrderStatus.CLOSED


@pytest.mark.parametrize(
    ("start", "end", "months"),
    [
        (date(2026, 1, 31), date(2029, 1, 31), 36),
        (date(2026, 1, 31), date(2026, 2, 28), 1),
        (date(2026, 3, 1), date(2026, 3, 2), 1),
        (date(2026, 3, 1), date(2027, 4, 2), 14),
    ],
)
def test_remaining_months_counts_a_begun_month(start, end, months):
    assert remaining_months(start, end) == months


def test_warranty_end_clamps_to_the_months_last_day():
    assert warranty_end(date(2027, 11, 30), 3) == date(2028, 2, 29)
