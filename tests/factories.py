"""factory_boy factories: small explicit data, no fixed primary keys."""

from __future__ import annotations

from decimal import Decimal

import factory
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from inventory.choices import PartCategory
from inventory.models import Part, PurchaseOrder, Supplier
from orders.choices import OrderStatus
from orders.models import ConfigurationLine, Order, ROIAssessment, ServerConfiguration
from werkbank.choices import OrganizationKind
from werkbank.models import Membership, Organization

PASSWORD = "correct-horse-battery-staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def save_password(self, create: bool, extracted: object, **kwargs: object) -> None:
        if create:
            self.save()


def make_pm(**kwargs: object):
    user = UserFactory(is_staff=True, **kwargs)
    group, _ = Group.objects.get_or_create(name=settings.WERKBANK_PM_GROUP)
    user.groups.add(group)
    return user


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Customer {n} GmbH")
    kind = OrganizationKind.CUSTOMER
    contact_email = factory.LazyAttribute(lambda org: f"ops@{org.name.split()[0].lower()}.example")


class PartnerFactory(OrganizationFactory):
    name = factory.Sequence(lambda n: f"Partner {n} s.r.o.")
    kind = OrganizationKind.PARTNER


def make_member(organization: Organization, **kwargs: object):
    user = UserFactory(**kwargs)
    Membership.objects.create(user=user, organization=organization)
    return user


class SupplierFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Supplier
        django_get_or_create = ("name",)

    name = "EuroGPU Distribution GmbH"
    country = "DE"
    vat_id = "DE123456789"


class PartFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Part

    category = PartCategory.GPU
    manufacturer = "NVIDIA"
    mpn = factory.Sequence(lambda n: f"MPN-{n:05d}")
    name = factory.Sequence(lambda n: f"Part {n}")
    vram_gb = factory.LazyAttribute(lambda part: 32 if part.category == PartCategory.GPU else None)
    tdp_w = 575
    list_price = Decimal("1000.00")
    preferred_supplier = factory.SubFactory(SupplierFactory)


class ChassisFactory(PartFactory):
    category = PartCategory.CHASSIS
    manufacturer = "Werkbank"
    u_height = 6
    tdp_w = None


class ConfigurationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ServerConfiguration
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Config {n}")
    psu_count = 5
    psu_rating_w = 1600
    psu_redundant = 1

    @factory.post_generation
    def lines(self, create: bool, extracted: list | None, **kwargs: object) -> None:
        if not create:
            return
        if extracted is None:
            extracted = [(PartFactory(), 8), (ChassisFactory(), 1)]
        for part, quantity in extracted:
            ConfigurationLine.objects.create(configuration=self, part=part, quantity=quantity)


class OrderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Order

    reference = factory.Sequence(lambda n: f"WB-2026-{9000 + n:04d}")
    customer = factory.SubFactory(OrganizationFactory)
    configuration = factory.SubFactory(ConfigurationFactory)
    server_count = 2
    warranty_months = 36
    status = OrderStatus.DRAFT


class ROIAssessmentFactory(factory.django.DjangoModelFactory):
    """A saved assessment that pays back in 20 months (the gate's default target is 36)."""

    class Meta:
        model = ROIAssessment

    order = factory.SubFactory(OrderFactory)
    version = factory.Sequence(lambda n: n + 1)
    capex = Decimal("40000.00")
    gpu_count = 8
    price_per_gpu_hour = Decimal("0.9000")
    utilization = Decimal("0.7000")
    power_active_kw = Decimal("6.000")
    power_idle_kw = Decimal("0.900")
    energy_price_kwh = Decimal("0.1500")
    pue = Decimal("1.30")
    colo_month = Decimal("600.00")
    target_payback_months = Decimal("36.0")
    hours_per_month = 730
    revenue_month = Decimal("3679.20")
    energy_month = Decimal("636.00")
    net_month = Decimal("2000.00")
    payback_months = Decimal("20.00")
    npv = Decimal("20000.00")


def pass_gate(order: Order) -> Order:
    """Give the order what the approval gate needs: a paying ROI (its configuration's power already holds)."""
    ROIAssessmentFactory(order=order)
    return order


def make_po(
    *,
    deliver_to: Organization | None = None,
    quantity: int = 8,
    part: Part | None = None,
    supplier=None,
    send: bool = True,
) -> PurchaseOrder:
    """A purchase order with one line, sent to an EU supplier unless `send=False`, through the services."""
    from inventory.services import po_create, po_send

    pm = make_pm()
    po = po_create(
        actor=pm,
        supplier=supplier or SupplierFactory(),
        lines=[(part or PartFactory(), quantity, Decimal("2400.00"))],
        deliver_to=deliver_to,
    )
    return po_send(po=po, actor=pm) if send else po


def make_servers(order: Order, *, status: str = "planned") -> list:
    """The order's servers, one per unit, in one status (as the builds services would have left them)."""
    from builds.models import Server

    return Server.objects.bulk_create(
        Server(
            order=order,
            sequence=n,
            hostname=f"{order.reference.lower()}-{n:02d}",
            asset_tag=f"{order.reference}-{n:02d}",
            status=status,
        )
        for n in range(1, order.server_count + 1)
    )


def receive_stock(
    *,
    deliver_to: Organization | None,
    lots: dict[str, list[str]],
    part: Part | None = None,
    quantity: int | None = None,
    origin: str = "TW",
    date_code: str = "2526",
) -> PurchaseOrder:
    """Serials in stock: a sent PO with one line of `part` (for `quantity`, by default exactly the serials),
    delivered to `deliver_to`'s workshop and received lot by lot through the inventory services, as a
    scanner gives them."""
    from inventory.packing import parse_scanner
    from inventory.services import po_line_receive

    serials = sum(len(each) for each in lots.values())
    po = make_po(deliver_to=deliver_to, part=part, quantity=quantity or serials)
    line, pm = po.lines.get(), make_pm()
    for lot_code, lot_serials in lots.items():
        po_line_receive(
            line=line,
            actor=pm,
            lot_code=lot_code,
            date_code=date_code,
            origin=origin,
            packing=parse_scanner("\n".join(lot_serials)),
        )
    return po


def make_burnin_run(server, *, started_at, ended_at=None, result: str = "pass", **fields: object):
    """A burn-in run row for `server` as the ingest would leave it (its report file is not written)."""
    import hashlib

    from burnin.models import BurnInRun

    report_id = hashlib.sha256(f"{server.pk}-{started_at.isoformat()}-{fields}".encode()).hexdigest()
    return BurnInRun.objects.create(
        server=server,
        report_id=report_id,
        probe_version=fields.pop("probe_version", "0.3.0"),
        schema_version=fields.pop("schema_version", "1"),
        started_at=started_at,
        ended_at=ended_at,
        result=result,
        rules_version=fields.pop("rules_version", "test"),
        report=f"burnin/{report_id[:2]}/{report_id}.json.gz",
        **fields,
    )
