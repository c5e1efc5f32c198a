"""Serializers of the burn-in gate: findings with their waivers, a server's gate state, the inputs."""

from __future__ import annotations

from rest_framework import serializers

from burnin.api.serializers import RunFindingSerializer
from burnin.models import BurnInRun


class FindingSerializer(RunFindingSerializer):
    """A finding in the findings list: the run's view of it, plus its run, server and whether it is waived."""

    server = serializers.CharField(source="run.server.asset_tag", read_only=True, help_text="Asset tag")
    hostname = serializers.CharField(source="run.server.hostname", read_only=True)
    waived = serializers.BooleanField(read_only=True)

    class Meta(RunFindingSerializer.Meta):
        fields = [
            "id",
            "run",
            "server",
            "hostname",
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
            "waived",
            "waived_by",
            "waived_at",
            "waiver_reason",
        ]
        read_only_fields = fields


class GateRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = BurnInRun
        fields = ["id", "report_id", "started_at", "ended_at", "result", "rules_version"]
        read_only_fields = fields


class GateStateSerializer(serializers.Serializer):
    """Where a server stands at the burn-in gate (a `burnin.gates.GateState`)."""

    asset_tag = serializers.CharField(source="server.asset_tag")
    hostname = serializers.CharField(source="server.hostname")
    status = serializers.CharField(source="server.status", help_text="The server's status.")
    passed = serializers.BooleanField(help_text="The server has passed burn-in.")
    ready = serializers.BooleanField(help_text="The server may pass burn-in now.")
    run = GateRunSerializer(allow_null=True, help_text="The latest run: the one the gate judges.")
    blocking = FindingSerializer(many=True, help_text="Findings of the latest run that block the pass.")
    missing = serializers.ListField(
        child=serializers.CharField(), help_text="What stands between the server and passing, as sentences."
    )
