"""Reads of the platform poll for the server page: the current listing's platform figures, the customer's
account on that platform (when the viewer may see it) and the alerts raised for the server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builds.models import Server
from deployment.choices import Platform
from deployment.models import PlatformAccount, PlatformAlert, PlatformListing
from werkbank.access import is_pm


@dataclass(frozen=True)
class PlatformStatus:
    """What the server page shows of the poll. `account` is None when the customer has none on the
    listing's platform or the viewer may not see it; `last_error` and `alerts` are for PMs only."""

    listing: PlatformListing | None
    account: PlatformAccount | None
    reliability: str = ""
    last_error: str = ""
    alerts: list[PlatformAlert] = field(default_factory=list)


def platform_status(*, server: Server, user: Any) -> PlatformStatus:
    listing = PlatformListing.objects.filter(server=server, is_current=True).first()
    if listing is None or listing.platform == Platform.NONE:
        return PlatformStatus(listing=listing, account=None)
    account = (
        PlatformAccount.objects.visible_to(user)
        .filter(organization_id=server.order.customer_id, platform=listing.platform)
        .first()
    )
    pm = is_pm(user)
    alerts = (
        list(PlatformAlert.objects.filter(listing__server=server).select_related("listing")[:5]) if pm else []
    )
    return PlatformStatus(
        listing=listing,
        account=account,
        reliability=f"{listing.reliability * 100:.2f} %" if listing.reliability is not None else "",
        last_error=account.last_error if account is not None and pm else "",
        alerts=alerts,
    )
