"""Sites, racks and feeds (`deployment.services.sites`): validation, the EU flag, names unique in their
scope, and the audit rows."""

from __future__ import annotations

import pytest

from deployment.models import PowerFeed, Rack, Site
from deployment.services import feed_create, feed_update, rack_create, rack_update, site_create, site_update
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

COLO = {"name": "Frankfurt 2", "kind": "colocation", "operator": "Equinix", "address": "Kruppstr. 121"}


@pytest.fixture
def pm():
    return factories.make_pm(username="sites-pm")


@pytest.mark.parametrize(
    ("country", "stored", "eu"), [("bg", "BG", True), ("EL", "GR", True), ("ch", "CH", False)]
)
def test_the_eu_flag_follows_the_country(pm, country, stored, eu):
    site = site_create(actor=pm, country=country, **COLO)
    assert (Site.objects.get(pk=site.pk).country, site.eu) == (stored, eu)
    (event,) = AuditEvent.objects.for_object(site).filter(verb="deployment.site_create")
    assert (event.after["country"], event.after["eu"]) == (stored, eu)


def test_moving_a_site_abroad_moves_its_flag(pm):
    site = site_create(actor=pm, country="DE", **COLO)
    moved = site_update(site=site, actor=pm, country="GB")
    assert (moved.country, moved.eu) == ("GB", False)
    event = AuditEvent.objects.for_object(site).get(verb="deployment.site_update")
    assert (event.before["eu"], event.after["eu"]) == (True, False)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": "basement"}, "kind"),
        ({"country": "Germany"}, "country"),
        ({"country": "D1"}, "country"),
        ({"name": "  "}, "name"),
        ({"operator": ""}, "operator"),
        ({"kind": "customer_room"}, "customer"),
        ({"customer": "partner"}, "customer"),
        ({"customer": "customer"}, "customer"),
    ],
)
def test_site_validation_names_the_field(pm, changes, field):
    organizations = {"partner": factories.PartnerFactory(), "customer": factories.OrganizationFactory()}
    if "customer" in changes:
        changes = {**changes, "customer": organizations[changes["customer"]]}
        if changes["customer"].kind == "partner":
            changes["kind"] = "customer_room"
    with pytest.raises(InvalidInput) as refused:
        site_create(actor=pm, **{**COLO, "country": "DE", **changes})
    assert refused.value.field == field
    assert not Site.objects.exists()


def test_a_customer_room_names_its_customer_and_names_are_unique(pm):
    customer = factories.OrganizationFactory(name="Alpha Rentals GmbH")
    room = site_create(
        actor=pm,
        name="Alpha basement",
        kind="customer_room",
        operator="Alpha facilities",
        address="Wien",
        country="AT",
        customer=customer,
    )
    assert (room.customer, room.eu) == (customer, True)

    with pytest.raises(RuleViolation) as taken:
        site_create(actor=pm, **{**COLO, "name": "Alpha basement", "country": "DE"})
    assert taken.value.code == "name_taken"


def test_racks_are_named_once_per_site_and_are_1_to_60u(pm):
    site = rig.site(pm)
    rack = rack_create(site=site, actor=pm, name="R01", height_u=47)
    assert Rack.objects.get(pk=rack.pk).height_u == 47
    assert rack_create(site=rig.site(pm, name="Other"), actor=pm, name="R01").height_u == 42

    with pytest.raises(RuleViolation) as taken:
        rack_create(site=site, actor=pm, name=" R01 ")
    assert taken.value.code == "name_taken"
    for height in (0, 61, "42", True):
        with pytest.raises(InvalidInput) as refused:
            rack_create(site=site, actor=pm, name=f"R{height}", height_u=height)
        assert refused.value.field == "height_u"
    second = rack_create(site=site, actor=pm, name="R02")
    with pytest.raises(RuleViolation):
        rack_update(rack=second, actor=pm, name="R01")
    assert rack_update(rack=second, actor=pm, name="R03").name == "R03"


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"leg": "C"}, "leg"),
        ({"voltage_v": 99}, "voltage_v"),
        ({"voltage_v": 481}, "voltage_v"),
        ({"current_a": 0}, "current_a"),
        ({"current_a": 126}, "current_a"),
        ({"current_a": "16"}, "current_a"),
        ({"phases": 2}, "phases"),
        ({"name": ""}, "name"),
    ],
)
def test_feed_validation_names_the_field(pm, values, field):
    rack, _ = rig.rack(pm, feeds=[])
    with pytest.raises(InvalidInput) as refused:
        feed_create(rack=rack, actor=pm, **{"name": "A1", "voltage_v": 230, "current_a": 16, **values})
    assert refused.value.field == field
    assert not PowerFeed.objects.exists()


def test_a_feed_is_created_and_changed_with_its_limit(pm):
    rack, (a1, b1) = rig.rack(
        pm, feeds=[{"name": "A1"}, {"name": "B1", "leg": "B", "phases": 3, "current_a": 32}]
    )
    assert (a1.rated_w, a1.continuous_limit_w) == (3680, 2944.0)
    assert (b1.rated_w, b1.continuous_limit_w) == (22080, 17664.0)

    with pytest.raises(RuleViolation) as taken:
        feed_create(rack=rack, actor=pm, name="A1", voltage_v=230, current_a=16)
    assert taken.value.code == "name_taken"
    with pytest.raises(RuleViolation):
        feed_update(feed=b1, actor=pm, name="A1")

    changed = feed_update(feed=a1, actor=pm, voltage_v=400)
    assert PowerFeed.objects.get(pk=a1.pk).rated_w == 6400
    event = AuditEvent.objects.for_object(rack).get(verb="deployment.feed_update")
    assert (event.before["feed"]["voltage_v"], event.after["feed"]["voltage_v"]) == (230, 400)
    assert changed.leg == "A"
