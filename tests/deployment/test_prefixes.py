"""A site's IP prefixes (`deployment.services.prefixes`), the next free address (`deployment.addresses`) and
the prefix rule of `network_set`."""

from __future__ import annotations

import re

import pytest

from deployment.addresses import next_free_address
from deployment.models import IPPrefix
from deployment.services import network_set, placement_create, prefix_create, prefix_delete, prefix_update
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

MGMT = "management"
BMC = "bmc"


@pytest.fixture
def pm():
    return factories.make_pm(username="ipam-pm")


@pytest.fixture
def site(pm):
    return rig.site(pm, name="Sofia DC")


def _prefix(pm, site, prefix="10.20.0.0/24", role=MGMT, **values):
    return prefix_create(site=site, prefix=prefix, role=role, actor=pm, **values)


def _placed(pm, site, count=1):
    """`count` servers placed in a rack of `site`, one above the other."""
    rack, (feed,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32, "phases": 3}], at=site)
    servers = rig.servers(count)
    for index, server in enumerate(servers):
        placement_create(
            server=server, rack=rack, lowest_u=1 + 5 * index, feeds=[feed], actor=pm, measured_wall_w=100
        )
    return servers


def _network(pm, server, management_ip, bmc_ip, mac_tail=1):
    return network_set(
        server=server,
        actor=pm,
        management_ip=management_ip,
        bmc_ip=bmc_ip,
        bmc_mac=f"3c:ec:ef:00:00:{mac_tail:02x}",
    )


# --- prefixes --------------------------------------------------------------------------------------------


def test_a_prefix_is_stored_canonical_with_its_vlan_and_gateway_and_audited(pm, site):
    prefix = _prefix(pm, site, "2001:DB8:0:20::/64", vlan=20, gateway="2001:db8:0:20::1", description=" v6 ")
    assert (prefix.prefix, prefix.vlan, prefix.gateway, prefix.description) == (
        "2001:db8:0:20::/64",
        20,
        "2001:db8:0:20::1",
        "v6",
    )
    [event] = AuditEvent.objects.for_object(site).filter(verb="deployment.prefix_create")
    assert event.after["prefix"] == "2001:db8:0:20::/64"
    assert event.after["vlan"] == 20


@pytest.mark.parametrize(
    ("field", "values", "message"),
    [
        ("prefix", {"prefix": "10.20.0.5/24"}, "10.20.0.5/24 has host bits set; the network is 10.20.0.0/24"),
        ("prefix", {"prefix": "10.20.0.0"}, "'10.20.0.0' is not a network in CIDR form"),
        ("prefix", {"prefix": "10.20.0.0/33"}, "'10.20.0.0/33' is not a network in CIDR form"),
        ("prefix", {"prefix": "10.20.0.0/31"}, "10.20.0.0/31 is too small: at most /30 for IPv4."),
        ("prefix", {"prefix": "224.0.0.0/24"}, "224.0.0.0/24 is no network for servers"),
        ("gateway", {"gateway": "10.21.0.1"}, "10.21.0.1 lies outside the prefix 10.20.0.0/24."),
        ("gateway", {"gateway": "10.20.0.0"}, "10.20.0.0 is the network address of 10.20.0.0/24"),
        ("gateway", {"gateway": "10.20.0.255"}, "10.20.0.255 is the broadcast address of 10.20.0.0/24"),
        ("gateway", {"gateway": "gw"}, "'gw' is not an IPv4 or IPv6 address."),
        ("vlan", {"vlan": 0}, "a VLAN id is a whole number from 1 to 4094; got 0."),
        ("vlan", {"vlan": 4095}, "a VLAN id is a whole number from 1 to 4094; got 4095."),
        ("role", {"role": "storage"}, "must be one of management, bmc; got 'storage'."),
    ],
)
def test_bad_input_is_a_400_naming_the_field(pm, site, field, values, message):
    with pytest.raises(InvalidInput) as error:
        _prefix(pm, site, **values)
    assert error.value.field == field
    assert message in error.value.field_message
    assert not IPPrefix.objects.exists()


def test_prefixes_of_one_site_never_overlap_whatever_their_role(pm, site):
    _prefix(pm, site, "10.20.0.0/24", role=BMC)
    with pytest.raises(RuleViolation) as error:
        _prefix(pm, site, "10.20.0.0/23", role=MGMT)
    assert error.value.code == "prefix_overlap"
    assert "10.20.0.0/23 overlaps 10.20.0.0/24 (BMC (IPMI) network) of site Sofia DC." in error.value.message
    # Another site may use the same private range, and a neighbouring prefix is fine.
    _prefix(pm, rig.site(pm, name="Prague lab"), "10.20.0.0/23")
    _prefix(pm, site, "10.20.1.0/24")
    second = _prefix(pm, site, "10.20.2.0/24")
    with pytest.raises(RuleViolation, match=re.escape("10.20.0.0/22 overlaps")):
        prefix_update(ip_prefix=second, actor=pm, prefix="10.20.0.0/22")


def test_a_prefix_is_deleted_only_while_no_server_address_lies_in_it(pm, site):
    management = _prefix(pm, site, "10.20.0.0/24", gateway="10.20.0.1")
    bmc = _prefix(pm, site, "10.99.0.0/24", role=BMC)
    first, second = _placed(pm, site, 2)
    _network(pm, first, "10.20.0.10", "10.99.0.10", 1)
    _network(pm, second, "10.20.0.11", "10.99.0.11", 2)
    with pytest.raises(RuleViolation) as error:
        prefix_delete(ip_prefix=bmc, actor=pm)
    assert error.value.code == "prefix_in_use"
    names = ", ".join(sorted([first.hostname, second.hostname]))
    assert error.value.message == f"10.99.0.0/24 of site Sofia DC holds addresses of {names}."
    assert IPPrefix.objects.filter(pk=bmc.pk).exists()
    # Shrinking the management prefix so that a server's address falls out of it is refused too.
    with pytest.raises(RuleViolation, match="holds the Management network address of"):
        prefix_update(ip_prefix=management, actor=pm, prefix="10.20.0.0/29")
    # A gateway a server uses is refused.
    with pytest.raises(RuleViolation, match=re.escape("10.20.0.10 cannot be the gateway")):
        prefix_update(ip_prefix=management, actor=pm, gateway="10.20.0.10")
    unused = _prefix(pm, site, "10.30.0.0/24")
    prefix_delete(ip_prefix=unused, actor=pm)
    assert not IPPrefix.objects.filter(pk=unused.pk).exists()
    [event] = AuditEvent.objects.for_object(site).filter(verb="deployment.prefix_delete")
    assert event.before["prefix"] == "10.30.0.0/24"


def test_prefix_update_changes_the_prefix_and_is_audited(pm, site):
    prefix = _prefix(pm, site, "10.20.0.0/25", vlan=20)
    changed = prefix_update(
        ip_prefix=prefix, actor=pm, prefix="10.20.0.0/24", gateway="10.20.0.254", vlan=None
    )
    assert (changed.prefix, changed.gateway, changed.vlan) == ("10.20.0.0/24", "10.20.0.254", None)
    [event] = AuditEvent.objects.for_object(site).filter(verb="deployment.prefix_update")
    assert (event.before["prefix"], event.after["prefix"]) == ("10.20.0.0/25", "10.20.0.0/24")


# --- the next free address -------------------------------------------------------------------------------


def test_next_free_address_skips_the_gateway_and_used_addresses(pm, site, django_assert_num_queries):
    _prefix(pm, site, "10.20.0.0/24", gateway="10.20.0.1", vlan=20)
    _prefix(pm, site, "10.99.0.0/30", role=BMC)  # two host addresses: .1 and .2
    first, second = _placed(pm, site, 2)
    _network(pm, first, "10.20.0.2", "10.99.0.1", 1)
    free = next_free_address(site=site, role=MGMT)
    assert (free.address, free.prefix.prefix, free.prefix.vlan) == ("10.20.0.3", "10.20.0.0/24", 20)
    assert next_free_address(site=site, role=BMC).address == "10.99.0.2"
    _network(pm, second, "10.20.0.3", "10.99.0.2", 2)
    assert next_free_address(site=site, role=BMC) is None  # full
    assert next_free_address(site=rig.site(pm, name="Empty"), role=MGMT) is None  # no prefix
    # A server elsewhere (not placed) holding an address of the range counts as well: addresses are unique.
    (elsewhere,) = rig.servers(1)
    _network(pm, elsewhere, "10.20.0.4", "192.168.0.4", 3)
    with django_assert_num_queries(2):
        assert next_free_address(site=site, role=MGMT).address == "10.20.0.5"


def test_next_free_address_takes_the_same_queries_for_a_bigger_fleet(pm, site, django_assert_num_queries):
    _prefix(pm, site, "10.20.0.0/16")
    _prefix(pm, site, "10.21.0.0/24")
    servers = _placed(pm, site, 6)
    for index, server in enumerate(servers):
        _network(pm, server, f"10.20.0.{index + 1}", f"10.21.0.{index + 1}", index + 1)
    with django_assert_num_queries(2):
        free = next_free_address(site=site, role=MGMT)
    assert free.address == "10.20.0.7"


# --- network_set against the site's prefixes -------------------------------------------------------------


def test_network_set_refuses_an_address_outside_the_sites_prefixes(pm, site):
    _prefix(pm, site, "10.20.0.0/24", gateway="10.20.0.1")
    _prefix(pm, site, "10.99.0.0/24", role=BMC)
    (server,) = _placed(pm, site)
    with pytest.raises(InvalidInput) as error:
        _network(pm, server, "10.9.0.5", "10.99.0.5")
    assert error.value.field == "management_ip"
    assert (
        error.value.field_message == "10.9.0.5 is outside the management prefixes of Sofia DC: 10.20.0.0/24."
    )
    with pytest.raises(InvalidInput) as error:
        _network(pm, server, "10.20.0.5", "10.20.0.6")
    assert error.value.field == "bmc_ip"
    assert error.value.field_message == "10.20.0.6 is outside the BMC prefixes of Sofia DC: 10.99.0.0/24."
    with pytest.raises(InvalidInput, match=re.escape("10.20.0.1 is the gateway of 10.20.0.0/24.")):
        _network(pm, server, "10.20.0.1", "10.99.0.5")
    with pytest.raises(InvalidInput, match=re.escape("is the network or broadcast address of 10.99.0.0/24")):
        _network(pm, server, "10.20.0.5", "10.99.0.255")
    network = _network(pm, server, "10.20.0.5", "10.99.0.5")
    assert (network.management_ip, network.bmc_ip) == ("10.20.0.5", "10.99.0.5")


def test_duplicates_stay_refused_inside_a_prefix(pm, site):
    _prefix(pm, site, "10.20.0.0/24")
    first, second = _placed(pm, site, 2)
    _network(pm, first, "10.20.0.5", "10.99.0.5", 1)
    with pytest.raises(RuleViolation) as error:
        _network(pm, second, "10.20.0.5", "10.99.0.6", 2)
    assert error.value.code == "address_taken"


def test_a_site_without_prefixes_of_a_role_takes_any_address_of_it(pm, site):
    _prefix(pm, site, "10.99.0.0/24", role=BMC)  # BMC prefixes only: management is free
    (server,) = _placed(pm, site)
    network = _network(pm, server, "172.16.5.9", "10.99.0.9")
    assert network.management_ip == "172.16.5.9"
    # Unplaced servers, and servers at a site without prefixes, are not checked at all.
    (loose,) = rig.servers(1)
    assert _network(pm, loose, "192.0.2.10", "198.51.100.10", 2).bmc_ip == "198.51.100.10"


def test_an_unchanged_address_is_not_checked_again(pm, site):
    (server,) = _placed(pm, site)
    _network(pm, server, "172.16.5.9", "172.17.5.9")
    _prefix(pm, site, "10.20.0.0/24")  # added after the record: the old address stays
    network = network_set(
        server=server, actor=pm, management_ip="172.16.5.9", bmc_ip="172.17.5.9", bmc_mac="3c:ec:ef:00:00:99"
    )
    assert network.bmc_mac == "3c:ec:ef:00:00:99"
    with pytest.raises(InvalidInput, match=re.escape("outside the management prefixes")):
        _network(pm, server, "172.16.5.10", "172.17.5.9")
