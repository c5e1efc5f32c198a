"""Reads of the warranty app: what a handover lacks, records by serial, claims."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from builds.choices import ServerStatus
from builds.models import Server
from warranty.choices import PackStatus
from warranty.models import HandoverPack, WarrantyClaim, WarrantyRecord


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


def records_for(*, user: Any, serial: str = "") -> QuerySet[WarrantyRecord]:
    """The warranty records the user may see, newest handover first; `serial` narrows them to that serial
    (any letter case, whole serial): a serial outside the user's view is simply not found."""
    records = WarrantyRecord.objects.visible_to(user).select_related("server", "replaced_by", "replaces")
    serial = (serial or "").strip()
    if serial:
        records = records.filter(serial__iexact=serial)
    return records.order_by("-start_date", "server_id", "kind", "serial", "pk")


def record_for(*, user: Any, pk: int) -> WarrantyRecord | None:
    """One record the user may see, with its lineage, or None."""
    return (
        WarrantyRecord.objects.visible_to(user)
        .select_related("server", "order", "customer", "replaces", "replaced_by")
        .filter(pk=pk)
        .first()
    )


def claims_of(*, user: Any, record: WarrantyRecord) -> QuerySet[WarrantyClaim]:
    return WarrantyClaim.objects.visible_to(user).filter(record=record).order_by("-created_at", "-pk")
