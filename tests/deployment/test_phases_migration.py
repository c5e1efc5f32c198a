"""Migration deployment 0006: the feed links of before phases were recorded become `PlacementFeed`
rows on the stated default, phase L1, marked `phase_assumed` (listed for review); a link recorded afterwards
is not assumed unless the service says so. Run in a separate process on a temporary SQLite file
(tests/migration_script.py)."""

from __future__ import annotations

from pathlib import Path

from tests.migration_script import run_migration_script

SCRIPT = """
apps = migrate([("deployment", "0005_platform_earning")])
get = apps.get_model
customer = get("werkbank", "Organization").objects.create(name="Alpha Rentals GmbH", kind="customer")
configuration = get("orders", "ServerConfiguration").objects.create(name="C", psu_count=2, psu_rating_w=1600)
order = get("orders", "Order").objects.create(
    reference="WB-2026-0001", customer=customer, configuration=configuration, server_count=2,
    warranty_months=36,
)
servers = [
    get("builds", "Server").objects.create(
        order=order, sequence=n, hostname=f"wb-2026-0001-0{n}", asset_tag=f"WB-2026-0001-0{n}"
    )
    for n in (1, 2)
]
site = get("deployment", "Site").objects.create(
    name="Sofia", kind="colocation", operator="X", address="Sofia", country="BG", eu=True
)
rack = get("deployment", "Rack").objects.create(site=site, name="R1", height_u=42)
Feed = get("deployment", "PowerFeed")
a1 = Feed.objects.create(rack=rack, name="A1", leg="A", voltage_v=230, current_a=32, phases=3)
b1 = Feed.objects.create(rack=rack, name="B1", leg="B", voltage_v=230, current_a=32, phases=3)
placement = get("deployment", "RackPlacement").objects.create(
    server=servers[0], rack=rack, lowest_u=1, height_u=6
)
placement.feeds.set([a1, b1])

apps = migrate([("deployment", "0006_placement_phases")])
Link = apps.get_model("deployment", "PlacementFeed")
before = [
    [link.powerfeed.name, link.phase, link.phase_assumed]
    for link in Link.objects.select_related("powerfeed").order_by("powerfeed__name")
]
later = apps.get_model("deployment", "RackPlacement").objects.create(
    server_id=servers[1].pk, rack_id=rack.pk, lowest_u=10, height_u=6
)
new = Link.objects.create(rackplacement=later, powerfeed_id=a1.pk, phase="L2")
try:
    with transaction.atomic():
        Link.objects.create(rackplacement=later, powerfeed_id=b1.pk, phase="L4")
    refused = False
except IntegrityError:
    refused = True
print(json.dumps({"before": before, "new": [new.phase, new.phase_assumed], "refused": refused}))
"""


def test_existing_links_become_l1_assumed_and_new_ones_name_their_phase(tmp_path: Path) -> None:
    result = run_migration_script(SCRIPT, tmp_path)
    assert result["before"] == [["A1", "L1", True], ["B1", "L1", True]]
    assert result["new"] == ["L2", False]
    assert result["refused"] is True  # the check constraint knows the seven phase values only
