"""One login for every role; "/" sends each to its pages."""

import pytest

from tests import factories

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("who", "target"),
    [("pm", "/pm/"), ("user_p", "/bench/"), ("user_a", "/portal/")],
)
def test_home_sends_each_role_to_its_pages(client, tenants, who, target):
    client.force_login(getattr(tenants, who))
    assert client.get("/")["Location"] == target


def test_a_partner_logs_in_through_the_common_login(client, tenants):
    response = client.post("/accounts/login/", {"username": "petr", "password": factories.PASSWORD})
    assert response.status_code == 302
    assert client.get(response["Location"])["Location"] == "/bench/"


def test_anonymous_home_is_the_login(client):
    assert client.get("/")["Location"] == "/accounts/login/"
