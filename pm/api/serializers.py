"""The fleet's quality rows and their evidence, as the API answers them (pm/api/views.py).

A row (`pm.quality.rows.QualityRow`) is not a model: its serializer reads the dataclass, with the interval's
figures flattened (`rate`, `low`, `high`, fractions; null without units) and every stage in `by_stage`
(0 where none failed), so a client's table has the same columns whatever the row."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from pm.quality.rows import QualityRow
from warranty.choices import FailureStage
from warranty.models import Attribution


class QualityRowSerializer(serializers.Serializer):
    key = serializers.CharField(read_only=True, help_text="The row's key in /api/v1/quality/<kind>/<key>/.")
    # A declared field named `label` shadows Field.label for the type checker only (the metaclass takes it).
    label = serializers.CharField(read_only=True)  # type: ignore[assignment]
    category = serializers.CharField(read_only=True, help_text="The part category, or `connector`.")
    units = serializers.IntegerField(read_only=True)
    in_service = serializers.IntegerField(read_only=True)
    unit_years = serializers.FloatField(read_only=True)
    failures = serializers.IntegerField(read_only=True)
    by_stage = serializers.SerializerMethodField(help_text="Distinct failed units per stage.")
    rate = serializers.SerializerMethodField(help_text="failures / units, a fraction; null without units.")
    low = serializers.SerializerMethodField(help_text="The 95 % Wilson interval's lower bound, a fraction.")
    high = serializers.SerializerMethodField(help_text="The 95 % Wilson interval's upper bound, a fraction.")
    threshold = serializers.FloatField(read_only=True)
    min_units = serializers.IntegerField(read_only=True)
    flagged = serializers.BooleanField(read_only=True)

    def get_by_stage(self, row: QualityRow) -> dict[str, int]:
        return {stage: row.by_stage.get(stage, 0) for stage in FailureStage.values}

    def get_rate(self, row: QualityRow) -> float | None:
        return None if row.interval is None else row.interval.rate

    def get_low(self, row: QualityRow) -> float | None:
        return None if row.interval is None else row.interval.low

    def get_high(self, row: QualityRow) -> float | None:
        return None if row.interval is None else row.interval.high


class EvidenceSerializer(serializers.ModelSerializer):
    """One attribution counted in a row: what failed, where it showed, and who confirmed the cause."""

    confirmed = serializers.SerializerMethodField()
    server_asset_tag = serializers.CharField(source="server.asset_tag", read_only=True)
    finding_code = serializers.SerializerMethodField()
    run = serializers.SerializerMethodField(help_text="The burn-in run of the finding, if any.")
    claim_number = serializers.SerializerMethodField()
    component_serial = serializers.SerializerMethodField()
    connector_name = serializers.SerializerMethodField()

    class Meta:
        model = Attribution
        fields = [
            "id",
            "stage",
            "cause",
            "proposed_cause",
            "confirmed",
            "confirmed_at",
            "occurred_at",
            "server",
            "server_asset_tag",
            "finding",
            "finding_code",
            "run",
            "claim",
            "claim_number",
            "blacklist",
            "component",
            "component_serial",
            "connector",
            "connector_name",
        ]
        read_only_fields = fields

    def get_confirmed(self, attribution: Attribution) -> bool:
        return attribution.confirmed_at is not None

    def get_finding_code(self, attribution: Attribution) -> str | None:
        return attribution.finding.code if attribution.finding else None

    def get_run(self, attribution: Attribution) -> int | None:
        return attribution.finding.run_id if attribution.finding else None

    def get_claim_number(self, attribution: Attribution) -> str | None:
        return attribution.claim.number if attribution.claim else None

    def get_component_serial(self, attribution: Attribution) -> str | None:
        return attribution.component.serial if attribution.component else None

    def get_connector_name(self, attribution: Attribution) -> str | None:
        return attribution.connector.name if attribution.connector else None


class QualityRowDetailSerializer(QualityRowSerializer):
    evidence = serializers.SerializerMethodField(
        help_text="The attributions counted in the row, newest first."
    )

    def get_evidence(self, row: QualityRow) -> list[dict[str, Any]]:
        return list(EvidenceSerializer(self.context["evidence"], many=True, context=self.context).data)
