"""Before listing: a server goes onto a rental platform with host minimums (Vast.ai) only when it meets
them, or when a PM lists it anyway with a written reason. Called by `listing_record` inside its
transaction, on the locked server; not a service of its own."""

from __future__ import annotations

from django.utils.translation import gettext as _

from builds.models import Server
from deployment.choices import Platform
from deployment.minimum_selectors import platform_minimums, server_host_facts
from deployment.minimums import host_shortfalls
from deployment.models import PlatformListing
from deployment.selectors import current_listing
from werkbank.access import is_pm
from werkbank.audit import audit
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor

#: The longest override reason kept (the audit row's note).
REASON_MAX = 2000


def is_new_on_platform(*, platform: str, machine_id: str, previous: PlatformListing | None) -> bool:
    """A new listing on the platform: the server was on no platform, on another one, or comes back as
    another machine (a new machine id is a new machine to the platform). Recording the state of the
    machine already listed (verification, reliability, a poll's update) is not."""
    if previous is None or previous.platform != platform:
        return True
    return previous.machine_id != machine_id


def listing_minimums_check(
    *,
    server: Server,
    actor: Actor,
    platform: str,
    machine_id: str,
    reason: str = "",
) -> None:
    """Refuse (409 `host_minimums`, every shortfall listed) a new listing of `server` on a platform whose
    host minimums it does not meet, unless a PM gives a reason: then the listing goes ahead and the override
    is audited on the server (`deployment.listing_minimums_override`, with the shortfalls). A reason from
    anyone else is refused (409 `pm_only`). Nothing to check: no minimums for the platform, or not a new
    listing on it (`is_new_on_platform`)."""
    reason = (reason or "").strip()
    if len(reason) > REASON_MAX:
        raise InvalidInput("minimums_override_reason", f"at most {REASON_MAX} characters.")
    minimums = platform_minimums(platform)
    if minimums is None:
        return
    previous = current_listing(server=server)  # read before `listing_record` records the new one
    if not is_new_on_platform(platform=platform, machine_id=machine_id, previous=previous):
        return
    label = str(Platform(platform).label)
    shortfalls = host_shortfalls(facts=server_host_facts(server=server), minimums=minimums, platform=label)
    if not shortfalls:
        return
    sentences = [shortfall.sentence for shortfall in shortfalls]
    if not reason:
        raise RuleViolation(
            _(
                "Server %(hostname)s falls short of %(platform)s's host minimums: %(shortfalls)s A project "
                "manager may list it anyway with a written reason (minimums_override_reason)."
            )
            % {"hostname": server.hostname, "platform": label, "shortfalls": " ".join(sentences)},
            missing=sentences,
            code="host_minimums",
        )
    if not is_pm(actor):
        raise RuleViolation(
            _("Only project managers list a server below %(platform)s's host minimums.")
            % {"platform": label},
            missing=[_("a project manager's decision")],
            code="pm_only",
        )
    audit(
        actor=actor,
        verb="deployment.listing_minimums_override",
        obj=server,
        after={
            "platform": platform,
            "machine_id": machine_id,
            "shortfalls": sentences,
            "figures": {
                shortfall.figure: {"per_gpu": shortfall.per_gpu, "minimum_per_gpu": shortfall.minimum_per_gpu}
                for shortfall in shortfalls
            },
        },
        note=reason,
    )
