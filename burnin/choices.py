"""Burn-in choices: a report's purpose, a run's verdict, its stages' statuses, and the severity of a
finding."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class ReportPurpose(models.TextChoices):
    """What a probe report is for (`purpose` in the probe's schema 1.1.0; a 1.0.0 report is a burn-in).

    A burn-in report certifies a server before it is deployed and is what the burn-in gate judges. A field
    check measures a server where it now stands, after the handover, and is compared with its baseline
    (`burnin.selectors.baselines`). A post-repair run re-commissions a server after a component was
    swapped under warranty: the ordinary rules, no drift against the GPUs that stayed, and it becomes the
    baseline of the GPUs that came in."""

    BURN_IN = "burn_in", _("Burn-in")
    FIELD_CHECK = "field_check", _("Field check")
    POST_REPAIR = "post_repair", _("Post-repair")


#: Purposes compared with the server's baseline: they come after the handover, never before the gate.
COMPARED_PURPOSES = frozenset({ReportPurpose.FIELD_CHECK, ReportPurpose.POST_REPAIR})


class RunResult(models.TextChoices):
    """The analysis' verdict when the report came in (the gate decides later, with the waivers)."""

    PASS = "pass", pgettext_lazy("burn-in result", "Pass")
    FAIL = "fail", pgettext_lazy("burn-in result", "Fail")
    INCOMPLETE = "incomplete", pgettext_lazy("burn-in result", "Incomplete")


class StageStatus(models.TextChoices):
    """As the probe reports it (`probe/schema/report-v1.schema.json`, `$defs.stage`)."""

    OK = "ok", pgettext_lazy("burn-in stage", "OK")
    SKIPPED = "skipped", pgettext_lazy("burn-in stage", "Skipped")
    INTERRUPTED = "interrupted", pgettext_lazy("burn-in stage", "Interrupted")
    FAILED = "failed", pgettext_lazy("burn-in stage", "Failed")


class Severity(models.TextChoices):
    INFO = "info", pgettext_lazy("finding severity", "Info")
    WARN = "warn", pgettext_lazy("finding severity", "Warning")
    FAIL = "fail", pgettext_lazy("finding severity", "Fail")


class HardwareBinding(models.TextChoices):
    """How a run's GPUs were bound to the server's installed GPUs at ingest."""

    SERIAL = "serial", _("By serial")
    UUID = "uuid", _("By UUID")
