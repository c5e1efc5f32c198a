"""A server's earnings on a rental platform (seed 000: Vast.ai), one row per server, platform and month."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone

from builds.models import Server
from builds.services import lock_server
from deployment.choices import DEPLOYED_OR_LATER, ListingSource, Platform
from deployment.models import PlatformEarning, PlatformListing
from werkbank.audit import audit
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor

_CURRENCY = re.compile(r"^[A-Z]{3}$")
_CENT = Decimal("0.01")
_TENTH = Decimal("0.1")


def _decimal(field: str, value: Any, *, quantum: Decimal, limit: Decimal) -> Decimal:
    """A finite, non-negative number below the column's limit, rounded to the column's places."""
    if isinstance(value, float):
        value = repr(value)
    try:
        number = Decimal(str(value).strip()) if isinstance(value, str) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        raise InvalidInput(field, f"{value!r} is not a number.") from None
    if not number.is_finite():
        raise InvalidInput(field, f"must be a finite number; got {value!r}.")
    if number < 0:
        raise InvalidInput(field, f"is not negative; got {value!r}.")
    number = number.quantize(quantum)
    if number >= limit:
        raise InvalidInput(field, f"must be below {limit}; got {value!r}.")
    return number


def _month(value: Any) -> datetime.date:
    if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
        raise InvalidInput("month", f"is a date (the month's first day); got {value!r}.")
    first = value.replace(day=1)
    if first > timezone.localdate().replace(day=1):
        raise InvalidInput("month", f"{first:%Y-%m} lies in the future.")
    return first


def _snapshot(earning: PlatformEarning | None) -> dict[str, Any]:
    if earning is None:
        return {}
    return {
        "amount": str(earning.amount),
        "currency": earning.currency,
        "gpu_hours": str(earning.gpu_hours) if earning.gpu_hours is not None else None,
    }


@transaction.atomic
def earning_record(
    *,
    server: Server,
    platform: str,
    month: datetime.date,
    amount: Decimal,
    currency: str = "EUR",
    gpu_hours: Decimal | None = None,
    source: str = ListingSource.MANUAL,
    actor: Actor,
) -> PlatformEarning:
    """Record one month of a server's earnings on a platform: created, or updated in place.

    `month` may be any day of the month; it is stored as the first day, and a month after the current one
    is refused. The amount is the platform's payout for the month (after its fee), in an ISO 4217 currency,
    rounded to cents; `gpu_hours` are the GPU hours rented in that month, when the platform reports them.
    Only a server that was deployed and has (or had) a listing on the platform earns on it. Re-recording
    the same figures changes nothing and writes no audit row, so the platform poll may read a month again
    and again; a changed figure updates the row, audited `deployment.earning` with both amounts.
    """
    if platform not in Platform.values or platform == Platform.NONE:
        listed = ", ".join(value for value in Platform.values if value != Platform.NONE)
        raise InvalidInput("platform", f"earnings come from a rental platform ({listed}); got {platform!r}.")
    if source not in ListingSource.values:
        raise InvalidInput("source", f"must be one of {', '.join(ListingSource.values)}; got {source!r}.")
    first_day = _month(month)
    value = _decimal("amount", amount, quantum=_CENT, limit=Decimal("1e10"))
    hours = (
        None
        if gpu_hours is None or gpu_hours == ""
        else _decimal("gpu_hours", gpu_hours, quantum=_TENTH, limit=Decimal("1e9"))
    )
    code = (currency or "").strip().upper() if isinstance(currency, str) else ""
    if not _CURRENCY.match(code):
        raise InvalidInput("currency", f"is an ISO 4217 code such as EUR; got {currency!r}.")

    locked = lock_server(server)
    label = Platform(platform).label
    if locked.status not in DEPLOYED_OR_LATER:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; only a deployed server "
            f"earns on {label}.",
            missing=[f"server {locked.hostname} deployed"],
            code="not_deployed",
        )
    if not PlatformListing.objects.filter(server=locked, platform=platform).exists():
        raise RuleViolation(
            f"Server {locked.hostname} has never been listed on {label}.",
            missing=[f"a listing of server {locked.hostname} on {label}"],
            code="not_listed",
        )
    existing = (
        PlatformEarning.objects.select_for_update()
        .filter(server=locked, platform=platform, month=first_day)
        .first()
    )
    before = _snapshot(existing)
    if existing is None:
        earning = PlatformEarning.objects.create(
            server=locked,
            platform=platform,
            month=first_day,
            amount=value,
            currency=code,
            gpu_hours=hours,
            source=source,
        )
    else:
        if existing.amount == value and existing.currency == code and existing.gpu_hours == hours:
            return existing
        existing.amount, existing.currency, existing.gpu_hours, existing.source = value, code, hours, source
        existing.save(update_fields=["amount", "currency", "gpu_hours", "source", "recorded_at"])
        earning = existing
    audit(
        actor=actor,
        verb="deployment.earning",
        obj=locked,
        before=before,
        after={**_snapshot(earning), "platform": platform, "month": f"{first_day:%Y-%m}", "source": source},
        note=f"{label} {first_day:%Y-%m}",
    )
    return earning
