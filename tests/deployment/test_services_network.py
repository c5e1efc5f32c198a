"""A server's network record (`deployment.services.network`): addresses, MACs, the hostname, and the BMC
credentials, which are stored only encrypted and never written to the audit trail."""

from __future__ import annotations

import pytest
from django.db import connection

from builds.models import Server
from deployment.models import ServerNetwork
from deployment.services import network_set
from deployment.services.network import bmc_credentials
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

ADDRESSES = {"management_ip": "10.20.0.11", "bmc_ip": "10.20.1.11", "bmc_mac": "3c:ec:ef:12:34:56"}
USERNAME = "svc-bmc-operator-7Q"
PASSWORD = "Pl41n-Text-Never-Stored!#"


@pytest.fixture
def pm():
    return factories.make_pm(username="net-pm")


def _set(server, actor, **changes):
    return network_set(server=server, actor=actor, **{**ADDRESSES, **changes})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("management_ip", "10.20.0.300", "'10.20.0.300' is not a valid IPv4 or IPv6 address."),
        ("management_ip", "", "'' is not a valid IPv4 or IPv6 address."),
        ("bmc_ip", "bmc.example", "'bmc.example' is not a valid IPv4 or IPv6 address."),
        (
            "bmc_ip",
            "127.0.0.1",
            "127.0.0.1 cannot be a server's address (unspecified, multicast or loopback).",
        ),
        (
            "management_ip",
            "0.0.0.0",
            "0.0.0.0 cannot be a server's address (unspecified, multicast or loopback).",
        ),
        (
            "bmc_mac",
            "3c:ec:ef:12:34",
            "'3c:ec:ef:12:34' is not a MAC address (six hex pairs, e.g. 3c:ec:ef:12:34:56).",
        ),
        (
            "bmc_mac",
            "3c:ec:ef:12:34:zz",
            "'3c:ec:ef:12:34:zz' is not a MAC address (six hex pairs, e.g. 3c:ec:ef:12:34:56).",
        ),
        ("bmc_mac", "01:00:5e:00:00:01", "'01:00:5e:00:00:01' is a multicast address, not a BMC's."),
    ],
)
def test_invalid_addresses_name_their_field(pm, field, value, message):
    server = rig.server()

    with pytest.raises(InvalidInput) as refused:
        _set(server, pm, **{field: value})

    assert (refused.value.field, refused.value.field_message) == (field, message)
    assert not ServerNetwork.objects.exists()


@pytest.mark.parametrize(
    "mac", ["AA-BB-CC-DD-EE-FF", "aabb.ccdd.eeff", "AABBCCDDEEFF", " aa:bb:cc:dd:ee:ff "]
)
def test_macs_are_normalized(pm, mac):
    network = _set(rig.server(), pm, bmc_mac=mac)
    assert ServerNetwork.objects.get(pk=network.pk).bmc_mac == "aa:bb:cc:dd:ee:ff"


def test_ipv6_is_stored_in_its_canonical_form(pm):
    network = _set(rig.server(), pm, management_ip="2001:DB8:0:0::0011", bmc_ip="2001:db8::1:11")
    stored = ServerNetwork.objects.get(pk=network.pk)
    assert (stored.management_ip, stored.bmc_ip) == ("2001:db8::11", "2001:db8::1:11")


def test_the_bmc_has_an_address_of_its_own(pm):
    with pytest.raises(InvalidInput) as refused:
        _set(rig.server(), pm, bmc_ip="10.20.0.11")
    assert refused.value.field == "bmc_ip"
    assert refused.value.status_code == 400


def test_an_address_is_taken_in_either_role(pm):
    first, second = rig.servers(2)
    _set(first, pm)

    with pytest.raises(RuleViolation) as refusal:
        # The first server's BMC IP as the second's management IP.
        _set(second, pm, management_ip="10.20.1.11", bmc_ip="10.20.1.12", bmc_mac="3c:ec:ef:12:34:57")

    assert refusal.value.code == "address_taken"
    assert refusal.value.missing == [
        f"10.20.1.11 (management IP) is already the BMC IP of server {first.hostname}."
    ]
    assert refusal.value.message == (
        f"Server {second.hostname}'s addresses are in use: {refusal.value.missing[0]}"
    )
    assert not ServerNetwork.objects.filter(server=second).exists()


def test_every_taken_address_is_named_at_once(pm):
    first, second = rig.servers(2)
    _set(first, pm)

    with pytest.raises(RuleViolation) as refusal:
        _set(second, pm, management_ip="10.20.0.99", bmc_ip="10.20.0.11", bmc_mac="3C-EC-EF-12-34-56")

    assert refusal.value.code == "address_taken"
    assert refusal.value.missing == [
        f"10.20.0.11 (BMC IP) is already the management IP of server {first.hostname}.",
        f"3c:ec:ef:12:34:56 (BMC MAC) is already the BMC MAC of server {first.hostname}.",
    ]


def test_a_server_may_keep_its_own_addresses(pm):
    server = rig.server()
    first = _set(server, pm)
    again = _set(server, pm, bmc_mac="3C:EC:EF:12:34:56")
    assert again.pk == first.pk
    assert ServerNetwork.objects.count() == 1


def test_the_hostname_is_renamed_with_the_network(pm):
    first, second = rig.servers(2)

    with pytest.raises(InvalidInput) as invalid:
        _set(first, pm, hostname="gpu_01!")
    with pytest.raises(RuleViolation) as taken:
        _set(first, pm, hostname=second.hostname.upper())
    assert invalid.value.field == "hostname"
    assert taken.value.code == "hostname_taken"
    assert Server.objects.get(pk=first.pk).hostname == first.hostname
    assert not ServerNetwork.objects.exists()

    _set(first, pm, hostname="GPU-Sofia-01.example.net")

    assert Server.objects.get(pk=first.pk).hostname == "gpu-sofia-01.example.net"
    (rename,) = rig.events(first, "server.rename")
    assert rename.after == {"hostname": "gpu-sofia-01.example.net"}
    (event,) = rig.events(first, "deployment.network")
    assert event.after["hostname"] == "gpu-sofia-01.example.net"


def test_a_taken_address_keeps_the_old_hostname(pm):
    first, second = rig.servers(2)
    _set(first, pm)
    with pytest.raises(RuleViolation):
        _set(second, pm, hostname="renamed-02")
    assert Server.objects.get(pk=second.pk).hostname == second.hostname


def test_credentials_are_set_kept_and_cleared(pm):
    server = rig.server()

    network = _set(server, pm, bmc_username=USERNAME, bmc_password=PASSWORD)
    assert network.has_bmc_credentials
    assert bmc_credentials(network=ServerNetwork.objects.get(pk=network.pk)) == {
        "username": USERNAME,
        "password": PASSWORD,
    }

    # A partial update keeps the other half; leaving both out keeps both.
    _set(server, pm, bmc_password="second-secret")
    assert bmc_credentials(network=ServerNetwork.objects.get(pk=network.pk)) == {
        "username": USERNAME,
        "password": "second-secret",
    }
    _set(server, pm, bmc_username="root")
    _set(server, pm, management_ip="10.20.0.12")
    assert bmc_credentials(network=ServerNetwork.objects.get(pk=network.pk)) == {
        "username": "root",
        "password": "second-secret",
    }

    with pytest.raises(InvalidInput) as both:
        _set(server, pm, clear_bmc_credentials=True, bmc_password="x")
    assert both.value.field == "clear_bmc_credentials"

    _set(server, pm, clear_bmc_credentials=True)
    stored = ServerNetwork.objects.get(pk=network.pk)
    assert (stored.bmc_credentials, stored.has_bmc_credentials) == ("", False)
    assert bmc_credentials(network=stored) is None

    said = [event.after["bmc_credentials"] for event in rig.events(server, "deployment.network")]
    assert said == ["set", "set", "set", "unchanged", "cleared"]
    befores = [event.before.get("bmc_credentials") for event in rig.events(server, "deployment.network")]
    assert befores == [None, "set", "set", "set", "set"]


def _dump(table: str) -> str:
    """Every row of `table` as text, every column included."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SELECT row_to_json(t)::text FROM {connection.ops.quote_name(table)} t")
        else:
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
        return "\n".join(str(row) for row in cursor.fetchall())


def test_the_plaintext_is_in_no_column(pm):
    server = rig.server()
    _set(server, pm, bmc_username=USERNAME, bmc_password=PASSWORD)
    _set(server, pm, bmc_password=PASSWORD + "-2")

    network_rows = _dump(ServerNetwork._meta.db_table)
    audit_rows = _dump(AuditEvent._meta.db_table)

    # The dumps are real: they hold the addresses and the audit verbs.
    assert "10.20.1.11" in network_rows
    assert "deployment.network" in audit_rows
    for secret in (USERNAME, PASSWORD, PASSWORD + "-2"):
        assert secret not in network_rows
        assert secret not in audit_rows
    assert ServerNetwork.objects.get(server=server).bmc_credentials.startswith("gAAAAA")  # a Fernet token
