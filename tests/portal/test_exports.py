"""The portal's CSV downloads (issue #24, item 6): the customer's warranty list and a server's serials by
slot, with the rows and fields of their pages and nothing of the builder's or another customer's.

The world is the portal field test's (tests/portal/test_customer_fields.py): rows full of internal notes,
reasons, purchase orders and usernames, and another customer's order beside customer A's.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from builds.models import Server
from tests import factories
from tests.portal.test_customer_fields import _internal_texts, warranty_world  # noqa: F401 - a fixture
from warranty.models import WarrantyRecord
from warranty.selectors import records_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("warranty_world")


def _rows(response: Any) -> list[list[str]]:
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


def _leaks(w: Any, response: Any) -> list[str]:
    text = response.content.decode("utf-8-sig")
    return [internal for internal in _internal_texts(w) if internal in text]


def test_the_warranty_list_downloads_the_rows_of_the_page(client, world):
    w = world
    client.force_login(w.t.user_a)
    page = client.get("/portal/warranty/")
    assert 'href="/portal/warranty/records.csv"' in page.content.decode()
    response = client.get("/portal/warranty/records.csv")
    rows = _rows(response)
    assert rows[0] == ["Serial", "What", "Server", "Start", "End", "Status"]
    expected = list(records_for(user=w.t.user_a))
    assert [row[0] for row in rows[1:]] == [record.serial for record in expected]
    assert len(rows) - 1 == WarrantyRecord.objects.filter(customer=w.t.customer_a).count()
    first = expected[0]
    assert rows[1][1:5] == [
        first.description,
        first.server.hostname,
        first.start_date.isoformat(),
        first.end_date.isoformat(),
    ]
    replaced = next(row for row in rows[1:] if row[0] == w.warranty.record.serial)
    assert replaced[5] == "Replaced"
    assert not _leaks(w, response)


def test_a_lookup_by_serial_downloads_that_serial_only(client, world):
    w = world
    client.force_login(w.t.user_a)
    page = client.get("/portal/warranty/?serial=p-serial-2").content.decode()
    assert 'href="/portal/warranty/records.csv?serial=p-serial-2"' in page
    rows = _rows(client.get("/portal/warranty/records.csv?serial=p-serial-2"))
    assert [row[0] for row in rows[1:]] == ["P-SERIAL-2"]


def test_another_customers_serial_is_not_in_the_download(client, world):
    w = world
    client.force_login(w.t.user_b)
    rows = _rows(client.get("/portal/warranty/records.csv"))
    assert not {row[0] for row in rows[1:]} & set(
        WarrantyRecord.objects.filter(customer=w.t.customer_a).values_list("serial", flat=True)
    )
    assert _rows(client.get("/portal/warranty/records.csv?serial=P-SERIAL-1"))[1:] == []


def test_the_server_page_downloads_its_serials_by_slot_in_german_too(client, world):
    w = world
    server = w.builds.server
    client.force_login(w.t.user_a)
    page = client.get(f"/portal/servers/{server.pk}/")
    assert f'href="/portal/servers/{server.pk}/serials.csv"' in page.content.decode()
    response = client.get(f"/portal/servers/{server.pk}/serials.csv")
    rows = _rows(response)
    assert rows[0] == ["Slot", "Kind", "Category", "Manufacturer", "Part", "Serial number"]
    slots = page.context["slots"]
    assert slots and [row[0] for row in rows[1:]] == [slot["slot"] for slot in slots]
    assert [row[5] for row in rows[1:]] == [slot["serial"] for slot in slots]
    assert response["Content-Disposition"] == f'attachment; filename="serials-{server.hostname}.csv"'
    assert not _leaks(w, response)

    client.cookies["django_language"] = "de"
    german = _rows(client.get(f"/portal/servers/{server.pk}/serials.csv"))
    assert german[0] == ["Steckplatz", "Art", "Kategorie", "Hersteller", "Teil", "Seriennummer"]


def test_another_customers_server_is_a_404(client, world):
    w = world
    foreign = Server.objects.filter(order=w.iso.order_b).first() or factories.make_servers(w.iso.order_b)[0]
    client.force_login(w.t.user_a)
    assert client.get(f"/portal/servers/{foreign.pk}/serials.csv").status_code == 404
    assert client.get("/portal/servers/999999/serials.csv").status_code == 404
