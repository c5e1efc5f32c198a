"""Order models: server configurations (bill of materials and PSU layout) and customer orders."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.deconstruct import deconstructible
from django.utils.translation import gettext_lazy

from inventory.models import Part, PurchaseOrder
from orders.choices import KVDtype, ModelPreset, OrderStatus, WarrantyTerm, WeightDtype
from orders.formulas import ROI_BOUNDS, SIZING_BOUNDS, Bound
from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import OrganizationKind
from werkbank.models import AuditEvent, Organization, member_organizations


class ServerConfigurationQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> ServerConfigurationQuerySet:
        # A customer sees the configurations its orders are built to.
        customers = member_organizations(user, kind=OrganizationKind.CUSTOMER)
        return self.filter(orders__customer__in=customers).distinct()


class ServerConfiguration(models.Model):
    """What one server is built from: a bill of materials of parts × quantity, and its PSU layout."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    psu_count = models.PositiveSmallIntegerField("PSUs installed")
    psu_rating_w = models.PositiveIntegerField("PSU rating (W)")
    psu_redundant = models.PositiveSmallIntegerField(
        "Redundant PSUs", default=1, help_text="How many PSUs may fail without loss of power (N+1 → 1)."
    )
    burnin_hours = models.PositiveSmallIntegerField(
        "Burn-in (h)",
        default=72,
        help_text="Hours of full load under all GPUs that every server of this configuration gets "
        "(seed 001: at least 72).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ServerConfigurationQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(psu_count__gte=1),
                name="%(app_label)s_%(class)s_psu_count_positive",
                violation_error_message="A configuration needs at least one PSU.",
            ),
            models.CheckConstraint(
                condition=Q(psu_rating_w__gte=1),
                name="%(app_label)s_%(class)s_psu_rating_positive",
                violation_error_message="The PSU rating must be positive.",
            ),
            models.CheckConstraint(
                condition=Q(psu_redundant__lt=F("psu_count")),
                name="%(app_label)s_%(class)s_redundancy_below_count",
                violation_error_message="Redundant PSUs must be fewer than installed PSUs.",
            ),
            models.CheckConstraint(
                condition=Q(burnin_hours__gte=72),
                name="%(app_label)s_%(class)s_burnin_at_least_72h",
                violation_error_message="Every customer is promised at least 72 hours of burn-in.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def usable_psu_w(self) -> int:
        """(installed − redundant) × rating: 5 × 1600 W in N+1 gives 6400 W (the power budget)."""
        return (self.psu_count - self.psu_redundant) * self.psu_rating_w


class ConfigurationLine(models.Model):
    """One line of a configuration's bill of materials."""

    configuration = models.ForeignKey(ServerConfiguration, on_delete=models.CASCADE, related_name="lines")
    part = models.ForeignKey(Part, on_delete=models.PROTECT, related_name="configuration_lines")
    quantity = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["configuration_id", "part__category", "part__mpn"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "part"],
                name="%(app_label)s_%(class)s_unique_part",
                violation_error_message="This part is already on the bill of materials.",
            ),
            models.CheckConstraint(
                condition=Q(quantity__gte=1),
                name="%(app_label)s_%(class)s_quantity_positive",
                violation_error_message="Quantity must be at least 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quantity}× {self.part}"


class OrderQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> OrderQuerySet:
        return self.filter(customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))


class Order(models.Model):
    """A customer's order of one or more servers of one configuration."""

    reference = models.CharField(max_length=16, unique=True, editable=False)
    customer = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="orders")
    configuration = models.ForeignKey(ServerConfiguration, on_delete=models.PROTECT, related_name="orders")
    server_count = models.PositiveSmallIntegerField("Servers")
    warranty_months = models.PositiveSmallIntegerField(
        choices=WarrantyTerm.choices, default=WarrantyTerm.THREE_YEARS
    )
    status = models.CharField(
        max_length=16, choices=OrderStatus.choices, default=OrderStatus.DRAFT, editable=False
    )
    notes = models.TextField(blank=True)
    circuit_v = models.PositiveSmallIntegerField(
        "Circuit voltage (V)",
        null=True,
        blank=True,
        help_text="Line-to-neutral voltage of the circuit per server.",
    )
    circuit_a = models.PositiveSmallIntegerField("Circuit breaker (A)", null=True, blank=True)
    circuit_phases = models.PositiveSmallIntegerField(
        "Circuit phases", default=1, choices=[(1, "1"), (3, "3")]
    )
    spare_percent = models.PositiveSmallIntegerField(
        default=0, help_text="Extra components ordered as spares, in percent of the bill of materials."
    )
    burnin_hours = models.PositiveSmallIntegerField(
        "Burn-in (h)",
        default=72,
        help_text="Hours of full load under all GPUs promised to the customer (seed 001: at least 72). "
        "The configuration may promise more; the longer of the two counts.",
    )
    approval_override_reason = models.TextField(
        blank=True, editable=False, help_text="Why a PM approved although a gate check failed."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrderQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(server_count__gte=1),
                name="%(app_label)s_%(class)s_server_count_positive",
                violation_error_message="An order needs at least one server.",
            ),
            models.CheckConstraint(
                condition=Q(warranty_months__in=WarrantyTerm.values),
                name="%(app_label)s_%(class)s_warranty_term_valid",
                violation_error_message="The warranty term is 36 or 60 months.",
            ),
            models.CheckConstraint(
                condition=Q(status__in=OrderStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown order status.",
            ),
            models.CheckConstraint(
                condition=Q(burnin_hours__gte=72),
                name="%(app_label)s_%(class)s_burnin_at_least_72h",
                violation_error_message="Every customer is promised at least 72 hours of burn-in.",
            ),
            models.CheckConstraint(
                condition=Q(spare_percent__lte=100),
                name="%(app_label)s_%(class)s_spare_percent_range",
                violation_error_message="Spares are at most 100 % of the bill of materials.",
            ),
            models.CheckConstraint(
                condition=Q(circuit_phases__in=[1, 3]),
                name="%(app_label)s_%(class)s_circuit_phases_valid",
                violation_error_message="A circuit has 1 or 3 phases.",
            ),
            models.CheckConstraint(
                condition=Q(circuit_v__isnull=True, circuit_a__isnull=True)
                | Q(circuit_v__gte=1, circuit_a__gte=1),
                name="%(app_label)s_%(class)s_circuit_complete",
                violation_error_message="Give the circuit's voltage and breaker current, or neither.",
            ),
            models.CheckConstraint(
                condition=Q(reference__regex=r"^WB-[0-9]{4}-[0-9]{4,}$"),
                name="%(app_label)s_%(class)s_reference_format",
                violation_error_message="The reference has the form WB-YYYY-NNNN.",
            ),
        ]
        indexes = [
            models.Index(fields=["status"], name="order_status"),
            models.Index(fields=["-created_at", "-id"], name="order_newest"),
        ]

    def __str__(self) -> str:
        return self.reference


class OrderPurchaseOrder(models.Model):
    """Which purchase orders serve an order. Kept on the orders side: inventory knows nothing of orders."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="purchase_order_links")
    purchase_order = models.OneToOneField(PurchaseOrder, on_delete=models.PROTECT, related_name="order_link")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["order_id", "purchase_order_id"]

    def __str__(self) -> str:
        return f"{self.order} ← {self.purchase_order}"


class StatusNotice(models.Model):
    """The e-mail sent to a customer's members for one status transition.

    One row per transition (its audit event): a re-delivered notification task finds the row and sends
    nothing more.
    """

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="status_notices")
    event = models.OneToOneField(AuditEvent, on_delete=models.PROTECT, related_name="+")
    recipients = models.JSONField(default=list)
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sent_at"]

    def __str__(self) -> str:
        return f"{self.order} notice for event {self.event_id}"


_BOUND_TABLES: dict[str, dict[str, Bound]] = {"roi": ROI_BOUNDS, "sizing": SIZING_BOUNDS}


@deconstructible
class BoundValidator:
    """A field's range from `orders.formulas` (ROI_BOUNDS or SIZING_BOUNDS): the model forms' check."""

    def __init__(self, table: str, field: str) -> None:
        self.table = table
        self.field = field

    def __call__(self, value: Any) -> None:
        if value is None:
            return
        bound = _BOUND_TABLES[self.table][self.field]
        number = float(value)
        too_low = number <= bound.low if bound.low_open else number < bound.low
        too_high = number >= bound.high if bound.high_open else number > bound.high
        if too_low or too_high:
            raise ValidationError(
                "Must be within %(range)s (%(reason)s).",
                code="out_of_bounds",
                params={"range": bound.describe(), "reason": bound.reason},
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoundValidator) and (self.table, self.field) == (other.table, other.field)


def bounded(table: str, field: str) -> list[BoundValidator]:
    return [BoundValidator(table, field)]


def bound_constraints(table: str, fields: tuple[str, ...], *, nullable: tuple[str, ...] = ()) -> list[Any]:
    """One CheckConstraint `<app>_<model>_<field>_range` per field: the same range in the database."""
    constraints = []
    for field in fields:
        bound = _BOUND_TABLES[table][field]
        low = Decimal(str(bound.low))
        high = Decimal(str(bound.high))
        condition = Q(**{f"{field}__{'gt' if bound.low_open else 'gte'}": low}) & Q(
            **{f"{field}__{'lt' if bound.high_open else 'lte'}": high}
        )
        if field in nullable:
            condition = Q(**{f"{field}__isnull": True}) | condition
        constraints.append(
            models.CheckConstraint(
                condition=condition,
                name=f"%(app_label)s_%(class)s_{field}_range",
                violation_error_message=f"{field} must be within {bound.describe()} ({bound.reason}).",
            )
        )
    return constraints


def _money(**kwargs: Any) -> models.DecimalField:
    return models.DecimalField(max_digits=14, decimal_places=2, **kwargs)


def _ratio(**kwargs: Any) -> models.DecimalField:
    return models.DecimalField(max_digits=9, decimal_places=4, **kwargs)


#: The inputs of an ROI assessment, in the order every form, page and API shows them, with their labels.
#: The one list of them: the services, the serializers, the admin and the gate report read it from here.
ROI_INPUT_LABELS = [
    ("capex", gettext_lazy("Capex")),
    ("gpu_count", gettext_lazy("GPUs")),
    ("price_per_gpu_hour", gettext_lazy("Price per GPU-hour")),
    ("utilization", gettext_lazy("Utilisation (0–1)")),
    ("platform_fee", gettext_lazy("Platform fee (0–1)")),
    ("power_active_kw", gettext_lazy("Power at full load (kW)")),
    ("power_idle_kw", gettext_lazy("Power at idle (kW)")),
    ("energy_price_kwh", gettext_lazy("Electricity price per kWh")),
    ("pue", gettext_lazy("PUE (≥ 1)")),
    ("colo_month", gettext_lazy("Colocation per month")),
    ("other_opex_month", gettext_lazy("Other opex per month")),
    ("horizon_months", gettext_lazy("Horizon (months)")),
    ("discount_rate_annual", gettext_lazy("Discount rate per year (0–1)")),
    ("residual_value", gettext_lazy("Residual value")),
    ("target_payback_months", gettext_lazy("Target payback (months)")),
    ("rent_price_per_gpu_hour", gettext_lazy("Rental price to compare (per GPU-hour)")),
]
#: What each input means and in which unit: the admin form's and the API schema's help text.
ROI_INPUT_HELP = {
    "capex": "Purchase price of the servers, in the assessment's currency.",
    "gpu_count": "GPUs that earn rent, across all servers of the order.",
    "price_per_gpu_hour": "What a renter pays per GPU and hour, before the platform's fee, in the currency.",
    "utilization": "Share of hours rented, 0–1: 0.75 means 75 % of the month's 730 hours.",
    "platform_fee": "Share of the revenue the rental platform keeps, 0–1 (0.25 is 25 %).",
    "power_active_kw": "Wall power of all the servers under full load, in kW (1,000 W = 1 kW).",
    "power_idle_kw": "Wall power while not rented, in kW; at most the power at full load.",
    "energy_price_kwh": "Electricity price per kWh at the meter, in the currency.",
    "pue": "Power usage effectiveness: facility power / IT power, ≥ 1 (1 when the colocation price "
    "includes cooling).",
    "colo_month": "Rack space, power feed and uplink per month, in the currency.",
    "other_opex_month": "Insurance, monitoring and maintenance per month, in the currency.",
    "horizon_months": "Months over which the NPV and the IRR are computed (the warranty term: 36 or 60).",
    "discount_rate_annual": "Cost of capital per year, 0–1 (0.10 is 10 %).",
    "residual_value": "What the servers are worth at the end of the horizon, in the currency.",
    "target_payback_months": "The approval gate: the payback must not exceed it (from the settings).",
    "rent_price_per_gpu_hour": "Optional: what renting the same GPUs would cost per GPU-hour, for the "
    "buy-vs-rent break-even.",
}


def _input(name: str) -> dict[str, str]:
    """The label (with its unit) and help text of an ROI input, from the two tables above."""
    return {"verbose_name": dict(ROI_INPUT_LABELS)[name], "help_text": ROI_INPUT_HELP[name]}


#: Every stored input, the target payback included (`orders.formulas.ROIInputs` takes all of them).
ROI_STORED_INPUTS = tuple(name for name, _ in ROI_INPUT_LABELS)
#: What a PM enters; the target payback comes from the settings (WERKBANK_PAYBACK_TARGET_MONTHS).
ROI_INPUT_FIELDS = tuple(name for name in ROI_STORED_INPUTS if name != "target_payback_months")


class ROIAssessmentQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> ROIAssessmentQuerySet:
        return self.filter(order__customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))


class ROIAssessment(models.Model):
    """One version of an order's ROI: the inputs and the outputs of `orders.formulas.roi`.

    Every re-assessment is a new row with the next version; the latest counts for the approval gate.
    Formulas and H = 730 hours per month: `orders/formulas/investment.py`.
    """

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="roi_assessments")
    version = models.PositiveIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)
    # Inputs
    currency = models.CharField(max_length=3, default="EUR", help_text="ISO 4217 code, e.g. EUR.")
    capex = _money(validators=bounded("roi", "capex"), **_input("capex"))
    gpu_count = models.PositiveIntegerField(validators=bounded("roi", "gpu_count"), **_input("gpu_count"))
    price_per_gpu_hour = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        validators=bounded("roi", "price_per_gpu_hour"),
        **_input("price_per_gpu_hour"),
    )
    utilization = _ratio(validators=bounded("roi", "utilization"), **_input("utilization"))
    platform_fee = _ratio(default=0, validators=bounded("roi", "platform_fee"), **_input("platform_fee"))
    power_active_kw = models.DecimalField(
        max_digits=8,
        decimal_places=3,
        validators=bounded("roi", "power_active_kw"),
        **_input("power_active_kw"),
    )
    power_idle_kw = models.DecimalField(
        max_digits=8,
        decimal_places=3,
        validators=bounded("roi", "power_idle_kw"),
        **_input("power_idle_kw"),
    )
    energy_price_kwh = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        validators=bounded("roi", "energy_price_kwh"),
        **_input("energy_price_kwh"),
    )
    pue = models.DecimalField(
        max_digits=4, decimal_places=2, default=1, validators=bounded("roi", "pue"), **_input("pue")
    )
    colo_month = _money(default=0, validators=bounded("roi", "colo_month"), **_input("colo_month"))
    other_opex_month = _money(
        default=0, validators=bounded("roi", "other_opex_month"), **_input("other_opex_month")
    )
    horizon_months = models.PositiveSmallIntegerField(
        default=36, validators=bounded("roi", "horizon_months"), **_input("horizon_months")
    )
    discount_rate_annual = _ratio(
        default=0, validators=bounded("roi", "discount_rate_annual"), **_input("discount_rate_annual")
    )
    residual_value = _money(
        default=0, validators=bounded("roi", "residual_value"), **_input("residual_value")
    )
    target_payback_months = models.DecimalField(
        max_digits=6,
        decimal_places=1,
        validators=bounded("roi", "target_payback_months"),
        **_input("target_payback_months"),
    )
    rent_price_per_gpu_hour = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=bounded("roi", "rent_price_per_gpu_hour"),
        **_input("rent_price_per_gpu_hour"),
    )
    # Outputs (payback null: never pays back)
    hours_per_month = models.PositiveSmallIntegerField()
    revenue_month = _money()
    energy_month = _money()
    net_month = _money()
    payback_months = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    npv = _money()
    #: Up to 10^12 − 1 (an IRR of 900 % a month, the top of the search in `orders.formulas`).
    irr_annual = models.DecimalField(max_digits=16, decimal_places=4, null=True, blank=True)
    breakeven_utilization_target = _ratio(null=True, blank=True)
    breakeven_utilization_opex = _ratio(null=True, blank=True)
    buy_vs_rent_breakeven_utilization = _ratio(null=True, blank=True)

    objects = ROIAssessmentQuerySet.as_manager()

    class Meta:
        verbose_name = "ROI assessment"
        ordering = ["order_id", "-version"]
        get_latest_by = "version"
        constraints = [
            models.UniqueConstraint(
                fields=["order", "version"],
                name="%(app_label)s_%(class)s_unique_version",
                violation_error_message="This version of the order's ROI assessment already exists.",
            ),
            *bound_constraints("roi", ROI_STORED_INPUTS, nullable=("rent_price_per_gpu_hour",)),
            models.CheckConstraint(
                condition=Q(power_idle_kw__lte=F("power_active_kw")),
                name="%(app_label)s_%(class)s_idle_below_active",
                violation_error_message="The power at idle must not exceed the power at full load.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order} ROI v{self.version}"

    @property
    def pays_back(self) -> bool:
        return self.payback_months is not None


class WorkloadQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> WorkloadQuerySet:
        return self.filter(order__customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))


#: What describes a workload, in the order the forms, the API and the audit trail give it: the one list.
WORKLOAD_FIELDS = (
    "preset",
    "params_b",
    "layers",
    "kv_heads",
    "head_dim",
    "mla_latent_dim",
    "weights_dtype",
    "kv_dtype",
    "context_tokens",
    "concurrency",
    "tensor_parallel_gpus",
    "overhead_fraction",
)


#: The workload's numeric fields, each bounded by `orders.formulas.SIZING_BOUNDS`.
WORKLOAD_BOUNDED_FIELDS = tuple(name for name in WORKLOAD_FIELDS if name in SIZING_BOUNDS)


class Workload(models.Model):
    """The model the customer will run, for the VRAM sizing check: a preset or an explicit architecture."""

    order = models.OneToOneField(Order, on_delete=models.CASCADE, related_name="workload")
    preset = models.CharField(max_length=32, choices=ModelPreset.choices, blank=True)
    params_b = models.DecimalField(
        "Parameters (billions)",
        max_digits=9,
        decimal_places=3,
        null=True,
        blank=True,
        validators=bounded("sizing", "params_b"),
    )
    layers = models.PositiveIntegerField(null=True, blank=True, validators=bounded("sizing", "layers"))
    kv_heads = models.PositiveIntegerField(
        "KV heads", null=True, blank=True, validators=bounded("sizing", "kv_heads")
    )
    head_dim = models.PositiveIntegerField(null=True, blank=True, validators=bounded("sizing", "head_dim"))
    mla_latent_dim = models.PositiveIntegerField(
        "MLA latent width", null=True, blank=True, validators=bounded("sizing", "mla_latent_dim")
    )
    weights_dtype = models.CharField(max_length=8, choices=WeightDtype.choices, default=WeightDtype.BF16)
    kv_dtype = models.CharField(max_length=8, choices=KVDtype.choices, default=KVDtype.FP16)
    context_tokens = models.PositiveIntegerField(validators=bounded("sizing", "context_tokens"))
    concurrency = models.PositiveIntegerField(default=1, validators=bounded("sizing", "concurrency"))
    tensor_parallel_gpus = models.PositiveSmallIntegerField(
        default=1, validators=bounded("sizing", "tensor_parallel_gpus")
    )
    overhead_fraction = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.12"),
        validators=bounded("sizing", "overhead_fraction"),
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkloadQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~Q(preset="")
                | Q(params_b__gt=0, layers__gte=1, kv_heads__gte=1, head_dim__gte=1)
                | Q(params_b__gt=0, layers__gte=1, mla_latent_dim__gte=1),
                name="%(app_label)s_%(class)s_architecture_complete",
                violation_error_message="Give a preset, or params, layers, KV heads, head dim (or MLA).",
            ),
            *bound_constraints(
                "sizing",
                WORKLOAD_BOUNDED_FIELDS,
                nullable=("params_b", "layers", "kv_heads", "head_dim", "mla_latent_dim"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order} workload: {self.preset or f'{self.params_b} B custom'}"
