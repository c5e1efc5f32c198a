"""Platform onboarding (`deployment.services.onboarding`): an append-only history of a deployed server's
listing, its validation, the verification date, and machine ids unique among current listings."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from deployment.models import PlatformListing
from deployment.selectors import current_listing
from deployment.services import listing_record
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm():
    return factories.make_pm(username="listing-pm")


def _list(server, actor, **values):
    return listing_record(
        server=server, actor=actor, **{"platform": "vast_ai", "machine_id": "m-4711", **values}
    )


def test_every_record_is_a_new_row_and_the_last_is_current(pm):
    server = rig.server(status="deployed")
    today = timezone.localdate()
    week_ago = today - timedelta(days=7)

    first = _list(server, pm, listed_on=week_ago, reliability="0.9")
    second = _list(server, pm, verification="verified", reliability=Decimal("0.99512"), note=" Passed ")
    third = _list(server, pm, verification="deverified", reliability=0.97)

    rows = list(PlatformListing.objects.filter(server=server).order_by("id"))
    assert [row.pk for row in rows] == [first.pk, second.pk, third.pk]
    assert [row.verification for row in rows] == ["unverified", "verified", "deverified"]
    assert [row.reliability for row in rows] == [Decimal("0.9000"), Decimal("0.9951"), Decimal("0.9700")]
    # The listing date is kept while the platform and machine stay the same.
    assert [row.listed_on for row in rows] == [week_ago, week_ago, week_ago]
    assert (rows[1].verified_on, rows[1].note) == (today, "Passed")
    assert current_listing(server=server) == third
    assert [event.after["verification"] for event in rig.events(server, "deployment.listing")] == [
        "unverified",
        "verified",
        "deverified",
    ]


def test_a_first_listing_is_listed_today(pm):
    listing = _list(rig.server(status="deployed"), pm)
    assert (listing.listed_on, listing.verified_on) == (timezone.localdate(), None)


def test_a_later_verified_record_keeps_the_verification_date(pm):
    server = rig.server(status="handed_over")
    verified_on = timezone.localdate() - timedelta(days=30)

    _list(server, pm, verification="verified", verified_on=verified_on)
    later = _list(server, pm, verification="verified", reliability="0.998")

    assert later.verified_on == verified_on


def test_no_listing_means_no_machine_id(pm):
    server = rig.server(status="deployed")
    _list(server, pm)
    unlisted = listing_record(server=server, actor=pm, platform="none")
    assert (unlisted.platform, unlisted.machine_id, unlisted.listed_on) == ("none", "", None)
    assert current_listing(server=server) == unlisted


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"machine_id": "  "}, "machine_id"),
        ({"platform": "other", "machine_id": ""}, "machine_id"),
        ({"machine_id": "m" * 65}, "machine_id"),
        ({"platform": "none"}, "platform"),
        ({"platform": "none", "machine_id": "", "verification": "verified"}, "platform"),
        ({"platform": "runpod"}, "platform"),
        ({"verification": "maybe"}, "verification"),
        ({"reliability": "1.01"}, "reliability"),
        ({"reliability": -0.1}, "reliability"),
        ({"reliability": "ninety"}, "reliability"),
        ({"reliability": "NaN"}, "reliability"),
        ({"listed_on": "tomorrow"}, "listed_on"),
        ({"verification": "verified", "verified_on": "tomorrow"}, "verified_on"),
    ],
)
def test_validation_names_the_field(pm, values, field):
    server = rig.server(status="deployed")
    tomorrow = timezone.localdate() + timedelta(days=1)
    values = {key: tomorrow if value == "tomorrow" else value for key, value in values.items()}

    with pytest.raises(InvalidInput) as refused:
        _list(server, pm, **values)

    assert refused.value.field == field
    assert not PlatformListing.objects.exists()


@pytest.mark.parametrize("reliability", [0, 1, "0.0000", "1.0000"])
def test_reliability_bounds_are_included(pm, reliability):
    listing = _list(rig.server(status="deployed"), pm, reliability=reliability)
    assert listing.reliability in (Decimal(0), Decimal(1))


def test_a_machine_id_of_another_servers_current_listing_is_taken(pm):
    first, second = rig.servers(count=2, status="deployed")
    _list(first, pm, machine_id="m-1")

    with pytest.raises(RuleViolation) as refusal:
        _list(second, pm, machine_id=" m-1 ")

    assert refusal.value.code == "machine_id_taken"
    assert refusal.value.message == f"Machine id m-1 on Vast.ai is server {first.hostname}'s."
    assert not PlatformListing.objects.filter(server=second).exists()
    # The same id on another platform is another machine.
    assert _list(second, pm, platform="other", machine_id="m-1").machine_id == "m-1"


def test_a_superseded_listing_frees_its_machine_id(pm):
    first, second = rig.servers(count=2, status="deployed")
    _list(first, pm, machine_id="m-1")
    _list(first, pm, machine_id="m-2")  # re-listed under a new id: m-1 is history

    taken_over = _list(second, pm, machine_id="m-1")

    assert current_listing(server=second) == taken_over
    with pytest.raises(RuleViolation) as refusal:
        _list(second, pm, machine_id="m-2")
    assert refusal.value.code == "machine_id_taken"


@pytest.mark.parametrize("status", ["burn_in_passed", "planned", "burn_in_failed"])
def test_only_a_deployed_server_is_listed(pm, status):
    server = rig.server(status=status)

    with pytest.raises(RuleViolation) as refusal:
        _list(server, pm)

    assert refusal.value.code == "not_deployed"
    assert refusal.value.missing == [f"server {server.hostname} deployed"]
    assert not PlatformListing.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_servers_claiming_one_machine_id_at_once_leave_exactly_one_listed():
    """The service's check cannot see an insert that has not committed; the partial unique constraint on
    the current listings makes the second insert wait for the first and then fail (PostgreSQL)."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite serialises writers, so there is no race to lose")
    pm = factories.make_pm(username="race-pm")
    first, second = rig.servers(count=2, status="deployed")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def claim(server):
        try:
            barrier.wait(timeout=10)
            listing_record(server=server, actor=pm, platform="vast_ai", machine_id="race-1")
            outcomes.append("listed")
        except RuleViolation as refusal:
            outcomes.append(refusal.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(server,)) for server in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(outcomes) == ["listed", "machine_id_taken"]
    assert PlatformListing.objects.filter(machine_id="race-1", is_current=True).count() == 1
