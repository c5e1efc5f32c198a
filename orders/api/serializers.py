"""Serializers of the orders app. Status is read-only everywhere: it changes through actions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from inventory.models import Part
from orders.choices import ModelPreset
from orders.formulas import ROI_BOUNDS, SIZING_BOUNDS, Bound
from orders.models import (
    ROI_INPUT_HELP,
    ROI_STORED_INPUTS,
    WORKLOAD_FIELDS,
    ConfigurationLine,
    Order,
    ROIAssessment,
    ServerConfiguration,
    Workload,
)
from werkbank.api.serializers import AudienceFieldsMixin, VisiblePrimaryKeyField
from werkbank.models import Organization


class ConfigurationLineSerializer(serializers.ModelSerializer):
    part = VisiblePrimaryKeyField(Part)
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
            "burnin_hours",
            "usable_psu_w",
            "lines",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        extra_kwargs = {
            "name": {"validators": []},
            "psu_count": {"min_value": 1},
            "psu_rating_w": {"min_value": 1},
            "burnin_hours": {"min_value": 72},
        }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        count = attrs.get("psu_count", getattr(self.instance, "psu_count", None))
        default = ServerConfiguration._meta.get_field("psu_redundant").get_default()  # N+1, as the model says
        redundant = attrs.get("psu_redundant", getattr(self.instance, "psu_redundant", default))
        if count is not None and redundant >= count:
            raise serializers.ValidationError(
                {"psu_redundant": f"must be fewer than the {count} installed PSUs."}
            )
        return attrs


class OrderSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    customer = VisiblePrimaryKeyField(Organization)
    configuration = VisiblePrimaryKeyField(ServerConfiguration)
    customer_name = serializers.CharField(source="customer.name", read_only=True)
    configuration_name = serializers.CharField(source="configuration.name", read_only=True)
    status_display = serializers.CharField(source="get_status_display", read_only=True)
    allowed_transitions = serializers.SerializerMethodField()
    purchase_orders = serializers.SlugRelatedField(
        source="purchase_order_links", slug_field="purchase_order_id", many=True, read_only=True
    )

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
            "approval_override_reason",
            "circuit_v",
            "circuit_a",
            "circuit_phases",
            "spare_percent",
            "burnin_hours",
            "purchase_orders",
            "notes",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "id",
            "reference",
            "status",
            "approval_override_reason",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {
            "server_count": {"min_value": 1},
            "spare_percent": {"max_value": 100},
            "burnin_hours": {"min_value": 72},
        }
        # Why a PM overrode the gate, the PMs' notes, the POs and the PM workflow stay internal.
        pm_only_fields = ["approval_override_reason", "purchase_orders", "notes", "allowed_transitions"]

    def get_allowed_transitions(self, order: Order) -> list[str]:
        from orders.choices import TRANSITIONS

        return sorted(TRANSITIONS[order.status])


class TransitionSerializer(serializers.Serializer):
    """Input of a transition: an optional note, or the reason where one is required."""

    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class ProcureSerializer(TransitionSerializer):
    """Procurement input: optionally the partner workshop the purchase orders are delivered to."""

    deliver_to = VisiblePrimaryKeyField(
        Organization,
        pk_field=serializers.IntegerField(),
        required=False,
        allow_null=True,
        default=None,
        help_text="The id of the partner organization whose workshop the purchase orders go to.",
    )


class ApproveSerializer(TransitionSerializer):
    """Approval input: a note, and a written reason when failed gate checks are to be overridden."""

    override_reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


def _decimal(max_digits: int, places: int, **kwargs: Any) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=max_digits, decimal_places=places, **kwargs)


def _limits(bound: Bound, step: Decimal | int) -> dict[str, Any]:
    """min_value/max_value of a field from its bound in `orders.formulas`; an open end moves by one step."""
    low = Decimal(str(bound.low)) if isinstance(step, Decimal) else int(bound.low)
    high = Decimal(str(bound.high)) if isinstance(step, Decimal) else int(bound.high)
    return {
        "min_value": low + step if bound.low_open else low,
        "max_value": high - step if bound.high_open else high,
    }


def _roi_decimal(field: str, max_digits: int, places: int, **kwargs: Any) -> serializers.DecimalField:
    step = Decimal(1).scaleb(-places)
    kwargs.setdefault("help_text", ROI_INPUT_HELP[field])
    return _decimal(max_digits, places, **_limits(ROI_BOUNDS[field], step), **kwargs)


def _roi_integer(field: str, **kwargs: Any) -> serializers.IntegerField:
    kwargs.setdefault("help_text", ROI_INPUT_HELP[field])
    return serializers.IntegerField(**_limits(ROI_BOUNDS[field], 1), **kwargs)


class ROIInputSerializer(serializers.Serializer):
    """The inputs of an ROI computation. Money is a decimal in `currency`; fractions lie in [0, 1].

    Every input is bounded by `orders.formulas.ROI_BOUNDS` (a range no real order leaves); a value outside
    is a 400 naming the field.
    """

    currency = serializers.RegexField(r"^[A-Z]{3}$", default="EUR", help_text="ISO 4217 code, e.g. EUR")
    capex = _roi_decimal("capex", 14, 2)
    gpu_count = _roi_integer("gpu_count")
    price_per_gpu_hour = _roi_decimal("price_per_gpu_hour", 10, 4)
    utilization = _roi_decimal("utilization", 9, 4)
    platform_fee = _roi_decimal("platform_fee", 9, 4, default=Decimal("0"))
    power_active_kw = _roi_decimal("power_active_kw", 8, 3)
    power_idle_kw = _roi_decimal("power_idle_kw", 8, 3)
    energy_price_kwh = _roi_decimal("energy_price_kwh", 8, 4)
    pue = _roi_decimal("pue", 4, 2, default=Decimal("1"))
    colo_month = _roi_decimal("colo_month", 14, 2, default=Decimal("0"))
    other_opex_month = _roi_decimal("other_opex_month", 14, 2, default=Decimal("0"))
    horizon_months = _roi_integer("horizon_months", default=36)
    discount_rate_annual = _roi_decimal("discount_rate_annual", 9, 4, default=Decimal("0.10"))
    residual_value = _roi_decimal("residual_value", 14, 2, default=Decimal("0"))
    rent_price_per_gpu_hour = _roi_decimal("rent_price_per_gpu_hour", 10, 4, required=False, allow_null=True)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class ROIResultSerializer(serializers.Serializer):
    """Computed figures. payback_months is null when the server never pays back (net ≤ 0)."""

    hours_per_month = serializers.IntegerField()
    revenue_month = serializers.FloatField()
    avg_power_kw = serializers.FloatField()
    energy_month = serializers.FloatField()
    opex_month = serializers.FloatField()
    net_month = serializers.FloatField()
    payback_months = serializers.FloatField(allow_null=True)
    pays_back = serializers.BooleanField()
    meets_target = serializers.BooleanField()
    npv = serializers.FloatField()
    irr_annual = serializers.FloatField(allow_null=True)
    breakeven_utilization_target = serializers.FloatField(allow_null=True)
    breakeven_utilization_opex = serializers.FloatField(allow_null=True)
    buy_vs_rent_breakeven_utilization = serializers.FloatField(allow_null=True)
    breakeven_month = serializers.IntegerField(allow_null=True)
    cashflows = serializers.ListField(child=serializers.FloatField())


class ROIAssessmentSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    order_reference = serializers.CharField(source="order.reference", read_only=True)

    class Meta:
        model = ROIAssessment
        fields = [
            "id",
            "order",
            "order_reference",
            "version",
            "created_by",
            "created_at",
            "note",
            "currency",
            *ROI_STORED_INPUTS,
            "hours_per_month",
            "revenue_month",
            "energy_month",
            "net_month",
            "payback_months",
            "npv",
            "irr_annual",
            "breakeven_utilization_target",
            "breakeven_utilization_opex",
            "buy_vs_rent_breakeven_utilization",
        ]
        read_only_fields = fields
        pm_only_fields = ["note", "created_by"]


class WorkloadSerializer(serializers.ModelSerializer):
    preset = serializers.ChoiceField(
        choices=ModelPreset.choices, required=False, allow_blank=True, default=""
    )
    overhead_fraction = _decimal(
        4, 3, min_value=Decimal("0"), max_value=Decimal("1"), default=Decimal("0.12")
    )

    class Meta:
        model = Workload
        fields = [*WORKLOAD_FIELDS, "updated_at"]
        read_only_fields = ["updated_at"]
        # Every number within `orders.formulas.SIZING_BOUNDS`; outside is a 400 naming the field.
        extra_kwargs = {
            "params_b": _limits(SIZING_BOUNDS["params_b"], Decimal("0.001")),
            **{
                name: _limits(SIZING_BOUNDS[name], 1)
                for name in (
                    "layers",
                    "kv_heads",
                    "head_dim",
                    "mla_latent_dim",
                    "context_tokens",
                    "concurrency",
                )
            },
            "tensor_parallel_gpus": _limits(SIZING_BOUNDS["tensor_parallel_gpus"], 1),
        }


class SizingResultSerializer(serializers.Serializer):
    """VRAM sizing: GB = 10^9 bytes, GiB = 2^30 bytes."""

    weights_gb = serializers.FloatField()
    weights_gib = serializers.FloatField()
    kv_bytes_per_token = serializers.IntegerField()
    kv_cache_gb = serializers.FloatField()
    kv_cache_gib = serializers.FloatField()
    overhead_gb = serializers.FloatField()
    total_gb = serializers.FloatField()
    total_gib = serializers.FloatField()
    per_gpu_gb = serializers.FloatField()
    per_gpu_gib = serializers.FloatField()
    total_vram_gb = serializers.FloatField(allow_null=True)
    fits = serializers.BooleanField(allow_null=True)
    headroom_gb = serializers.FloatField(allow_null=True)


class WorkloadWithSizingSerializer(serializers.Serializer):
    workload = WorkloadSerializer()
    sizing = SizingResultSerializer()


class GateCheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    ok = serializers.BooleanField()
    summary = serializers.CharField()
    numbers = serializers.DictField()


class ApprovalChecksSerializer(AudienceFieldsMixin, serializers.Serializer):
    approvable = serializers.BooleanField()
    override_reason = serializers.CharField()
    checks = GateCheckSerializer(many=True)

    class Meta:
        pm_only_fields = ["override_reason"]


class TransitionCheckSerializer(serializers.Serializer):
    action = serializers.CharField(help_text="POST /api/v1/orders/{id}/<action>/ (underscores as dashes).")
    target = serializers.CharField()
    ready = serializers.BooleanField()
    missing = serializers.ListField(child=serializers.CharField())
    overridable = serializers.BooleanField(help_text="A PM may go ahead with a written override reason.")
    needs_reason = serializers.BooleanField()


class TransitionChecksSerializer(serializers.Serializer):
    order = serializers.CharField()
    status = serializers.CharField()
    transitions = TransitionCheckSerializer(many=True)
