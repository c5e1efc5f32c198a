"""The Vast.ai poll (issue #28 item 4) against recorded responses served by a local server
(tests/deployment/vastai_rig.py): a change appends one listing row and sends one alert, an unchanged poll
appends nothing, an unreachable platform is retried and reported, and the API key shows up nowhere."""

from __future__ import annotations

import datetime
import json
import logging
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from deployment.choices import PlatformAlertKind, RentalState
from deployment.models import PlatformAccount, PlatformAlert, PlatformEarning, PlatformListing
from deployment.platforms import PlatformUnavailable
from deployment.platforms.vastai import VastAiClient, machine_state, rental_state
from deployment.selectors import current_listing
from deployment.services import listing_record, platform_account_set, platform_alert_send, platform_poll
from deployment.tasks import platform_poll_all_task, platform_poll_task
from tests import factories
from tests.deployment import svc_rig as svc
from tests.deployment.vastai_rig import vastai  # noqa: F401  (the local Vast.ai)
from werkbank.errors import InvalidInput
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

KEY = "vk-test-3f9c2a7e51d04b8e9a6c0d17"


@pytest.fixture
def fleet(vastai, django_capture_on_commit_callbacks):  # noqa: F811
    pm = factories.make_pm(username="fleet-pm", email="pm@werkbank.example")
    customer = factories.OrganizationFactory(name="Vastfleet Test GmbH", language="de")
    member = factories.make_member(customer, username="vf-ops", email="ops@vastfleet.example")
    server = svc.server(status="deployed", customer=customer)
    listing_record(
        server=server,
        actor=pm,
        platform="vast_ai",
        machine_id="41207",
        verification="verified",
        reliability="0.9879",
        rental_state=RentalState.RENTED,
        dlperf="312.50",
    )
    account = platform_account_set(
        organization=customer, platform="vast_ai", api_key=KEY, label="Fleet", actor=pm
    )
    return SimpleNamespace(
        pm=pm,
        customer=customer,
        member=member,
        server=server,
        account=account,
        rig=vastai,
        committed=lambda: django_capture_on_commit_callbacks(execute=True),
    )


def _rows(fleet) -> list[PlatformListing]:
    return list(PlatformListing.objects.filter(server=fleet.server).order_by("id"))


def _poll(fleet) -> bool:
    """One beat-scheduled poll, with what it enqueues after its commit (the alerts' mails) run too."""
    with fleet.committed():
        return platform_poll_task.delay(account_id=fleet.account.pk).get()


def test_an_unchanged_poll_appends_nothing_and_sends_nothing(fleet):
    assert _poll(fleet) is True
    fleet.rig.machines("machines_noise.json")  # +0.02 points, DLPerf +0.2 %: noise
    assert _poll(fleet) is True

    assert len(_rows(fleet)) == 1
    assert PlatformAlert.objects.count() == 0
    assert mail.outbox == []
    account = PlatformAccount.objects.get(pk=fleet.account.pk)
    assert account.last_polled_at is not None and account.last_error == ""
    # The first poll recorded the month's earnings (one audit row); the second found them unchanged.
    assert len(svc.events(fleet.server, "deployment.earning")) == 1
    assert AuditEvent.objects.filter(verb="deployment.platform_poll").count() == 1


def test_a_deverification_appends_one_row_and_sends_one_alert(fleet):
    fleet.rig.machines("machines_deverified.json")
    assert _poll(fleet) is True

    first, second = _rows(fleet)
    assert (second.verification, second.source, second.rental_state) == ("deverified", "poll", "unknown")
    assert second.is_current and not PlatformListing.objects.get(pk=first.pk).is_current
    assert second.reliability == Decimal("0.9879") and second.listed_on == first.listed_on
    assert "verification verified → deverified" in second.note
    alert = PlatformAlert.objects.get()
    assert (alert.listing_id, alert.kind) == (second.pk, PlatformAlertKind.DEVERIFIED)
    assert alert.sent_at is not None
    # One alert: one mail to the PMs (English) and one to the customer (German: its language).
    by_recipient = {tuple(message.to): message for message in mail.outbox}
    customer_to = tuple(sorted({"ops@vastfleet.example", fleet.customer.contact_email}))
    assert set(by_recipient) == {("pm@werkbank.example",), customer_to}
    assert len(mail.outbox) == 2
    pm_mail = by_recipient[("pm@werkbank.example",)]
    assert "Deverified on Vast.ai" in pm_mail.subject and fleet.server.hostname in pm_mail.subject
    assert reverse("deployment:server", args=[fleet.server.pk]) in pm_mail.body
    customer_mail = next(message for message in mail.outbox if message is not pm_mail)
    assert "Verifizierung entzogen" in customer_mail.subject
    assert reverse("portal:order", args=[fleet.server.order_id]) in customer_mail.body
    assert [event.after["kind"] for event in svc.events(fleet.server, "deployment.platform_alert")] == [
        "deverified"
    ]
    assert svc.events(fleet.server, "deployment.listing")[-1].after["source"] == "poll"
    assert AuditEvent.objects.filter(verb="deployment.platform_poll").last().after["alerts"] == [
        f"{fleet.server.hostname}: deverified"
    ]

    # The same answer again, and the alert's task delivered twice: nothing more.
    assert _poll(fleet) is True
    assert platform_alert_send(alert_id=alert.pk) is None
    assert (len(_rows(fleet)), PlatformAlert.objects.count(), len(mail.outbox)) == (2, 1, 2)


def test_a_reliability_drop_below_the_bar_appends_one_row_and_sends_one_alert(fleet, settings):
    assert Decimal("0.98") == settings.WERKBANK_PLATFORM_RELIABILITY_MIN
    fleet.rig.machines("machines_reliability_drop.json")
    _poll(fleet)
    _poll(fleet)

    assert [row.reliability for row in _rows(fleet)] == [Decimal("0.9879"), Decimal("0.9712")]
    alert = PlatformAlert.objects.get()
    assert alert.kind == PlatformAlertKind.RELIABILITY
    assert len(mail.outbox) == 2
    pm_mail = next(message for message in mail.outbox if message.to == ["pm@werkbank.example"])
    assert "Reliability below 98.00 %" in pm_mail.subject
    assert "97.12 %" in pm_mail.body and "98.79 % → 97.12 %" in pm_mail.body


def test_a_machine_going_offline_appends_one_row_and_sends_one_alert(fleet):
    fleet.rig.machines("machines_offline.json")
    _poll(fleet)
    _poll(fleet)

    rows = _rows(fleet)
    assert [row.rental_state for row in rows] == ["rented", "offline"]
    # The new row records the platform's figures; 98.79 % → 98.76 % alone would not have been a change.
    assert rows[1].reliability == Decimal("0.9876") and "reliability" not in rows[1].note
    assert PlatformAlert.objects.get().kind == PlatformAlertKind.OFFLINE
    assert len(mail.outbox) == 2
    assert all("Offline" in message.subject for message in mail.outbox)


@pytest.mark.parametrize("failure", ["server down", "HTTP 500", "timeout", "not JSON"])
def test_an_unreachable_platform_is_retried_then_reported_and_nothing_escapes(fleet, settings, failure):
    settings.WERKBANK_PLATFORM_POLL_RETRIES = 2
    if failure == "server down":
        fleet.rig.stop()
    elif failure == "HTTP 500":
        fleet.rig.answer("/machines/", body={"error": "internal"}, status=500)
    elif failure == "timeout":
        fleet.rig.answer("/machines/", fixture="machines_deverified.json", delay_s=1.0)
    else:
        fleet.rig.answer("/machines/", raw=b"<html>Bad gateway</html>")

    assert _poll(fleet) is False  # no exception escapes

    if failure != "server down":
        assert len([seen for seen in fleet.rig.requests if seen.path == "/machines/"]) == 3  # 1 + 2 retries
    account = PlatformAccount.objects.get(pk=fleet.account.pk)
    expected = {
        "server down": "Vast.ai is unreachable",
        "HTTP 500": "Vast.ai answered HTTP 500 on /machines/",
        "timeout": "did not answer /machines/ within 0.5 s",
        "not JSON": "is not JSON",
    }[failure]
    assert expected in account.last_error and account.last_error.endswith("(after 3 tries)")
    assert account.last_polled_at is None
    assert len(_rows(fleet)) == 1 and PlatformAlert.objects.count() == 0
    assert [
        event.after["last_error"]
        for event in AuditEvent.objects.filter(verb="deployment.platform_poll_failed")
    ] == [account.last_error]
    # The PM sees the error on the server page (a page, never a 500); the customer does not.
    pm_client = _client(fleet.pm)
    page = pm_client.get(reverse("deployment:server", args=[fleet.server.pk]))
    assert page.status_code == 200 and expected in page.content.decode()
    customer_page = _client(fleet.member).get(reverse("deployment:server", args=[fleet.server.pk]))
    assert customer_page.status_code in (200, 404) and expected not in customer_page.content.decode()


def test_a_failure_again_is_not_audited_twice_and_a_good_poll_clears_it(fleet, settings):
    settings.WERKBANK_PLATFORM_POLL_RETRIES = 0
    fleet.rig.answer("/machines/", body={}, status=503)
    _poll(fleet)
    _poll(fleet)
    assert AuditEvent.objects.filter(verb="deployment.platform_poll_failed").count() == 1

    fleet.rig.machines("machines_verified.json")
    assert _poll(fleet) is True
    account = PlatformAccount.objects.get(pk=fleet.account.pk)
    assert account.last_error == "" and account.last_polled_at is not None
    assert AuditEvent.objects.filter(verb="deployment.platform_poll").last().before["last_error"]


def test_a_refused_key_is_reported_at_once_without_retrying(fleet):
    fleet.rig.answer("/machines/", body={"error": "invalid_api_key"}, status=401)
    assert _poll(fleet) is False
    assert len(fleet.rig.requests) == 1
    assert (
        "refused the account's API key (HTTP 401"
        in PlatformAccount.objects.get(pk=fleet.account.pk).last_error
    )


def test_the_client_sends_the_key_as_a_bearer_header_and_reads_the_months_earnings(fleet):
    _poll(fleet)

    machines, earnings = fleet.rig.requests
    assert machines.path == "/machines/" and machines.query == {"owner": ["me"]}
    assert machines.headers["Authorization"] == f"Bearer {KEY}"
    month = timezone.localdate().replace(day=1)
    start = datetime.datetime.combine(month, datetime.time(), tzinfo=datetime.UTC).timestamp() / 86400
    assert earnings.path == "/users/me/machine-earnings"
    assert float(earnings.query["sday"][0]) == pytest.approx(start)
    assert KEY not in json.dumps([machines.query, earnings.query])
    earning = PlatformEarning.objects.get(server=fleet.server)
    # 2412.96 GPU + 11.87 storage + 1.04 upload + 0.66 download, in Vast.ai's dollars.
    assert (earning.month, earning.amount, earning.currency, earning.source) == (
        month,
        Decimal("2426.53"),
        "USD",
        "poll",
    )
    assert PlatformEarning.objects.count() == 1  # machine 50113 is no server of this customer's
    last = AuditEvent.objects.filter(verb="deployment.platform_poll").last()
    assert last.after["unmatched"] == ["50113"] and last.after["earnings"] == 1


def test_the_machine_fields_map_to_the_listing(fleet):
    row = json.loads(fleet.rig.answers["/machines/"].body)["machines"][0]
    state = machine_state(row)
    assert (state.machine_id, state.verification, state.reliability, state.dlperf, state.rental_state) == (
        "41207",
        "verified",
        Decimal("0.9879"),
        Decimal("312.50"),
        "rented",
    )
    assert rental_state({"timeout": 120, "current_rentals_running": 2, "listed": True}) == "offline"
    assert rental_state({"timeout": 0, "current_rentals_running": 0, "listed": True}) == "idle"
    assert rental_state({"timeout": 0, "current_rentals_running": 0, "listed": False}) == "unknown"
    odd = machine_state({"machine_id": 7, "verification": "pending", "reliability2": 1.7})
    assert (odd.machine_id, odd.verification, odd.reliability) == ("7", "unverified", None)
    with pytest.raises(PlatformUnavailable, match='has no "machines" list'):
        fleet.rig.answer("/machines/", body={"machine": []})
        VastAiClient(api_key=KEY).machines()
    assert KEY not in repr(VastAiClient(api_key=KEY))


def test_the_api_key_never_appears_in_logs_audit_rows_mails_or_pages(fleet, settings, caplog):
    caplog.set_level(logging.DEBUG)
    settings.WERKBANK_PLATFORM_POLL_RETRIES = 0
    fleet.rig.machines("machines_deverified.json")
    _poll(fleet)
    fleet.rig.answer("/machines/", body={"detail": "boom"}, status=502)
    _poll(fleet)
    platform_account_set(
        organization=fleet.customer, platform="vast_ai", api_key=KEY + "-2", label="Fleet", actor=fleet.pm
    )

    account = PlatformAccount.objects.get(pk=fleet.account.pk)
    assert KEY not in account.api_key and account.last_error == ""  # a new key clears the error
    assert "Platform poll of account" in caplog.text and KEY not in caplog.text
    for event in AuditEvent.objects.all():
        assert KEY not in json.dumps([event.before, event.after, event.note])
    assert [e.after["key_replaced"] for e in svc.events(account, "deployment.platform_account")] == [
        True,
        True,
    ]
    assert mail.outbox and all(KEY not in message.subject + message.body for message in mail.outbox)
    admin = _client(fleet.pm)
    for path in (
        "/admin/deployment/platformaccount/",
        f"/admin/deployment/platformaccount/{account.pk}/change/",
    ):
        page = admin.get(path)
        assert page.status_code == 200 and KEY not in page.content.decode()
        assert account.api_key not in page.content.decode()
    server_page = admin.get(reverse("deployment:server", args=[fleet.server.pk])).content.decode()
    assert KEY not in server_page and "platform-poll" in server_page


def test_a_wrong_tenant_sees_no_account(fleet):
    other = factories.OrganizationFactory()
    stranger = factories.make_member(other)
    partner = factories.make_member(fleet.server.partner) if fleet.server.partner else None
    assert list(PlatformAccount.objects.visible_to(fleet.member)) == [fleet.account]
    assert list(PlatformAccount.objects.visible_to(fleet.pm)) == [fleet.account]
    assert not PlatformAccount.objects.visible_to(stranger).exists()
    if partner is not None:
        assert not PlatformAccount.objects.visible_to(partner).exists()
    from django.contrib.auth.models import AnonymousUser

    assert not PlatformAccount.objects.visible_to(AnonymousUser()).exists()
    fleet.rig.machines("machines_deverified.json")
    _poll(fleet)
    assert PlatformAlert.objects.visible_to(fleet.member).count() == 1
    assert not PlatformAlert.objects.visible_to(stranger).exists()
    page = _client(stranger).get(reverse("deployment:server", args=[fleet.server.pk]))
    assert page.status_code == 404


def test_the_account_is_for_customers_and_its_key_is_write_only(fleet):
    partner = factories.PartnerFactory()
    with pytest.raises(InvalidInput) as refused:
        platform_account_set(organization=partner, platform="vast_ai", api_key=KEY, actor=fleet.pm)
    assert refused.value.field == "organization"
    with pytest.raises(InvalidInput) as refused:
        platform_account_set(
            organization=factories.OrganizationFactory(), platform="vast_ai", api_key="", actor=fleet.pm
        )
    assert refused.value.field == "api_key"
    with pytest.raises(InvalidInput) as refused:
        platform_account_set(organization=fleet.customer, platform="other", api_key=KEY, actor=fleet.pm)
    assert refused.value.field == "platform"

    stored = PlatformAccount.objects.get(pk=fleet.account.pk).api_key
    same = platform_account_set(
        organization=fleet.customer, platform="vast_ai", label="Fleet", actor=fleet.pm
    )
    assert same.api_key == stored  # an empty key keeps the stored one; nothing changed, nothing audited
    relabelled = platform_account_set(
        organization=fleet.customer, platform="vast_ai", label="Fleet BG", actor=fleet.pm
    )
    assert relabelled.api_key == stored and relabelled.label == "Fleet BG"
    events = svc.events(relabelled, "deployment.platform_account")
    assert [(e.before, e.after["key_replaced"]) for e in events] == [({}, True), ({"label": "Fleet"}, False)]


def test_the_admin_adds_an_account_through_the_service(fleet):
    other = factories.OrganizationFactory(name="Neoxis Test AG")
    response = _client(fleet.pm).post(
        "/admin/deployment/platformaccount/add/",
        {"organization": other.pk, "platform": "vast_ai", "label": "Neoxis", "new_api_key": "vk-neoxis-1"},
    )
    assert response.status_code == 302
    account = PlatformAccount.objects.get(organization=other)
    assert account.api_key != "vk-neoxis-1" and svc.events(account, "deployment.platform_account")


def test_the_beat_polls_every_account(fleet, settings):
    assert settings.CELERY_BEAT_SCHEDULE["deployment.platform_poll_all"]["task"] == (
        "deployment.tasks.platform_poll_all_task"
    )
    fleet.rig.machines("machines_offline.json")
    with fleet.committed():
        assert platform_poll_all_task.delay().get() == 1
    assert PlatformAccount.objects.get(pk=fleet.account.pk).last_polled_at is not None
    assert PlatformAlert.objects.get().kind == "offline"


def test_the_poll_service_raises_for_the_task_to_retry(fleet):
    fleet.rig.stop()
    with pytest.raises(PlatformUnavailable):
        platform_poll(account=fleet.account)
    assert current_listing(server=fleet.server).source == "manual"


def _client(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client
