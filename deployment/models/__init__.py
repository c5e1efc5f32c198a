"""Deployment models: where a server stands (site, rack, U, power feeds) and how to reach it (network, BMC,
the rental platform). One module per concern; every model is importable from `deployment.models`."""

from deployment.models.network import IPPrefix, ServerNetwork
from deployment.models.platform import PlatformAccount, PlatformEarning, PlatformListing
from deployment.models.polling import PlatformAlert
from deployment.models.racks import (
    PlacementFeed,
    PowerFeed,
    Rack,
    RackPlacement,
    ServerScopedQuerySet,
    Site,
)

__all__ = [
    "IPPrefix",
    "PlacementFeed",
    "PlatformAccount",
    "PlatformAlert",
    "PlatformEarning",
    "PlatformListing",
    "PowerFeed",
    "Rack",
    "RackPlacement",
    "ServerNetwork",
    "ServerScopedQuerySet",
    "Site",
]
