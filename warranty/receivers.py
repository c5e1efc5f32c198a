"""Reactions of the warranty app to builds and burn-in events (see builds.signals, burnin.signals)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from werkbank.types import Actor

logger = logging.getLogger("warranty.claims")

if TYPE_CHECKING:
    from builds.models import Allocation, ConnectorBlacklist, Server
    from burnin.models import BurnInRun, Finding
    from werkbank.models import Organization


def register_allocated_components(
    sender: Any,
    *,
    server: Server,
    allocations: Sequence[Allocation],
    customer: Organization,
    actor: Actor,
    **kwargs: Any,
) -> None:
    """Components allocated to a customer's server are registered in the customer's name, in the same
    transaction."""
    from warranty.services import registrations_record

    registrations_record(server=server, allocations=allocations, customer=customer, actor=actor)


def draft_claims_from_drift(
    sender: Any, *, run: BurnInRun, findings: Sequence[Finding], **kwargs: Any
) -> None:
    """Each `fail` drift finding of a field check or post-repair run drafts a claim on the warranty record
    of the card it names, in the ingest's transaction; a card not under warranty (no record in force)
    drafts none. Idempotent: a finding drafts at most one claim (`claim_draft_from_finding`)."""
    from warranty.selectors import drift_record
    from warranty.services import claim_draft_from_finding

    for finding in findings:
        record = drift_record(finding=finding)
        if record is None:
            logger.info(
                "Finding %s (%s) of run %s: %s is not under warranty; no claim.",
                finding.pk,
                finding.code,
                run.pk,
                (finding.evidence or {}).get("serial") or "the card",
            )
            continue
        claim_draft_from_finding(finding=finding, record=record)


def attribute_run_failures(
    sender: Any, *, run: BurnInRun, findings: Sequence[Finding], actor: Actor, **kwargs: Any
) -> None:
    """A stored run's `fail` findings are attributed to what caused them, in the ingest's transaction
    (`warranty.services.attribution`). Idempotent: one row per finding."""
    from warranty.services import attribute_run

    attribute_run(run=run, findings=findings, actor=actor)


def attribute_blacklisted_connector(
    sender: Any, *, blacklist: ConnectorBlacklist, actor: Actor, **kwargs: Any
) -> None:
    """A connector blacklisted on the bench is a failure of that connector, in the blacklisting's
    transaction. Idempotent: one row per blacklisting."""
    from warranty.services import attribute_blacklist

    attribute_blacklist(blacklist=blacklist, actor=actor)
