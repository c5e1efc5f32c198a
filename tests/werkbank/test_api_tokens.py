"""API tokens: issued once at login, stored only as a digest, usable as `Authorization: Token …`."""

from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests import factories

pytestmark = pytest.mark.django_db


def _database_contains(text: str) -> list[str]:
    """The tables in which any row's text contains `text`."""
    hits = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            if any(text in str(row) for row in cursor.fetchall()):
                hits.append(table)
    return hits


def test_token_is_stored_hashed_and_works(tenants):
    client = APIClient()
    response = client.post(
        "/api/v1/auth/login/", {"username": "alice", "password": factories.PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content
    raw = response.json()["token"]
    assert len(raw) >= 32

    assert _database_contains(raw) == []

    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert client.get("/api/v1/orders/").status_code == 200
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert client.get("/api/v1/orders/").status_code == 401


def test_wrong_password_gets_no_token(tenants):
    response = APIClient().post(
        "/api/v1/auth/login/", {"username": "alice", "password": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert "token" not in response.json()
