"""The burn-in admin as a PM uses it: runs with their counts and findings, and the "Waive" action."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

from builds.choices import ServerStatus
from burnin.models import Finding
from tests import factories
from tests.burnin.test_gate import LINK_FAIL, LINK_FAIL_4, POWER_INFO, THERMAL_WARN
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

FINDINGS = "/admin/burnin/finding/"


@pytest.fixture
def pm_browser(client, tenants):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


@pytest.fixture
def run(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    (server,) = factories.make_servers(order, status=ServerStatus.BURN_IN)
    return factories.make_burnin_run(
        server,
        findings=[LINK_FAIL, LINK_FAIL_4, THERMAL_WARN, POWER_INFO],
        stages=[{"name": "burn", "status": "interrupted", "reason": "workshop power distribution failure"}],
    )


def test_run_list_shows_the_counts_and_the_run_page_its_findings(pm_browser, run):
    listing = pm_browser.get("/admin/burnin/burninrun/")
    assert listing.status_code == 200
    row = listing.context["cl"].result_list.get()
    assert (row.fail_count, row.unwaived_fail_count, row.warn_count, row.info_count) == (2, 2, 1, 1)
    assert run.server.hostname in listing.content.decode()

    page = pm_browser.get(f"/admin/burnin/burninrun/{run.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert LINK_FAIL["message"] in text
    assert "workshop power distribution failure" in text
    assert 'name="result"' not in text  # read-only: nothing to edit
    assert pm_browser.get("/admin/burnin/burninrun/add/").status_code == 403


@pytest.mark.parametrize("url", [FINDINGS, f"{FINDINGS}?severity__exact=fail&waived=no", f"{FINDINGS}?q=x8"])
def test_finding_lists_open(pm_browser, run, url):
    assert pm_browser.get(url).status_code == 200


def test_waive_action_asks_for_a_reason_then_waives_through_the_service(pm_browser, tenants, run):
    fail_2, fail_4 = run.findings.filter(severity="fail").order_by("id")

    form = pm_browser.post(FINDINGS, {"action": "waive", ACTION_CHECKBOX_NAME: [fail_2.pk, fail_4.pk]})
    assert form.status_code == 200
    text = form.content.decode()
    assert "Reason (required)" in text
    for finding in (LINK_FAIL, LINK_FAIL_4):  # the subject once, then the sentence
        assert f"({finding['subject']}): {finding['message'].removeprefix(finding['subject'] + ': ')}" in text

    empty = pm_browser.post(
        FINDINGS,
        {"action": "waive", ACTION_CHECKBOX_NAME: [fail_2.pk], "apply": "1", "waiver_reason": "  "},
    )
    assert "A written reason is required." in empty.content.decode()
    assert not Finding.objects.filter(waived_at__isnull=False).exists()
    assert not AuditEvent.objects.exists()

    done = pm_browser.post(
        FINDINGS,
        {
            "action": "waive",
            ACTION_CHECKBOX_NAME: [fail_2.pk, fail_4.pk],
            "apply": "1",
            "waiver_reason": "Risers replaced; x16 confirmed",
        },
        follow=True,
    )

    assert done.status_code == 200
    for finding in (fail_2, fail_4):
        finding.refresh_from_db()
        assert (finding.waived_by, finding.waiver_reason) == (tenants.pm, "Risers replaced; x16 confirmed")
    events = AuditEvent.objects.for_object(run.server).filter(verb="burnin.finding_waive")
    assert sorted(event.after["finding"] for event in events) == [fail_2.pk, fail_4.pk]
    assert {(event.actor, event.note) for event in events} == {(tenants.pm, "Risers replaced; x16 confirmed")}


def test_a_refused_waiver_is_a_message_and_the_rest_go_through(pm_browser, tenants, run):
    info = run.findings.get(severity="info")
    warn = run.findings.get(severity="warn")

    response = pm_browser.post(
        FINDINGS,
        {"action": "waive", ACTION_CHECKBOX_NAME: [info.pk, warn.pk], "apply": "1", "waiver_reason": "ok"},
        follow=True,
    )

    text = response.content.decode()
    assert "for information only" in text
    info.refresh_from_db()
    warn.refresh_from_db()
    assert (info.waived, warn.waived) == (False, True)
    assert AuditEvent.objects.filter(verb="burnin.finding_waive").count() == 1


def test_only_pms_open_the_burnin_admin(client, tenants, run):
    client.force_login(factories.UserFactory(is_staff=True))  # staff, but not a PM
    assert client.get(FINDINGS).status_code == 403
    assert client.get("/admin/burnin/burninrun/").status_code == 403
    client.force_login(tenants.user_p)
    assert client.get(FINDINGS).status_code == 302  # to the admin's login
