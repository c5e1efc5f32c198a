"""Every word on a German page and in a German document is German (issue #24, item 7 and its acceptance): the
burn-in page, the deployment pages with the rack elevation, the portal's server page and the elevation SVG it
embeds, and the handover pack, each searched for the UI's English words that used to stay English there
(badges, stage statuses, the elevation's words, the pack's blacklist sentence).

The world is seed 003's burn-in run (an interrupted stage, failed and waived findings, a thermal throttle) on
a server in a rack with a blacklisted connector, read by a PM who chose German and by a member of a German
customer. What people typed (stage names from the probe, reasons, notes) is data and stays as written.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest
from django.conf import settings

from builds.models import Connector
from builds.services import connector_blacklist
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.warranty.packs_rig import pdf_text
from warranty.documents import pack_pdf
from warranty.selectors import pack_data

pytestmark = pytest.mark.django_db

#: The UI's English words these pages showed in German, each matched as a whole word, case and all.
ENGLISH = (
    "Pass", "Fail", "Incomplete", "Interrupted", "Skipped", "Warning", "Info", "FAIL", "WARN", "throttled",
    "front", "rear", "free", "occupied", "blacklisted", "Deployed", "Burn-in passed", "continuous", "rated",
    "Leg", "phase", "stored (encrypted)", "never to be used", "These connectors are never to be used",
    "Power feeds", "rules",
)  # fmt: skip
#: Data, not UI: what the probe and people wrote in the world's rows.
DATA = ("workshop power distribution failure", "Slot 1 sits behind the PSU; a baffle is ordered.")


def _words(markup: str) -> str:
    """The text a reader sees (SVG titles and texts included), without styles, scripts and attributes."""
    text = re.sub(r"<(style|script)\b.*?</\1>", " ", markup, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    for data in DATA:
        text = text.replace(data, " ")
    return " ".join(text.split())


def _english(text: str) -> list[str]:
    return [word for word in ENGLISH if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text)]


@pytest.fixture
def world(tenants):
    world = make_rack_world(tenants)
    factories.make_seed003_burnin_run(world.server_a, hours=72)
    connector = Connector.objects.create(server=world.server_a, name="PCIE-A3", kind="pcie_slot", position=3)
    connector_blacklist(connector=connector, actor=tenants.pm, reason="Link trains at x8 only")
    tenants.customer_a.language = "de"
    tenants.customer_a.save(update_fields=["language"])
    return world


def test_the_pm_pages_in_german_have_no_english_ui_word(client, world):
    client.force_login(world.t.pm)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"  # the language switch's choice
    server = world.server_a
    pages = {
        "burn-in": f"/burnin/servers/{server.pk}/",
        "deployment server": f"/deployment/servers/{server.pk}/",
        "rack": f"/deployment/racks/{world.rack.pk}/",
        "site": f"/deployment/sites/{world.site.pk}/",
    }
    found = {}
    for name, path in pages.items():
        response = client.get(path)
        assert response.status_code == 200, name
        assert response.headers["Content-Language"] == "de", name
        found[name] = _english(_words(response.content.decode()))
    assert not any(found.values()), found
    # The figures are German too: the elevation's feed captions group thousands with a point.
    rack = client.get(pages["rack"]).content.decode()
    assert "2.900 W von 2.944 W Dauerlast (98,5 %)" in rack


def test_the_portal_in_german_and_its_rack_elevation_have_no_english_ui_word(client, world):
    assert client.login(username=world.t.user_a.username, password=factories.PASSWORD)
    page = client.get(f"/portal/servers/{world.server_a.pk}/")
    assert page.status_code == 200 and page.headers["Content-Language"] == "de"
    markup = page.content.decode()
    assert _english(_words(markup)) == []
    [elevation_url] = re.findall(r'<img src="([^"]+)" class="elevation"', markup)
    assert elevation_url.endswith("?lang=de")
    svg = client.get(html.unescape(elevation_url))
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
    drawing = svg.content.decode()
    assert _english(_words(drawing)) == [], drawing
    assert "Vorderseite" in drawing and "Zuleitungen" in drawing
    # Without a language the API's drawing stays English, as every answer of the API.
    english = client.get(f"/api/v1/racks/{world.rack.pk}/elevation.svg").content.decode()
    assert "front" in english and "Vorderseite" not in english
    refused = client.get(f"/api/v1/racks/{world.rack.pk}/elevation.svg?lang=fr")
    assert refused.status_code == 400 and "lang" in refused.content.decode()


def test_the_german_pack_has_no_english_ui_word(world):
    at = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    _, text = pdf_text(pack_pdf(pack_data(server=world.server_a), revision=1, language="de", generated_at=at))
    for data in DATA:
        text = text.replace(data, " ")
    assert "Gesperrte Anschlüsse" in text and "PCIE-A3" in text
    assert _english(text) == [], text
