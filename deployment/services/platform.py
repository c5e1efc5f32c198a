"""The rental platform, read from the platform (issue #28 item 4): a customer's account with its encrypted
API key, the poll that appends a listing row only when a machine changed and records the months' earnings,
and the alerts on a deverification, a reliability drop or a machine going offline, each e-mailed once.

The poll reads the platform before it opens a transaction (a slow platform holds no lock) and then writes
everything in one: the listing rows (`listing_record`), the alerts, the earnings (`earning_record`) and the
account's `last_polled_at`. A platform that cannot be read raises `PlatformUnavailable` to the task, which
tries again and at last records the error on the account (`platform_poll_failed`).
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from deployment.choices import ListingSource, Platform, PlatformAlertKind, RentalState, Verification
from deployment.models import PlatformAccount, PlatformAlert, PlatformEarning, PlatformListing
from deployment.platforms import (
    MachineEarning,
    MachineState,
    PlatformKeyRefused,
    client_for,
    pollable,
)
from deployment.services.earnings import earning_record
from deployment.services.onboarding import listing_record
from werkbank.access import pm_users
from werkbank.audit import audit
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.secrets import SecretUnreadable, decrypt, encrypt
from werkbank.services import organization_recipients
from werkbank.tasks import enqueue_on_commit
from werkbank.types import Actor

logger = logging.getLogger(__name__)

#: A reliability that moves by less than 0.1 percentage point (and crosses no threshold) is the platform's
#: rolling figure breathing, not a change worth a history row; Vast.ai reports it to 7 digits every poll.
RELIABILITY_STEP = Decimal("0.0010")
#: DLPerf changes by less than 1 % are the benchmark's noise.
DLPERF_STEP = Decimal("0.01")


@dataclass(frozen=True)
class PollOutcome:
    """What one poll of an account found and wrote."""

    machines: int
    changed: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    earnings: int = 0
    unmatched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@transaction.atomic
def platform_account_set(
    *, organization: Organization, platform: str, api_key: str = "", label: str = "", actor: Actor
) -> PlatformAccount:
    """Create or change a customer organisation's account on a rental platform.

    The key is stored only as a Fernet token and is write-only: an empty `api_key` keeps the stored one
    (an account is created with one). A new key clears the last poll error. The audit row says whether the
    key was replaced, never what it is.
    """
    if organization.kind != OrganizationKind.CUSTOMER:
        raise InvalidInput("organization", f"{organization.name} is not a customer; only customers rent out.")
    if platform not in Platform.values or not pollable(platform):
        raise InvalidInput("platform", f"Werkbank reads {Platform.VAST_AI.label} only; got {platform!r}.")
    key = (api_key or "").strip()
    if len(key) > 512 or any(character.isspace() for character in key):
        raise InvalidInput("api_key", "is one token of at most 512 characters without spaces.")
    label = (label or "").strip()
    if len(label) > 200:
        raise InvalidInput("label", "at most 200 characters.")
    account = (
        PlatformAccount.objects.select_for_update()
        .filter(organization=organization, platform=platform)
        .first()
    )
    if account is None and not key:
        raise InvalidInput("api_key", f"an account on {Platform(platform).label} needs its API key.")
    before = {} if account is None else {"label": account.label}
    if account is None:
        account = PlatformAccount.objects.create(
            organization=organization, platform=platform, api_key=encrypt(key), label=label
        )
    elif key or label != account.label:
        account.label = label
        fields = ["label", "updated_at"]
        if key:
            account.api_key, account.last_error = encrypt(key), ""
            fields += ["api_key", "last_error"]
        account.save(update_fields=fields)
    else:
        return account
    audit(
        actor=actor,
        verb="deployment.platform_account",
        obj=account,
        before=before,
        after={"platform": platform, "label": label, "key_replaced": bool(key)},
    )
    return account


def platform_poll(*, account: PlatformAccount, actor: Actor = None) -> PollOutcome:
    """Read the account's machines and recent earnings from the platform and record what changed.

    Each machine is matched to the server whose current listing has this platform and machine id and whose
    order is the account's customer's. A new listing row (source "poll") is appended only when the
    verification, the reliability (by 0.1 point or across the threshold), the rental state or the DLPerf
    score (by 1 %) changed; an alert is written for a deverification, a reliability falling below
    `WERKBANK_PLATFORM_RELIABILITY_MIN` from at or above it, and a machine going offline, and e-mailed once
    after the commit. The months' earnings (`WERKBANK_PLATFORM_EARNINGS_MONTHS`, the current one included)
    go through `earning_record`, which skips an unchanged month.

    Raises `PlatformUnavailable` (try again) or `PlatformKeyRefused` (a person must act) before anything
    is written.
    """
    if not pollable(account.platform):
        raise PlatformKeyRefused(f"Werkbank cannot read {Platform(account.platform).label}.")
    try:
        key = decrypt(account.api_key)
    except SecretUnreadable:
        raise PlatformKeyRefused(
            "The stored API key cannot be decrypted with the configured keys; enter it again."
        ) from None
    client = client_for(account.platform, api_key=key)
    machines = client.machines()
    month_to = timezone.localdate().replace(day=1)
    month_from = month_to
    for _ in range(max(settings.WERKBANK_PLATFORM_EARNINGS_MONTHS, 1) - 1):
        month_from = (month_from - datetime.timedelta(days=1)).replace(day=1)
    earnings = client.earnings(month_from=month_from, month_to=month_to)
    return _record(account_id=account.pk, machines=machines, earnings=earnings, actor=actor)


def _percent(value: Decimal | None) -> str:
    return "—" if value is None else f"{value * 100:.2f} %"


def _changes(listing: PlatformListing, state: MachineState, threshold: Decimal) -> list[str]:
    """What differs between the current listing and the platform's machine, as the history note says it."""
    found = []
    if state.verification != listing.verification:
        found.append(f"verification {listing.verification} → {state.verification}")
    old, new = listing.reliability, state.reliability
    if new is not None and new != old:
        crossed = old is not None and (old >= threshold) != (new >= threshold)
        if old is None or crossed or abs(new - old) >= RELIABILITY_STEP:
            found.append(f"reliability {_percent(old)} → {_percent(new)}")
    if state.rental_state != listing.rental_state:
        found.append(f"rental state {listing.rental_state} → {state.rental_state}")
    old_score, new_score = listing.dlperf, state.dlperf
    if (
        new_score is not None
        and new_score != old_score
        and (old_score is None or abs(new_score - old_score) >= DLPERF_STEP * old_score)
    ):
        found.append(f"DLPerf {old_score if old_score is not None else '—'} → {new_score}")
    return found


def _alert_kinds(previous: PlatformListing, current: PlatformListing, threshold: Decimal) -> list[str]:
    kinds: list[str] = []
    if previous.verification == Verification.VERIFIED and current.verification == Verification.DEVERIFIED:
        kinds.append(PlatformAlertKind.DEVERIFIED)
    if (
        previous.reliability is not None
        and current.reliability is not None
        and previous.reliability >= threshold > current.reliability
    ):
        kinds.append(PlatformAlertKind.RELIABILITY)
    if previous.rental_state != RentalState.OFFLINE and current.rental_state == RentalState.OFFLINE:
        kinds.append(PlatformAlertKind.OFFLINE)
    return kinds


def _earning_changed(listing: PlatformListing, earning: MachineEarning) -> bool:
    stored = (
        PlatformEarning.objects.filter(server=listing.server, platform=listing.platform, month=earning.month)
        .values_list("amount", "currency")
        .first()
    )
    return stored != (earning.amount.quantize(Decimal("0.01")), earning.currency)


@transaction.atomic
def _record(
    *, account_id: int, machines: list[MachineState], earnings: list[MachineEarning], actor: Actor
) -> PollOutcome:
    account = PlatformAccount.objects.select_for_update().select_related("organization").get(pk=account_id)
    label = Platform(account.platform).label
    threshold = Decimal(settings.WERKBANK_PLATFORM_RELIABILITY_MIN)
    listings = {
        listing.machine_id: listing
        for listing in PlatformListing.objects.filter(
            is_current=True, platform=account.platform, server__order__customer=account.organization
        ).select_related("server")
    }
    outcome = PollOutcome(machines=len(machines))
    for state in machines:
        listing = listings.get(state.machine_id)
        if listing is None:
            outcome.unmatched.append(state.machine_id)
            continue
        changes = _changes(listing, state, threshold)
        if not changes:
            continue
        try:
            with transaction.atomic():
                current = listing_record(
                    server=listing.server,
                    actor=actor,
                    platform=listing.platform,
                    machine_id=listing.machine_id,
                    verification=state.verification,
                    reliability=state.reliability if state.reliability is not None else listing.reliability,
                    rental_state=state.rental_state,
                    dlperf=state.dlperf,
                    source=ListingSource.POLL,
                    note=f"Read from {label}: " + "; ".join(changes) + ".",
                )
        except (InvalidInput, RuleViolation) as error:
            outcome.problems.append(f"{listing.server.hostname}: {error}")
            continue
        outcome.changed.append(listing.server.hostname)
        for kind in _alert_kinds(listing, current, threshold):
            alert = PlatformAlert.objects.create(listing=current, kind=kind)
            outcome.alerts.append(f"{listing.server.hostname}: {kind}")
            enqueue_on_commit("deployment.tasks.platform_alert_send_task", alert_id=alert.pk)
    seen = {state.machine_id for state in machines}
    outcome.missing.extend(sorted(li.server.hostname for mid, li in listings.items() if mid not in seen))
    recorded = 0
    for earning in earnings:
        listing = listings.get(earning.machine_id)
        if listing is None or not _earning_changed(listing, earning):
            continue
        try:
            with transaction.atomic():
                earning_record(
                    server=listing.server,
                    platform=listing.platform,
                    month=earning.month,
                    amount=earning.amount,
                    currency=earning.currency,
                    gpu_hours=earning.gpu_hours,
                    source=ListingSource.POLL,
                    actor=actor,
                )
        except (InvalidInput, RuleViolation) as error:
            outcome.problems.append(f"{listing.server.hostname} {earning.month:%Y-%m}: {error}")
            continue
        recorded += 1
    outcome = replace(outcome, earnings=recorded)
    previous_error = account.last_error
    account.last_polled_at, account.last_error = timezone.now(), ""
    account.save(update_fields=["last_polled_at", "last_error", "updated_at"])
    if outcome.changed or outcome.earnings or outcome.problems or previous_error:
        audit(
            actor=actor,
            verb="deployment.platform_poll",
            obj=account,
            before={"last_error": previous_error} if previous_error else {},
            after={
                "machines": outcome.machines,
                "changed": outcome.changed,
                "alerts": outcome.alerts,
                "earnings": outcome.earnings,
                "unmatched": outcome.unmatched,
                "missing": outcome.missing,
            },
            note="; ".join(outcome.problems),
        )
    return outcome


@transaction.atomic
def platform_poll_failed(*, account: PlatformAccount, error: str, actor: Actor = None) -> PlatformAccount:
    """Record on the account that the platform could not be read (after the task's retries), for the PM
    on the admin and the server page; audited when the error is new, not on every failed poll."""
    locked = PlatformAccount.objects.select_for_update().get(pk=account.pk)
    text = str(error).strip()[:1000] or "unknown error"
    previous = locked.last_error
    locked.last_error = f"{timezone.now():%Y-%m-%d %H:%M} UTC: {text}"
    locked.save(update_fields=["last_error", "updated_at"])
    logger.warning("Platform poll of account %s (%s) failed: %s", locked.pk, locked.organization_id, text)
    if not previous.endswith(f"UTC: {text}"):
        audit(
            actor=actor,
            verb="deployment.platform_poll_failed",
            obj=locked,
            before={"last_error": previous},
            after={"last_error": locked.last_error},
        )
    return locked


def _alert_context(alert: PlatformAlert) -> dict[str, Any]:
    listing = alert.listing
    server = listing.server
    return {
        "alert": alert,
        "kind": alert.kind,
        "listing": listing,
        "server": server,
        "order": server.order,
        "platform": listing.get_platform_display(),
        "reliability": _percent(listing.reliability),
        "threshold": _percent(Decimal(settings.WERKBANK_PLATFORM_RELIABILITY_MIN)),
        "when": listing.recorded_at,
        "server_url": settings.WERKBANK_PUBLIC_URL + reverse("deployment:server", args=[server.pk]),
        "portal_url": settings.WERKBANK_PUBLIC_URL + reverse("portal:order", args=[server.order_id]),
    }


def _mail(alert: PlatformAlert, recipients: list[str], language: str, audience: str) -> None:
    with translation.override(language):
        values = {**_alert_context(alert), "audience": audience}
        subject = render_to_string(f"emails/platform_alert_subject.{language}.txt", values).strip()
        body = render_to_string(f"emails/platform_alert.{language}.txt", values)
    send_mail(subject, body, None, recipients)


@transaction.atomic
def platform_alert_send(*, alert_id: int) -> PlatformAlert | None:
    """E-mail one alert, once: to the PMs (in English) and to the customer (its contact address and
    members, in its language), as two mails. `sent_at` is written in the transaction the mails go out in,
    so a repeat sends nothing and a failed send rolls back for the task's retry."""
    alert = (
        PlatformAlert.objects.select_for_update()
        .select_related("listing__server__order__customer")
        .filter(pk=alert_id)
        .first()
    )
    if alert is None or alert.sent_at is not None:
        return None
    customer = alert.listing.server.order.customer
    pms = sorted({email for email in pm_users().values_list("email", flat=True) if email})
    customers = organization_recipients(customer)
    alert.sent_at, alert.recipients = timezone.now(), [*pms, *customers]
    alert.save(update_fields=["sent_at", "recipients"])
    audit(
        actor=None,
        verb="deployment.platform_alert",
        obj=alert.listing.server,
        after={"kind": alert.kind, "listing": alert.listing_id, "recipients": len(alert.recipients)},
        note=alert.listing.note,
    )
    if pms:
        _mail(alert, pms, "en", "pm")
    if customers:
        language = customer.language if customer.language in ("en", "de") else "en"
        _mail(alert, customers, language, "customer")
    return alert
