"""Serializers of the orders app. Status is read-only everywhere: it changes through actions."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from inventory.models import Part
from orders.models import ConfigurationLine, Order, ServerConfiguration
from werkbank.models import Organization


class _VisibleQuerysetField(serializers.PrimaryKeyRelatedField):
    """A foreign key whose choices are the rows visible to the requesting user: no links to other tenants."""

    def __init__(self, model: Any, **kwargs: Any) -> None:
        self.model = model
        super().__init__(**kwargs)

    def get_queryset(self) -> Any:
        request = self.context.get("request")
        user = getattr(request, "user", None)
        return self.model.objects.visible_to(user)


class ConfigurationLineSerializer(serializers.ModelSerializer):
    part = _VisibleQuerysetField(Part)
    part_mpn = serializers.CharField(source="part.mpn", read_only=True)
    part_name = serializers.CharField(source="part.name", read_only=True)
    category = serializers.CharField(source="part.category", read_only=True)

    class Meta:
        model = ConfigurationLine
        fields = ["part", "part_mpn", "part_name", "category", "quantity"]
        extra_kwargs = {"quantity": {"min_value": 1}}


class ServerConfigurationSerializer(serializers.ModelSerializer):
    lines = ConfigurationLineSerializer(many=True)
    usable_psu_w = serializers.IntegerField(read_only=True)

    class Meta:
        model = ServerConfiguration
        fields = [
            "id",
            "name",
            "description",
            "psu_count",
            "psu_rating_w",
            "psu_redundant",
            "usable_psu_w",
            "lines",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        extra_kwargs = {
            "name": {"validators": []},
            "psu_count": {"min_value": 1},
            "psu_rating_w": {"min_value": 1},
        }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        count = attrs.get("psu_count", getattr(self.instance, "psu_count", None))
        redundant = attrs.get("psu_redundant", getattr(self.instance, "psu_redundant", 0))
        if count is not None and redundant >= count:
            raise serializers.ValidationError(
                {"psu_redundant": f"must be fewer than the {count} installed PSUs."}
            )
        return attrs


class OrderSerializer(serializers.ModelSerializer):
    customer = _VisibleQuerysetField(Organization)
    configuration = _VisibleQuerysetField(ServerConfiguration)
    customer_name = serializers.CharField(source="customer.name", read_only=True)
    configuration_name = serializers.CharField(source="configuration.name", read_only=True)
    status_display = serializers.CharField(source="get_status_display", read_only=True)
    allowed_transitions = serializers.SerializerMethodField()

    class Meta:
        model = Order
        fields = [
            "id",
            "reference",
            "customer",
            "customer_name",
            "configuration",
            "configuration_name",
            "server_count",
            "warranty_months",
            "status",
            "status_display",
            "allowed_transitions",
            "notes",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "reference", "status", "created_at", "updated_at"]
        extra_kwargs = {"server_count": {"min_value": 1}}

    def get_allowed_transitions(self, order: Order) -> list[str]:
        from orders.choices import TRANSITIONS

        return sorted(TRANSITIONS[order.status])


class TransitionSerializer(serializers.Serializer):
    """Input of a transition: an optional note, or the reason where one is required."""

    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
