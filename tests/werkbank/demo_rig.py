"""The demo fleet made fit for "one row against a page" tests: the tables `seed_demo` leaves with fewer than
two rows get a second one (the admin's change lists, the API's lists)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from builds.models import BuildPhoto, Server
from deployment.models import PlatformAlert, PlatformListing, ServerNetwork
from deployment.services import network_set, platform_account_set
from inventory.models import BatchLot
from inventory.services import label_batch_request
from warranty.choices import PACK_SERVER_STATUSES, RecordKind
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.services import claim_open
from warranty.services.packs import pack_request
from werkbank.choices import OrganizationKind
from werkbank.errors import DomainError
from werkbank.models import Organization


def add_second_rows(pm: Any) -> None:
    """The tables the demo leaves with fewer than two rows get a second one."""
    servers = list(Server.objects.order_by("pk"))
    for index, server in enumerate(servers[:2]):
        BuildPhoto.objects.create(
            server=server,
            file=f"photos/list-test-{index}.jpg",
            content_type="image/jpeg",
            size_bytes=1024,
            uploaded_by=pm,
        )
    for index, server in enumerate(servers):
        if ServerNetwork.objects.count() >= 2:
            break
        if not ServerNetwork.objects.filter(server=server).exists():
            network_set(
                server=server,
                actor=pm,
                # Inside the demo colocation's prefixes (deployment/demo_prefixes.py), where it stands.
                management_ip=f"10.20.7.{index + 100}",
                bmc_ip=f"10.99.7.{index + 100}",
                bmc_mac=f"02:00:00:00:01:{index + 10:02x}",
            )
    # The platform poll's tables (issue #28): two customers' accounts, and an alert on two listing rows (the
    # demo never polls Vast.ai).
    for customer in Organization.objects.filter(kind=OrganizationKind.CUSTOMER).order_by("pk")[:2]:
        platform_account_set(
            organization=customer, platform="vast_ai", api_key=f"list-test-{customer.pk}", actor=pm
        )
    for listing in PlatformListing.objects.exclude(platform="none").order_by("pk")[:2]:
        PlatformAlert.objects.get_or_create(listing=listing, kind="offline")
    for lot in BatchLot.objects.order_by("pk")[:2]:
        label_batch_request(actor=pm, lot=lot)  # queued: the task runs on commit, which a test never reaches
    packed = Server.objects.filter(status__in=sorted(PACK_SERVER_STATUSES)).first()
    assert packed is not None, "the demo fleet has no deployed or handed-over server"
    pack_request(server=packed, actor=pm)
    for record in WarrantyRecord.objects.filter(kind=RecordKind.COMPONENT).order_by("pk"):
        if WarrantyClaim.objects.count() >= 2:
            break
        try:
            claim_open(record=record, actor=pm, description="Fan noise above 60 dB at idle.")
        except DomainError:
            continue  # a record that takes no claim (replaced, ended, already claimed)
    # The PM's warranty report lists what ends within 90 days; the demo's records all run for years: two
    # of them end soon instead.
    soon = timezone.localdate() + timedelta(days=30)
    WarrantyRecord.objects.filter(
        pk__in=list(WarrantyRecord.objects.order_by("pk").values_list("pk", flat=True)[:2])
    ).update(end_date=soon)
