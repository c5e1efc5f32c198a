"""Attribute the failures stored before attribution existed: `manage.py attribute_failures`.

Every stored run with a `fail` finding (oldest first, so that a later run's evidence re-proposes an
earlier link row as it would have at ingest), every claim a person filed and every blacklisted connector
without its attribution gets one (`warranty.services.attribution`). Idempotent: a source with its row is
left alone, so running it again adds nothing; it prints how many rows it made.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from builds.models import ConnectorBlacklist
from burnin.choices import Severity
from burnin.models import BurnInRun
from warranty.models import WarrantyClaim
from warranty.services import attribute_blacklist, attribute_claim, attribute_run


class Command(BaseCommand):
    help = "Attribute the stored runs' fail findings, the filed claims and the blacklistings (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        runs = claims = blacklists = 0
        pending = (
            BurnInRun.objects.filter(findings__severity=Severity.FAIL, findings__attribution__isnull=True)
            .distinct()
            .order_by("created_at", "pk")
        )
        for run in pending.iterator():
            made = attribute_run(run=run, findings=list(run.findings.all()), actor=None, live=False)
            runs += len(made)
        filed = WarrantyClaim.objects.filter(finding__isnull=True, attribution__isnull=True).order_by("pk")
        for claim in filed.select_related("record").iterator():
            claims += attribute_claim(claim=claim, actor=None) is not None
        for blacklist in (
            ConnectorBlacklist.objects.filter(attribution__isnull=True).order_by("pk").iterator()
        ):
            attribute_blacklist(blacklist=blacklist, actor=None)
            blacklists += 1
        self.stdout.write(
            f"Attributed {runs} from runs, {claims} from claims, {blacklists} from blacklistings."
        )
