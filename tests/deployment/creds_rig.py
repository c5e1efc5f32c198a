"""The BMC credentials tests' world: the warranty tests' handed-over servers (customer A's, built by partner
P; customer B's, built by Q), each with a network record and known BMC credentials, and customer A's second
server deployed but not handed over, with credentials too.

The `creds` fixture lives here; the test modules import it with the rig's fixtures it stands on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from builds.models import Server
from deployment.services import network_set
from tests.factories import PASSWORD
from tests.warranty.handover_rig import World

USERNAME = "bmc-admin-q9x"
SECRET = "s3cr3t-BMC-pass-7f3a91"
OTHER_SECRET = "s3cr3t-BMC-pass-of-customer-b"


@dataclass
class Creds:
    w: World
    server: Server  # customer A's, handed over
    server_b: Server  # customer B's, handed over
    deployed: Server  # customer A's, deployed only

    @property
    def t(self) -> Any:
        return self.w.t

    def url(self, server: Server | None = None) -> str:
        return f"/portal/servers/{(server or self.server).pk}/bmc-credentials/"


def client_for(user: Any | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def reveal(client: Client, creds: Creds, password: str = PASSWORD, server: Server | None = None) -> Any:
    return client.post(creds.url(server), {"password": password})


@pytest.fixture
def creds(handed: World) -> Creds:
    w = handed
    deployed = Server.objects.get(pk=w.bench.other_server.pk)
    for index, (server, secret) in enumerate(
        ((w.server, SECRET), (w.server_b, OTHER_SECRET), (deployed, SECRET)), start=1
    ):
        network_set(
            server=server,
            actor=w.t.pm,
            management_ip=f"10.20.0.{index}",
            bmc_ip=f"10.21.0.{index}",
            bmc_mac=f"3c:ec:ef:00:00:0{index}",
            bmc_username=USERNAME,
            bmc_password=secret,
        )
    return Creds(w=w, server=w.server, server_b=w.server_b, deployed=deployed)
