"""The scale dataset (ops.scale, `manage.py seed_scale`) at a small size: its counts, its consistency with
what the services would have written, its determinism, and the tenancy it keeps."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.db.models import Count, F, Q

from builds.choices import AT_LEAST_ASSEMBLED, ServerStatus
from builds.models import Allocation, Connector, Installation, Server
from burnin.models import BurnInRun, GpuResult, TelemetrySample
from inventory.choices import ComponentStatus
from inventory.models import Component, PurchaseOrder, StockMovement
from ops import scale
from orders.choices import OrderStatus
from orders.models import Order
from werkbank.models import AuditEvent, Organization

pytestmark = pytest.mark.django_db

SMALL = scale.ScaleSize(servers=60, components=500, samples=4000, orders=24)


def _seed(size: scale.ScaleSize = SMALL) -> dict[str, int]:
    return scale.seed(size=size)


def test_counts_follow_the_options() -> None:
    counts = _seed()
    assert Server.objects.count() == 60
    assert Order.objects.count() == 24
    assert Component.objects.count() == 500
    assert TelemetrySample.objects.count() == 4000
    # 53 connectors per server, as the chassis layout has them.
    assert Connector.objects.count() == 60 * len(scale.LAYOUT) == 60 * 53
    assert counts["builds.Server"] == 60
    assert Organization.objects.customers().count() == 1 and Organization.objects.partners().count() == 5
    # Orders in every lifecycle stage the mix names, at this size too.
    assert {OrderStatus.DRAFT, OrderStatus.ASSEMBLY, OrderStatus.CLOSED} <= set(
        Order.objects.values_list("status", flat=True)
    )


def test_rows_are_consistent_with_the_lifecycle() -> None:
    _seed()
    # Servers exist only for orders from procurement on, and their status fits the order's.
    assert not Server.objects.filter(
        order__status__in=[OrderStatus.DRAFT, OrderStatus.ROI_REVIEW, OrderStatus.APPROVED]
    ).exists()
    assert (
        not Server.objects.filter(order__status=OrderStatus.PROCUREMENT)
        .exclude(status=ServerStatus.PLANNED)
        .exists()
    )
    # Every installed component has one open installation in its own server's connector and an allocation
    # to that server; a planned server has none.
    installed = Component.objects.filter(status=ComponentStatus.INSTALLED)
    assert installed.exists()
    for component in installed[:50]:
        installation = Installation.objects.get(component=component, removed_at__isnull=True)
        assert installation.connector.server_id == installation.server_id
        assert (
            Allocation.objects.get(component=component, released_at__isnull=True).server_id
            == installation.server_id
        )
    assert not Installation.objects.filter(server__status=ServerStatus.PLANNED).exists()
    assert not Installation.objects.exclude(
        server__status__in=[*AT_LEAST_ASSEMBLED, ServerStatus.ASSEMBLING]
    ).exists()
    # One GPU lot per server (the same-lot rule).
    lots = Server.objects.annotate(
        lots=Count(
            "installations__component__lot",
            filter=Q(installations__component__part__category="gpu"),
            distinct=True,
        )
    )
    assert set(lots.filter(installations__isnull=False).values_list("lots", flat=True)) == {1}
    # The ledger: one movement per status change, so its last row is the component's status.
    component = installed.first()
    assert list(component.movements.order_by("created_at", "pk").values_list("to_status", flat=True)) == [
        ComponentStatus.IN_STOCK,
        ComponentStatus.ALLOCATED,
        ComponentStatus.INSTALLED,
    ]
    assert StockMovement.objects.count() > Component.objects.count()
    # Received quantities match the components on each PO line; a PO's status says whether all came.
    for po in PurchaseOrder.objects.prefetch_related("lines"):
        for line in po.lines.all():
            assert line.components.count() == line.quantity_received
    # Burn-in runs only for servers past burn-in, each with a result per GPU linked to an installed GPU.
    assert BurnInRun.objects.exists()
    assert not BurnInRun.objects.exclude(
        server__status__in=[
            ServerStatus.BURN_IN_PASSED,
            ServerStatus.BURN_IN_FAILED,
            ServerStatus.DEPLOYED,
            ServerStatus.HANDED_OVER,
        ]
    ).exists()
    linked = GpuResult.objects.filter(
        component__installations__server=F("run__server"), component__installations__removed_at__isnull=True
    )
    assert linked.count() == GpuResult.objects.count() == 8 * BurnInRun.objects.count()
    # Every order's transitions are audited, ending in its status.
    order = Order.objects.filter(status=OrderStatus.CLOSED).first()
    events = AuditEvent.objects.for_object(order).order_by("created_at", "pk")
    assert events.last().after == {"status": OrderStatus.CLOSED}
    assert events.count() == 1 + len(scale.ORDER_PATHS[OrderStatus.CLOSED])


def test_database_constraints_hold() -> None:
    _seed()
    # Every model's validate_constraints() check, on a sample of each table's rows.
    for model in scale.MODELS:
        for row in model.objects.order_by("pk")[:30]:
            row.validate_constraints()
    with transaction.atomic():
        connection.check_constraints()  # deferred foreign keys: every reference points at a row


def _digest_of(size: scale.ScaleSize) -> str:
    """Seed an empty database, take the digest, and roll the seed back."""
    with transaction.atomic():
        _seed(size)
        value = scale.digest()
        transaction.set_rollback(True)
    assert not Server.objects.exists()
    return value


def test_the_same_size_gives_the_same_rows() -> None:
    first = _digest_of(SMALL)
    assert _digest_of(SMALL) == first
    # Another seed of the generator gives other rows: the digest does see them.
    assert _digest_of(scale.ScaleSize(servers=60, components=500, samples=4000, orders=24, seed=2)) != first


def test_a_partner_sees_only_its_servers_and_a_customer_only_its_orders() -> None:
    _seed(scale.ScaleSize(servers=60, components=500, samples=1000, orders=80))
    users = get_user_model().objects
    partner = Organization.objects.get(name="Scale partner 001")
    partner_user = users.get(username="scale-partner-001")
    visible = Server.objects.visible_to(partner_user)
    assert 0 < visible.count() < Server.objects.count()
    assert set(visible.values_list("partner", flat=True)) == {partner.pk}
    assert Component.objects.visible_to(partner_user).count() < Component.objects.count()
    customer_user = users.get(username="scale-customer-001")
    orders = Order.objects.visible_to(customer_user)
    assert 0 < orders.count() < Order.objects.count()
    assert set(orders.values_list("customer__name", flat=True)) == {"Scale customer 001"}
    pm = users.get(username=scale.PM_USERNAME)
    assert Server.objects.visible_to(pm).count() == 60
    assert users.get(username="scale-partner-002").check_password(scale.PASSWORD)


def test_the_command_refuses_a_database_with_data_unless_told() -> None:
    out = StringIO()
    call_command("seed_scale", servers=10, components=100, samples=100, orders=5, stdout=out)
    assert "rows in" in out.getvalue()
    with pytest.raises(CommandError, match="already holds"):
        call_command("seed_scale", servers=10, components=100, samples=100, orders=5, stdout=StringIO())
    assert Server.objects.count() == 10
    # Told to add to it, it still writes nothing over its own rows: the same names are taken.
    with pytest.raises(CommandError, match="Nothing written"):
        call_command(
            "seed_scale",
            servers=10,
            components=100,
            samples=100,
            orders=5,
            allow_nonempty=True,
            stdout=StringIO(),
        )
    assert Server.objects.count() == 10
