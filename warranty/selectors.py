"""Reads of the warranty app: what a handover lacks, records by serial, claims."""

from __future__ import annotations

from builds.choices import ServerStatus
from builds.models import Server
from warranty.choices import PackStatus
from warranty.models import HandoverPack


def hand_over_missing(*, server: Server) -> list[str]:
    """Everything that stands between a server and its handover, as sentences (empty: it may go)."""
    missing = []
    if server.status != ServerStatus.DEPLOYED:
        missing.append(
            f"Server {server.hostname} is {ServerStatus(server.status).label.lower()}; it must be deployed."
        )
    if not HandoverPack.objects.filter(server=server, status=PackStatus.READY).exists():
        missing.append(f"Server {server.hostname} has no ready handover pack; generate one first.")
    return missing
