"""What was measured on a server, kept by the app that measured it, for the apps beside it that may not
import that app: a registry of readers the lower app (builds) owns.

deployment checks a rental platform's host minimums with the PCIe bandwidth each GPU reached in the
server's accepted burn-in, but deployment and burnin never import each other. burnin registers its reader
here in its `AppConfig.ready()` (`burnin.measurements`); deployment asks `gpu_bandwidths`. No schema: the
figures stay on burnin's own rows. Without a reader (burnin not installed) nothing is known, and a caller
says so rather than guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class GpuBandwidth:
    """The host-to-device PCIe bandwidth (GB/s) of each GPU in a server's latest accepted burn-in run (the
    run the burn-in gate passed, or a post-repair run that passed since), by the run's GPU index; None for a
    GPU whose bandwidth the run did not measure. `stale_since` is the GPU install or removal after the run,
    if any: the figures were then measured on other hardware and are not the machine's."""

    h2d_gbps: tuple[float | None, ...]
    measured_at: datetime
    stale_since: datetime | None = None

    @property
    def slowest_gbps(self) -> float | None:
        """The slowest GPU's bandwidth, or None when a GPU was not measured (it could be the slowest)."""
        if not self.h2d_gbps or any(value is None for value in self.h2d_gbps):
            return None
        return min(value for value in self.h2d_gbps if value is not None)


#: A reader: `{server id: GpuBandwidth}` for the servers asked that have an accepted run, in a fixed number
#: of queries however many servers are asked.
GpuBandwidthReader = Callable[[Sequence[int]], Mapping[int, GpuBandwidth]]

_bandwidth_readers: list[GpuBandwidthReader] = []


def register_gpu_bandwidth_reader(reader: GpuBandwidthReader) -> None:
    """Register a reader once (a second `ready()` of the same app changes nothing)."""
    if reader not in _bandwidth_readers:
        _bandwidth_readers.append(reader)


def gpu_bandwidths(*, server_ids: Sequence[int]) -> dict[int, GpuBandwidth]:
    """Each server's GPU bandwidths as the registered readers know them; a server none knows is absent."""
    found: dict[int, GpuBandwidth] = {}
    for reader in _bandwidth_readers:
        found.update(reader(list(server_ids)))
    return found
