"""Serializers of the burn-in app: runs as a list, and one run with its stages, GPU results and findings.

Everything here is read-only: a run comes in as the probe's report (the `reports` action), never as a
serializer's input.
"""

from __future__ import annotations

from rest_framework import serializers

from builds.api.serializers import EnumField
from burnin.choices import ReportPurpose, RunResult, Severity, StageStatus
from burnin.models import BurnInRun, BurnInStage, Finding, GpuResult
from werkbank.api.serializers import AudienceFieldsMixin


class RunSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    """A run as the list shows it, with its findings counted by severity."""

    asset_tag = serializers.CharField(source="server.asset_tag", read_only=True)
    hostname = serializers.CharField(source="server.hostname", read_only=True)
    purpose = EnumField(ReportPurpose, read_only=True)
    result = EnumField(RunResult, read_only=True)
    uploaded_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    findings_fail = serializers.IntegerField(read_only=True)
    findings_warn = serializers.IntegerField(read_only=True)
    findings_info = serializers.IntegerField(read_only=True)

    class Meta:
        model = BurnInRun
        fields = [
            "id",
            "server",
            "asset_tag",
            "hostname",
            "purpose",
            "accepted_at",
            "report_id",
            "probe_version",
            "schema_version",
            "started_at",
            "ended_at",
            "result",
            "rules_version",
            "binding",
            "full_load_s",
            "target_s",
            "uploaded_by",
            "created_at",
            "findings_fail",
            "findings_warn",
            "findings_info",
        ]
        read_only_fields = fields
        partner_fields = ["uploaded_by"]


class StageSerializer(serializers.ModelSerializer):
    status = EnumField(StageStatus, read_only=True)

    class Meta:
        model = BurnInStage
        fields = ["position", "name", "status", "reason", "started_at", "ended_at"]
        read_only_fields = fields


class GpuResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = GpuResult
        fields = [
            "index",
            "serial",
            "uuid",
            "name",
            "pci_bus_id",
            "numa_node",
            "component",
            "expected_gen",
            "expected_width",
            "load_gen",
            "load_width",
            "h2d_gbps",
            "d2h_gbps",
            "tflops",
            "vram_gbps",
            "peak_temp_c",
            "min_margin_c",
            "mean_power_w",
            "power_limit_w",
            "matmuls",
            "mismatches",
            "nans",
        ]
        read_only_fields = fields


class RunFindingSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    """A finding as its run lists it; `burnin.api.gate_serializers.FindingSerializer` adds the server.

    `message` is the analysis' English sentence as stored; `text` is the same sentence in the request's
    language (`Accept-Language`), made from `code` and `params`."""

    severity = EnumField(Severity, read_only=True)
    text = serializers.CharField(
        read_only=True, help_text="The sentence in the request's language, without the subject."
    )
    params = serializers.JSONField(read_only=True, help_text="The figures the sentence is made of.")
    explained_by = serializers.PrimaryKeyRelatedField(
        read_only=True, allow_null=True, help_text="The finding of the same run that explains this one."
    )
    waived_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = Finding
        fields = [
            "id",
            "code",
            "severity",
            "subject",
            "gpu_index",
            "message",
            "text",
            "params",
            "explained_by",
            "evidence",
            "rule_version",
            "waived_by",
            "waived_at",
            "waiver_reason",
        ]
        read_only_fields = fields
        # The customer learns that a finding was waived, when and why (the handover pack prints the
        # reason), but not the login of the PM who waived it.
        partner_fields = ["waived_by"]


class RunDetailSerializer(RunSerializer):
    """One run in full: what the probe measured per stage and per GPU, and what the analysis found."""

    stages = StageSerializer(many=True, read_only=True)
    gpu_results = GpuResultSerializer(many=True, read_only=True)
    findings = RunFindingSerializer(many=True, read_only=True)

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "stages", "gpu_results", "findings"]
        read_only_fields = fields
