"""Every admin change list exports as CSV and XLSX (issue #24, item 6): its rows as filtered, for whoever may
view it, and never a secret (BMC credentials, token digests, password hashes).

The world is the demo fleet (`seed_demo`, nearly every table) plus the second rows of the list tests, a
server whose BMC credentials are set, and API tokens: every list has rows, and the secrets are there to
leak.
"""

from __future__ import annotations

import io
from typing import Any

import openpyxl
import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from import_export.admin import ExportMixin
from knox.models import AuthToken

from builds.models import Server
from deployment.models import ServerNetwork
from deployment.services import network_set
from inventory.models import Part
from tests import factories
from tests.werkbank.demo_rig import add_second_rows
from werkbank.demo_context import DEMO_PASSWORD
from werkbank.services import api_token_create
from werkbank.spreadsheets import defused

pytestmark = pytest.mark.django_db

#: The most queries an export of a list may run on the demo fleet (the session, the user and the PM check
#: included): lists of hundreds of rows run 4 or 5, so a query per row or column shows.
MOST_QUERIES = 12

BMC_USERNAME = "bmc-admin-export-test"
BMC_PASSWORD = "Sup3r-s3cret-BMC-passw0rd"


@pytest.fixture
def world(django_user_model: Any) -> Any:
    call_command("seed_demo", verbosity=0)
    pm = django_user_model.objects.get(username="pm")
    add_second_rows(pm)
    server = Server.objects.filter(network__isnull=False).order_by("pk").first()
    network = ServerNetwork.objects.get(server=server)
    network_set(
        server=server,
        actor=pm,
        management_ip=network.management_ip,
        bmc_ip=network.bmc_ip,
        bmc_mac=network.bmc_mac,
        bmc_username=BMC_USERNAME,
        bmc_password=BMC_PASSWORD,
    )
    raw_tokens = [api_token_create(user=pm, actor=pm)[1], api_token_create(user=pm, actor=pm)[1]]
    root = django_user_model.objects.create_superuser("root-export", "root@example.com", factories.PASSWORD)
    return type("World", (), {"pm": pm, "root": root, "raw_tokens": raw_tokens})


def _url(model_admin: admin.ModelAdmin, view: str) -> str:
    opts = model_admin.model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}")


def _visible(user: Any, rf: Any) -> list[admin.ModelAdmin]:
    request = rf.get("/admin/")
    request.user = user
    return [ma for ma in admin.site._registry.values() if ma.has_view_permission(request)]


def _export(client: Any, model_admin: admin.ModelAdmin, *, file_format: int = 0, query: str = "") -> Any:
    response = client.post(_url(model_admin, "export") + query, {"format": file_format, "resource": 0})
    assert response.status_code == 200, (_url(model_admin, "export"), response.status_code)
    return response


def _csv_rows(response: Any) -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO(response.content.decode("utf-8"))))


def test_every_registered_admin_offers_the_export():
    lacking = [label for label, ma in admin.site._registry.items() if not isinstance(ma, ExportMixin)]
    assert not lacking


def test_every_admin_list_exports_its_rows_as_csv_for_a_pm(client, world, rf):
    assert client.login(username="pm", password=DEMO_PASSWORD)
    visible = _visible(world.pm, rf)
    assert len(visible) >= 25
    report = {}
    for model_admin in visible:
        changelist = client.get(_url(model_admin, "changelist"))
        assert changelist.status_code == 200
        assert _url(model_admin, "export") in changelist.content.decode(), model_admin  # the button
        form = client.get(_url(model_admin, "export"))
        assert form.status_code == 200 and b'name="format"' in form.content
        with CaptureQueriesContext(connection) as queries:
            response = _export(client, model_admin)
        assert len(queries) <= MOST_QUERIES, (model_admin, len(queries))  # none per row
        assert response["Content-Type"].startswith("text/csv")
        assert response["Content-Disposition"].startswith("attachment;")
        rows = _csv_rows(response)
        header, body = rows[0], rows[1:]
        assert header and all(header), model_admin
        count = changelist.context["cl"].full_result_count or changelist.context["cl"].result_count
        report[model_admin.model._meta.label_lower] = (len(body), count)
    wrong = {
        label: figures for label, figures in report.items() if figures[0] != figures[1] or not figures[0]
    }
    assert not wrong, f"(rows exported, rows listed): {wrong}"


def test_no_export_of_any_list_holds_a_secret(client, world, rf):
    """A superuser sees every admin, the libraries' too (knox's tokens, whose list shows the digest)."""
    user_model = get_user_model()
    secrets = {
        *user_model.objects.values_list("password", flat=True),
        *AuthToken.objects.values_list("digest", flat=True),
        *ServerNetwork.objects.exclude(bmc_credentials="").values_list("bmc_credentials", flat=True),
        *world.raw_tokens,
        BMC_PASSWORD,
        BMC_USERNAME,
    }
    assert AuthToken.objects.count() >= 2 and ServerNetwork.objects.exclude(bmc_credentials="").exists()
    client.force_login(world.root)
    visible = _visible(world.root, rf)
    assert len(visible) == len(admin.site._registry)
    for model_admin in visible:
        text = _export(client, model_admin).content.decode("utf-8")
        workbook = openpyxl.load_workbook(io.BytesIO(_export(client, model_admin, file_format=1).content))
        cells = " ".join(
            str(cell)
            for sheet in workbook.worksheets
            for row in sheet.iter_rows(values_only=True)
            for cell in row
        )
        leaked = [secret for secret in secrets if secret and (secret in text or secret in cells)]
        assert not leaked, (model_admin.model._meta.label_lower, leaked)
        # The password hashes' and digests' own columns are not there either, empty or not.
        assert "password" not in text.splitlines()[0].lower() and "digest" not in text.splitlines()[0].lower()


def test_the_export_holds_the_filtered_and_searched_rows_only(client, world):
    assert client.login(username="pm", password=DEMO_PASSWORD)
    part_admin = admin.site._registry[Part]
    gpus = Part.objects.filter(category="gpu")
    assert 0 < gpus.count() < Part.objects.count()
    rows = _csv_rows(_export(client, part_admin, query="?category__exact=gpu"))
    assert len(rows) - 1 == gpus.count()
    assert {row[rows[0].index("category")] for row in rows[1:]} == {"gpu"}
    one = gpus.first()
    rows = _csv_rows(_export(client, part_admin, query=f"?q={one.mpn}"))
    assert [row[rows[0].index("mpn")] for row in rows[1:]] == [one.mpn]


def test_columns_are_the_lists_model_fields_with_their_labels(client, world):
    assert client.login(username="pm", password=DEMO_PASSWORD)
    server_admin = admin.site._registry[Server]
    rows = _csv_rows(_export(client, server_admin))
    # hostname, order (its reference), customer, partner, status (its label), asset tag; BMC columns never.
    assert rows[0] == ["Hostname", "Order", "Customer", "Partner", "Status", "Asset tag"]
    server = Server.objects.select_related("order").get(hostname=rows[1][0])
    assert rows[1][1] == str(server.order)
    assert rows[1][4] == server.get_status_display()


def test_an_export_reads_its_rows_in_a_fixed_number_of_queries(client, world):
    assert client.login(username="pm", password=DEMO_PASSWORD)
    server_admin = admin.site._registry[Server]
    counts = []
    for query in (f"?q={Server.objects.order_by('pk').first().hostname}", ""):
        with CaptureQueriesContext(connection) as queries:
            rows = _csv_rows(_export(client, server_admin, query=query))
        counts.append((len(rows), len(queries)))
    assert counts[0][0] == 2 and counts[1][0] > 3
    assert counts[0][1] == counts[1][1], counts


def test_the_export_is_refused_to_whoever_may_not_view_the_list(client, tenants):
    part_admin = admin.site._registry[Part]
    staff = factories.UserFactory(username="staff-not-pm", is_staff=True)
    for user in (staff, tenants.user_a):
        client.force_login(user)
        response = client.post(_url(part_admin, "export"), {"format": 0, "resource": 0})
        assert response.status_code in (302, 403), user
        assert not response.get("Content-Disposition")


def test_a_cell_a_spreadsheet_would_evaluate_is_written_as_text():
    assert defused('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert defused("@SUM(A1)") == "'@SUM(A1)"
    assert defused("-1250.00") == "-1250.00"  # a number keeps its sign
    assert defused("GPU-8x") == "GPU-8x"
    assert defused(12) == 12


def test_an_xlsx_cell_keeps_its_type_and_loses_control_characters():
    import tablib

    from werkbank.spreadsheets import XLSX

    dataset = tablib.Dataset(["=1+1", "bell\x07", 42, "-3.5"], headers=["a", "b", "c", "d"])
    sheet = openpyxl.load_workbook(io.BytesIO(XLSX().export_data(dataset))).active
    assert [cell.value for cell in sheet[2]] == ["'=1+1", "bell\ufffd", 42, "-3.5"]
