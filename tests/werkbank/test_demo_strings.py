"""The demo reads like real business data: after `manage.py seed_demo`, no stored text and no page a demo
user opens says "seed" or "assumed" (issue #14: those are notes to ourselves, and belong in code comments).

The database scan reads every text-like column of every model (CharField, TextField, JSONField values with
their keys, recursively), so the audit events' notes, `before` and `after` are covered too. The page scan
renders the main pages (portal, warranty, the PM's pipeline, order page and search, bench, ROI, burn-in,
deployment) as each demo user and reads the visible text (not scripts, styles or markup), plus the
attributes a reader sees (`title`, `alt`, `aria-label`, `placeholder`).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import models

from builds.models import Server
from burnin.models import BurnInRun
from deployment.models import Rack, Site
from orders.models import Order
from warranty.models import WarrantyRecord
from werkbank.demo_context import DEMO_PASSWORD

pytestmark = pytest.mark.django_db

#: Words that give our own notes away: a seed document's name, or a note on what we assumed.
FORBIDDEN = re.compile(r"\w*(?:seed|assum)\w*", re.IGNORECASE)
#: Notes to ourselves that are not about a seed: the demo's own name in stored business data.
FORBIDDEN_IN_DATA = re.compile(r"\w*(?:seed|assum)\w*|\bdemo\b|walk-through", re.IGNORECASE)

#: Columns that hold secrets as random text (a password hash, a Fernet token), which no user reads and
#: which may spell any word by chance.
SECRETS = {("auth.User", "password"), ("deployment.ServerNetwork", "bmc_credentials")}

#: The pages each demo user must be able to open, by kind (see `_pages`); every one is scanned.
EXPECTED_PAGES = {
    "pm": {
        "pipeline",
        "search",
        "pm-order",
        "bench",
        "bench-server",
        "roi",
        "burnin-server",
        "burnin-run",
        "rack",
        "site",
        "deployment-server",
    },
    "kentino": {
        "search",
        "bench",
        "bench-server",
        "burnin-server",
        "burnin-run",
        "rack",
        "site",
        "deployment-server",
    },
    "vastfleet": {
        "portal",
        "portal-order",
        "portal-server",
        "warranty",
        "warranty-record",
        "burnin-server",
        "burnin-run",
        "rack",
        "site",
        "deployment-server",
    },
    "neoxis": {"portal", "portal-order", "warranty"},
    "inferenzlabor": {
        "portal",
        "portal-order",
        "portal-server",
        "warranty",
        "burnin-server",
        "burnin-run",
        "rack",
        "site",
        "deployment-server",
    },
}


@pytest.fixture
def demo(settings, tmp_path, capsys, django_capture_on_commit_callbacks):
    """The demo as `make demo` leaves it: committed, so the pack, the handover and the claim exist."""
    settings.MEDIA_ROOT = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo", "--quiet")
    capsys.readouterr()


def _strings(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every string in a column's value, with where it sits in a JSON value (keys included)."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            found += _strings(key, f"{path}{{key}}") + _strings(item, f"{path}.{key}")
        return found
    if isinstance(value, (list, tuple)):
        return [found for index, item in enumerate(value) for found in _strings(item, f"{path}[{index}]")]
    return []


def offending_values() -> list[str]:
    """`model.field[path]=value` for each stored text that gives a note to ourselves away."""
    offending = []
    for model in apps.get_models():
        fields = [
            field
            for field in model._meta.concrete_fields
            if isinstance(field, (models.CharField, models.TextField, models.JSONField))
            and (model._meta.label, field.name) not in SECRETS
        ]
        if not fields:
            continue
        for row in model.objects.values_list(*(field.attname for field in fields)):
            for field, value in zip(fields, row, strict=True):
                for path, text in _strings(value):
                    if FORBIDDEN_IN_DATA.search(text):
                        offending.append(f"{model._meta.label}.{field.name}{path}={text!r}")
    return sorted(set(offending))


class _VisibleText(HTMLParser):
    """The text a reader sees on a page: text nodes outside scripts and styles, and a few attributes."""

    HIDDEN = {"script", "style", "template"}
    READ_ATTRIBUTES = {"title", "alt", "aria-label", "placeholder"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self._hidden += 1
        self.parts += [value for name, value in attrs if name in self.READ_ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def _pages() -> list[tuple[str, str]]:
    """(kind, url) of every main page of the demo's objects; each user opens those its access allows."""
    pages = [
        ("portal", "/portal/"),
        ("warranty", "/portal/warranty/"),
        ("bench", "/bench/"),
        ("pipeline", "/pm/"),
        ("search", "/pm/search/?q=GPU"),
    ]
    for order in Order.objects.order_by("pk"):
        pages += [
            ("portal-order", f"/portal/orders/{order.pk}/"),
            ("pm-order", f"/pm/orders/{order.pk}/"),
            ("roi", f"/pm/orders/{order.pk}/roi/"),
        ]
    for server in Server.objects.filter(installations__isnull=False).distinct().order_by("pk"):
        pages += [
            ("portal-server", f"/portal/servers/{server.pk}/"),
            ("bench-server", f"/bench/servers/{server.pk}/"),
            ("burnin-server", f"/burnin/servers/{server.pk}/"),
            ("deployment-server", f"/deployment/servers/{server.pk}/"),
        ]
    pages += [("burnin-run", f"/burnin/runs/{run.pk}/") for run in BurnInRun.objects.order_by("pk")]
    pages += [("rack", f"/deployment/racks/{rack.pk}/") for rack in Rack.objects.order_by("pk")]
    pages += [("site", f"/deployment/sites/{site.pk}/") for site in Site.objects.order_by("pk")]
    pages += [
        ("warranty-record", f"/portal/warranty/records/{record.pk}/")
        for record in WarrantyRecord.objects.filter(claims__isnull=False).distinct()
    ]
    return pages


def test_no_stored_demo_text_is_a_note_to_ourselves(demo):
    offending = offending_values()
    assert not offending, "\n".join(offending)


def test_no_demo_page_shows_a_note_to_ourselves(demo, client):
    opened: dict[str, set[str]] = {}
    offending = []
    pages = _pages()
    for username in EXPECTED_PAGES:
        client.logout()
        assert client.login(username=username, password=DEMO_PASSWORD)
        for kind, url in pages:
            response = client.get(url)
            assert response.status_code in {200, 404}, (username, url, response.status_code)
            if response.status_code != 200:
                continue
            opened.setdefault(username, set()).add(kind)
            text = visible_text(response.content.decode())
            offending += [f"{username} {url}: {word!r}" for word in FORBIDDEN.findall(text)]
    assert opened == EXPECTED_PAGES  # the scan reached every main page of every demo user
    assert not offending, "\n".join(offending)


def test_the_scans_find_what_they_look_for(demo):
    """Both scans fail on the strings the demo used to carry (a test that cannot fail is no test)."""
    from inventory.models import Part
    from werkbank.models import AuditEvent

    part = Part.objects.order_by("pk").first()
    Part.objects.filter(pk=part.pk).update(name=f"{part.name} (assumed: seed 001 names the series only)")
    AuditEvent.objects.filter(pk=AuditEvent.objects.order_by("pk").first().pk).update(
        note="Demo walk-through", after={"steps": [{"evidence": "Seed 003: 13.9 GB/s"}]}
    )
    found = offending_values()
    assert any(entry.startswith("inventory.Part.name=") and "assumed" in entry for entry in found)
    assert "werkbank.AuditEvent.note='Demo walk-through'" in found
    assert "werkbank.AuditEvent.after.steps[0].evidence='Seed 003: 13.9 GB/s'" in found
    page = '<p title="Seed 000">Fleet</p><script>var seed = 1;</script><td>PSUs assumed</td><style></style>'
    assert FORBIDDEN.findall(visible_text(page)) == ["Seed", "assumed"]
