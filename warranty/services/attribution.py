"""Failure attribution (issue #29, item 1): what caused each failure, proposed by the rules, confirmed or
corrected by a PM.

One `Attribution` per failure: a `fail` finding of a run (`attribute_run`, on `burnin.signals.run_analysed`),
a claim a person filed (`attribute_claim`, from `claim_open`; a claim drafted from a drift finding is that
finding's failure, which already has its row), a connector blacklisted on the bench (`attribute_blacklist`,
on `builds.signals.connector_blacklisted`). The rules live in `warranty.attribution_rules` (pure); here they
get their facts from the database: the card of a finding (`GpuResult.component` of its GPU index), the
connector it sat in when the run was stored (`Installation`), and for a link the card's other runs.

One card's failure counts once per run and cause family: a card at x8 fails both `pcie_link_downtrained`
and `h2d_bandwidth_outlier`; only the first (the tables' order) gets a row, so seed 003's two narrow links
are two failures of two connector positions, not four.

Every row is made once (its source is unique: a signal delivered twice, or the backfill run again, adds
nothing). An unconfirmed link row is proposed again when a later run brings new evidence (the card trained
x16 on another connector: the connector's, seed 003); a confirmed one is the PM's and stays.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from builds.models import Connector, ConnectorBlacklist, Installation
from burnin.choices import ReportPurpose, Severity
from burnin.models import BurnInRun, Finding, GpuResult
from inventory.models import Component
from warranty import attribution_rules as rules
from warranty.choices import FailureCause, FailureStage
from warranty.models import Attribution, WarrantyClaim
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, UnknownObject
from werkbank.types import Actor

logger = logging.getLogger("warranty.attribution")

#: The stage of a run's failure by the run's purpose: a post-repair run re-commissions on the bench.
STAGE_BY_PURPOSE = {
    ReportPurpose.BURN_IN: FailureStage.BURN_IN,
    ReportPurpose.POST_REPAIR: FailureStage.BURN_IN,
    ReportPurpose.FIELD_CHECK: FailureStage.FIELD,
}
#: The order in which one card's findings of one family claim its one row (`_family`).
_ORDER = {
    code: rank
    for rank, code in enumerate(
        [*rules.LINK_CODES, *rules.COMPONENT_CODES, *rules.HOST_CODES, *rules.ENVIRONMENT_CODES]
    )
}
REASON_MAX = 500


def _family(code: str) -> str:
    for name, table in (
        ("link", rules.LINK_CODES),
        ("component", rules.COMPONENT_CODES),
        ("host", rules.HOST_CODES),
    ):
        if code in table:
            return name
    return "environment"


def _installation_at(*, server_id: int, component_id: int, moment: datetime | None) -> Installation | None:
    """The component's installation in the server at `moment` (a run's storing, a claim's filing); the
    active one where the time windows say nothing (`moment` None: now)."""
    found = Installation.objects.filter(server_id=server_id, component_id=component_id)
    if moment is not None:
        window = (
            found.filter(installed_at__lte=moment)
            .filter(Q(removed_at__isnull=True) | Q(removed_at__gt=moment))
            .order_by("-installed_at", "-id")
            .first()
        )
        if window is not None:
            return window
    return found.active().select_related("connector").first()


def _connector_at(*, server_id: int, component_id: int | None, moment: datetime | None) -> Connector | None:
    if component_id is None:
        return None
    installation = _installation_at(server_id=server_id, component_id=component_id, moment=moment)
    return installation.connector if installation is not None else None


def _full_width(result: GpuResult) -> bool:
    """The card trained at the width and speed its connector offers (both measured)."""
    if result.load_width is None or result.expected_width is None:
        return False
    if result.load_width < result.expected_width:
        return False
    return result.load_gen is None or result.expected_gen is None or result.load_gen >= result.expected_gen


def _link_facts(*, component: Component, connector: Connector, finding: Finding) -> rules.LinkFacts:
    """The link rule's evidence for `finding` (the card `component` in `connector`) from the fleet's other
    runs and rows: a full-width run of the card elsewhere, a failed link of it elsewhere, another card's
    failed link here."""
    full_elsewhere = ""
    others = (
        GpuResult.objects.filter(component=component)
        .exclude(run_id=finding.run_id)
        .select_related("run")
        .order_by("-run__created_at")
    )
    failed_runs = set(
        Finding.objects.filter(
            run__gpu_results__component=component,
            severity=Severity.FAIL,
            code__in=list(rules.LINK_CODES),
        )
        .exclude(run_id=finding.run_id)
        .values_list("run_id", "gpu_index")
    )
    for result in others:
        if (result.run_id, result.index) in failed_runs or not _full_width(result):
            continue
        there = _connector_at(
            server_id=result.run.server_id, component_id=component.pk, moment=result.run.created_at
        )
        if there is not None and there.pk != connector.pk:
            full_elsewhere = there.name
            break
    links = Attribution.objects.filter(finding__code__in=list(rules.LINK_CODES)).exclude(finding=finding)
    failed_elsewhere = (
        links.filter(component=component)
        .exclude(connector=connector)
        .exclude(connector__isnull=True)
        .values_list("connector__name", flat=True)
        .first()
    )
    other_card = (
        links.filter(connector=connector)
        .exclude(component=component)
        .exclude(component__isnull=True)
        .values_list("component__serial", flat=True)
        .first()
    )
    return rules.LinkFacts(
        full_elsewhere=full_elsewhere,
        failed_elsewhere=failed_elsewhere or "",
        other_card_here=other_card or "",
    )


def _proposal(
    finding: Finding, component: Component | None, connector: Connector | None
) -> rules.Proposal | None:
    facts = None
    if rules.is_link_code(finding.code) and component is not None and connector is not None:
        facts = _link_facts(component=component, connector=connector, finding=finding)
    return rules.propose(
        finding.code,
        params=finding.params or {},
        link=facts,
        card=component.serial if component is not None else "",
        connector=connector.name if connector is not None else "",
    )


def _names_what_it_blames(cause: str, component: Component | None, connector: Connector | None) -> bool:
    if cause == FailureCause.COMPONENT:
        return component is not None
    if cause == FailureCause.CONNECTOR:
        return connector is not None
    return True


def _attributed_findings(findings: Iterable[Finding]) -> list[Finding]:
    """The run's `fail` findings the rules attribute, one per card and cause family (module docstring)."""
    chosen: dict[tuple, Finding] = {}
    for finding in sorted(findings, key=lambda f: (_ORDER.get(f.code, len(_ORDER)), f.pk or 0)):
        if finding.severity != Severity.FAIL or finding.code in rules.NOT_ATTRIBUTED:
            continue
        if finding.code not in rules.KNOWN_CODES:
            logger.warning("Finding %s: no attribution rule for code %s.", finding.pk, finding.code)
            continue
        key = (finding.gpu_index, _family(finding.code)) if finding.gpu_index is not None else (finding.pk,)
        chosen.setdefault(key, finding)
    return list(chosen.values())


@transaction.atomic
def attribute_run(
    *, run: BurnInRun, findings: Sequence[Finding], actor: Actor, live: bool = True
) -> list[Attribution]:
    """Attribute each `fail` finding of a stored run (the attributions made now), then propose the
    unconfirmed link rows of the run's cards and connectors again with what this run measured.

    `live`: called as the run is stored, so a card's connector is its active installation; the backfill
    (False) reads the installation of the time the run was stored (`run.created_at`)."""
    results = {r.index: r for r in GpuResult.objects.filter(run=run).select_related("component")}
    moment = None if live else run.created_at
    connectors: dict[int, Connector | None] = {}
    for index, row in results.items():
        connectors[index] = _connector_at(
            server_id=run.server_id, component_id=row.component_id, moment=moment
        )
    made = []
    for finding in _attributed_findings(findings):
        if Attribution.objects.filter(finding=finding).exists():
            continue
        result = results.get(finding.gpu_index) if finding.gpu_index is not None else None
        component = result.component if result is not None else None
        connector = connectors.get(finding.gpu_index) if finding.gpu_index is not None else None
        proposal = _proposal(finding, component, connector)
        if proposal is None or not _names_what_it_blames(proposal.cause, component, connector):
            logger.info(
                "Finding %s (%s) of run %s: nothing to blame; no attribution.",
                finding.pk,
                finding.code,
                run.pk,
            )
            continue
        made.append(
            _create(
                actor=actor,
                source={"finding": finding},
                server_id=run.server_id,
                stage=STAGE_BY_PURPOSE.get(ReportPurpose(run.purpose), FailureStage.BURN_IN),
                occurred_at=run.started_at,
                proposal=proposal,
                component=component,
                connector=connector,
            )
        )
    _repropose_links(
        actor=actor,
        run=run,
        components=[r.component for r in results.values() if r.component is not None],
        connectors=[c for c in connectors.values() if c is not None],
    )
    return made


def _create(
    *,
    actor: Actor,
    source: dict,
    server_id: int,
    stage: str,
    occurred_at: datetime,
    proposal: rules.Proposal,
    component: Component | None,
    connector: Connector | None,
) -> Attribution:
    """The row of one source, once. Its making is not audited on its own: it is written in the transaction of
    the event that caused it, which is (`burnin.ingest`, `warranty.claim_open`,
    `server.blacklist_connector`); what changes a row later is (`attribution.repropose`, `.confirm`,
    `.correct`)."""
    attribution, _ = Attribution.objects.get_or_create(
        **source,
        defaults={
            "server_id": server_id,
            "stage": stage,
            "occurred_at": occurred_at,
            "proposed_cause": proposal.cause,
            "proposed_reason": proposal.reason[:REASON_MAX],
            "cause": proposal.cause,
            "component": component,
            "connector": connector,
        },
    )
    return attribution


def _state(attribution: Attribution) -> dict:
    return {
        "cause": attribution.cause,
        "proposed_cause": attribution.proposed_cause,
        "component": attribution.component.serial if attribution.component is not None else None,
        "connector": attribution.connector.name if attribution.connector is not None else None,
    }


def _repropose_links(
    *, actor: Actor, run: BurnInRun, components: list[Component], connectors: list[Connector]
) -> None:
    """The unconfirmed link rows of other runs about these cards or connectors, proposed again: this run
    may be the move that tells the card from the connector (seed 003)."""
    if not components and not connectors:
        return
    stale = (
        Attribution.objects.select_for_update(of=("self",))
        .filter(confirmed_at__isnull=True, finding__code__in=list(rules.LINK_CODES))
        .filter(Q(component__in=components) | Q(connector__in=connectors))
        .exclude(finding__run=run)
        .select_related("finding", "component", "connector")
        .order_by("pk")
    )
    for row in stale:
        assert row.finding is not None  # the filter names a finding's code
        proposal = _proposal(row.finding, row.component, row.connector)
        if proposal is None or (proposal.cause, proposal.reason[:REASON_MAX]) == (
            row.proposed_cause,
            row.proposed_reason,
        ):
            continue
        before = _state(row)
        row.proposed_cause = row.cause = proposal.cause
        row.proposed_reason = proposal.reason[:REASON_MAX]
        row.save(update_fields=["proposed_cause", "cause", "proposed_reason"])
        audit(
            actor=actor,
            verb="attribution.repropose",
            obj=row,
            before=before,
            after=_state(row),
            note=f"Run {run.pk}: {row.proposed_reason}",
        )


@transaction.atomic
def attribute_claim(*, claim: WarrantyClaim, actor: Actor) -> Attribution | None:
    """Attribute a claim a person filed to its record's component (stage claim); None for a claim drafted
    from a drift finding (that finding is the failure, with its own row) or one on no component."""
    if claim.finding_id is not None:
        return None
    record = claim.record
    if record.component_id is None:
        return None
    component = Component.objects.get(pk=record.component_id)
    connector = _connector_at(server_id=record.server_id, component_id=component.pk, moment=claim.created_at)
    where = f" in connector {connector.name}" if connector is not None else ""
    return _create(
        actor=actor,
        source={"claim": claim},
        server_id=record.server_id,
        stage=FailureStage.CLAIM,
        occurred_at=claim.created_at,
        proposal=rules.Proposal(
            FailureCause.COMPONENT,
            f"Claim {claim.number} on {component.serial}{where}: the component the customer reported "
            "failing.",
        ),
        component=component,
        connector=connector,
    )


@transaction.atomic
def attribute_blacklist(*, blacklist: ConnectorBlacklist, actor: Actor) -> Attribution:
    """Attribute a connector blacklisted on the bench to that connector (stage bench); the card it held
    last is named beside it."""
    connector = Connector.objects.get(pk=blacklist.connector_id)
    last = (
        Installation.objects.filter(connector=connector)
        .select_related("component")
        .order_by("-installed_at", "-id")
        .first()
    )
    return _create(
        actor=actor,
        source={"blacklist": blacklist},
        server_id=connector.server_id,
        stage=FailureStage.BENCH,
        occurred_at=blacklist.created_at,
        proposal=rules.Proposal(
            FailureCause.CONNECTOR, f"Connector {connector.name} blacklisted on the bench: {blacklist.reason}"
        ),
        component=last.component if last is not None else None,
        connector=connector,
    )


def _checked_component(row: Attribution, component: Component | None) -> Component | None:
    if component is None:
        return None
    if not Installation.objects.filter(server_id=row.server_id, component=component).exists():
        raise InvalidInput("component", f"{component.serial} was never installed in {row.server}.")
    return component


def _checked_connector(row: Attribution, connector: Connector | None) -> Connector | None:
    if connector is None:
        return None
    if connector.server_id != row.server_id:
        raise InvalidInput("connector", f"connector {connector.name} is not one of {row.server}'s.")
    return connector


@transaction.atomic
def attribution_confirm(
    *,
    attribution: Attribution,
    actor: Actor,
    cause: str,
    component: Component | None = None,
    connector: Connector | None = None,
    note: str = "",
) -> Attribution:
    """A PM's word on an attribution: the same cause (and what it names) confirms it
    (`attribution.confirm`); another cause, component or connector corrects it, with a `note` saying why
    (`attribution.correct`, before and after). PMs only: to anyone else the row does not exist."""
    row = (
        Attribution.objects.visible_to(actor)
        .select_for_update(of=("self",))
        .select_related("server", "component", "connector")
        .filter(pk=attribution.pk)
        .first()
    )
    if row is None:
        raise UnknownObject("attribution", "no attribution with this id.")
    if cause not in FailureCause.values:
        raise InvalidInput("cause", f"one of {', '.join(FailureCause.values)}.")
    component = _checked_component(row, component) or row.component
    connector = _checked_connector(row, connector) or row.connector
    if cause == FailureCause.COMPONENT and component is None:
        raise InvalidInput("component", "name the component the failure is attributed to.")
    if cause == FailureCause.CONNECTOR and connector is None:
        raise InvalidInput("connector", "name the connector the failure is attributed to.")
    note = (note or "").strip()
    before = _state(row)
    same = (cause, component, connector) == (row.cause, row.component, row.connector)
    if not same and not note:
        raise InvalidInput("note", "say why the cause is corrected.")
    row.cause, row.component, row.connector = cause, component, connector
    row.confirmed_by, row.confirmed_at = user_or_none(actor), timezone.now()
    if note:
        row.note = note
    row.save(update_fields=["cause", "component", "connector", "confirmed_by", "confirmed_at", "note"])
    audit(
        actor=actor,
        verb="attribution.confirm" if same else "attribution.correct",
        obj=row,
        before=before,
        after=_state(row),
        note=note,
    )
    return row
