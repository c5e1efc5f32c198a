"""Warranty reads: the warranty table per serial, everything a handover pack prints, the packs a user may
see, what a handover lacks, records by serial and their claims, the record a drift finding's card is
under, and the PM's warranty report across customers (records by how soon they end).

The warranty table has one source of truth per moment. Once a server is handed over, its `WarrantyRecord`
rows are the table. Before (a pack is rendered while the server is deployed, since the handover needs a
ready pack), `warranty_rows` derives the same rows from what is installed and the order's term, with the
start "from handover". The pack and the certificate both read `warranty_rows`, so they never disagree.

`pack_data` collects what the pack prints through the lower apps' selectors (builds' connector map and
blacklist, burn-in's run detail and downsampled telemetry, deployment's placement, circuits, network and
listing) in a fixed number of queries, whatever the number of GPUs or samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from dateutil.relativedelta import relativedelta
from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from builds.choices import ServerStatus, status_in_sentence
from builds.models import Installation, Server
from builds.selectors import ConnectorCell, blacklist_entries, connector_map
from burnin.gates import judged_run
from burnin.models import BurnInRun, Finding
from burnin.selectors import RunDetail, Telemetry, run_detail, telemetry_series
from deployment.models import PlatformListing, RackPlacement, ServerNetwork
from deployment.selectors import FeedLoad, ServerPower, current_listing, feed_loads, server_powers
from inventory.models import Component
from orders.models import ConfigurationLine, Order
from warranty.choices import CLAIM_OPEN, SUPPLIER_RETURN_OPEN, PackStatus, RecordKind
from warranty.models import HandoverPack, SupplierReturn, WarrantyClaim, WarrantyRecord
from werkbank.access import Purpose
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput
from werkbank.models import Membership, Organization
from werkbank.types import Actor

#: Points per GPU in the pack's charts: a chart half a page wide has about 250 pixel columns at 150 dpi,
#: so 240 points keep every visible swing while the PDF stays small (bench/bench_handover.py).
CHART_POINTS = 240


@dataclass(frozen=True)
class WarrantyRow:
    """One serial's warranty: `start` is None before the handover ("from handover"), and so is `end`."""

    kind: str
    serial: str
    description: str
    term_months: int
    start: date | None
    end: date | None
    server_id: int
    hostname: str


def server_warranty_serial(server: Server) -> str:
    """The serial of the server's own record: the chassis serial when recorded (what the vendor knows the
    machine by), else the asset tag on our label, which every server has."""
    return server.chassis_serial or server.asset_tag


def component_description(component: Component) -> str:
    """What a component's record says it is: the part, with its MPN."""
    part = component.part
    return f"{part.manufacturer} {part.name} ({part.mpn})"[:200]


def warranty_end(start: date, term_months: int) -> date:
    """The day a warranty of `term_months` that starts on `start` ends: the same day of the month, `term`
    months later (relativedelta clamps the 31st to a shorter month's last day: 31 Jan + 1 month is 28/29
    Feb)."""
    return start + relativedelta(months=term_months)


def _derived_rows(servers: list[Server]) -> list[WarrantyRow]:
    """Rows derived from the installed components and the order's term, for servers without records."""
    rows: list[WarrantyRow] = []
    installed: dict[int, list[Installation]] = {server.pk: [] for server in servers}
    for installation in (
        Installation.objects.active()
        .filter(server__in=servers)
        .select_related("component__part", "connector")
        .order_by("server_id", "connector__position")
    ):
        installed[installation.server_id].append(installation)
    for server in servers:
        term = server.order.warranty_months
        rows.append(
            WarrantyRow(
                kind=RecordKind.SERVER,
                serial=server_warranty_serial(server),
                description=server.hostname,
                term_months=term,
                start=None,
                end=None,
                server_id=server.pk,
                hostname=server.hostname,
            )
        )
        for installation in installed[server.pk]:
            rows.append(
                WarrantyRow(
                    kind=RecordKind.COMPONENT,
                    serial=installation.component.serial,
                    description=component_description(installation.component),
                    term_months=term,
                    start=None,
                    end=None,
                    server_id=server.pk,
                    hostname=server.hostname,
                )
            )
    return rows


def warranty_rows(*, servers: list[Server]) -> list[WarrantyRow]:
    """The warranty table of `servers` (each with its order loaded): their current records where a server
    has them (a replaced serial's record is left out: its replacement is the current one), else the rows
    derived from what is installed and the order's term. Two queries."""
    records = list(
        WarrantyRecord.objects.filter(server__in=servers, replaced_by__isnull=True)
        .select_related("server")
        .order_by("server_id", "kind", "serial")
    )
    with_records = {record.server_id for record in records}
    rows = [
        WarrantyRow(
            kind=record.kind,
            serial=record.serial,
            description=record.description,
            term_months=record.term_months,
            start=record.start_date,
            end=record.end_date,
            server_id=record.server_id,
            hostname=record.server.hostname,
        )
        for record in records
    ]
    derived = _derived_rows([server for server in servers if server.pk not in with_records])
    # By server, the server's own row first, then by serial: the same order from records or derived.
    return sorted(rows + derived, key=lambda row: (row.hostname, row.kind != RecordKind.SERVER, row.serial))


def certificate_servers(*, order: Order) -> list[Server]:
    """The order's servers, in order, for its warranty certificate."""
    return list(Server.objects.filter(order=order).select_related("order__customer").order_by("sequence"))


# --- what a pack prints ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MonitoringAccess:
    """Where the customer watches the server, and under which account: never a password.

    The portal (WERKBANK_PUBLIC_URL + /portal/) under the logins of the customer's own members, the
    platform listing (platform and machine id) under the customer's platform account (its contact e-mail),
    and the BMC's web interface at its address, whose credentials are handed over apart from the pack.
    """

    portal_url: str
    portal_accounts: list[str]
    platform: str
    platform_machine_id: str
    platform_account: str
    bmc_url: str
    bmc_credentials_set: bool


@dataclass
class PackData:
    """Everything the pack of one server prints, read once."""

    server: Server
    order: Order
    configuration_lines: list[ConfigurationLine]
    connectors: list[ConnectorCell]
    blacklist: list[Any]
    run: BurnInRun | None
    detail: RunDetail | None
    telemetry: Telemetry | None
    placement: RackPlacement | None
    feeds: list[FeedLoad]
    power: ServerPower | None
    network: ServerNetwork | None
    listing: PlatformListing | None
    monitoring: MonitoringAccess
    warranty: list[WarrantyRow]
    extra: dict[str, Any] = field(default_factory=dict)


def _placement(server: Server) -> RackPlacement | None:
    return (
        RackPlacement.objects.filter(server=server)
        .select_related("rack__site")
        .prefetch_related("feeds")
        .first()
    )


def _monitoring(server: Server, network: ServerNetwork | None, listing: PlatformListing | None) -> Any:
    public_url = getattr(settings, "WERKBANK_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
    accounts = list(
        Membership.objects.filter(organization=server.order.customer, user__is_active=True)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )
    return MonitoringAccess(
        portal_url=f"{public_url}/portal/",
        portal_accounts=accounts,
        platform=listing.get_platform_display() if listing else "",
        platform_machine_id=listing.machine_id if listing else "",
        platform_account=server.order.customer.contact_email if listing else "",
        bmc_url=f"https://{network.bmc_ip}/" if network else "",
        bmc_credentials_set=bool(network and network.has_bmc_credentials),
    )


def pack_data(*, server: Server, chart_points: int = CHART_POINTS) -> PackData:
    """What the handover pack of `server` prints, through the lower apps' selectors."""
    server = Server.objects.select_related("order__customer", "order__configuration").get(pk=server.pk)
    run = judged_run(server)
    placement = _placement(server)
    feeds: list[FeedLoad] = []
    power = None
    if placement is not None:
        mine = {feed.pk for feed in placement.feeds.all()}
        feeds = [load for load in feed_loads(rack=placement.rack) if load.feed.pk in mine]
        power = server_powers([server], measured={server.pk: placement.measured_wall_w})[server.pk]
    network = ServerNetwork.objects.filter(server=server).first()
    listing = current_listing(server=server)
    return PackData(
        server=server,
        order=server.order,
        configuration_lines=list(
            ConfigurationLine.objects.filter(configuration_id=server.order.configuration_id)
            .select_related("part")
            .order_by("part__category", "part__name")
        ),
        connectors=connector_map(server),
        blacklist=list(blacklist_entries(server)),
        run=run,
        detail=run_detail(run) if run else None,
        telemetry=telemetry_series(run=run, max_points=chart_points) if run else None,
        placement=placement,
        feeds=feeds,
        power=power,
        network=network,
        listing=listing,
        monitoring=_monitoring(server, network, listing),
        warranty=warranty_rows(servers=[server]),
    )


# --- packs a user may see -------------------------------------------------------------------------------


def visible_packs(user: Actor) -> QuerySet:
    """The packs the user may see (PMs all, a customer's members their servers'), newest first."""
    return (
        HandoverPack.objects.visible_to(user, purpose=Purpose.VIEW)
        .select_related("server__order__customer", "generated_by")
        .order_by("-created_at", "-pk")
    )


def server_packs(*, user: Actor, server: Server) -> list[HandoverPack]:
    """The packs of one server the user may see, newest revision first."""
    return list(visible_packs(user).filter(server=server).order_by("-revision"))


def latest_ready_pack(*, user: Actor, server: Server, language: str | None = None) -> HandoverPack | None:
    """The newest ready pack of the server the user may see (in `language`, when given)."""
    packs = visible_packs(user).filter(server=server, status=PackStatus.READY)
    if language:
        packs = packs.filter(language=language)
    return packs.order_by("-revision").first()


def hand_over_missing(*, server: Server) -> list[str]:
    """Everything that stands between a server and its handover, as sentences (empty: it may go)."""
    return hand_over_missing_many(servers=[server])[server.pk]


def hand_over_missing_many(*, servers: Sequence[Server]) -> dict[int, list[str]]:
    """`hand_over_missing` of many servers, `{server id: sentences}`, in one query however many there are."""
    ready = set(
        HandoverPack.objects.filter(server_id__in=[server.pk for server in servers], status=PackStatus.READY)
        .order_by()
        .values_list("server_id", flat=True)
    )
    answer: dict[int, list[str]] = {}
    for server in servers:
        missing = answer[server.pk] = []
        if server.status != ServerStatus.DEPLOYED:
            missing.append(
                _("Server %(hostname)s is %(status)s; it must be deployed.")
                % {"hostname": server.hostname, "status": status_in_sentence(server.status)}
            )
        if server.pk not in ready:
            missing.append(
                _("Server %(hostname)s has no ready handover pack; generate one first.")
                % {"hostname": server.hostname}
            )
    return answer


def records_for(*, user: Actor, serial: str = "") -> QuerySet[WarrantyRecord]:
    """The warranty records the user may see, newest handover first; `serial` narrows them to that serial
    (any letter case, whole serial): a serial outside the user's view is simply not found."""
    records = WarrantyRecord.objects.visible_to(user).select_related("server", "replaced_by", "replaces")
    serial = (serial or "").strip()
    if serial:
        records = records.filter(serial__iexact=serial)
    return records.order_by("-start_date", "server_id", "kind", "serial", "pk")


def record_for(*, user: Actor, pk: int) -> WarrantyRecord | None:
    """One record the user may see, with its lineage, or None."""
    return (
        WarrantyRecord.objects.visible_to(user)
        .select_related("server", "order", "customer", "replaces", "replaced_by")
        .filter(pk=pk)
        .first()
    )


def drift_record(*, finding: Finding) -> WarrantyRecord | None:
    """The record a drift finding's card is under warranty by now: the component record of the finding's
    component (`evidence["component_id"]`) on the run's server, not replaced, still running. None: the
    card is not under warranty (or the finding names no component)."""
    component_id = (finding.evidence or {}).get("component_id")
    if not isinstance(component_id, int):
        return None
    return (
        WarrantyRecord.objects.filter(
            kind=RecordKind.COMPONENT,
            server_id=finding.run.server_id,
            component_id=component_id,
            replaced_at__isnull=True,
            end_date__gte=timezone.localdate(),
        )
        .order_by("-pk")
        .first()
    )


def claims_of(*, user: Actor, record: WarrantyRecord) -> QuerySet[WarrantyClaim]:
    return WarrantyClaim.objects.visible_to(user).filter(record=record).order_by("-created_at", "-pk")


def claim_for(*, user: Actor, pk: int) -> WarrantyClaim | None:
    """One claim the user sees (its customer's members, PMs), else None: the caller answers 404."""
    return WarrantyClaim.objects.visible_to(user).select_related("record").filter(pk=pk).first()


def attachment_download_url(attachment_id: int) -> str:
    """A claim's attachments are served only after the access check, by the API's download route (a browser
    session works there), for the portal and the admin alike."""
    return reverse("warranty-claim-attachment-download", args=[attachment_id])


@dataclass(frozen=True)
class IssuedPack:
    """What the public page /verify/ may tell anyone about a pack Werkbank issued: which server's pack,
    which revision, in which language and when. Nothing else: no customer, order, hostname or serial."""

    asset_tag: str
    revision: int
    language: str
    issued_on: date | None  # None only for a row made without its finish time (tests' bare rows)


def issued_pack(*, zip_sha256: str) -> IssuedPack | None:
    """The ready pack whose ZIP has this SHA-256, as the public page tells it; None when there is none.

    Outside `visible_to` on purpose: whoever holds a pack may ask, without an account, whether Werkbank
    issued it. The SHA-256 is the pack's own (only a holder knows it), and the answer carries IssuedPack's
    fields only, read as values so that no other column is even fetched.
    """
    row = (
        HandoverPack.objects.filter(zip_sha256=zip_sha256.lower(), status=PackStatus.READY)
        .order_by("pk")
        .values("server__asset_tag", "revision", "language", "finished_at")
        .first()
    )
    if row is None:
        return None
    return IssuedPack(
        asset_tag=row["server__asset_tag"],
        revision=row["revision"],
        language=row["language"],
        issued_on=timezone.localdate(row["finished_at"]) if row["finished_at"] else None,
    )


# --- the PM's warranty report (issue #29) ---------------------------------------------------------------

#: The report's buckets: records still in force that end within that many days (so 30 is also in 60, 90
#: and 180), and "expired": records that have ended. A record ends at the end of its `end_date`: it is
#: still in force that day (as for the expiry notices) and expired the day after.
REPORT_BUCKETS = ("expired", "30", "60", "90", "180")
DEFAULT_REPORT_BUCKET = "90"


def report_bucket(value: str | None) -> str:
    """The bucket `value` names (DEFAULT_REPORT_BUCKET when empty); 400 naming `bucket` otherwise."""
    value = (value or "").strip() or DEFAULT_REPORT_BUCKET
    if value not in REPORT_BUCKETS:
        raise InvalidInput("bucket", f"Unknown bucket {value[:20]!r}: one of {', '.join(REPORT_BUCKETS)}.")
    return value


def report_kind(value: str | None) -> str | None:
    """The record kind `value` names (None when empty); 400 naming `kind` otherwise."""
    value = (value or "").strip()
    if not value:
        return None
    if value not in RecordKind.values:
        raise InvalidInput("kind", f"Unknown kind {value[:20]!r}: one of {', '.join(RecordKind.values)}.")
    return value


def report_customer(value: str | None) -> Organization | None:
    """The customer organization whose id `value` is (None when empty); 400 naming `customer` otherwise."""
    value = (value or "").strip()
    if not value:
        return None
    customer = (
        Organization.objects.filter(pk=int(value), kind=OrganizationKind.CUSTOMER).first()
        if value.isdigit() and len(value) < 12
        else None
    )
    if customer is None:
        raise InvalidInput("customer", f"No customer with id {value[:20]!r}.")
    return customer


def _bucket_condition(bucket: str, today: date) -> Q:
    if bucket == "expired":
        return Q(end_date__lt=today)
    return Q(end_date__gte=today, end_date__lte=today + timedelta(days=int(bucket)))


def _report_records(*, customer: Organization | None, kind: str | None) -> QuerySet[WarrantyRecord]:
    """The records the report reads: current ones only (a replaced serial's record has its successor)."""
    records = WarrantyRecord.objects.filter(replaced_at__isnull=True)
    if customer is not None:
        records = records.filter(customer=customer)
    if kind:
        records = records.filter(kind=kind)
    return records


def warranty_report(
    *, bucket: str, customer: Organization | None = None, kind: str | None = None, today: date | None = None
) -> QuerySet[WarrantyRecord]:
    """The warranty records of every customer in `bucket` (one of REPORT_BUCKETS), optionally of one
    customer and one kind, soonest end first (expired: the most recently ended first), along the index on
    (end_date, id). Replaced records are left out. Unevaluated: the caller pages it."""
    today = today or timezone.localdate()
    order = ("-end_date", "-id") if bucket == "expired" else ("end_date", "id")
    return (
        _report_records(customer=customer, kind=kind)
        .filter(_bucket_condition(bucket, today))
        .select_related("server", "order", "customer")
        .order_by(*order)
    )


def warranty_report_counts(
    *, customer: Organization | None = None, kind: str | None = None, today: date | None = None
) -> dict[str, int]:
    """How many records each bucket holds (with the same filters), `{bucket: count}`, in one query."""
    today = today or timezone.localdate()
    counts = _report_records(customer=customer, kind=kind).aggregate(
        **{
            f"bucket_{bucket}": Count("pk", filter=_bucket_condition(bucket, today))
            for bucket in REPORT_BUCKETS
        }
    )
    return {bucket: counts[f"bucket_{bucket}"] for bucket in REPORT_BUCKETS}


def report_customers() -> QuerySet[Organization]:
    """The customers the report's filter offers (every customer organization: they are few), by name."""
    return Organization.objects.filter(kind=OrganizationKind.CUSTOMER).order_by("name", "pk")


def open_claims_and_returns() -> dict[str, int]:
    """How many claims are still being handled (drafts included) and how many supplier returns are open."""
    return {
        "claims": WarrantyClaim.objects.filter(status__in=sorted(CLAIM_OPEN)).count(),
        "returns": SupplierReturn.objects.filter(status__in=sorted(SUPPLIER_RETURN_OPEN)).count(),
    }
