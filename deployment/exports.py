"""What an order's export carries of the deployment (see werkbank/exports.py): the placements of the order's
servers with their racks, sites and power feeds, the network rows (BMC credentials stay the encrypted token
they are), and the platform listings."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from deployment.models import PlatformListing, PowerFeed, Rack, RackPlacement, ServerNetwork, Site

    for model in (Site, Rack, PowerFeed):
        exports.carry(model)
    for model in (RackPlacement, ServerNetwork, PlatformListing):
        exports.carry(
            model, found=lambda record, model=model: model.objects.filter(server__order=record.order)
        )
