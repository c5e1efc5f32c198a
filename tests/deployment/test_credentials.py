"""BMC credentials handed over (issue #28, item 3): a customer member reveals them in the portal after typing
the password again, once per request, audited with the client address; everyone else gets a 404; a wrong
password reveals nothing and counts as a failed login; a PM sees the reveals and rotates the credentials,
and the customer is told by one e-mail per rotation, without them."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.core import mail

from deployment.services import bmc_credentials_reveal, bmc_credentials_rotate, network_set
from deployment.services.credentials import bmc_rotated_notice_send
from deployment.tasks import bmc_rotated_notify_task
from orders.models import StatusNotice
from tests.deployment import creds_rig
from tests.deployment.creds_rig import OTHER_SECRET, SECRET, USERNAME, client_for, reveal
from tests.factories import PASSWORD
from tests.warranty.handover_rig import bench, handed, world  # noqa: F401 - fixtures
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

creds = creds_rig.creds  # the fixture


def _reveals(server):
    return list(AuditEvent.objects.for_object(server).filter(verb="deployment.bmc_reveal").order_by("pk"))


def test_a_member_reveals_the_credentials_once_per_request_after_typing_the_password(creds):
    client = client_for(creds.t.user_a)
    page = client.get(f"/portal/servers/{creds.server.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Reveal BMC credentials" in html and creds.url() in html and SECRET not in html

    form = client.get(creds.url())
    assert form.status_code == 200 and 'name="password"' in form.content.decode()
    assert SECRET not in form.content.decode() and form["Cache-Control"] == "no-store"

    shown = reveal(client, creds)
    assert shown.status_code == 200
    assert shown["Cache-Control"] == "no-store"
    body = shown.content.decode()
    assert SECRET in body and USERNAME in body
    (event,) = _reveals(creds.server)
    assert (event.actor, event.after, event.note) == (
        creds.t.user_a,
        {"user": "alice", "ip": "127.0.0.1"},
        "",
    )
    assert SECRET not in str(event.before) + str(event.after)

    # Nothing is remembered: the next page asks for the password again, and the session holds nothing.
    again = client.get(creds.url())
    assert SECRET not in again.content.decode() and 'name="password"' in again.content.decode()
    assert SECRET not in str(dict(client.session.items()))
    assert reveal(client, creds, password="").status_code == 400
    assert len(_reveals(creds.server)) == 1
    assert SECRET in reveal(client, creds).content.decode()
    assert len(_reveals(creds.server)) == 2


def test_the_client_address_behind_a_declared_proxy_is_the_one_audited(creds, settings):
    settings.WERKBANK_TRUSTED_PROXY_COUNT = 1
    client = client_for(creds.t.user_a)
    assert (
        client.post(creds.url(), {"password": PASSWORD}, HTTP_X_FORWARDED_FOR="203.0.113.7").status_code
        == 200
    )
    assert _reveals(creds.server)[0].after["ip"] == "203.0.113.7"


def test_a_wrong_password_reveals_nothing_and_counts_as_a_failed_login(creds, settings):
    client = client_for(creds.t.user_a)
    wrong = reveal(client, creds, password="not-my-password")
    assert wrong.status_code == 400
    body = wrong.content.decode()
    assert "The password is not correct" in body and SECRET not in body and USERNAME not in body
    assert wrong["Cache-Control"] == "no-store"
    assert not _reveals(creds.server)
    attempt = AccessAttempt.objects.get(username="alice")
    assert attempt.failures_since_start == 1
    failed = AuditEvent.objects.get(verb="login_failed")
    assert failed.after["username"] == "alice" and "not-my-password" not in str(failed.after)

    # At the lockout limit even the right password is refused, with the lockout's 429.
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        reveal(client, creds, password="not-my-password")
    locked = reveal(client, creds)
    assert locked.status_code == 429 and SECRET not in locked.content.decode()
    assert not _reveals(creds.server)


def test_a_german_member_reads_the_page_in_german(creds):
    client = client_for(creds.t.user_a)
    client.cookies["django_language"] = "de"
    assert "BMC-Zugangsdaten anzeigen" in client.get(f"/portal/servers/{creds.server.pk}/").content.decode()
    assert "Das Passwort ist nicht korrekt" in reveal(client, creds, password="nope").content.decode()


@pytest.mark.parametrize("who", ["other_customer", "partner", "pm", "outsider"])
def test_anyone_but_the_customers_members_gets_a_404(creds, who):
    user = {
        "other_customer": creds.t.user_b,
        "partner": creds.t.user_p,
        "pm": creds.t.pm,
        "outsider": creds.t.outsider,
    }[who]
    client = client_for(user)
    for response in (client.get(creds.url()), reveal(client, creds)):
        assert response.status_code == 404
        assert SECRET not in response.content.decode()
    with pytest.raises(UnknownObject):
        bmc_credentials_reveal(server=creds.server, actor=user, password=PASSWORD, client_ip="127.0.0.1")
    assert not _reveals(creds.server)


def test_an_anonymous_visitor_is_sent_to_log_in_and_an_anonymous_post_is_a_404(creds):
    anonymous = client_for(None)
    assert anonymous.get(creds.url())["Location"].startswith("/accounts/login/?next=")
    posted = reveal(anonymous, creds)
    assert posted.status_code == 404 and SECRET not in posted.content.decode()
    assert not _reveals(creds.server)


def test_customer_b_reveals_its_own_server_and_never_customer_as(creds):
    client = client_for(creds.t.user_b)
    body = reveal(client, creds, server=creds.server_b).content.decode()
    assert OTHER_SECRET in body and SECRET not in body


def test_before_the_handover_or_without_credentials_nothing_is_revealed(creds):
    client = client_for(creds.t.user_a)
    early = reveal(client, creds, server=creds.deployed)
    assert early.status_code == 409 and SECRET not in early.content.decode()
    assert "once the server is handed over" in early.content.decode()
    assert (
        "Reveal BMC credentials" not in client.get(f"/portal/servers/{creds.deployed.pk}/").content.decode()
    )
    with pytest.raises(RuleViolation) as refusal:
        bmc_credentials_reveal(server=creds.deployed, actor=creds.t.user_a, password=PASSWORD, client_ip=None)
    assert refusal.value.code == "bmc_not_handed_over"

    network = creds.server.network
    network_set(
        server=creds.server,
        actor=creds.t.pm,
        management_ip=network.management_ip,
        bmc_ip=network.bmc_ip,
        bmc_mac=network.bmc_mac,
        clear_bmc_credentials=True,
    )
    assert reveal(client, creds).status_code == 409
    assert (
        "No BMC credentials are on record"
        in client.get(f"/portal/servers/{creds.server.pk}/").content.decode()
    )
    with pytest.raises(RuleViolation) as refusal:
        bmc_credentials_reveal(server=creds.server, actor=creds.t.user_a, password=PASSWORD, client_ip=None)
    assert refusal.value.code == "bmc_no_credentials"
    assert not AuditEvent.objects.filter(verb="deployment.bmc_reveal").exists()


def test_the_service_checks_the_password_without_a_request(creds):
    with pytest.raises(InvalidInput) as wrong:
        bmc_credentials_reveal(server=creds.server, actor=creds.t.user_a, password="nope", client_ip=None)
    assert wrong.value.field == "password"
    found = bmc_credentials_reveal(
        server=creds.server, actor=creds.t.user_a, password=PASSWORD, client_ip="::1"
    )
    assert found == {"username": USERNAME, "password": SECRET}
    event = AuditEvent.objects.get(verb="deployment.bmc_reveal")
    assert (event.actor, event.after) == (creds.t.user_a, {"user": "alice", "ip": "::1"})
    assert event.object_id == str(creds.server.pk)


def test_a_pm_sees_the_reveals_and_rotates_the_credentials_and_the_customer_is_told_once(
    creds, django_capture_on_commit_callbacks
):
    pm = client_for(creds.t.pm)
    page = pm.get(f"/deployment/servers/{creds.server.pk}/").content.decode()
    assert "Not yet revealed to the customer." in page and 'id="bmc-rotate-form"' in page
    reveal(client_for(creds.t.user_a), creds)
    page = pm.get(f"/deployment/servers/{creds.server.pk}/").content.decode()
    assert "Revealed to alice on " in page and " from 127.0.0.1" in page and SECRET not in page
    # The partner's view of the server page shows neither the reveals nor the form.
    partner_page = client_for(creds.t.user_p).get(f"/deployment/servers/{creds.server.pk}/").content.decode()
    assert "bmc-rotate-form" not in partner_page and "Revealed to" not in partner_page

    new_secret = "s3cr3t-BMC-pass-rotated-2b"
    with django_capture_on_commit_callbacks(execute=True):
        done = pm.post(
            f"/deployment/servers/{creds.server.pk}/bmc-rotate/",
            {"bmc_username": "admin2", "bmc_password": new_secret},
        )
    assert done.status_code == 303
    (event,) = AuditEvent.objects.for_object(creds.server).filter(verb="deployment.bmc_rotate")
    assert event.after == {"bmc_credentials": "set", "customer_told": True} and event.actor == creds.t.pm
    (message,) = mail.outbox
    assert sorted(message.to) == ["alice@example.com", "ops@alpha.example"]
    assert (
        creds.server.hostname in message.subject
        and f"/portal/servers/{creds.server.pk}/bmc-credentials/" in message.body
    )
    assert new_secret not in message.body + message.subject and "admin2" not in message.body
    # The task run again (a re-delivery) sends nothing: the notice is unique per rotation.
    assert bmc_rotated_notify_task.delay(event_id=event.pk).get() is False
    assert bmc_rotated_notice_send(event_id=event.pk) is None
    assert len(mail.outbox) == 1 and StatusNotice.objects.filter(event=event).count() == 1

    assert bmc_credentials_reveal(
        server=creds.server, actor=creds.t.user_a, password=PASSWORD, client_ip=None
    ) == {"username": "admin2", "password": new_secret}
    assert "Last rotated on " in pm.get(f"/deployment/servers/{creds.server.pk}/").content.decode()


def test_a_rotation_before_the_handover_tells_nobody_and_only_pms_rotate(
    creds, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        bmc_credentials_rotate(server=creds.deployed, actor=creds.t.pm, username="root", password="x-1")
    assert not mail.outbox
    assert AuditEvent.objects.get(verb="deployment.bmc_rotate").after["customer_told"] is False
    for user in (creds.t.user_a, creds.t.user_p):
        with pytest.raises(RuleViolation) as refusal:
            bmc_credentials_rotate(server=creds.server, actor=user, username="root", password="x-2")
        assert refusal.value.code == "pm_only"
    with pytest.raises(InvalidInput) as missing:
        bmc_credentials_rotate(server=creds.server, actor=creds.t.pm, username="root", password=" ")
    assert missing.value.field == "password"
    partner = client_for(creds.t.user_p).post(
        f"/deployment/servers/{creds.server.pk}/bmc-rotate/", {"bmc_username": "a", "bmc_password": "b"}
    )
    assert partner.status_code == 403
    stranger = client_for(creds.t.user_b).post(
        f"/deployment/servers/{creds.server.pk}/bmc-rotate/", {"bmc_username": "a", "bmc_password": "b"}
    )
    assert stranger.status_code == 404
    assert AuditEvent.objects.filter(verb="deployment.bmc_rotate").count() == 1
