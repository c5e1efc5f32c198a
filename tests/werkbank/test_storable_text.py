"""Text the database cannot store (NUL, unpaired surrogates) is a 400 naming the field, everywhere (issue 26).

The audit's three pages answered 500 on PostgreSQL; the API answered 400 for its fields but not for a JSON
object field's contents or a parameter no filter reads. werkbank.storable refuses them all in one place.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.builds.bench_rig import bench, snapshot  # noqa: F401 - bench is a fixture
from tests.tenants_rig import api_client
from werkbank.storable import first_refusal, printable, unstorable_rule

NUL_RULE = "Null characters are not allowed."


def _page_client(user) -> Client:
    client = Client(raise_request_exception=False)  # a 500 is an answer here, not an exception
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize(
    "who, url, field",
    [
        ("pm", "/pm/search/?q=a%00b", "q"),
        ("user_p", "/bench/?q=a%00b", "q"),
        ("user_a", "/portal/warranty/?serial=a%00b", "serial"),
    ],
)
def test_a_nul_in_a_page_query_is_a_400_page_naming_the_field(tenants, who, url, field):
    response = _page_client(getattr(tenants, who)).get(url)

    assert response.status_code == 400, response.content[:300]
    html = response.content.decode()
    assert f"The field “{field}” holds characters that cannot be stored: {NUL_RULE}" in html
    assert "Traceback" not in html and "PostgreSQL" not in html


@pytest.mark.django_db
def test_the_page_speaks_the_users_language(tenants):
    client = _page_client(tenants.user_a)
    client.cookies["django_language"] = "de"

    response = client.get("/portal/warranty/?serial=a%00b")

    assert response.status_code == 400
    html = response.content.decode()
    assert "Eingabe abgelehnt" in html
    assert "Das Feld „serial“ enthält Zeichen, die nicht gespeichert werden können" in html
    assert "Nullzeichen sind nicht erlaubt." in html


@pytest.mark.django_db
def test_a_form_body_and_the_path_are_checked_too(tenants):
    client = Client(raise_request_exception=False)
    response = client.post("/accounts/login/", {"username": "pm\x00", "password": "x"})
    assert response.status_code == 400 and "“username”" in response.content.decode()
    response = _page_client(tenants.pm).get("/pm/search%00/")
    assert response.status_code == 400 and "“path”" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url, field",
    [
        ("/api/v1/inventory/components/?serial=a%00b", "serial"),  # a filter field
        ("/api/v1/inventory/components/?search=a%00b", "search"),  # no filter reads it
        ("/api/v1/orders/?ordering=a%00b", "ordering"),
        ("/api/v1/orders/?a%00b=1", "a\\u0000b"),  # the name of a parameter
    ],
)
def test_a_nul_in_an_api_query_is_the_apis_400_naming_the_parameter(tenants, url, field):
    response = api_client(tenants.pm).get(url)

    assert response.status_code == 400, response.content[:300]
    assert response.json() == {field: [NUL_RULE]}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, field, rule",
    [
        # The contents of a JSON object field: before, jsonb's refusal (a 400 naming no field).
        (b'{"reason": "x", "measurements": {"note": "a\\u0000b"}}', "measurements.note", NUL_RULE),
        (b'{"reason": "x", "measurements": {"a\\u0000": 1}}', "measurements.a\\u0000", NUL_RULE),
        (b'{"reason": "x", "measurements": {"w": ["ok", "\\udc00"]}}', "measurements.w.1", None),
        (b'{"reason": "a\\u0000b"}', "reason", NUL_RULE),
    ],
)
def test_unstorable_text_in_an_api_json_body_is_a_400_naming_its_path(bench, body, field, rule):  # noqa: F811
    url = f"/api/v1/builds/connectors/{bench.connector('PCIe-1').pk}/blacklist/"

    before = snapshot()

    response = api_client(bench.t.user_p).post(url, data=body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert response.json() == {field: [rule or "Surrogate characters are not allowed: U+DC00."]}
    assert snapshot() == before


@pytest.mark.django_db
def test_paired_surrogates_and_escaped_backslashes_pass(tenants):
    """An emoji is a surrogate pair in JSON; `\\\\u0000` is a backslash and text: both can be stored."""
    body = json.dumps({"username": "\U0001f600", "password": "\\u0000"}, ensure_ascii=True).encode()
    assert b"\\ud83d\\ude00" in body
    response = api_client(None).post("/api/v1/auth/login/", data=body, content_type="application/json")
    assert response.status_code in (400, 401), response.content
    assert "not allowed" not in response.content.decode()


def test_the_rules_and_the_names():
    assert unstorable_rule("fine ü €") is None
    assert unstorable_rule("a\x00") == NUL_RULE
    assert unstorable_rule("a\ud800") == "Surrogate characters are not allowed: U+D800."
    assert printable("a\x00b\udfff") == "a\\u0000b\\udfff"
    assert first_refusal([("a", "ok"), ("b", "x\x00"), ("c", "\x00")]) == ("b", NUL_RULE)
