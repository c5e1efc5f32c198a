"""Hostile input to the API: deep or huge JSON, NaN, database refusals, and request rates (issue 16).

Each answer is a 4xx that names the rule, never a 500 and never the database's own text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import DataError, transaction
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from orders.models import ConfigurationLine
from tests import factories
from tests.tenants_rig import api_client
from werkbank.api.exceptions import exception_handler
from werkbank.jsonfields import MAX_DEPTH, JSONRefused, loads, nesting_depth_exceeds

LOGIN = "/api/v1/auth/login/"


def _post_raw(client: APIClient, url: str, body: bytes, content_type: str = "application/json") -> Any:
    return client.post(url, data=body, content_type=content_type)


# --- Deep JSON ------------------------------------------------------------------------------------------

# About 6 KB each, as the audit sent them: thousands of levels, far past the parser's stack.
DEEP_BODIES = {
    "arrays": b"[" * 3000 + b"]" * 3000,
    "objects": b'{"a":' * 1200 + b"1" + b"}" * 1200,
    "unclosed": b"[" * 6000,
    "inside a valid object": b'{"username": "alice", "password": ' + b"[" * 3000 + b"]" * 3000 + b"}",
}


@pytest.mark.django_db
@pytest.mark.parametrize("shape", list(DEEP_BODIES))
def test_deep_json_to_the_anonymous_login_is_a_400_naming_the_rule(shape):
    response = _post_raw(APIClient(), LOGIN, DEEP_BODIES[shape])
    assert response.status_code == 400, response.content[:200]
    assert f"nested more than {MAX_DEPTH} levels deep" in response.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "method, url",
    [
        ("post", "/api/v1/orders/"),
        ("post", "/api/v1/configurations/"),
        ("post", "/api/v1/inventory/parts/"),
        ("post", "/api/v1/organizations/"),
    ],
)
def test_deep_json_to_any_json_endpoint_is_a_400(tenants, method, url):
    client = api_client(tenants.pm)
    response = getattr(client, method)(url, data=DEEP_BODIES["objects"], content_type="application/json")
    assert response.status_code == 400, response.content[:200]
    assert "nested more than" in response.json()["detail"]


@pytest.mark.django_db
def test_nesting_up_to_the_bound_is_parsed():
    """64 levels reach the login's validation (a 400 about the field), 65 are refused by the parser."""
    at_bound = json.dumps({"username": json.loads("[" * 63 + "]" * 63), "password": "x"}).encode()
    response = _post_raw(APIClient(), LOGIN, at_bound)
    assert response.status_code == 400 and "username" in response.json()
    past = json.dumps({"username": json.loads("[" * 64 + "]" * 64), "password": "x"}).encode()
    response = _post_raw(APIClient(), LOGIN, past)
    assert response.status_code == 400 and "nested more than 64" in response.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_not_a_number_in_a_json_body_is_a_400(constant):
    response = _post_raw(APIClient(), LOGIN, b'{"username": "alice", "password": ' + constant + b"}")
    assert response.status_code == 400
    assert "number" in response.json()["detail"]


# --- Body size ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_json_body_over_the_global_limit_is_a_413_before_it_is_parsed(settings):
    body = json.dumps({"username": "alice", "password": "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE}).encode()
    response = _post_raw(APIClient(), LOGIN, body)
    assert response.status_code == 413
    assert f"limit of {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes" in response.json()["detail"]


@pytest.mark.django_db
def test_a_form_body_over_the_limit_is_a_413(settings, tenants):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    body = b"name=" + b"x" * 3000
    response = _post_raw(
        api_client(tenants.pm), "/api/v1/inventory/suppliers/", body, "application/x-www-form-urlencoded"
    )
    assert response.status_code == 413
    assert "limit of 2,000 bytes" in response.json()["detail"]


def test_the_global_request_limit_is_small(settings):
    """JSON and form fields: 1 MB; Django's default of 2.5 MB, and DRF's none at all, are not relied on."""
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 1024 * 1024
    assert settings.DATA_UPLOAD_MAX_NUMBER_FILES == 20
    assert settings.DATA_UPLOAD_MAX_NUMBER_FIELDS == 1000


# --- Throttling per token -------------------------------------------------------------------------------


def _token_client(username: str) -> APIClient:
    client = APIClient()
    response = client.post(LOGIN, {"username": username, "password": factories.PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client


@pytest.mark.django_db
def test_each_token_is_throttled_at_the_configured_rate(settings, tenants):
    settings.WERKBANK_API_RATE = "3/min"
    first, second = _token_client(tenants.user_a.username), _token_client(tenants.user_a.username)
    assert [first.get("/api/v1/orders/").status_code for _ in range(3)] == [200, 200, 200]

    refused = first.get("/api/v1/orders/")
    assert refused.status_code == 429
    assert "throttled" in refused.json()["detail"]
    assert int(refused["Retry-After"]) > 0
    # Counted per token: the user's other token, and another user's, have their own allowance.
    assert second.get("/api/v1/orders/").status_code == 200
    assert _token_client(tenants.user_b.username).get("/api/v1/orders/").status_code == 200


@pytest.mark.django_db
def test_a_browser_session_is_throttled_per_user(settings, tenants):
    settings.WERKBANK_API_RATE = "2/min"
    client = APIClient()
    client.force_login(tenants.user_a)
    assert [client.get("/api/v1/orders/").status_code for _ in range(3)] == [200, 200, 429]


def test_the_throttle_counts_in_redis_when_there_is_one(settings):
    from django.core.cache import caches

    backend = type(caches["throttle"]).__name__
    assert backend == ("RedisCache" if settings.REDIS_URL else "LocMemCache")
    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] == [
        "werkbank.api.throttling.TokenRateThrottle"
    ]


# --- Database refusals ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_constraint_violation_answers_its_sentence_never_the_database_text(tenants, monkeypatch, caplog):
    """A service that misses a check (or loses a race): the database refuses, the user reads the rule."""
    import orders.api.views

    real = orders.api.views.configuration_create

    def racing(**kwargs: Any) -> Any:
        configuration = real(**kwargs)
        line = configuration.lines.get()
        with transaction.atomic():  # a concurrent request adding the same part
            ConfigurationLine.objects.create(configuration=configuration, part=line.part, quantity=1)
        return configuration

    monkeypatch.setattr(orders.api.views, "configuration_create", racing)
    part = factories.PartFactory()
    response = api_client(tenants.pm).post(
        "/api/v1/configurations/",
        {"name": "Race", "psu_count": 2, "psu_rating_w": 2000, "lines": [{"part": part.pk, "quantity": 1}]},
        format="json",
    )

    assert response.status_code == 409
    body = response.json()
    assert body == {
        "detail": "This part is already on the bill of materials.",
        "code": "constraint",
        "missing": ["This part is already on the bill of materials."],
    }
    text = response.content.decode().lower()
    for leak in ("violates", "detail:", "psycopg", "unique", "orders_configurationline", "insert"):
        assert leak not in text
    assert "constraint refused" in caplog.text  # the database's own words are logged


def test_a_value_the_database_cannot_store_is_a_400_without_its_text():
    response = exception_handler(DataError("value too long for type character varying(64)"), {})
    assert response is not None and response.status_code == 400
    assert "character varying" not in json.dumps(response.data)


# --- The nesting scan itself ----------------------------------------------------------------------------


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


_TRICKY_TEXT = st.text(alphabet='[]{}"\\ax', max_size=6)
_JSON = st.recursive(
    st.none() | st.integers() | _TRICKY_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_TRICKY_TEXT, children, max_size=3),
    max_leaves=40,
)


@given(value=_JSON, bound=st.integers(min_value=0, max_value=12))
@hypothesis_settings(max_examples=300, deadline=None)
def test_the_scan_measures_the_nesting_exactly(value, bound):
    """Brackets in strings (with escaped quotes and backslashes) do not count; the bound is exact."""
    assert nesting_depth_exceeds(json.dumps(value), bound) == (_depth(value) > bound)


def test_the_scan_does_not_recurse_on_a_huge_input():
    assert nesting_depth_exceeds(b"[" * 5_000_000)
    assert not nesting_depth_exceeds(b"[]" * 1_000_000)
    with pytest.raises(JSONRefused, match="nested more than 64"):
        loads("[" * 100_000 + "]" * 100_000)
