"""Migration warranty 0005: before the constraint of one queued pack per server and language, the queued
duplicates that undeduplicated requests made are resolved: the first revision of each server and language
stays queued, the later ones are marked failed with the reason, and other statuses and languages are left
alone. Run in a separate process on a temporary SQLite file (tests/migration_script.py)."""

from __future__ import annotations

from pathlib import Path

from tests.migration_script import run_migration_script

SCRIPT = """
apps = migrate([("warranty", "0004_pack_zip_sha256_index")])
get = apps.get_model
customer = get("werkbank", "Organization").objects.create(name="Alpha Rentals GmbH", kind="customer")
partner = get("werkbank", "Organization").objects.create(name="Praha Werkstatt", kind="partner")
configuration = get("orders", "ServerConfiguration").objects.create(name="C", psu_count=2, psu_rating_w=1600)
order = get("orders", "Order").objects.create(
    reference="WB-2026-0001", customer=customer, configuration=configuration, server_count=1,
    warranty_months=36,
)
server = get("builds", "Server").objects.create(
    order=order, sequence=1, hostname="wb-2026-0001-01", asset_tag="WB-2026-0001-01", partner=partner
)
Pack = get("warranty", "HandoverPack")
for revision, language, status in [
    (1, "en", "queued"), (2, "en", "queued"), (3, "en", "queued"), (4, "de", "queued"), (5, "en", "running"),
]:
    Pack.objects.create(server=server, revision=revision, language=language, status=status)

apps = migrate([("warranty", "0005_pack_one_queued_per_language")])
Pack = apps.get_model("warranty", "HandoverPack")
rows = [[p.revision, p.language, p.status, p.error] for p in Pack.objects.order_by("revision")]
try:
    with transaction.atomic():
        Pack.objects.create(server_id=server.pk, revision=6, language="de", status="queued")
    refused = False
except IntegrityError:
    refused = True
print(json.dumps({"rows": rows, "refused": refused}))
"""

SUPERSEDED = (
    "Superseded: r1 in the same language was queued first (one queued revision per server and language)."
)


def test_the_queued_duplicates_are_failed_before_the_constraint(tmp_path: Path) -> None:
    result = run_migration_script(SCRIPT, tmp_path)
    assert result["rows"] == [
        [1, "en", "queued", ""],
        [2, "en", "failed", SUPERSEDED],
        [3, "en", "failed", SUPERSEDED],
        [4, "de", "queued", ""],
        [5, "en", "running", ""],
    ]
    assert result["refused"] is True
