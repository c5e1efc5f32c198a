"""Connectors proposed for blacklisting on new builds of a chassis layout (issue #29).

The apps above fill the registry (pm.quality registers the connector positions whose failure rate is
flagged), which builds must not import. A source answers, for one layout, connector names with a sentence
that carries the figures ("PCIe-3: 2 of 4 servers failed there, 95 % interval 15.0–85.0 %"); none: nothing
to propose. The bench shows a proposal for a server still on the bench, for each of its connectors not yet
blacklisted; the partner decides, with the bench's own blacklist form. Nothing is blacklisted here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from builds.choices import BENCH_OPEN
from builds.models import ChassisLayout, Server
from inventory.choices import PartCategory

if TYPE_CHECKING:
    from builds.selectors import ConnectorCell

ProposalSource = Callable[[ChassisLayout], dict[str, str]]

_sources: list[ProposalSource] = []


def register_blacklist_proposals(source: ProposalSource) -> ProposalSource:
    """Add `source(layout) -> {connector name: sentence}`; registering it twice keeps one (AppConfig.ready
    may run twice)."""
    if source not in _sources:
        _sources.append(source)
    return source


def blacklist_proposals(layout: ChassisLayout) -> dict[str, str]:
    """Every source's proposals for `layout`, by connector name; two sources on one connector: both
    sentences."""
    proposals: dict[str, str] = {}
    for source in _sources:
        for name, sentence in source(layout).items():
            proposals[name] = f"{proposals[name]} {sentence}" if name in proposals else sentence
    return proposals


def server_layout(server: Server) -> ChassisLayout | None:
    """The chassis layout of the server's configuration (its connectors were copied from it). One query."""
    return (
        ChassisLayout.objects.filter(
            chassis__configuration_lines__configuration_id=server.order.configuration_id,
            chassis__category=PartCategory.CHASSIS,
        )
        .select_related("chassis")
        .first()
    )


def bench_proposals(server: Server, cells: Sequence[ConnectorCell]) -> list[dict[str, str]]:
    """The proposals the bench page shows for `server`, in map order: only while the server is on the bench
    (`BENCH_OPEN`: a new build, or one back for rework), and only for its connectors not yet blacklisted.
    No query when nothing is registered or the server is past the bench."""
    if not _sources or server.status not in BENCH_OPEN:
        return []
    layout = server_layout(server)
    if layout is None:
        return []
    proposals = blacklist_proposals(layout)
    return [
        {"connector": cell.name, "sentence": proposals[cell.name]}
        for cell in cells
        if cell.name in proposals and cell.state != "blacklisted"
    ]
