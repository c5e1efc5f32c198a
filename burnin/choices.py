"""Burn-in choices: a run's verdict, its stages' statuses, and the severity of a finding."""

from django.db import models


class RunResult(models.TextChoices):
    """The analysis' verdict when the report came in (the gate decides later, with the waivers)."""

    PASS = "pass", "Pass"
    FAIL = "fail", "Fail"
    INCOMPLETE = "incomplete", "Incomplete"


class StageStatus(models.TextChoices):
    """As the probe reports it (`probe/schema/report-v1.schema.json`, `$defs.stage`)."""

    OK = "ok", "OK"
    SKIPPED = "skipped", "Skipped"
    INTERRUPTED = "interrupted", "Interrupted"
    FAILED = "failed", "Failed"


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARN = "warn", "Warning"
    FAIL = "fail", "Fail"


class HardwareBinding(models.TextChoices):
    """How a run's GPUs were bound to the server's installed GPUs at ingest."""

    SERIAL = "serial", "By serial"
    UUID = "uuid", "By UUID"
