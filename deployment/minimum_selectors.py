"""Reads for a rental platform's host minimums: a server's own figures, the check a page shows, and the
warning that a component swap on a listed server costs its verification.

Where the figures come from (`server_host_facts`):

- GPUs, CPU cores, RAM and disk from the parts INSTALLED in the server now (builds' active installations):
  that is the machine the platform sees. The configuration is only the plan: the assembly gate asks for at
  least its quantities, so a server may hold more (or, after a warranty swap, other serials of the same
  part). A server with nothing installed yet (planned, or made without the bench) is read from its
  configuration instead, and the check says so.
- Cores are the CPU parts' physical `cores` spec × quantity (Vast.ai counts physical cores, "2
  hyperthreads" each); RAM the memory parts' `capacity_gb`; disk the storage parts' `capacity_gb` (the
  catalogue's storage is NVMe / SSD). A part without the spec, or no part of the category, leaves the
  figure unknown, with the reason.
- PCIe: the host-to-device bandwidth of the slowest GPU in the latest accepted burn-in run, read through
  the `builds.measurements` registry (burnin registers the reader; deployment never imports burnin).
  Unknown without an accepted run, when a GPU of it was not measured, when it measured fewer GPUs than the
  server has, or when a GPU changed after it (a stale measurement is not the machine's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from builds.measurements import gpu_bandwidths
from builds.models import Installation, Server
from deployment.choices import Platform
from deployment.minimums import HostFacts, MinimumCheck, Minimums, Shortfall, host_checks, host_shortfalls
from deployment.selectors import current_listing
from inventory.choices import PartCategory
from orders.selectors import configuration_lines

#: Platforms that re-verify a machine whose components change (Vast.ai deverifies it until it passes its
#: tests again: https://docs.vast.ai/documentation/host/verification-stages).
REVERIFYING_PLATFORMS = frozenset({Platform.VAST_AI})

#: The spec of each summed category, and the figure it gives.
_SPECS = {
    PartCategory.CPU: ("cores", "cpu_cores"),
    PartCategory.MEMORY: ("capacity_gb", "ram_gb"),
    PartCategory.STORAGE: ("capacity_gb", "disk_gb"),
}


def platform_minimums(platform: str) -> Minimums | None:
    """The platform's minimums from `WERKBANK_PLATFORM_HOST_MINIMUMS`, or None where it sets none."""
    values = getattr(settings, "WERKBANK_PLATFORM_HOST_MINIMUMS", {}).get(platform)
    return Minimums.from_setting(values) if values else None


def _spec(part: Any, name: str) -> float | None:
    value = (part.specs or {}).get(name)
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _parts(server: Server) -> tuple[list[tuple[Any, int]], str]:
    installed = [
        (installation.component.part, 1)
        for installation in Installation.objects.active()
        .filter(server=server)
        .select_related("component__part")
        .order_by("id")
    ]
    if installed:
        return installed, "installed"
    return [(line.part, line.quantity) for line in configuration_lines(order=server.order)], "configuration"


def _sums(parts: Iterable[tuple[Any, int]], source: str) -> tuple[dict[str, float | None], dict[str, str]]:
    totals: dict[str, float | None] = {}
    unknown: dict[str, str] = {}
    if source == "installed":
        missing = {
            PartCategory.CPU: _("no CPU installed."),
            PartCategory.MEMORY: _("no memory installed."),
            PartCategory.STORAGE: _("no storage installed."),
        }
    else:
        missing = {
            PartCategory.CPU: _("no CPU in the configuration."),
            PartCategory.MEMORY: _("no memory in the configuration."),
            PartCategory.STORAGE: _("no storage in the configuration."),
        }
    for category, (spec, figure) in _SPECS.items():
        of_category = [(part, quantity) for part, quantity in parts if part.category == category]
        if not of_category:
            totals[figure] = None
            unknown[figure] = missing[category]
            continue
        total = 0.0
        for part, quantity in of_category:
            value = _spec(part, spec)
            if value is None:
                total = -1.0
                unknown[figure] = _("the part %(mpn)s states no %(spec)s.") % {"mpn": part.mpn, "spec": spec}
                break
            total += value * quantity
        totals[figure] = None if total < 0 else total
    return totals, unknown


def _pcie(server: Server, gpu_count: int) -> tuple[float | None, str]:
    measured = gpu_bandwidths(server_ids=[server.pk]).get(server.pk)
    if measured is None:
        return None, _("no accepted burn-in run measured it.")
    if measured.stale_since is not None:
        return None, _("the accepted burn-in ran before the GPU change of %(when)s.") % {
            "when": f"{measured.stale_since:%Y-%m-%d %H:%M} UTC"
        }
    slowest = measured.slowest_gbps
    taken = sum(value is not None for value in measured.h2d_gbps)
    if slowest is None or len(measured.h2d_gbps) < gpu_count:
        return None, _("the accepted burn-in measured %(taken)s of %(gpus)s GPUs.") % {
            "taken": taken,
            "gpus": gpu_count,
        }
    return slowest, ""


def server_host_facts(*, server: Server) -> HostFacts:
    """The server's own figures for the host minimums (see the module docstring for their sources)."""
    parts, source = _parts(server)
    gpu_count = sum(quantity for part, quantity in parts if part.category == PartCategory.GPU)
    totals, unknown = _sums(parts, source)
    pcie, reason = _pcie(server, gpu_count) if gpu_count else (None, "")
    if reason:
        unknown["pcie_gbps"] = reason
    return HostFacts(
        gpu_count=gpu_count,
        cpu_cores=totals["cpu_cores"],
        ram_gb=totals["ram_gb"],
        disk_gb=totals["disk_gb"],
        pcie_gbps=pcie,
        source=source,
        unknown=unknown,
    )


@dataclass(frozen=True)
class PlatformCheck:
    """A platform's host minimums against one server, as the server page shows it."""

    platform: str
    platform_label: str
    facts: HostFacts
    rows: list[MinimumCheck]
    shortfalls: list[Shortfall]

    @property
    def from_installed(self) -> bool:
        return self.facts.source == "installed"


def host_minimums_checks(*, server: Server) -> list[PlatformCheck]:
    """The check of every platform with minimums in the settings (today Vast.ai), for the server page."""
    checks = []
    configured = getattr(settings, "WERKBANK_PLATFORM_HOST_MINIMUMS", {})
    facts = server_host_facts(server=server) if configured else None
    for platform in Platform:
        minimums = platform_minimums(platform.value)
        if minimums is None or facts is None:
            continue
        label = str(platform.label)
        checks.append(
            PlatformCheck(
                platform=platform.value,
                platform_label=label,
                facts=facts,
                rows=host_checks(facts=facts, minimums=minimums, platform=label),
                shortfalls=host_shortfalls(facts=facts, minimums=minimums, platform=label),
            )
        )
    return checks


def reverify_warnings(*, server: Server) -> list[str]:
    """What the person changing a component of `server` must know: a machine listed on a platform that
    re-verifies changed machines (Vast.ai) will be deverified until it passes again. Empty otherwise."""
    listing = current_listing(server=server)
    if listing is None or listing.platform not in REVERIFYING_PLATFORMS:
        return []
    return [
        _(
            "Server %(hostname)s is listed on %(platform)s as machine %(machine_id)s: the platform "
            "re-verifies a machine whose components change; expect it to be deverified until it passes "
            "again."
        )
        % {
            "hostname": server.hostname,
            "platform": Platform(listing.platform).label,
            "machine_id": listing.machine_id,
        }
    ]
