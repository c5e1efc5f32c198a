"""Sites, racks and their power feeds: the reference data placements stand on."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from deployment.choices import FeedLeg, SiteKind
from deployment.models import PlacementFeed, PowerFeed, Rack, RackPlacement, Site
from deployment.selectors import feed_loads
from inventory.countries import check_country
from inventory.eu import is_eu
from werkbank.audit import audit, audit_value
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.integrity import integrity_sentence
from werkbank.models import Organization
from werkbank.types import Actor

SITE_FIELDS = ("name", "kind", "operator", "customer", "address", "country")
RACK_FIELDS = ("name", "height_u")
FEED_FIELDS = ("name", "leg", "voltage_v", "current_a", "phases")


def _text(field: str, value: Any, *, required: bool = True) -> str:
    text = (value or "").strip() if isinstance(value, str) or value is None else str(value).strip()
    if required and not text:
        raise InvalidInput(field, "may not be blank.")
    return text


def _clean_site(values: dict[str, Any]) -> dict[str, Any]:
    kind = values.get("kind")
    if kind not in SiteKind.values:
        raise InvalidInput("kind", f"must be one of {', '.join(SiteKind.values)}; got {kind!r}.")
    country = check_country("country", values.get("country") or "")
    customer: Organization | None = values.get("customer")
    if kind == SiteKind.CUSTOMER_ROOM:
        if customer is None:
            raise InvalidInput("customer", "a customer's own room names the customer.")
        if customer.kind != OrganizationKind.CUSTOMER:
            raise InvalidInput("customer", f"{customer.name} is not a customer.")
    elif customer is not None:
        raise InvalidInput("customer", "a colocation site belongs to no customer; leave it empty.")
    return {
        "name": _text("name", values.get("name")),
        "kind": kind,
        "operator": _text("operator", values.get("operator")),
        "customer": customer,
        "address": _text("address", values.get("address")),
        "country": country,
        "eu": is_eu(country),
    }


def _name_taken(message: str) -> RuleViolation:
    return RuleViolation(message, missing=["a name not in use"], code="name_taken")


@transaction.atomic
def site_create(*, actor: Actor, **values: Any) -> Site:
    """A room that holds racks. The EU flag follows the country (`inventory.eu`)."""
    cleaned = _clean_site(values)
    if Site.objects.filter(name=cleaned["name"]).exists():
        raise _name_taken(f"A site named {cleaned['name']} already exists.")
    site = Site.objects.create(**cleaned)
    audit(
        actor=actor,
        verb="deployment.site_create",
        obj=site,
        after={k: audit_value(cleaned[k]) for k in cleaned},
    )
    return site


@transaction.atomic
def site_update(*, site: Site, actor: Actor, **values: Any) -> Site:
    locked = Site.objects.select_for_update().get(pk=site.pk)
    merged = {field: values.get(field, getattr(locked, field)) for field in SITE_FIELDS}
    cleaned = _clean_site(merged)
    if Site.objects.filter(name=cleaned["name"]).exclude(pk=locked.pk).exists():
        raise _name_taken(f"A site named {cleaned['name']} already exists.")
    before = {field: audit_value(getattr(locked, field)) for field in cleaned}
    for field, value in cleaned.items():
        setattr(locked, field, value)
    locked.save(update_fields=list(cleaned))
    audit(
        actor=actor,
        verb="deployment.site_update",
        obj=locked,
        before=before,
        after={field: audit_value(value) for field, value in cleaned.items()},
    )
    return locked


def _height(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 60:
        raise InvalidInput("height_u", f"a rack is 1 to 60 U high; got {value!r}.")
    return value


@transaction.atomic
def rack_create(*, site: Site, actor: Actor, name: str, height_u: int = 42) -> Rack:
    name = _text("name", name)
    height_u = _height(height_u)
    if Rack.objects.filter(site=site, name=name).exists():
        raise _name_taken(f"Site {site.name} already has a rack named {name}.")
    rack = Rack.objects.create(site=site, name=name, height_u=height_u)
    audit(
        actor=actor,
        verb="deployment.rack_create",
        obj=rack,
        after={"site": site.name, "name": name, "height_u": height_u},
    )
    return rack


@transaction.atomic
def rack_update(*, rack: Rack, actor: Actor, name: str | None = None, height_u: int | None = None) -> Rack:
    """Rename a rack or change its height; it cannot shrink below the highest placed server."""
    locked = Rack.objects.select_for_update(of=("self",)).select_related("site").get(pk=rack.pk)
    new_name = locked.name if name is None else _text("name", name)
    new_height = locked.height_u if height_u is None else _height(height_u)
    if Rack.objects.filter(site=locked.site, name=new_name).exclude(pk=locked.pk).exists():
        raise _name_taken(f"Site {locked.site.name} already has a rack named {new_name}.")
    placements = RackPlacement.objects.filter(rack=locked).select_related("server")
    highest = max(placements, key=lambda p: p.top_u, default=None)
    if highest is not None and highest.top_u > new_height:
        raise RuleViolation(
            f"Rack {locked.name} cannot shrink to {new_height}U: server {highest.server.hostname} reaches "
            f"U{highest.top_u}.",
            missing=[f"no server above U{new_height}"],
            code="rack_too_small",
        )
    before = {"name": locked.name, "height_u": locked.height_u}
    locked.name, locked.height_u = new_name, new_height
    locked.save(update_fields=["name", "height_u"])
    audit(
        actor=actor,
        verb="deployment.rack_update",
        obj=locked,
        before=before,
        after={"name": new_name, "height_u": new_height},
    )
    return locked


def _clean_feed(values: dict[str, Any]) -> dict[str, Any]:
    leg = values.get("leg", FeedLeg.A)
    if leg not in FeedLeg.values:
        raise InvalidInput("leg", f"must be A or B; got {leg!r}.")
    checks = {"voltage_v": (100, 480), "current_a": (1, 125)}
    cleaned: dict[str, Any] = {"name": _text("name", values.get("name")), "leg": leg}
    for field, (low, high) in checks.items():
        value = values.get(field)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise InvalidInput(field, f"must be a whole number from {low} to {high}; got {value!r}.")
        cleaned[field] = value
    phases = values.get("phases", 1)
    if phases not in (1, 3) or isinstance(phases, bool):
        raise InvalidInput("phases", f"must be 1 or 3; got {phases!r}.")
    cleaned["phases"] = phases
    return cleaned


@transaction.atomic
def feed_create(*, rack: Rack, actor: Actor, **values: Any) -> PowerFeed:
    """A circuit into the rack. Its continuous limit is 0.8 × V × A × phases."""
    cleaned = _clean_feed(values)
    locked = Rack.objects.select_for_update().get(pk=rack.pk)
    if PowerFeed.objects.filter(rack=locked, name=cleaned["name"]).exists():
        raise _name_taken(f"Rack {locked.name} already has a feed named {cleaned['name']}.")
    feed = PowerFeed.objects.create(rack=locked, **cleaned)
    audit(actor=actor, verb="deployment.feed_create", obj=locked, after={"feed": str(feed), **cleaned})
    return feed


@transaction.atomic
def feed_update(*, feed: PowerFeed, actor: Actor, **values: Any) -> PowerFeed:
    """Change a circuit. A change that would leave its servers above the continuous limit is refused."""
    rack = Rack.objects.select_for_update().get(pk=feed.rack_id)
    locked = PowerFeed.objects.select_for_update().get(pk=feed.pk)
    cleaned = _clean_feed({field: values.get(field, getattr(locked, field)) for field in FEED_FIELDS})
    if PowerFeed.objects.filter(rack=rack, name=cleaned["name"]).exclude(pk=locked.pk).exists():
        raise _name_taken(f"Rack {rack.name} already has a feed named {cleaned['name']}.")
    before = {field: getattr(locked, field) for field in FEED_FIELDS}
    limit_before = locked.continuous_limit_w
    if cleaned["phases"] == 1 and locked.phases != 1:
        _check_single_phase(locked)
    for field, value in cleaned.items():
        setattr(locked, field, value)
    load = next(load for load in feed_loads(rack=rack) if load.feed.pk == locked.pk)
    load.feed = locked
    # Only a lower limit is refused: a feed a PM accepted above its limit may still be renamed or upgraded.
    if not load.ok and load.limit_w < limit_before:
        raise RuleViolation(
            f"Feed {locked.name} cannot change so: {load.sentence()}",
            missing=[load.sentence()],
            code="circuit_limit",
        )
    try:
        with transaction.atomic():
            locked.save(update_fields=list(cleaned))
    except IntegrityError as error:  # pragma: no cover - the checks above mirror the constraints
        raise InvalidInput("feed", integrity_sentence(error)) from None
    audit(
        actor=actor, verb="deployment.feed_update", obj=rack, before={"feed": before}, after={"feed": cleaned}
    )
    return locked


def _check_single_phase(feed: PowerFeed) -> None:
    """A feed going down to one phase has L1 only: refused (409) while a server draws from L2 or L3 of it."""
    on_others = list(
        PlacementFeed.objects.filter(powerfeed=feed)
        .exclude(phase="L1")
        .order_by("rackplacement__server__hostname")
        .values_list("rackplacement__server__hostname", "phase")
    )
    if on_others:
        named = ", ".join(f"{hostname} ({phase})" for hostname, phase in on_others)
        raise RuleViolation(
            f"Feed {feed.name} cannot become single-phase: {named} draw from other phases than L1; set "
            "their phases to L1 first.",
            missing=[f"no server on L2 or L3 of feed {feed.name}"],
            code="feed_phases_in_use",
        )


@transaction.atomic
def feed_delete(*, feed: PowerFeed, actor: Actor) -> None:
    """Remove a circuit that no placement uses."""
    rack = Rack.objects.select_for_update().get(pk=feed.rack_id)
    users = list(
        RackPlacement.objects.filter(feeds=feed)
        .order_by("server__hostname")
        .values_list("server__hostname", flat=True)
    )
    if users:
        raise RuleViolation(
            f"Feed {feed.name} supplies {', '.join(users)}; move them to another feed first.",
            missing=[f"no server on feed {feed.name}"],
            code="feed_in_use",
        )
    audit(actor=actor, verb="deployment.feed_delete", obj=rack, before={"feed": str(feed)})
    feed.delete()
