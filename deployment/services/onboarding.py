"""Platform onboarding: a deployed server's listing on a rental platform (seed 000: Vast.ai), append-only."""

from __future__ import annotations

import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from builds.models import Server
from builds.services import lock_server
from deployment.choices import DEPLOYED_OR_LATER, ListingSource, Platform, RentalState, Verification
from deployment.models import PlatformListing
from deployment.selectors import current_listing
from deployment.services.minimums import listing_minimums_check
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor


def _reliability(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise InvalidInput("reliability", f"{value!r} is not a number.") from None
    if not number.is_finite() or not 0 <= number <= 1:
        raise InvalidInput("reliability", f"is a fraction from 0 to 1 (0.995 = 99.5 %); got {value!r}.")
    return number.quantize(Decimal("0.0001"))


def _dlperf(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise InvalidInput("dlperf", f"{value!r} is not a number.") from None
    if not number.is_finite() or not 0 <= number < 1_000_000:
        raise InvalidInput("dlperf", f"is a score from 0 to below 1,000,000; got {value!r}.")
    return number.quantize(Decimal("0.01"))


def _audited(listing: PlatformListing) -> dict[str, Any]:
    """A listing row's figures as its audit row keeps them."""
    return {
        "platform": listing.platform,
        "machine_id": listing.machine_id,
        "verification": listing.verification,
        "reliability": str(listing.reliability) if listing.reliability is not None else None,
        "rental_state": listing.rental_state,
        "dlperf": str(listing.dlperf) if listing.dlperf is not None else None,
    }


def _machine_id_taken(machine_id: str, platform: str, holder: str) -> RuleViolation:
    label = Platform(platform).label
    return RuleViolation(
        f"Machine id {machine_id} on {label} is {holder}'s.",
        missing=[f"a machine id no other server has on {label}"],
        code="machine_id_taken",
    )


@transaction.atomic
def listing_record(
    *,
    server: Server,
    actor: Actor,
    platform: str,
    machine_id: str = "",
    verification: str = Verification.UNVERIFIED,
    reliability: Any = None,
    listed_on: datetime.date | None = None,
    verified_on: datetime.date | None = None,
    note: str = "",
    rental_state: str | None = None,
    dlperf: Any = None,
    source: str = ListingSource.MANUAL,
    minimums_override_reason: str = "",
) -> PlatformListing:
    """Record the server's listing as it stands now: a new row, so the history keeps every earlier state.

    Only a deployed server is listed. A listed server has the platform's machine id, which no other server's
    current listing on that platform has. Verified without a date means verified today; a listing date
    defaults to the first listing on the platform. The rental state and DLPerf score (what the platform
    poll reads) stay as they were for the same machine when not given; `source` says who recorded the row.
    """
    if platform not in Platform.values:
        raise InvalidInput("platform", f"must be one of {', '.join(Platform.values)}; got {platform!r}.")
    if verification not in Verification.values:
        raise InvalidInput(
            "verification", f"must be one of {', '.join(Verification.values)}; got {verification!r}."
        )
    machine_id = (machine_id or "").strip()
    if len(machine_id) > 64:
        raise InvalidInput("machine_id", "at most 64 characters.")
    if platform == Platform.NONE:
        if machine_id or verification != Verification.UNVERIFIED:
            raise InvalidInput("platform", "a server on no platform has no machine id and no verification.")
    elif not machine_id:
        raise InvalidInput("machine_id", f"a listing on {Platform(platform).label} needs its machine id.")
    reliability_value = _reliability(reliability)
    dlperf_value = _dlperf(dlperf)
    if rental_state is not None and rental_state not in RentalState.values:
        raise InvalidInput(
            "rental_state", f"must be one of {', '.join(RentalState.values)}; got {rental_state!r}."
        )
    if source not in ListingSource.values:
        raise InvalidInput("source", f"must be one of {', '.join(ListingSource.values)}; got {source!r}.")

    locked = lock_server(server)
    if locked.status not in DEPLOYED_OR_LATER:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; only a deployed server is "
            "listed on a platform.",
            missing=[f"server {locked.hostname} deployed"],
            code="not_deployed",
        )
    if machine_id:
        clash = list(
            PlatformListing.objects.filter(is_current=True, platform=platform, machine_id=machine_id)
            .exclude(server=locked)
            .values_list("server__hostname", flat=True)[:1]
        )
        if clash:
            raise _machine_id_taken(machine_id, platform, f"server {clash[0]}")
    previous = current_listing(server=locked)
    # A new listing on a platform with host minimums (Vast.ai) meets them, or a PM says why not.
    listing_minimums_check(
        server=locked, actor=actor, platform=platform, machine_id=machine_id, reason=minimums_override_reason
    )
    today = timezone.localdate()
    if verification == Verification.VERIFIED and verified_on is None:
        verified_on = (
            previous.verified_on
            if previous is not None
            and previous.verification == Verification.VERIFIED
            and previous.verified_on
            else today
        )
    same = previous is not None and previous.platform == platform and previous.machine_id == machine_id
    if listed_on is None and platform != Platform.NONE:
        listed_on = (previous.listed_on if previous is not None and same else None) or today
    if rental_state is None:
        rental_state = previous.rental_state if previous is not None and same else RentalState.UNKNOWN
    if dlperf_value is None and previous is not None and same:
        dlperf_value = previous.dlperf
    for field, value in (("listed_on", listed_on), ("verified_on", verified_on)):
        if value is not None and value > today:
            raise InvalidInput(field, f"{value} lies in the future.")
    PlatformListing.objects.filter(server=locked, is_current=True).update(is_current=False)
    try:
        with transaction.atomic():
            listing = PlatformListing.objects.create(
                server=locked,
                platform=platform,
                machine_id=machine_id,
                verification=verification,
                reliability=reliability_value,
                listed_on=listed_on,
                verified_on=verified_on,
                rental_state=rental_state,
                dlperf=dlperf_value,
                source=source,
                note=(note or "").strip(),
                recorded_by=user_or_none(actor),
            )
    except IntegrityError:
        # Another server took the machine id between the check above and this insert.
        raise _machine_id_taken(machine_id, platform, "another server") from None
    audit(
        actor=actor,
        verb="deployment.listing",
        obj=locked,
        before={} if previous is None else _audited(previous),
        after={**_audited(listing), "source": source},
        note=listing.note,
    )
    return listing
