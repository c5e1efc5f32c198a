"""The burn-in gate on the burn-in page (/burnin/servers/<id>/): a PM's Pass, Fail and Waive buttons, the
blockers shown before the click, refusals on the page, and a 404 for everyone else (issue #24, item 3)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from builds.choices import ServerStatus
from builds.models import Server
from burnin.gates import finding_sentence
from burnin.models import Finding
from tests import factories
from tests.burnin.test_gate import LINK_FAIL, POWER_INFO, STAGES_OK, THERMAL_WARN
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@dataclass
class Page:
    t: Any
    server: Server

    @property
    def url(self) -> str:
        return f"/burnin/servers/{self.server.pk}/"


@pytest.fixture
def page(tenants: Any) -> Page:
    """Customer A's server in burn-in, built by partner P."""
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status=ServerStatus.BURN_IN)
    server.partner = tenants.partner_p
    server.save(update_fields=["partner"])
    return Page(t=tenants, server=server)


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _status(server: Server) -> str:
    server.refresh_from_db()
    return server.status


def _text(response: Any) -> str:
    return html.unescape(response.content.decode())


def test_a_pm_passes_a_server_whose_run_has_no_fail(page):
    factories.make_burnin_run(page.server, findings=[THERMAL_WARN, POWER_INFO], stages=STAGES_OK)
    client = _client(page.t.pm)
    shown = client.get(page.url)
    assert shown.context["gate"]["missing"] == []
    assert 'id="gate-ready"' in shown.content.decode()

    response = client.post(f"{page.url}pass/", {"note": "Clean run"})

    assert response.status_code == 303
    assert response["Location"] == page.url
    assert _status(page.server) == ServerStatus.BURN_IN_PASSED
    transition = AuditEvent.objects.for_object(page.server).get(verb="server.pass_burn_in")
    assert (transition.actor, transition.note) == (page.t.pm, "Clean run")
    after = client.get(page.url)
    assert f"{page.server.hostname} passed burn-in." in _text(after)
    # Passed: no buttons any more.
    assert after.context["gate"] is None and 'id="gate"' not in after.content.decode()


def test_a_fail_finding_blocks_the_pass_until_a_pm_waives_it_with_a_reason(page):
    run = factories.make_burnin_run(page.server, findings=[LINK_FAIL, THERMAL_WARN, POWER_INFO])
    fail = run.findings.get(severity="fail")
    warn = run.findings.get(severity="warn")
    info = run.findings.get(severity="info")
    sentence = finding_sentence(fail)
    client = _client(page.t.pm)

    # Before the click: the same blockers as the API's 409, and a Waive form per waivable finding.
    shown = client.get(page.url)
    assert shown.context["gate"]["missing"] == [sentence]
    body = shown.content.decode()
    assert sentence in html.unescape(body.split('id="gate-blockers"')[1].split("</ul>")[0])
    for finding in (fail, warn):
        assert f'action="/burnin/findings/{finding.pk}/waive/"' in body
    assert f'action="/burnin/findings/{info.pk}/waive/"' not in body

    events = AuditEvent.objects.count()
    refused = client.post(f"{page.url}pass/")
    assert refused.status_code == 409
    assert sentence in _text(refused).split('id="gate-refusal"')[1].split("</div>")[0]
    assert _status(page.server) == ServerStatus.BURN_IN
    assert AuditEvent.objects.count() == events

    # Without a reason: a 400 that names it, nothing written.
    no_reason = client.post(f"/burnin/findings/{fail.pk}/waive/", {"reason": "  "})
    assert no_reason.status_code == 400
    refusal = _text(no_reason).split('id="gate-refusal"')[1].split("</div>")[0]
    assert "reason: A written reason is required." in refusal
    assert "A written reason is required." in _text(no_reason).split(f'data-finding="{fail.pk}"')[1]
    fail.refresh_from_db()
    assert not fail.waived and AuditEvent.objects.count() == events

    waived = client.post(f"/burnin/findings/{fail.pk}/waive/", {"reason": "GPU 2 re-seated; x16 confirmed"})
    assert waived.status_code == 303 and waived["Location"] == page.url
    fail.refresh_from_db()
    assert (fail.waived, fail.waived_by, fail.waiver_reason) == (
        True,
        page.t.pm,
        "GPU 2 re-seated; x16 confirmed",
    )
    after = client.get(page.url)
    assert after.context["gate"]["missing"] == []
    assert f'action="/burnin/findings/{fail.pk}/waive/"' not in after.content.decode()

    # Waiving it again is refused with the service's sentence (409).
    again = client.post(f"/burnin/findings/{fail.pk}/waive/", {"reason": "twice"})
    assert again.status_code == 409 and "was already waived" in _text(again)

    assert client.post(f"{page.url}pass/").status_code == 303
    assert _status(page.server) == ServerStatus.BURN_IN_PASSED


def test_a_pm_fails_the_burn_in_with_a_reason_and_the_server_goes_back_to_rework(page):
    factories.make_burnin_run(page.server, findings=[LINK_FAIL])
    client = _client(page.t.pm)

    no_reason = client.post(f"{page.url}fail/", {"reason": ""})
    assert no_reason.status_code == 400
    assert "reason: A written reason is required." in _text(no_reason)
    assert _status(page.server) == ServerStatus.BURN_IN

    response = client.post(
        f"{page.url}fail/", {"reason": "GPU 2 at x8 after two re-seats: replace the riser"}
    )
    assert response.status_code == 303
    assert _status(page.server) == ServerStatus.BURN_IN_FAILED
    event = AuditEvent.objects.for_object(page.server).get(verb="server.fail_burn_in")
    assert (event.actor, event.note) == (page.t.pm, "GPU 2 at x8 after two re-seats: replace the riser")
    assert "goes back to its partner for rework" in _text(client.get(page.url))


def test_a_pass_of_a_server_no_longer_in_burn_in_is_refused_on_the_page(page):
    factories.make_burnin_run(page.server, stages=STAGES_OK)
    Server.objects.filter(pk=page.server.pk).update(status=ServerStatus.BURN_IN_PASSED)

    refused = _client(page.t.pm).post(f"{page.url}pass/")

    assert refused.status_code == 409
    assert 'id="gate-refusal"' in refused.content.decode()
    assert 'id="gate-pass"' not in refused.content.decode()


def test_partners_customers_and_outsiders_see_no_buttons_and_their_posts_are_404(page):
    run = factories.make_burnin_run(page.server, findings=[LINK_FAIL])
    fail = run.findings.get()
    events = AuditEvent.objects.count()
    for user in (page.t.user_p, page.t.user_a):
        client = _client(user)
        shown = client.get(page.url)
        assert shown.status_code == 200, user.username
        assert shown.context["gate"] is None
        body = shown.content.decode()
        assert 'id="gate"' not in body and "/waive/" not in body, user.username
    for user in (page.t.user_p, page.t.user_a, page.t.user_b, page.t.user_q, page.t.outsider):
        client = _client(user)
        assert client.post(f"{page.url}pass/").status_code == 404, user.username
        assert client.post(f"{page.url}fail/", {"reason": "no"}).status_code == 404, user.username
        assert client.post(f"/burnin/findings/{fail.pk}/waive/", {"reason": "no"}).status_code == 404
    assert _status(page.server) == ServerStatus.BURN_IN
    assert not Finding.objects.filter(waived_at__isnull=False).exists()
    assert AuditEvent.objects.count() == events
    # Anonymous: to the login page; a GET on a POST route: 405.
    assert Client().post(f"{page.url}pass/").status_code == 302
    assert _client(page.t.pm).get(f"{page.url}pass/").status_code == 405


def test_an_earlier_run_page_offers_no_waive_buttons(page):
    from datetime import UTC, datetime

    old = factories.make_burnin_run(
        page.server, findings=[LINK_FAIL], started_at=datetime(2026, 8, 1, tzinfo=UTC)
    )
    factories.make_burnin_run(
        page.server, findings=[THERMAL_WARN], started_at=datetime(2026, 8, 5, tzinfo=UTC)
    )
    response = _client(page.t.pm).get(f"/burnin/runs/{old.pk}/")
    assert response.status_code == 200
    assert response.context["gate"]["waive"] is False
    assert "/waive/" not in response.content.decode()
    # The gate's pass still stands beside it: the judged run has only a warning.
    assert response.context["gate"]["missing"] == []
