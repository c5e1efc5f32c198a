"""Demo data of the income against the forecast (issue #28 item 6): the fleet's first server's earnings on
Vast.ai for the three complete months before the demo's today, recorded through `earning_record`.

The figures are consistent with the fleet order's ROI inputs (orders/demo.py: 8 × RTX 5090 at a host-side
0.85 EUR per GPU-hour and 70 % utilisation, a forecast of 8 × 730 h × 0.70 × 0.85 = 3,474.80 EUR per month):
a first month still ramping up (62 % of 8 × 730 GPU hours at 0.83 EUR), then 71 % at 0.84 EUR and 74 % at
0.85 EUR. Each month's payout is its rented GPU hours times that price (Vast.ai pays the host's price; the
ROI's platform fee is 0). Together: 12,088.8 GPU hours (69 %) and 10,161.60 EUR against 10,424.40 EUR
forecast (97.5 %), which re-estimates the payback at 19.3 months instead of the assessment's.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from builds.models import Server
from deployment.choices import DEPLOYED_OR_LATER, ListingSource, Platform
from deployment.models import PlatformEarning, PlatformListing
from deployment.services import earning_record
from werkbank.demo_context import DemoContext

#: Oldest first: (share of 8 × 730 GPU hours rented, EUR per GPU-hour).
FLEET_MONTHS = [
    (Decimal("0.62"), Decimal("0.83")),
    (Decimal("0.71"), Decimal("0.84")),
    (Decimal("0.74"), Decimal("0.85")),
]
GPU_HOURS_PER_MONTH = Decimal(8 * 730)


def _months_before(today: datetime.date, count: int) -> list[datetime.date]:
    """The `count` complete months before `today`'s month, oldest first, each as its first day."""
    months, month = [], today.replace(day=1)
    for _ in range(count):
        month = (month - datetime.timedelta(days=1)).replace(day=1)
        months.append(month)
    return months[::-1]


def seed_earnings(context: DemoContext, server: Server, *, today: datetime.date) -> None:
    """Record the three months; a month already recorded is left as it is, so a second run adds nothing."""
    server.refresh_from_db()
    listed = PlatformListing.objects.filter(server=server, platform=Platform.VAST_AI).exists()
    if server.status not in DEPLOYED_OR_LATER or not listed:
        return
    for month, (share, price) in zip(_months_before(today, len(FLEET_MONTHS)), FLEET_MONTHS, strict=True):
        if PlatformEarning.objects.filter(server=server, platform=Platform.VAST_AI, month=month).exists():
            continue
        hours = (GPU_HOURS_PER_MONTH * share).quantize(Decimal("0.1"))
        earning_record(
            server=server,
            platform=Platform.VAST_AI,
            month=month,
            amount=(hours * price).quantize(Decimal("0.01")),
            gpu_hours=hours,
            source=ListingSource.MANUAL,
            actor=context.pm,
        )
        context.created += 1
