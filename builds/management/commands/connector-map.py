"""Print a server's connector map as text: `manage.py connector-map SERVER` (hostname, asset tag or id)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from builds.models import Connector, ConnectorBlacklist, Installation, Server


class Command(BaseCommand):
    help = "Print the connector map of a server: free, occupied (serial) or blacklisted (reason)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("server", help="Hostname, asset tag or id of the server")

    def handle(self, *args: Any, server: str, **options: Any) -> None:
        query = Q(hostname=server) | Q(asset_tag=server)
        if server.isdigit():
            query |= Q(pk=int(server))
        found = Server.objects.select_related("order", "partner").filter(query).first()
        if found is None:
            raise CommandError(f"No server {server!r} (give a hostname, asset tag or id).", returncode=2)
        installed = {
            inst.connector_id: inst
            for inst in Installation.objects.active().filter(server=found).select_related("component__part")
        }
        blacklisted = {b.connector_id: b for b in ConnectorBlacklist.objects.filter(connector__server=found)}
        self.stdout.write(
            f"{found.hostname} ({found.asset_tag}) · order {found.order.reference} · "
            f"{found.get_status_display()} · partner {found.partner or '—'}"
        )
        self.stdout.write(f"{'connector':<14} {'kind':<16} {'NUMA':>4} {'PCIe':<8} {'block':<5} state")
        for connector in Connector.objects.filter(server=found).order_by("position"):
            pcie = f"Gen{connector.pcie_gen} x{connector.pcie_lanes}" if connector.pcie_gen else ""
            if connector.pk in blacklisted:
                state = f"BLACKLISTED: {blacklisted[connector.pk].reason}"
            elif connector.pk in installed:
                inst = installed[connector.pk]
                state = f"{inst.component.serial} ({inst.component.part.mpn})"
            else:
                state = "free"
            numa = "" if connector.numa_node is None else str(connector.numa_node)
            self.stdout.write(
                f"{connector.name:<14} {connector.get_kind_display():<16} {numa:>4} {pcie:<8} "
                f"{connector.cooling_block:<5} {state}"
            )
        self.stdout.write(
            f"{len(installed)} occupied, {len(blacklisted)} blacklisted, "
            f"{found.connectors.count() - len(installed) - len(blacklisted)} free."
        )
