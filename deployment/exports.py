"""What an order's export carries of the deployment (see werkbank/exports.py): the placements of the order's
servers with their racks, sites, power feeds and the phase each feed link draws from, the network rows (BMC
credentials stay the encrypted token they are), the platform listings and the earnings months."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from deployment.models import (
        IPPrefix,
        PlacementFeed,
        PlatformAccount,
        PlatformAlert,
        PlatformEarning,
        PlatformListing,
        PowerFeed,
        Rack,
        RackPlacement,
        ServerNetwork,
        Site,
    )

    for model in (Site, Rack, PowerFeed):
        exports.carry(model)
    for model in (RackPlacement, ServerNetwork, PlatformListing, PlatformEarning):
        exports.carry(
            model, found=lambda record, model=model: model.objects.filter(server__order=record.order)
        )
    # An explicit through model, which the serializer does not write as part of the placement's `feeds`.
    exports.carry(
        PlacementFeed,
        found=lambda record: PlacementFeed.objects.filter(rackplacement__server__order=record.order),
    )
    # The account is the customer's, not the order's, and holds its API key; an alert is an e-mail already
    # sent about a listing row that the bundle carries; a prefix is the site's address plan, and the servers'
    # addresses travel in their network rows.
    exports.leave_out(
        PlatformAccount, reason="the customer's rental-platform accounts (their API keys stay with us)"
    )
    exports.leave_out(
        PlatformAlert, reason="the platform poll's alerts (e-mails sent; the listings are carried)"
    )
    exports.leave_out(
        IPPrefix, reason="the sites' IP prefixes (the servers' addresses are in their network rows)"
    )
