"""Before listing (issue #28, item 5): Vast.ai's host minimums per GPU against the server's own figures
(installed parts or configuration, and the accepted burn-in's PCIe bandwidth), the refusal of a new
listing that falls short, a PM's audited override, the server page's check, and the warning that a
component swap on a listed server costs its verification."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import translation

from builds.choices import ServerStatus
from builds.models import Server
from burnin.models import GpuResult
from burnin.services.gate import server_pass_burnin
from deployment.minimum_selectors import platform_minimums, reverify_warnings, server_host_facts
from deployment.minimums import HostFacts, Minimums, host_checks, host_shortfalls
from deployment.models import PlatformListing
from deployment.services import listing_record
from inventory.choices import PartCategory
from tests import factories
from tests.builds.bench_rig import GPUS_L1
from tests.deployment import svc_rig as rig
from tests.tenants_rig import api_client
from tests.warranty.handover_rig import SPARE_GPU, bench, handed, world  # noqa: F401 - fixtures
from warranty.models import WarrantyRecord
from warranty.services import claim_approve, claim_open
from werkbank.errors import RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

LISTINGS = "/api/v1/platform-listings/"
#: Minimums that make the arithmetic of the sentences easy to read.
EVEN = Minimums(cpu_cores_per_gpu=1, ram_gb_per_gpu=32, disk_gb_per_gpu=128, pcie_gbps_per_gpu=12)


def _facts(**values) -> HostFacts:
    return HostFacts(
        **{"gpu_count": 8, "cpu_cores": 64, "ram_gb": 768, "disk_gb": 8000, "pcie_gbps": 27.7, **values}
    )


# --- the pure rules -----------------------------------------------------------------------------------------


def test_the_setting_holds_vast_ais_published_minimums():
    assert platform_minimums("vast_ai") == Minimums(
        cpu_cores_per_gpu=1, ram_gb_per_gpu=4, disk_gb_per_gpu=128, pcie_gbps_per_gpu=2.9
    )
    assert platform_minimums("other") is None
    assert platform_minimums("none") is None


def test_a_server_above_every_minimum_has_no_shortfall():
    rows = host_checks(facts=_facts(), minimums=EVEN)
    assert [(row.figure, row.ok) for row in rows] == [
        ("cpu_cores", True),
        ("ram_gb", True),
        ("disk_gb", True),
        ("pcie_gbps", True),
    ]
    assert host_shortfalls(facts=_facts(), minimums=EVEN) == []


@pytest.mark.parametrize(
    ("figure", "short", "equal", "sentence"),
    [
        (
            "cpu_cores",
            6,
            8,
            "CPU cores 6 for 8 GPUs is 0.75 physical cores per GPU; Vast.ai asks for at least 1 per GPU.",
        ),
        (
            "ram_gb",
            96,
            256,
            "RAM 96 GB for 8 GPUs is 12 GB per GPU; Vast.ai asks for at least 32 GB per GPU.",
        ),
        (
            "disk_gb",
            1000,
            1024,
            "Disk 1,000 GB for 8 GPUs is 125 GB per GPU; Vast.ai asks for at least 128 GB per GPU.",
        ),
        (
            "pcie_gbps",
            11.9,
            12,
            "PCIe host-to-device bandwidth 11.9 GB/s on the slowest of 8 GPUs in the accepted burn-in; "
            "Vast.ai asks for at least 12 GB/s per GPU.",
        ),
    ],
)
def test_each_minimum_short_and_at_its_boundary(figure, short, equal, sentence):
    (shortfall,) = host_shortfalls(facts=_facts(**{figure: short}), minimums=EVEN)
    assert (shortfall.figure, shortfall.sentence) == (figure, sentence)
    assert shortfall.minimum_per_gpu == getattr(EVEN, f"{figure}_per_gpu")
    # Equal is enough: exactly the minimum per GPU meets it.
    assert host_shortfalls(facts=_facts(**{figure: equal}), minimums=EVEN) == []


def test_every_shortfall_is_listed_and_an_unknown_figure_is_none():
    facts = _facts(cpu_cores=4, ram_gb=None, disk_gb=512, pcie_gbps=None, unknown={"ram_gb": "no memory."})
    assert [s.figure for s in host_shortfalls(facts=facts, minimums=EVEN)] == ["cpu_cores", "disk_gb"]
    ram = next(row for row in host_checks(facts=facts, minimums=EVEN) if row.figure == "ram_gb")
    assert (ram.ok, ram.value, ram.sentence) == (None, None, "RAM not known: no memory.")
    # Per GPU needs GPUs: a server without any has nothing to compare.
    assert host_checks(facts=_facts(gpu_count=0, cpu_cores=0), minimums=EVEN) == []


def test_the_sentences_speak_german():
    with translation.override("de"):
        (shortfall,) = host_shortfalls(facts=_facts(ram_gb=100), minimums=EVEN)
    assert shortfall.sentence == (
        "RAM 100 GB für 8 GPUs sind 12,5 GB je GPU; Vast.ai verlangt mindestens 32 GB je GPU."
    )


# --- the figures of a real server ---------------------------------------------------------------------------


def _configuration(*, cores: int = 16, ram: tuple[int, int] = (32, 8), disk: tuple[int, int] = (2000, 2)):
    """4 GPUs, 2 CPUs of `cores` physical cores, `ram` = (GB per DIMM, DIMMs), `disk` = (GB per NVMe,
    NVMes)."""
    part = factories.PartFactory
    return factories.ConfigurationFactory(
        lines=[
            (part(category=PartCategory.GPU, tdp_w=500), 4),
            (
                part(
                    category=PartCategory.CPU,
                    tdp_w=250,
                    vram_gb=None,
                    specs={"cores": cores, "threads": 2 * cores},
                ),
                2,
            ),
            (
                part(category=PartCategory.MEMORY, tdp_w=8, vram_gb=None, specs={"capacity_gb": ram[0]}),
                ram[1],
            ),
            (
                part(category=PartCategory.STORAGE, tdp_w=9, vram_gb=None, specs={"capacity_gb": disk[0]}),
                disk[1],
            ),
            (factories.ChassisFactory(u_height=4), 1),
        ]
    )


def _burnt_in(pm, configuration, h2d, *, customer=None) -> Server:
    """A server of `configuration` whose burn-in measured `h2d` (GB/s per GPU) and passed the gate."""
    server = rig.server(status="burn_in", configuration=configuration, customer=customer)
    run = factories.make_burnin_run(server, stages=[{"name": "burn", "status": "ok"}])
    GpuResult.objects.bulk_create(
        GpuResult(run=run, index=index, h2d_gbps=gbps, mean_power_w=400.0) for index, gbps in enumerate(h2d)
    )
    return server_pass_burnin(server=server, actor=pm)


def _deployed(server: Server) -> Server:
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.DEPLOYED)
    server.refresh_from_db()
    return server


def test_the_figures_come_from_the_configuration_and_the_passed_burn_in(tenants):
    server = _burnt_in(tenants.pm, _configuration(), [27.7, 27.6, 13.9, 27.7])

    facts = server_host_facts(server=server)

    # Nothing installed through the bench: the configuration's parts, and the run the gate accepted.
    assert (facts.source, facts.gpu_count, facts.cpu_cores, facts.ram_gb, facts.disk_gb) == (
        "configuration",
        4,
        32,
        256,
        4000,
    )
    assert facts.pcie_gbps == pytest.approx(13.9)  # the slowest card, the one at x8
    assert facts.unknown == {}


def test_a_gpu_the_burn_in_did_not_measure_leaves_the_bandwidth_unknown(tenants):
    server = _burnt_in(tenants.pm, _configuration(), [27.7, None, 27.7, 27.7])
    facts = server_host_facts(server=server)
    assert facts.pcie_gbps is None
    assert facts.unknown == {"pcie_gbps": "the accepted burn-in measured 3 of 4 GPUs."}
    no_run = rig.server(status="burn_in_passed", configuration=_configuration())
    assert server_host_facts(server=no_run).unknown == {"pcie_gbps": "no accepted burn-in run measured it."}


def test_the_installed_parts_win_over_the_configuration(world):  # noqa: F811 - the fixture
    # The bench's configuration has 3 GPUs; two went in, with two DIMMs whose part states no capacity.
    facts = server_host_facts(server=world.server)
    assert (facts.source, facts.gpu_count, facts.cpu_cores, facts.ram_gb) == ("installed", 2, None, None)
    assert facts.unknown["cpu_cores"] == "no CPU installed."
    assert facts.unknown["ram_gb"] == f"the part {world.bench.dimm.mpn} states no capacity_gb."


# --- before listing -----------------------------------------------------------------------------------------


@pytest.fixture
def short(tenants, settings):
    """A deployed server of customer A short on every Vast.ai minimum when they are EVEN's."""
    settings.WERKBANK_PLATFORM_HOST_MINIMUMS = {
        "vast_ai": {
            "cpu_cores_per_gpu": 1,
            "ram_gb_per_gpu": 32,
            "disk_gb_per_gpu": 128,
            "pcie_gbps_per_gpu": 12,
        }
    }
    configuration = _configuration(cores=1, ram=(16, 4), disk=(256, 1))  # 2 cores, 64 GB, 256 GB for 4 GPUs
    server = _burnt_in(tenants.pm, configuration, [27.7, 27.7, 6.9, 27.7], customer=tenants.customer_a)
    return _deployed(server)


SHORTFALLS = [
    "CPU cores 2 for 4 GPUs is 0.5 physical cores per GPU; Vast.ai asks for at least 1 per GPU.",
    "RAM 64 GB for 4 GPUs is 16 GB per GPU; Vast.ai asks for at least 32 GB per GPU.",
    "Disk 256 GB for 4 GPUs is 64 GB per GPU; Vast.ai asks for at least 128 GB per GPU.",
    "PCIe host-to-device bandwidth 6.9 GB/s on the slowest of 4 GPUs in the accepted burn-in; Vast.ai asks "
    "for at least 12 GB/s per GPU.",
]


def test_a_listing_below_the_minimums_is_refused_naming_every_shortfall(tenants, short):
    body = {"server": short.pk, "platform": "vast_ai", "machine_id": "41873"}

    refused = api_client(tenants.pm).post(LISTINGS, body, format="json")

    assert refused.status_code == 409, refused.json()
    answer = refused.json()
    assert answer["code"] == "host_minimums"
    assert answer["missing"] == SHORTFALLS
    assert short.hostname in answer["detail"] and all(s in answer["detail"] for s in SHORTFALLS)
    assert not PlatformListing.objects.filter(server=short).exists()
    # Another platform has no minimums here: nothing to check.
    other = api_client(tenants.pm).post(LISTINGS, {**body, "platform": "other"}, format="json")
    assert other.status_code == 201, other.json()


def test_a_pm_lists_it_anyway_with_a_reason_audited_with_the_shortfalls(tenants, short):
    body = {
        "server": short.pk,
        "platform": "vast_ai",
        "machine_id": "41873",
        "minimums_override_reason": "Customer accepts unverified rentals until the DIMM upgrade in May.",
    }

    listed = api_client(tenants.pm).post(LISTINGS, body, format="json")

    assert listed.status_code == 201, listed.json()
    assert "minimums_override_reason" not in listed.json()  # written, never read back
    (event,) = AuditEvent.objects.for_object(short).filter(verb="deployment.listing_minimums_override")
    assert event.actor == tenants.pm and event.note == body["minimums_override_reason"]
    assert (event.after["platform"], event.after["machine_id"], event.after["shortfalls"]) == (
        "vast_ai",
        "41873",
        SHORTFALLS,
    )
    assert event.after["figures"]["ram_gb"] == {"per_gpu": 16.0, "minimum_per_gpu": 32.0}
    assert AuditEvent.objects.for_object(short).filter(verb="deployment.listing").count() == 1


def test_only_a_pm_overrides_the_minimums(tenants, short):
    member = tenants.user_a
    for actor in (member, None):  # a customer's member, the system (a task)
        with pytest.raises(RuleViolation) as refused:
            listing_record(
                server=short,
                actor=actor,
                platform="vast_ai",
                machine_id="41873",
                minimums_override_reason="we want it listed",
            )
        assert refused.value.code == "pm_only"
        with pytest.raises(RuleViolation) as refused:
            listing_record(server=short, actor=actor, platform="vast_ai", machine_id="41873")
        assert refused.value.code == "host_minimums"
    assert not PlatformListing.objects.filter(server=short).exists()
    assert not AuditEvent.objects.filter(verb="deployment.listing_minimums_override").exists()


def test_an_update_of_the_listed_machine_is_not_refused_but_a_new_machine_is(tenants, short):
    listing_record(
        server=short,
        actor=tenants.pm,
        platform="vast_ai",
        machine_id="41873",
        minimums_override_reason="ok'd",
    )

    # What a poll records: the state of the machine already listed, by the system.
    polled = listing_record(
        server=short,
        actor=None,
        platform="vast_ai",
        machine_id="41873",
        verification="verified",
        reliability="0.9879",
    )

    assert (polled.verification, polled.is_current) == ("verified", True)
    assert AuditEvent.objects.filter(verb="deployment.listing_minimums_override").count() == 1
    # Listed again as another machine: a new machine to the platform, checked again.
    with pytest.raises(RuleViolation) as refused:
        listing_record(server=short, actor=tenants.pm, platform="vast_ai", machine_id="50001")
    assert refused.value.missing == SHORTFALLS


def test_a_server_that_meets_the_minimums_is_listed_without_a_reason(tenants):
    server = _deployed(_burnt_in(tenants.pm, _configuration(), [27.7, 27.6, 27.7, 27.7]))
    listed = api_client(tenants.pm).post(
        LISTINGS, {"server": server.pk, "platform": "vast_ai", "machine_id": "41874"}, format="json"
    )
    assert listed.status_code == 201, listed.json()
    assert not AuditEvent.objects.filter(verb="deployment.listing_minimums_override").exists()


def test_the_admin_form_passes_the_reason_through(client, tenants, short):
    assert client.login(username="pm", password=factories.PASSWORD)
    form = {
        "server": short.pk,
        "platform": "vast_ai",
        "machine_id": "41873",
        "verification": "unverified",
        "reliability": "",
        "listed_on": "",
        "verified_on": "",
        "note": "",
    }
    refused = client.post("/admin/deployment/platformlisting/add/", form, follow=True).content.decode()
    assert "falls short of Vast.ai" in refused and "16 GB per GPU" in refused
    assert not PlatformListing.objects.filter(server=short).exists()
    listed = client.post(
        "/admin/deployment/platformlisting/add/", {**form, "minimums_override_reason": "PM decision"}
    )
    assert listed.status_code == 302, listed.content.decode()[:2000]
    (event,) = AuditEvent.objects.for_object(short).filter(verb="deployment.listing_minimums_override")
    assert event.note == "PM decision"


# --- the server page ----------------------------------------------------------------------------------------


def test_the_server_page_shows_each_minimum_before_anyone_lists(client, tenants, short):
    client.force_login(tenants.user_a)  # the customer, who rents the machine out
    page = client.get(f"/deployment/servers/{short.pk}/").content.decode()

    assert 'id="host-minimums-vast_ai"' in page and "Vast.ai host minimums" in page
    for figure in ("cpu_cores", "ram_gb", "disk_gb", "pcie_gbps"):
        row = page.split(f'data-figure="{figure}"', 1)[1].split("</tr>", 1)[0]
        assert 'data-result="short"' in row, figure
    assert SHORTFALLS[1] in page
    assert "4 minimums fall short" in page
    assert "From the configuration (4 GPUs; nothing is installed yet)" in page

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    german = client.get(f"/deployment/servers/{short.pk}/").content.decode()
    assert "Mindestanforderungen von Vast.ai für Hosts" in german
    assert "RAM 64 GB für 4 GPUs sind 16 GB je GPU" in german


def test_the_page_says_ok_and_not_known(client, tenants):
    server = _burnt_in(tenants.pm, _configuration(), [27.7, 27.6, 27.7, 27.7], customer=tenants.customer_a)
    client.force_login(tenants.pm)
    page = client.get(f"/deployment/servers/{server.pk}/").content.decode()
    assert page.count('data-result="ok"') == 4 and 'id="minimums-met-vast_ai"' in page
    bare = rig.server(status="burn_in_passed", customer=tenants.customer_a)  # no specs, no burn-in
    page = client.get(f"/deployment/servers/{bare.pk}/").content.decode()
    assert page.count('data-result="unknown"') == 4
    assert "PCIe bandwidth not known: no accepted burn-in run measured it." in page


# --- a component swap on a listed server --------------------------------------------------------------------


def _ship_a_replacement(handed):  # noqa: F811 - the fixture
    """Customer A's claim on its first GPU, approved and shipped through the API: the PM's answer."""
    pm = api_client(handed.t.pm)
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    opened = api_client(handed.t.user_a).post(
        "/api/v1/warranty/claims/", {"record": record.pk, "description": "Xid 79"}, format="json"
    )
    url = f"/api/v1/warranty/claims/{opened.json()['id']}"
    assert pm.post(f"{url}/approve/", {"note": "ok"}, format="json").status_code == 200
    return pm.post(f"{url}/ship-replacement/", {"component": handed.component(SPARE_GPU).pk}, format="json")


def test_a_swap_on_a_server_listed_on_vast_ai_warns_that_it_is_re_verified(handed):  # noqa: F811
    listing_record(server=handed.server, actor=handed.t.pm, platform="vast_ai", machine_id="12345")
    warning = (
        f"Server {handed.server.hostname} is listed on Vast.ai as machine 12345: the platform re-verifies a "
        "machine whose components change; expect it to be deverified until it passes again."
    )

    shipped = _ship_a_replacement(handed)

    assert shipped.status_code == 200, shipped.json()
    assert shipped.json()["status"] == "replacement_shipped"
    assert shipped.json()["warnings"] == [warning]
    (event,) = AuditEvent.objects.for_object(handed.server).filter(verb="warranty.reverify_warning")
    assert (event.note, event.actor, event.after["serial"]) == (warning, handed.t.pm, SPARE_GPU)
    assert reverify_warnings(server=handed.server) == [warning]


def test_a_swap_on_an_unlisted_server_warns_of_nothing(handed):  # noqa: F811
    listing_record(server=handed.server, actor=handed.t.pm, platform="other", machine_id="rack-7")
    shipped = _ship_a_replacement(handed)
    assert shipped.status_code == 200, shipped.json()
    assert shipped.json()["warnings"] == []
    assert not AuditEvent.objects.filter(verb="warranty.reverify_warning").exists()


def test_the_admin_tells_the_pm_who_ships_the_replacement(client, handed):  # noqa: F811
    listing_record(server=handed.server, actor=handed.t.pm, platform="vast_ai", machine_id="12345")
    claim = claim_open(
        record=WarrantyRecord.objects.get(serial=GPUS_L1[0]), actor=handed.t.user_a, description="Xid 79"
    )
    claim_approve(claim=claim, actor=handed.t.pm)
    assert client.login(username="pm", password=factories.PASSWORD)

    page = client.post(
        f"/admin/warranty/warrantyclaim/{claim.pk}/change/",
        {"decision": "ship_replacement", "note": "", "replacement_serial": SPARE_GPU},
        follow=True,
    ).content.decode()

    assert "is listed on Vast.ai as machine 12345: the platform re-verifies a machine" in page
    assert AuditEvent.objects.filter(verb="warranty.reverify_warning").count() == 1
