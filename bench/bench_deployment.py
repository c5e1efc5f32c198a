"""Rack placement and circuit loads (issue 11).

Seeds three 42U racks of one site, each with four feeds A1/B1/A2/B2 of 3 × 230 V × 32 A: one holding a
single 1U server, one holding 20, and one full (14 × 2U + 14 × 1U = 42U, 28 servers, each on an A/B pair),
all placed through `placement_create`. Figures: p50/p95 of `placement_create` of one more 1U server into
the rack of 1 and into the rack of 20 (the same server, placed and removed again each time) with their
ratio (≈ 1 when the lock and the checks do not grow with the rack) and the queries each takes (target ≤
50 ms p95); p50/p95 of `feed_loads(rack=)` for the full rack against the rack of one, with their ratio
(target ≤ 20 ms p95 for the full rack); and the rack elevation SVG of the full rack, once
`deployment.elevation.rack_elevation_svg` exists.
"""

from __future__ import annotations

import inspect
import statistics
import time
from collections.abc import Callable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.report import record
from builds.models import Server
from deployment.models import PowerFeed, Rack, RackPlacement, Site
from deployment.selectors import feed_loads
from deployment.services import placement_create
from inventory.models import Part
from orders.models import ConfigurationLine, Order, ServerConfiguration
from werkbank.models import Organization

REPEAT = 40
FEEDS = ("A1", "B1", "A2", "B2")


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def _configuration(name: str, *, chassis: Part, gpu: Part, cpu: Part, gpus: int, cpus: int) -> object:
    configuration = ServerConfiguration.objects.create(
        name=name, psu_count=2, psu_rating_w=2000, psu_redundant=1
    )
    ConfigurationLine.objects.bulk_create(
        [
            ConfigurationLine(configuration=configuration, part=chassis, quantity=1),
            ConfigurationLine(configuration=configuration, part=gpu, quantity=gpus),
            ConfigurationLine(configuration=configuration, part=cpu, quantity=cpus),
        ]
    )
    return configuration


def _servers(customer: Organization, configuration: object, reference: str, count: int) -> list[Server]:
    order = Order.objects.create(
        reference=reference, customer=customer, configuration=configuration, server_count=count
    )
    return Server.objects.bulk_create(
        Server(
            order=order,
            sequence=n,
            hostname=f"bench-rack-{reference[-4:]}-{n:02d}",
            asset_tag=f"BENCH-RACK-{reference[-4:]}-{n:02d}",
            status="burn_in_passed",
        )
        for n in range(1, count + 1)
    )


def _rack(site: Site, name: str) -> tuple[Rack, dict[str, PowerFeed]]:
    rack = Rack.objects.create(site=site, name=name, height_u=42)
    feeds = PowerFeed.objects.bulk_create(
        PowerFeed(rack=rack, name=feed, leg=feed[0], voltage_v=230, current_a=32, phases=3) for feed in FEEDS
    )
    return rack, {feed.name: feed for feed in feeds}


def _fill(rack: Rack, feeds: dict[str, PowerFeed], servers: list[Server], pm: object) -> None:
    """Stack the servers from U1 up, alternating the A1/B1 and A2/B2 pairs, each spread over the three
    phases of its feeds (one phase holds 5,888 W; a feed of the full rack carries ≈ 5,213 W on each)."""
    lowest = 1
    for index, server in enumerate(servers):
        pair = [feeds[name] for name in (("A1", "B1") if index % 2 == 0 else ("A2", "B2"))]
        placement = placement_create(
            server=server,
            rack=rack,
            lowest_u=lowest,
            feeds=pair,
            actor=pm,
            phases={feed.pk: "L1+L2+L3" for feed in pair},
        )
        lowest = placement.top_u + 1


def _seed() -> dict[str, object]:
    customer = Organization.objects.create(name="Bench deployment customer", kind="customer")
    gpu = Part.objects.create(
        category="gpu", manufacturer="NVIDIA", mpn="BENCH-DEP-GPU", name="GPU", vram_gb=48, tdp_w=250
    )
    cpu = Part.objects.create(category="cpu", manufacturer="AMD", mpn="BENCH-DEP-CPU", name="CPU", tdp_w=200)
    one_u = Part.objects.create(
        category="chassis", manufacturer="X", mpn="BENCH-DEP-1U", name="1U chassis", u_height=1
    )
    two_u = Part.objects.create(
        category="chassis", manufacturer="X", mpn="BENCH-DEP-2U", name="2U chassis", u_height=2
    )
    # Wall power: 1U (2 × 250 + 200) ÷ 0.94 ≈ 745 W, 2U (4 × 250 + 2 × 200) ÷ 0.94 ≈ 1,489 W; the full rack
    # puts 7 of each on every feed: ≈ 15,638 W of 17,664 W.
    small = _configuration("Bench 1U", chassis=one_u, gpu=gpu, cpu=cpu, gpus=2, cpus=1)
    large = _configuration("Bench 2U", chassis=two_u, gpu=gpu, cpu=cpu, gpus=4, cpus=2)
    ones = _servers(customer, small, "WB-2026-8901", 14 + 1 + 20 + 2)
    twos = _servers(customer, large, "WB-2026-8902", 14)
    site = Site.objects.create(
        name="Bench site", kind="colocation", operator="Bench", address="Bench", country="BG", eu=True
    )
    pm = get_user_model().objects.create_user("bench-deployment-pm", password="x", is_staff=True)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    racks = {}
    for name, servers in (("N1", ones[14:15]), ("N20", ones[15:35]), ("FULL", twos + ones[:14])):
        rack, feeds = _rack(site, name)
        _fill(rack, feeds, servers, pm)
        racks[name] = (rack, feeds)
    full = racks["FULL"][0]
    top = max(placement.top_u for placement in RackPlacement.objects.filter(rack=full))
    assert RackPlacement.objects.filter(rack=full).count() == 28 and top == 42
    return {"pm": pm, "racks": racks, "extra": ones[35:37]}


def _placement_create(
    rack: Rack, feeds: dict[str, PowerFeed], server: Server, pm: object
) -> tuple[list[float], int]:
    """Place `server` at U30 on A1 + B1 and take it out again (untimed), REPEAT times; the timings and the
    queries one placement takes."""
    samples, queries = [], 0
    for attempt in range(REPEAT + 1):
        start = time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            placement = placement_create(
                server=server, rack=rack, lowest_u=30, feeds=[feeds["A1"], feeds["B1"]], actor=pm
            )
        samples.append((time.perf_counter() - start) * 1000)
        queries = len(captured.captured_queries)
        RackPlacement.objects.filter(pk=placement.pk).delete()
        if attempt == 0:
            samples.clear()  # the first warms the caches
    return samples, queries


def _queries(fn: Callable[[], object]) -> int:
    with CaptureQueriesContext(connection) as queries:
        fn()
    return len(queries.captured_queries)


def _elevation(rack: Rack, pm: object) -> None:
    try:
        from deployment.elevation import rack_elevation_svg  # type: ignore[import-not-found]
    except ImportError:
        print("elevation: not built yet")
        return
    client = Client()
    client.force_login(pm)
    url = f"/api/v1/racks/{rack.pk}/elevation.svg"
    if client.get(url).status_code == 200:
        label, call = f"GET {url}", lambda: client.get(url)
    else:
        parameters = inspect.signature(rack_elevation_svg).parameters
        kwargs = {key: value for key, value in {"rack": rack, "user": pm}.items() if key in parameters}
        label, call = (
            "rack_elevation_svg (the endpoint is not routed yet)",
            lambda: rack_elevation_svg(**kwargs),
        )
    call()
    samples = _timed(call, REPEAT)
    record("rack elevation SVG, 28 servers p95", _p(samples, 95), "ms")
    print(
        f"elevation SVG of the full rack (28 servers), {label}: p50 {_p(samples, 50):6.1f} ms  "
        f"p95 {_p(samples, 95):6.1f} ms"
    )


def run() -> None:
    start = time.perf_counter()
    seeded = _seed()
    pm, racks, (extra_one, extra_twenty) = seeded["pm"], seeded["racks"], seeded["extra"]
    print(
        "deployment: seeded 3 racks (1, 20 and 28 servers) through placement_create in "
        f"{time.perf_counter() - start:.1f} s"
    )

    probe = racks["N1"][0].pk
    baseline = _timed(lambda: Rack.objects.filter(pk=probe).first(), REPEAT)
    print(
        f"baseline, one-row SELECT of a rack by id: p50 {_p(baseline, 50):5.2f} ms "
        "(this machine's cost of one round trip through the ORM)"
    )

    timings, counts = {}, {}
    for name, server in (("N1", extra_one), ("N20", extra_twenty)):
        rack, feeds = racks[name]
        timings[name], counts[name] = _placement_create(rack, feeds, server, pm)
    for name, held in (("N1", 1), ("N20", 20)):
        samples = timings[name]
        record(f"placement_create into a rack of {held} p95", _p(samples, 95), "ms", target=50)
        print(
            f"placement_create into a rack holding {held:2d}: p50 {_p(samples, 50):6.1f} ms  "
            f"p95 {_p(samples, 95):6.1f} ms  ({counts[name]} queries; "
            f"{_p(samples, 50) / _p(baseline, 50):.0f}× the one-row SELECT; target ≤ 50 ms p95)"
        )
    print(f"  ratio 20 / 1 (p50): {_p(timings['N20'], 50) / _p(timings['N1'], 50):.2f}")

    full, single = racks["FULL"][0], racks["N1"][0]
    loads = {}
    for name, rack in (("FULL", full), ("N1", single)):
        feed_loads(rack=rack)
        loads[name] = _timed(lambda rack=rack: feed_loads(rack=rack), REPEAT)
    worst = max(feed_loads(rack=full), key=lambda load: load.load_w)
    record("feed_loads, full rack p95", _p(loads["FULL"], 95), "ms", target=20)
    print(
        f"feed_loads of the full rack (28 servers, 4 feeds): p50 {_p(loads['FULL'], 50):6.1f} ms  "
        f"p95 {_p(loads['FULL'], 95):6.1f} ms  ({_queries(lambda: feed_loads(rack=full))} queries; "
        f"target ≤ 20 ms p95; busiest feed {worst.load_w:,.0f} W = {worst.percent_of_limit:.1f} % of its "
        "limit)"
    )
    print(
        f"feed_loads of the rack of one: p50 {_p(loads['N1'], 50):6.1f} ms; ratio full / one (p50): "
        f"{_p(loads['FULL'], 50) / _p(loads['N1'], 50):.2f}"
    )
    _elevation(full, pm)
