"""The link rules (docs/reference/burnin.md §4, rules 1–5 and 13): the PCIe link under load, host-to-device
bandwidth, NUMA placement, and PCIe replays."""

from __future__ import annotations

from collections.abc import Iterable

from burnin.analysis.common import (
    change,
    first_of,
    link_text,
    lowest,
    num,
    parse_time,
    plain,
    plural,
    rounded,
    sysfs_bdf,
)
from burnin.analysis.context import Context, Finding, Gpu, peer_median


def pcie_link(ctx: Context) -> Iterable[Finding]:
    """Rules 1 and 2: the link under load against the expected link; a platform cap below the card."""
    limited = {}
    for item in (ctx.report.get("dmesg") or {}).get("link_limited") or []:
        limited[str(item.get("bdf", "")).lower()] = item.get("line")
    for gpu in ctx.gpus:
        link = gpu.link
        evidence = {
            "expected": {
                "gen": link.expected_gen,
                "width": link.expected_width,
                "width_from": link.width_source,
            },
            "under_load": {
                "gen": link.loaded_gen,
                "width": link.loaded_width,
                "samples": link.loaded_samples,
                "samples_below_expected": link.loaded_below,
                "from": link.loaded_source,
            },
            "card_max_gen": link.card_gen,
            "host_max_gen": link.host_gen,
            "driver_max": {"gen": link.driver_max_gen, "width": link.driver_max_width},
            "configuration_gen": link.promised_gen,
            "idle": gpu.get("pcie", "idle"),
            "sysfs_upstream": gpu.get("pcie", "sysfs", "upstream"),
            "kernel_limited_by": limited.get(sysfs_bdf(gpu.get("pci_bus_id"))),
        }
        width_downtrained = False
        if link.downtrained:
            width_downtrained = link.loaded_width is not None and link.loaded_width < link.expected_width
            params = {
                "link": link_text(link.loaded_gen, link.loaded_width),
                "expected": link_text(link.expected_gen, link.expected_width),
            }
            text = f"PCIe link at {params['link']} under load (expected {params['expected']})"
            if width_downtrained and link.driver_max_width == link.loaded_width:
                params.update(variant="driver_width", driver_max_width=link.driver_max_width)
                text += f": the driver's maximum is x{link.driver_max_width} too (slot, riser or bifurcation)"
            yield Finding("pcie_link_downtrained", "fail", gpu.index, text, evidence, params)
        platform_gen = lowest(link.host_gen, link.driver_max_gen)
        if link.card_gen is not None and platform_gen is not None:
            promised = lowest(link.card_gen, link.promised_gen)
            if link.promised_gen is not None and platform_gen < promised:
                yield Finding(
                    "pcie_link_cap_limited",
                    "fail",
                    gpu.index,
                    f"link capped at Gen{platform_gen} by the host, "
                    f"but the configuration promises Gen{promised}",
                    evidence,
                    {"variant": "promised", "gen": platform_gen, "promised": promised},
                )
            elif platform_gen < link.card_gen:
                stated = link.promised_gen is not None and link.promised_gen <= platform_gen
                yield Finding(
                    "pcie_link_cap_limited",
                    "info" if stated else "warn",
                    gpu.index,
                    f"Gen{link.card_gen} card runs at the platform's Gen{platform_gen}"
                    + (", as the configuration states" if stated else " (host root port maximum)"),
                    evidence,
                    {
                        "variant": "stated" if stated else "host",
                        "card_gen": link.card_gen,
                        "gen": platform_gen,
                    },
                )
        if (
            not width_downtrained
            and link.driver_max_width is not None
            and link.driver_max_width < link.expected_width
        ):
            yield Finding(
                "pcie_link_cap_limited",
                "fail",
                gpu.index,
                f"the driver reports a maximum link width of x{link.driver_max_width} "
                f"(expected x{link.expected_width}): slot, riser or bifurcation",
                evidence,
                {
                    "variant": "driver_width",
                    "width": link.driver_max_width,
                    "expected_width": link.expected_width,
                },
            )


def _h2d_value(gpu: Gpu) -> float | None:
    h2d = gpu.get("bench", "h2d_gbps") or {}
    return num(first_of(h2d.get("local"), h2d.get("default")))


def h2d(ctx: Context) -> Iterable[Finding]:
    """Rule 3 (outlier against peers and against the generation's expectation) and rule 4 (under load)."""
    lim = ctx.limits
    for gpu in ctx.gpus:
        value = _h2d_value(gpu)
        if value is None:
            continue
        median, peers = peer_median(ctx, gpu, _h2d_value)
        link = gpu.link
        per_gen = lim.h2d_expected_x16_gbps.get(link.expected_gen or 0)
        expected = per_gen * link.expected_width / 16 if per_gen else None
        low_peer = median is not None and value < lim.h2d_ratio_fail * median
        low_abs = expected is not None and value < lim.h2d_ratio_fail * expected
        if low_peer or low_abs:
            params: dict = {"h2d_gbps": round(value, 1)}
            if low_peer:
                params.update(variant="peers", ratio=round(value / median, 2))
                text = f"H2D {params['h2d_gbps']:.1f} GB/s, {params['ratio']:.2f} × the median"
            else:
                params.update(
                    variant="expected",
                    ratio=round(value / expected, 2),
                    expected_gbps=round(expected, 2),
                    expected_link=link_text(link.expected_gen, link.expected_width),
                )
                text = (
                    f"H2D {params['h2d_gbps']:.1f} GB/s, {params['ratio']:.2f} × the "
                    f"{plain(params['expected_gbps'])} GB/s expected of a {params['expected_link']} link"
                )
            if link.downtrained:
                now, want = link.describe()
                params.update(variant=params["variant"] + "_link", link=now, link_expected=want)
                text += f": link at {now} (expected {want})"
            elif low_peer:
                params.update(peers=peers, median_gbps=round(median, 1))
                text += f" of {peers} cards ({params['median_gbps']:.1f} GB/s)"
            yield Finding(
                "h2d_bandwidth_outlier",
                "fail",
                gpu.index,
                text,
                {
                    "h2d_gbps": value,
                    "peer_median_gbps": median,
                    "peers": peers,
                    "ratio_to_median": rounded(value / median, 3) if median else None,
                    "expected_gbps": expected,
                    "threshold_ratio": lim.h2d_ratio_fail,
                    "link_under_load": link_text(link.loaded_gen, link.loaded_width)
                    if link.loaded_samples
                    else None,
                    "expected_link": link_text(link.expected_gen, link.expected_width),
                },
                params,
            )
        h2d = gpu.get("bench", "h2d_gbps") or {}
        idle, loaded = num(first_of(h2d.get("default"), h2d.get("local"))), num(h2d.get("under_load"))
        if idle and loaded is not None and loaded < lim.h2d_under_load_ratio * idle:
            params = {
                "variant": "gpu",
                "under_load_gbps": round(loaded, 1),
                "ratio": round(loaded / idle, 2),
                "idle_gbps": round(idle, 1),
            }
            yield Finding(
                "h2d_under_load_drop",
                "warn",
                gpu.index,
                f"H2D drops to {params['under_load_gbps']:.1f} GB/s under load, {params['ratio']:.2f} × idle "
                f"({params['idle_gbps']:.1f} GB/s): a shared switch or root port",
                {
                    "idle_gbps": idle,
                    "under_load_gbps": loaded,
                    "method": gpu.get("bench", "under_load_method"),
                },
                params,
            )
    pairs = [
        (
            num((g.get("bench", "h2d_gbps") or {}).get("concurrent")),
            num((g.get("bench", "h2d_gbps") or {}).get("default")),
        )
        for g in ctx.gpus
    ]
    pairs = [(c, d) for c, d in pairs if c is not None and d]
    if len(pairs) > 1:
        concurrent, alone = sum(c for c, _ in pairs), sum(d for _, d in pairs)
        if concurrent < lim.h2d_concurrent_ratio * alone:
            params = {
                "variant": "concurrent",
                "gpus": len(pairs),
                "concurrent_gbps": round(concurrent, 1),
                "ratio": round(concurrent / alone, 2),
                "individual_gbps": round(alone, 1),
            }
            yield Finding(
                "h2d_under_load_drop",
                "warn",
                "host",
                f"H2D to all {len(pairs)} GPUs at once totals {params['concurrent_gbps']:.1f} GB/s, "
                f"{params['ratio']:.2f} × the {params['individual_gbps']:.1f} GB/s they reach one at a time",
                {"concurrent_sum_gbps": rounded(concurrent, 2), "individual_sum_gbps": rounded(alone, 2)},
                params,
            )


def numa(ctx: Context) -> Iterable[Finding]:
    """Rule 5: the default placement performs like the remote NUMA node (the workload runs off-node)."""
    lim = ctx.limits
    for gpu in ctx.gpus:
        h2d = gpu.get("bench", "h2d_gbps") or {}
        default, local, remote = (num(h2d.get(k)) for k in ("default", "local", "remote"))
        if not (default and local and remote) or remote >= (1 - lim.numa_penalty_min) * local:
            continue
        if default <= (1 + lim.numa_remote_within) * remote:
            params = {
                "default_gbps": round(default, 1),
                "remote_gbps": round(remote, 1),
                "local_gbps": round(local, 1),
            }
            yield Finding(
                "numa_misaffinity",
                "warn",
                gpu.index,
                f"H2D at default placement {params['default_gbps']:.1f} GB/s matches the remote NUMA node "
                f"({params['remote_gbps']:.1f} GB/s, local {params['local_gbps']:.1f} GB/s): "
                "pin host buffers with numactl",
                {
                    "default_gbps": default,
                    "local_gbps": local,
                    "remote_gbps": remote,
                    "numa_node": gpu.get("numa_node"),
                },
                params,
            )


def _run_minutes(ctx: Context) -> float | None:
    probe = ctx.report.get("probe") or {}
    start, end = parse_time(probe.get("started_at")), parse_time(probe.get("ended_at"))
    if start and end and end > start:
        return (end - start).total_seconds() / 60
    spans = [g.series.t_last - g.series.t_first for g in ctx.gpus if g.series]
    return max(spans) / 60 if spans and max(spans) > 0 else None


def replays(ctx: Context) -> Iterable[Finding]:
    """Rule 13: PCIe replay counter and AER correctable growth."""
    lim, minutes = ctx.limits, _run_minutes(ctx)
    for gpu in ctx.gpus:
        pcie = gpu.get("pcie") or {}
        replayed = change(
            (pcie.get("replay_counter") or {}).get("start"), (pcie.get("replay_counter") or {}).get("end")
        )
        aer = change(
            (pcie.get("aer_correctable") or {}).get("start"), (pcie.get("aer_correctable") or {}).get("end")
        )
        replayed, aer = max(replayed or 0, 0), max(aer or 0, 0)  # a counter reset is not growth
        if not replayed and not aer:
            continue
        per_min = aer / minutes if aer and minutes else None
        gen = gpu.link.expected_gen
        aer_limit = lim.aer_per_min_fail.get(5 if gen and gen >= 5 and gpu.link.expected_width >= 16 else 4)
        severe = replayed > lim.replay_fail or (per_min is not None and per_min > aer_limit)
        params = {"replays": replayed, "aer": aer, "aer_per_min": rounded(per_min, 1)}
        parts = [
            plural(replayed, "PCIe replay", "PCIe replays") if replayed else "",
            plural(aer, "AER correctable error", "AER correctable errors") if aer else "",
        ]
        yield Finding(
            "pcie_replay_growth",
            "fail" if severe else "warn",
            gpu.index,
            f"{' and '.join(p for p in parts if p)} during the run"
            + (f" ({params['aer_per_min']:.1f} AER/min)" if per_min is not None else ""),
            {
                "replays": replayed,
                "aer": aer,
                "aer_per_min": rounded(per_min, 2),
                "aer_limit_per_min": aer_limit,
            },
            params,
        )
