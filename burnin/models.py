"""Burn-in results: one run per probe report, with its stages, per-GPU results, telemetry, BMC events and
findings. Every row hangs off a server; who sees the server sees its burn-in (customers included), and only
the server's partner (and PMs) may post a report for it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from builds.models import Server
from burnin.choices import HardwareBinding, ReportPurpose, RunResult, Severity, StageStatus
from inventory.models import Component
from werkbank.access import Purpose, VisibleToQuerySet


class RunQuerySet(VisibleToQuerySet):
    """Runs of the servers the user may see (view) or work on (bench: post reports)."""

    purposes = frozenset({Purpose.VIEW, Purpose.BENCH})

    def scope_for_member(self, user: Any, purpose: Purpose) -> RunQuerySet:
        return self.filter(server__in=Server.objects.scope_for_member(user, purpose))


class RunRowQuerySet(VisibleToQuerySet):
    """Rows of a run (stages, GPU results, samples, events, findings): visible with their run."""

    def scope_for_member(self, user: Any, purpose: Purpose) -> RunRowQuerySet:
        return self.filter(run__server__in=Server.objects.scope_for_member(user, purpose))


def _report_path(run: BurnInRun, filename: str) -> str:
    return f"burnin/{run.report_id[:2]}/{run.report_id}.json.gz"


class BurnInRun(models.Model):
    """One probe report for one server, as it came in, with the analysis' verdict: a burn-in, a field check
    after the handover or a post-repair run (`purpose`)."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="burnin_runs")
    purpose = models.CharField(
        max_length=16,
        choices=ReportPurpose.choices,
        default=ReportPurpose.BURN_IN,
        help_text="What the report is for, as the probe wrote it (a report of schema 1.0.0 is a burn-in).",
    )
    accepted_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the run became a baseline: the burn-in run the gate passed, or a post-repair run "
        "that passed. Later field checks are compared, GPU by GPU, with the earliest accepted run that "
        "measured the GPU.",
    )
    report_id = models.CharField(
        max_length=64,
        unique=True,
        help_text="SHA-256 of the report file as the probe wrote it: the upload's Idempotency-Key.",
    )
    probe_version = models.CharField(max_length=32)
    schema_version = models.CharField(max_length=16)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    result = models.CharField(max_length=16, choices=RunResult.choices)
    rules_version = models.CharField(max_length=32, help_text="The analysis rules that made the findings.")
    binding = models.CharField(
        max_length=8,
        choices=HardwareBinding.choices,
        default=HardwareBinding.SERIAL,
        help_text="How the report's GPUs were matched to the installed ones: by serial, or (cards that "
        "report no serial, such as GeForce) by the UUIDs the first run after the last change recorded.",
    )
    full_load_s = models.FloatField(
        null=True,
        blank=True,
        help_text="Seconds of full load under all GPUs as measured: the burn stage, an interrupted one "
        "only up to its interruption.",
    )
    target_s = models.FloatField(
        null=True, blank=True, help_text="The burn-in the order promised when the report came in, seconds."
    )
    report = models.FileField(upload_to=_report_path, help_text="The raw report, gzip-compressed.")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["server", "-id"], name="burnin_run_server_latest"),
            models.Index(fields=["server", "purpose", "-id"], name="burnin_run_server_purpose"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(purpose__in=ReportPurpose.values),
                name="%(app_label)s_%(class)s_purpose_valid",
                violation_error_message="Unknown report purpose.",
            ),
            models.CheckConstraint(
                condition=Q(result__in=RunResult.values),
                name="%(app_label)s_%(class)s_result_valid",
                violation_error_message="Unknown burn-in result.",
            ),
            models.CheckConstraint(
                condition=Q(ended_at__isnull=True) | Q(ended_at__gte=models.F("started_at")),
                name="%(app_label)s_%(class)s_ends_after_start",
                violation_error_message="A run cannot end before it started.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server} {self.get_purpose_display().lower()} {self.started_at:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        """The run's page (the admin's "view on site" links to it)."""
        return reverse("burnin:run", args=[self.pk])

    @property
    def full_load_h(self) -> float | None:
        return None if self.full_load_s is None else self.full_load_s / 3600

    @property
    def target_h(self) -> float | None:
        return None if self.target_s is None else self.target_s / 3600


class BurnInStage(models.Model):
    """One stage of the probe's run (inventory, telemetry, bench, burn, finalize) and how it ended."""

    run = models.ForeignKey(BurnInRun, on_delete=models.CASCADE, related_name="stages")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=16)
    status = models.CharField(max_length=16, choices=StageStatus.choices)
    reason = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    objects = RunRowQuerySet.as_manager()

    class Meta:
        ordering = ["run_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "name"],
                name="%(app_label)s_%(class)s_unique_name",
                violation_error_message="This run already has a stage of this name.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.status}"


class GpuResult(models.Model):
    """What one GPU measured in a run. Linked to the installed component when its serial matches."""

    run = models.ForeignKey(BurnInRun, on_delete=models.CASCADE, related_name="gpu_results")
    index = models.PositiveSmallIntegerField()
    serial = models.CharField(max_length=64, blank=True)
    uuid = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=100, blank=True)
    pci_bus_id = models.CharField(max_length=32, blank=True)
    numa_node = models.SmallIntegerField(null=True, blank=True)
    component = models.ForeignKey(
        Component, null=True, blank=True, on_delete=models.SET_NULL, related_name="gpu_results"
    )
    expected_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    expected_width = models.PositiveSmallIntegerField(null=True, blank=True)
    load_gen = models.PositiveSmallIntegerField(null=True, blank=True)
    load_width = models.PositiveSmallIntegerField(null=True, blank=True)
    h2d_gbps = models.FloatField(null=True, blank=True)
    d2h_gbps = models.FloatField(null=True, blank=True)
    tflops = models.FloatField(null=True, blank=True, help_text="FP16 dense matmul.")
    vram_gbps = models.FloatField(null=True, blank=True)
    peak_temp_c = models.FloatField(null=True, blank=True)
    min_margin_c = models.FloatField(
        null=True, blank=True, help_text="Lowest distance to the slowdown point."
    )
    mean_power_w = models.FloatField(null=True, blank=True)
    power_limit_w = models.FloatField(null=True, blank=True)
    matmuls = models.BigIntegerField(null=True, blank=True)
    mismatches = models.BigIntegerField(null=True, blank=True)
    nans = models.BigIntegerField(null=True, blank=True)
    baseline = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The baseline result this GPU of a field check or post-repair run was compared with.",
    )

    objects = RunRowQuerySet.as_manager()

    class Meta:
        ordering = ["run_id", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "index"],
                name="%(app_label)s_%(class)s_unique_index",
                violation_error_message="This run already has a GPU with this index.",
            ),
        ]

    def __str__(self) -> str:
        return f"GPU {self.index} {self.serial}".strip()


class TelemetrySample(models.Model):
    """One telemetry row of one GPU. Many: a 72 h run of 8 GPUs at 10 s gives 207,360. On PostgreSQL a BRIN
    index on `at` (migration 0002) keeps time-range scans cheap; (run, gpu_index, at) serves the charts."""

    id = models.BigAutoField(primary_key=True)
    # Neither an index nor a database constraint of its own (migration 0003), for the ingest's speed:
    # - the series index (run, gpu_index, at) serves every lookup by run; one index fewer to maintain
    #   made the COPY of 207,360 samples ~20 % faster;
    # - PostgreSQL checks a foreign key row by row, by a trigger deferred to COMMIT: 207,360 lookups of
    #   the one run took ~0.8 s of a ~3 s upload. Samples are only ever written by the ingest's COPY, in
    #   the transaction that inserts their run, with its id; deleting a run cascades through Django's
    #   collector (on_delete below), one DELETE … WHERE run_id IN (…).
    run = models.ForeignKey(
        BurnInRun, on_delete=models.CASCADE, related_name="samples", db_index=False, db_constraint=False
    )
    gpu_index = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    temp_c = models.FloatField(null=True)
    margin_c = models.FloatField(null=True, help_text="T.Limit: degrees below the slowdown point.")
    power_w = models.FloatField(null=True)
    sm_mhz = models.FloatField(null=True)
    util_pct = models.FloatField(null=True)
    clock_event_mask = models.BigIntegerField(null=True)
    pcie_gen = models.SmallIntegerField(null=True)
    pcie_width = models.SmallIntegerField(null=True)

    objects = RunRowQuerySet.as_manager()

    class Meta:
        ordering = ["run_id", "gpu_index", "at"]
        indexes = [models.Index(fields=["run", "gpu_index", "at"], name="burnin_sample_series")]

    def __str__(self) -> str:
        return f"GPU {self.gpu_index} at {self.at:%Y-%m-%d %H:%M:%S}"


class TelemetryRollup(models.Model):
    """A run's telemetry pre-aggregated per GPU on a fine time grid, written by the ingest in its
    transaction right after the samples (`burnin.services.samples.store_rollup`); a run never changes
    after that. The grid cuts the run's span into 3,000 (or 2,000) buckets of `width_us`
    microseconds each; the charts' coarser buckets are whole multiples of it, so `telemetry_series`
    re-aggregates a few thousand of these rows instead of every sample, with the same result: sums and
    counts give the means (count-weighted), max/min and the clock-event bits combine as they are.

    Like the samples, no database constraint of its own: rows are only written by the ingest, with the id
    of the run it has just inserted, and a deleted run cascades through Django's collector."""

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(
        BurnInRun, on_delete=models.CASCADE, related_name="rollup", db_index=False, db_constraint=False
    )
    #: The grid's bucket width: a rollup is used only by a query on the same grid (the run's span).
    width_us = models.BigIntegerField()
    gpu_index = models.PositiveSmallIntegerField()
    bucket = models.IntegerField(help_text="The bucket's number on the grid, from the run's start.")
    samples = models.IntegerField()
    temp_n = models.IntegerField(help_text="Samples with a temperature.")
    temp_sum_c = models.FloatField(null=True)
    temp_max_c = models.FloatField(null=True)
    margin_min_c = models.FloatField(null=True)
    power_n = models.IntegerField()
    power_sum_w = models.FloatField(null=True)
    sm_n = models.IntegerField()
    sm_sum_mhz = models.FloatField(null=True)
    #: The samples' clock-event bits combined: BIT_OR on PostgreSQL; on SQLite, which has no BIT_OR, the
    #: OR of the highest throttle and power-cap bits (what the charts read of it).
    clock_event_mask = models.BigIntegerField(null=True)

    objects = RunRowQuerySet.as_manager()

    class Meta:
        ordering = ["run_id", "gpu_index", "bucket"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "width_us", "gpu_index", "bucket"], name="burnin_rollup_unique_bucket"
            )
        ]

    def __str__(self) -> str:
        return f"GPU {self.gpu_index} bucket {self.bucket}"


class BmcEvent(models.Model):
    """One entry of the BMC's system event log, from the report's SEL section."""

    run = models.ForeignKey(BurnInRun, on_delete=models.CASCADE, related_name="bmc_events")
    sel_id = models.CharField(max_length=16)
    at = models.DateTimeField(null=True, blank=True, help_text="UTC, where the probe could tell.")
    sensor = models.CharField(max_length=100, blank=True)
    event = models.CharField(max_length=200, blank=True)
    direction = models.CharField(max_length=16, blank=True)
    dimm = models.CharField(max_length=64, blank=True)
    memory_kind = models.CharField(max_length=32, blank=True)
    record = models.JSONField(default=dict, help_text="The event as the probe parsed it.")

    objects = RunRowQuerySet.as_manager()

    class Meta:
        ordering = ["run_id", "at", "id"]
        indexes = [models.Index(fields=["run", "at", "id"], name="burnin_bmcevent_run_time")]

    def __str__(self) -> str:
        return f"SEL {self.sel_id} {self.event}"


class Finding(models.Model):
    """What the analysis found in a run, in plain words, with its evidence. A PM may waive it with a
    written reason; a waived `fail` no longer blocks the burn-in gate."""

    run = models.ForeignKey(BurnInRun, on_delete=models.CASCADE, related_name="findings")
    code = models.CharField(max_length=64)
    severity = models.CharField(max_length=8, choices=Severity.choices)
    subject = models.CharField(max_length=100, help_text="'GPU 2', 'DIMMs A1, B1', 'host', 'stage burn'.")
    gpu_index = models.PositiveSmallIntegerField(null=True, blank=True)
    message = models.TextField(help_text="The analysis' English sentence, as it was worded at ingest.")
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text="The figures the finding's sentence is made of: the pages render code + params in the "
        "reader's language.",
    )
    evidence = models.JSONField(default=dict)
    explained_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="explains",
        help_text="The finding of the same run that explains this one (a correlated ECC pattern explains "
        "the per-DIMM warnings it covers).",
    )
    rule_version = models.CharField(max_length=32)
    waived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    waived_at = models.DateTimeField(null=True, blank=True)
    waiver_reason = models.TextField(blank=True)

    objects = RunRowQuerySet.as_manager()

    class Meta:
        ordering = ["run_id", "id"]
        indexes = [models.Index(fields=["run", "severity"], name="burnin_finding_severity")]
        constraints = [
            models.CheckConstraint(
                condition=Q(severity__in=Severity.values),
                name="%(app_label)s_%(class)s_severity_valid",
                violation_error_message="Unknown severity.",
            ),
            models.CheckConstraint(
                condition=(Q(waived_at__isnull=True) & Q(waiver_reason=""))
                | (Q(waived_at__isnull=False) & ~Q(waiver_reason="")),
                name="%(app_label)s_%(class)s_waiver_has_reason",
                violation_error_message="A waiver needs a time and a written reason.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.severity} {self.code} ({self.subject})"

    @property
    def waived(self) -> bool:
        return self.waived_at is not None

    @property
    def text(self) -> str:
        """The finding's sentence in the active language (code + params, `burnin.findings_text`), without its
        subject (shown beside it); the stored English message where code and params have no template."""
        from burnin.findings_text import finding_text  # the renderer needs gettext, the models do not

        # Rows stored before the findings carried their figures began with their subject ("GPU 2: …"),
        # which every page shows beside the sentence: it is not said twice.
        fallback = self.message.removeprefix(f"{self.subject}: ")
        return finding_text(code=self.code, params=self.params, fallback=fallback)

    @property
    def subject_text(self) -> str:
        """The subject in the active language ("Stufe burn" on a German page)."""
        from burnin.findings_text import subject_text

        return subject_text(self.subject)
