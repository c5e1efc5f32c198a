"""Helpers of the deployment service tests: servers with a configuration of known power and height, and a
rack with named power feeds, all made through the services where there is one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from builds.models import Server
from deployment.models import PowerFeed, Rack, Site
from deployment.services import feed_create, rack_create, site_create
from inventory.choices import PartCategory
from orders.choices import OrderStatus
from orders.models import ServerConfiguration
from tests import factories
from werkbank.models import AuditEvent

#: The default configuration: 4 GPUs of 500 W and 2 CPUs of 250 W (2,500 W of TDP), in a 4U chassis.
GPU_TDP, GPU_COUNT = 500, 4
CPU_TDP, CPU_COUNT = 250, 2
HOST_W = CPU_TDP * CPU_COUNT  # 500
TOTAL_TDP_W = GPU_TDP * GPU_COUNT + HOST_W  # 2,500


def config(
    *,
    u_height: int | None = 4,
    gpus: tuple[int, int] = (GPU_TDP, GPU_COUNT),
    others: Sequence[tuple[str, int | None, int]] = ((PartCategory.CPU, CPU_TDP, CPU_COUNT),),
    chassis: bool = True,
) -> ServerConfiguration:
    """A configuration: `gpus` = (TDP, count), `others` = (category, TDP, count), and a chassis of
    `u_height` (a chassis part without a height when `u_height` is None; no chassis when not `chassis`)."""
    lines: list[tuple[Any, int]] = [
        (factories.PartFactory(category=PartCategory.GPU, tdp_w=gpus[0]), gpus[1])
    ]
    lines += [
        (factories.PartFactory(category=category, tdp_w=tdp, vram_gb=None), count)
        for category, tdp, count in others
    ]
    if chassis:
        lines.append((factories.ChassisFactory(u_height=u_height), 1))
    return factories.ConfigurationFactory(lines=lines)


def servers(
    count: int = 1,
    *,
    status: str = "burn_in_passed",
    configuration: ServerConfiguration | None = None,
    customer: Any = None,
    order_status: str = OrderStatus.DEPLOYMENT,
) -> list[Server]:
    """`count` servers of one order, in `status`."""
    order = factories.OrderFactory(
        server_count=count,
        status=order_status,
        configuration=configuration or config(),
        **({"customer": customer} if customer is not None else {}),
    )
    made = factories.make_servers(order, status=status)
    return [Server.objects.get(pk=server.pk) for server in made]


def server(**kwargs: Any) -> Server:
    return servers(1, **kwargs)[0]


def site(pm: Any, name: str = "Sofia Colo 1") -> Site:
    return site_create(
        actor=pm, name=name, kind="colocation", operator="Telehouse", address="Sofia", country="BG"
    )


def rack(
    pm: Any,
    *,
    height_u: int = 42,
    feeds: Sequence[dict[str, Any]] = ({"name": "A1"},),
    name: str = "R01",
    at: Site | None = None,
) -> tuple[Rack, list[PowerFeed]]:
    """A rack at a colocation with its feeds (default 230 V × 16 A × 1 phase, leg A)."""
    made = rack_create(site=at or site(pm, name=f"Site of {name}"), actor=pm, name=name, height_u=height_u)
    return made, [
        feed_create(rack=made, actor=pm, **{"leg": "A", "voltage_v": 230, "current_a": 16, **feed})
        for feed in feeds
    ]


def events(obj: Any, verb: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.for_object(obj).filter(verb=verb).order_by("id"))
