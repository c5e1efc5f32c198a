"""Deployment services: every write of the deployment app, one module per concern.

Every service is atomic and writes an audit row in the same transaction. `sites` (sites, racks, power
feeds), `placement` (a server into a rack: U range and circuits), `network` (addresses and the encrypted BMC
credentials), `onboarding` (the rental platform's listing, append-only) and `deploy` (burn_in_passed →
deployed through the builds transition).
"""

from deployment.services.credentials import (
    bmc_credentials_reveal,
    bmc_credentials_rotate,
    bmc_rotated_notice_send,
)
from deployment.services.deploy import server_deploy
from deployment.services.earnings import earning_record
from deployment.services.network import network_set
from deployment.services.onboarding import listing_record
from deployment.services.placement import placement_create, placement_remove, placement_set_phases
from deployment.services.platform import (
    platform_account_set,
    platform_alert_send,
    platform_poll,
    platform_poll_failed,
)
from deployment.services.prefixes import prefix_create, prefix_delete, prefix_update
from deployment.services.sites import (
    feed_create,
    feed_delete,
    feed_update,
    rack_create,
    rack_update,
    site_create,
    site_update,
)

__all__ = [
    "bmc_credentials_reveal",
    "bmc_credentials_rotate",
    "bmc_rotated_notice_send",
    "earning_record",
    "feed_create",
    "feed_delete",
    "feed_update",
    "listing_record",
    "network_set",
    "placement_create",
    "placement_remove",
    "placement_set_phases",
    "platform_account_set",
    "platform_alert_send",
    "platform_poll",
    "platform_poll_failed",
    "prefix_create",
    "prefix_delete",
    "prefix_update",
    "rack_create",
    "rack_update",
    "server_deploy",
    "site_create",
    "site_update",
]
