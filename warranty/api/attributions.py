"""The attribution part of warranty's API (issue #29, item 1): what caused each failure.

PMs only, as the supplier returns: `Attribution.objects.visible_to` gives members nothing, so a member's
list is empty and a row's detail and its action answer 404. The rules propose (`warranty.attribution_rules`,
on ingest, claim and blacklisting); a PM confirms or corrects through `POST {id}/attribute/`, backed by
`warranty.services.attribution.attribution_confirm` as the admin is.
"""

from __future__ import annotations

from typing import Any

from rest_framework import mixins, serializers, viewsets

from builds.models import Connector
from inventory.models import Component
from warranty.choices import FailureCause
from warranty.filters import AttributionFilter
from warranty.models import Attribution
from warranty.services.attribution import attribution_confirm
from werkbank.api.transitions import transition_action
from werkbank.api.viewsets import VisibleToMixin


class AttributionSerializer(serializers.ModelSerializer):
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    # The metaclass pops declared fields off the class, so `source` does not shadow `Field.source`.
    source = serializers.SerializerMethodField(  # type: ignore[assignment]
        help_text="What failed: a run's finding (code, subject, run), a claim (number) or a blacklisting "
        "(connector)."
    )
    component_serial = serializers.CharField(source="component.serial", read_only=True, allow_null=True)
    lot_code = serializers.CharField(source="component.lot.lot_code", read_only=True, allow_null=True)
    connector_name = serializers.CharField(source="connector.name", read_only=True, allow_null=True)
    confirmed = serializers.SerializerMethodField(help_text="Whether a PM confirmed or corrected it.")
    confirmed_by: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Attribution
        fields = [
            "id",
            "server",
            "server_hostname",
            "stage",
            "occurred_at",
            "source",
            "proposed_cause",
            "proposed_reason",
            "cause",
            "component",
            "component_serial",
            "lot_code",
            "connector",
            "connector_name",
            "confirmed",
            "confirmed_by",
            "confirmed_at",
            "note",
            "created_at",
        ]
        read_only_fields = fields

    def get_source(self, attribution: Attribution) -> dict[str, Any]:
        finding, claim = attribution.finding, attribution.claim
        if finding is not None:
            return {
                "kind": "finding",
                "finding": finding.pk,
                "code": finding.code,
                "subject": finding.subject,
                "run": finding.run_id,
            }
        if claim is not None:
            return {"kind": "claim", "claim": claim.pk, "number": claim.number}
        blacklist = attribution.blacklist
        return {
            "kind": "blacklist",
            "blacklist": attribution.blacklist_id,
            "connector": blacklist.connector.name if blacklist is not None else None,
            "reason": blacklist.reason if blacklist is not None else None,
        }

    def get_confirmed(self, attribution: Attribution) -> bool:
        return attribution.confirmed_at is not None


class AttributeSerializer(serializers.Serializer):
    cause = serializers.ChoiceField(choices=FailureCause.choices)
    component = serializers.PrimaryKeyRelatedField(
        queryset=Component.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        help_text="For a component cause: one installed in the server at some time (default: the one named).",
    )
    connector = serializers.PrimaryKeyRelatedField(
        queryset=Connector.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        help_text="For a connector cause: one of the server's (default: the one named).",
    )
    note = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=5000, help_text="Required for a correction."
    )


class AttributionViewSet(
    VisibleToMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """What caused each failure, proposed by the rules; a PM confirms or corrects it (PMs only)."""

    queryset = Attribution.objects.select_related(
        "server", "finding", "claim", "blacklist__connector", "component__lot", "connector", "confirmed_by"
    )
    serializer_class = AttributionSerializer
    filterset_class = AttributionFilter
    ordering_fields = ["occurred_at", "id"]
    ordering = ["-occurred_at", "-id"]

    attribute = transition_action(
        "attribute",
        service=attribution_confirm,
        subject="attribution",
        body=AttributeSerializer,
        response=AttributionSerializer,
        summary="Confirm the cause (the same as now) or correct it (another, with a note): audited "
        "(PMs only).",
    )
