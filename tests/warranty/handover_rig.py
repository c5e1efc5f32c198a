"""A handed-over world for the warranty tests, on the builds tests' bench: customer A's server with two
GPUs (lot L1), two DIMMs and a chassis installed through the builds services, deployed, with a ready
handover pack; a third GPU of the same part stays in stock as the replacement. Customer B's server
(built by partner Q) is deployed too, with a ready pack and no components.

The `world` and `handed` fixtures live here beside their helpers; tests/warranty/conftest.py registers them
(and the builds bench they stand on) for this folder, and other folders import them from here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Server
from builds.services import server_install
from inventory.models import Component
from orders.choices import OrderStatus
from orders.models import Order
from tests.builds.bench_rig import CHASSIS, DIMMS, GPUS_L1, Bench
from tests.builds.bench_rig import bench as builds_bench
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from warranty.services import server_hand_over

bench = builds_bench

INSTALLED = [
    (GPUS_L1[0], "PCIe-1"),
    (GPUS_L1[1], "PCIe-2"),
    (DIMMS[0], "DIMM-A1"),
    (DIMMS[1], "DIMM-A2"),
    (CHASSIS, "Chassis"),
]
SPARE_GPU = GPUS_L1[2]


def ready_pack(server: Server) -> HandoverPack:
    """A ready pack row (the pack helper's task renders real files; the hand-over only asks that one is
    ready)."""
    return HandoverPack.objects.create(
        server=server,
        revision=1,
        status=PackStatus.READY,
        progress=100,
        pdf=f"handover/{server.asset_tag}/r1-en/pack.pdf",
        pdf_sha256="a" * 64,
        zip=f"handover/{server.asset_tag}/r1-en/pack.zip",
        zip_sha256="b" * 64,
    )


def recommission(server: Server, component: Component, *, result: str = "pass") -> Any:
    """A post-repair run of `server` uploaded now that measured `component` (a replacement GPU), as the
    ingest would leave it: what a claim whose replacement is a GPU needs before it closes."""
    from burnin.models import GpuResult
    from tests.factories import make_burnin_run_row

    now = timezone.now()
    run = make_burnin_run_row(
        server, started_at=now - timedelta(hours=2), ended_at=now, result=result, purpose="post_repair"
    )
    GpuResult.objects.create(run=run, index=0, serial=component.serial, component=component)
    return run


def deploy(*servers: Server) -> None:
    """Servers deployed and their orders in deployment, as burn-in and deployment would leave them."""
    Server.objects.filter(pk__in=[s.pk for s in servers]).update(status=ServerStatus.DEPLOYED)
    Order.objects.filter(servers__in=servers).update(status=OrderStatus.DEPLOYMENT)


@dataclass
class World:
    bench: Bench
    server: Server
    server_b: Server

    @property
    def t(self) -> Any:
        return self.bench.t

    def component(self, serial: str) -> Component:
        return Component.objects.get(serial=serial)


@pytest.fixture
def world(bench: Bench) -> World:
    for serial, connector in INSTALLED:
        server_install(
            server=bench.server,
            actor=bench.t.pm,
            component=Component.objects.get(serial=serial),
            connector_name=connector,
        )
    deploy(bench.server, bench.other_server, bench.server_q)
    for server in (bench.server, bench.server_q):
        ready_pack(server)
    return World(
        bench=bench,
        server=Server.objects.get(pk=bench.server.pk),
        server_b=Server.objects.get(pk=bench.server_q.pk),
    )


@pytest.fixture
def handed(world: World, django_capture_on_commit_callbacks: Any) -> World:
    """The world with customer A's first server and customer B's server handed over (records created by
    the task, eagerly on commit)."""
    for server in (world.server, world.server_b):
        with django_capture_on_commit_callbacks(execute=True):
            server_hand_over(server=server, actor=world.t.pm)
    world.server.refresh_from_db()
    world.server_b.refresh_from_db()
    mail.outbox.clear()  # the order status e-mails of customer B's order, closed with its one server
    return world
