"""The demo bench as seed 003 tells it, `manage.py connector-map`, and the admin's blacklist."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from builds.models import ConnectorBlacklist, Installation, Server

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(capsys):
    call_command("seed_demo", "--quiet")
    capsys.readouterr()


def test_demo_seven_u_machine_carries_two_blacklisted_connectors(demo):
    server = Server.objects.get(order__customer__name="Inferenzlabor GmbH")
    assert server.status == "burn_in"  # assembled, then its burn-in report came in (burnin.demo)
    blacklist = ConnectorBlacklist.objects.filter(connector__server=server).order_by("connector__name")
    assert [(b.connector.name, b.reason, b.measurements["h2d_gbps"]) for b in blacklist] == [
        ("GPU-A2", "intermittent link training at x8", 13.9),
        ("GPU-B3", "intermittent link training at x8", 13.9),
    ]
    gpus = Installation.objects.filter(
        server=server, removed_at__isnull=False, component__part__category="gpu"
    )
    assert sorted(inst.connector.name for inst in gpus) == ["GPU-A2", "GPU-B3"]  # the moved GPUs' history
    active = Installation.objects.filter(
        server=server, removed_at__isnull=True, component__part__category="gpu"
    )
    assert sorted(inst.connector.name for inst in active) == [
        "GPU-A1",
        "GPU-A3",
        "GPU-A4",
        "GPU-B1",
        "GPU-B2",
        "GPU-B4",
    ]
    blocks = {c.cooling_block for c in server.connectors.filter(kind="riser_port")}
    assert blocks == {"A", "B"} and server.connectors.filter(kind="riser_port").count() == 8


def test_connector_map_prints_the_map(demo, capsys):
    call_command("connector-map", "wb-2026-0003-01")
    out = capsys.readouterr().out
    assert (
        "GPU-A2         Riser port          0 Gen4 x16 A     BLACKLISTED: intermittent link training at x8"
        in out
    )
    assert "GPU-A4         Riser port          0 Gen4 x16 A     16" in out
    assert "30 occupied, 2 blacklisted, 9 free." in out


def test_connector_map_of_an_unknown_server():
    with pytest.raises(CommandError, match="No server 'nope'"):
        call_command("connector-map", "nope")


def test_admin_shows_the_blacklist_but_never_deletes_it(demo, client):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="pm"))
    entry = ConnectorBlacklist.objects.first()
    assert client.get("/admin/builds/connectorblacklist/").status_code == 200
    assert client.get(f"/admin/builds/connectorblacklist/{entry.pk}/delete/").status_code == 403
    response = client.post(
        "/admin/builds/connectorblacklist/", {"action": "delete_selected", "_selected_action": [entry.pk]}
    )
    assert response.status_code in {200, 302}
    assert ConnectorBlacklist.objects.filter(pk=entry.pk).exists()
    server_page = client.get(f"/admin/builds/server/{entry.connector.server_id}/change/").content.decode()
    # The connector map marks it with the shared red badge, and says why.
    assert 'data-status="blacklisted"' in server_page
    assert "intermittent link training at x8" in server_page
