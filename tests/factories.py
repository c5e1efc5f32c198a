"""factory_boy factories: small explicit data, no fixed primary keys."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import factory
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.files.base import ContentFile

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


def make_burnin_run(
    server: Any,
    *,
    findings: Sequence[dict[str, Any]] = (),
    stages: Sequence[dict[str, Any]] = (),
    started_at: datetime | None = None,
    result: str | None = None,
) -> Any:
    """A burn-in run of `server` with its stages and findings, written directly (as the ingest would have
    left them). A finding is a dict of Finding fields: `code` and `severity` at least; a stage has `name`
    and `status` at least. The raw report stored with it is a small gzip of those lists."""
    from burnin.models import BurnInRun, BurnInStage, Finding

    started_at = started_at or datetime(2026, 8, 20, 8, 0, tzinfo=UTC)
    report = {"server": server.asset_tag, "stages": list(stages), "findings": list(findings)}
    raw = gzip.compress(json.dumps(report, default=str, sort_keys=True).encode())
    severities = {finding["severity"] for finding in findings}
    run = BurnInRun(
        server=server,
        report_id=hashlib.sha256(f"{server.pk}/{started_at.isoformat()}/{uuid.uuid4()}".encode()).hexdigest(),
        probe_version="0.1.0",
        schema_version="1",
        started_at=started_at,
        ended_at=started_at + timedelta(hours=72),
        result=result or ("fail" if "fail" in severities else "pass"),
        rules_version="test-1",
    )
    run.report.save("report.json.gz", ContentFile(raw), save=False)
    run.save()
    BurnInStage.objects.bulk_create(
        BurnInStage(run=run, position=position, **{"reason": "", **stage})
        for position, stage in enumerate(stages, start=1)
    )
    Finding.objects.bulk_create(
        Finding(
            run=run,
            rule_version="test-1",
            **{"subject": "host", "message": f"{finding['code']} ({finding['severity']})", **finding},
        )
        for finding in findings
    )
    return run


def make_burnin_run_row(server, *, started_at, ended_at=None, result: str = "pass", **fields: object):
    """A bare burn-in run row for `server` (no stages, no findings; its report file is not written)."""
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


BURNIN_START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def _peak_c(gpu_index: int) -> float:
    """Seed 003: GPU 1 peaks at 88 °C against a 90 °C slowdown point; the others run a little cooler."""
    return 88.0 if gpu_index == 1 else round(80.0 - 0.6 * gpu_index, 1)


def make_seed003_burnin_run(
    server, *, gpus: int = 6, throttle: bool = True, started_at: datetime = BURNIN_START, hours: int = 6
):
    """A run shaped like seed 003: GPUs 2 and 4 at Gen4 x8 (13.9 against 27.7 GB/s), GPU 1 close to its
    slowdown point (88 against 90 °C, a waived warning), the `burn` stage interrupted, a correlated-ECC
    warning; telemetry every 5 minutes, with one thermal slowdown (0x40) on GPU 1 when `throttle`, else
    only the software power cap (0x4). Rows written directly, as the ingest would leave them."""
    from burnin.models import BurnInStage, Finding, GpuResult, TelemetrySample

    h2d_gbps = {2: 13.9, 4: 13.9}
    run = make_burnin_run_row(
        server, started_at=started_at, ended_at=started_at + timedelta(hours=hours), result="fail"
    )
    for position, (name, status, reason) in enumerate(
        [
            ("inventory", "ok", ""),
            ("bench", "ok", ""),
            ("burn", "interrupted", "workshop power distribution failure"),
            ("finalize", "ok", ""),
        ]
    ):
        BurnInStage.objects.create(run=run, position=position, name=name, status=status, reason=reason)
    for index in range(gpus):
        x8 = index in (2, 4)
        GpuResult.objects.create(
            run=run,
            index=index,
            serial=f"16520240313{index:02d}",
            expected_gen=4,
            expected_width=16,
            load_gen=4,
            load_width=8 if x8 else 16,
            h2d_gbps=h2d_gbps.get(index, 27.7),
            d2h_gbps=h2d_gbps.get(index, 27.7) - 0.4,
            tflops=291.0 + index * 2,
            vram_gbps=1471.0,
            peak_temp_c=_peak_c(index),
            min_margin_c=round(90.0 - _peak_c(index), 1),
            mean_power_w=295.0,
            power_limit_w=300.0,
            matmuls=120_000,
            mismatches=0,
            nans=0,
        )
    samples = []
    for index in range(gpus):
        for step in range(hours * 12):
            # Warm-up over the first hour, then a slow 12 h swing of the room; the peak is the GPU's result.
            warm = math.exp(-step / 8)
            temp = _peak_c(index) - 20 * warm - (1 + math.sin(2 * math.pi * step / 144 + index))
            thermal = throttle and index == 1 and step == 30
            samples.append(
                TelemetrySample(
                    run=run,
                    gpu_index=index,
                    at=started_at + timedelta(minutes=5 * step),
                    temp_c=round(temp, 1),
                    margin_c=round(90.0 - temp, 1),
                    power_w=round(284 + index * 1.5 - 60 * warm + 3 * math.sin(step / 7 + index), 1),
                    sm_mhz=1050.0 if thermal else round(1398 - (temp - 60) * 0.4, 0),
                    util_pct=100.0,
                    clock_event_mask=0x40 if thermal else 0x4,
                )
            )
    TelemetrySample.objects.bulk_create(samples)
    pm = make_pm(username=f"waiver-pm-{run.pk}")
    for index in (2, 4):
        Finding.objects.create(
            run=run,
            code="pcie_link_downtrained",
            severity="fail",
            subject=f"GPU {index}",
            gpu_index=index,
            message="PCIe link at Gen4 x8 under load (expected Gen4 x16)",
            params={"link": "Gen4 x8", "expected": "Gen4 x16"},
            rule_version="test",
        )
    Finding.objects.create(
        run=run,
        code="thermal_margin_low",
        severity="warn",
        subject="GPU 1",
        gpu_index=1,
        message="thermal margin 2 °C at peak (88 °C)",
        params={"variant": "low", "gpu": 1, "margin_c": 2, "peak_c": 88},
        rule_version="test",
        waived_by=pm,
        waived_at=started_at + timedelta(days=1),
        waiver_reason="Slot 1 sits behind the PSU; a baffle is ordered.",
    )
    Finding.objects.create(
        run=run,
        code="ecc_correlated_periodic",
        severity="warn",
        subject="DIMMs A1, B1",
        message="correctable ECC in the same second, three times at ~4 h intervals: a signature of an "
        "external periodic cause, not a failing module",
        params={"variant": "coincident", "dimms": ["A1", "B1"], "bursts": 3, "period_s": 15330},
        rule_version="test",
    )
    Finding.objects.create(
        run=run,
        code="power_capped",
        severity="info",
        subject="GPU 0",
        gpu_index=0,
        message="software power cap active in 93% of samples (normal at full load)",
        params={"share_pct": 93},
        rule_version="test",
    )
    return run
