"""Order statuses and their transition map (README.md, Lifecycle)."""

from django.db import models
from django.utils.translation import pgettext_lazy


class OrderStatus(models.TextChoices):
    DRAFT = "draft", pgettext_lazy("order status", "Draft")
    ROI_REVIEW = "roi_review", pgettext_lazy("order status", "ROI review")
    APPROVED = "approved", pgettext_lazy("order status", "Approved")
    PROCUREMENT = "procurement", pgettext_lazy("order status", "Procurement")
    ASSEMBLY = "assembly", pgettext_lazy("order status", "Assembly")
    BURN_IN = "burn_in", pgettext_lazy("order status", "Burn-in")
    DEPLOYMENT = "deployment", pgettext_lazy("order status", "Deployment")
    HANDED_OVER = "handed_over", pgettext_lazy("order status", "Handed over")
    CLOSED = "closed", pgettext_lazy("order status", "Closed")
    REJECTED = "rejected", pgettext_lazy("order status", "Rejected")
    CANCELLED = "cancelled", pgettext_lazy("order status", "Cancelled")


TRANSITIONS: dict[str, frozenset[str]] = {
    OrderStatus.DRAFT: frozenset({OrderStatus.ROI_REVIEW, OrderStatus.CANCELLED}),
    OrderStatus.ROI_REVIEW: frozenset({OrderStatus.APPROVED, OrderStatus.REJECTED, OrderStatus.CANCELLED}),
    OrderStatus.APPROVED: frozenset({OrderStatus.PROCUREMENT, OrderStatus.CANCELLED}),
    OrderStatus.PROCUREMENT: frozenset({OrderStatus.ASSEMBLY, OrderStatus.CANCELLED}),
    OrderStatus.ASSEMBLY: frozenset({OrderStatus.BURN_IN}),
    OrderStatus.BURN_IN: frozenset({OrderStatus.DEPLOYMENT}),
    OrderStatus.DEPLOYMENT: frozenset({OrderStatus.HANDED_OVER}),
    OrderStatus.HANDED_OVER: frozenset({OrderStatus.CLOSED}),
    OrderStatus.CLOSED: frozenset(),
    OrderStatus.REJECTED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}

#: Each transition's action name (API `POST /orders/{id}/<action>/`, admin action, service `order_<action>`)
#: and the status it leads to.
TRANSITION_ACTIONS: dict[str, str] = {
    "submit": OrderStatus.ROI_REVIEW,
    "approve": OrderStatus.APPROVED,
    "reject": OrderStatus.REJECTED,
    "procure": OrderStatus.PROCUREMENT,
    "start_assembly": OrderStatus.ASSEMBLY,
    "start_burn_in": OrderStatus.BURN_IN,
    "start_deployment": OrderStatus.DEPLOYMENT,
    "hand_over": OrderStatus.HANDED_OVER,
    "close": OrderStatus.CLOSED,
    "cancel": OrderStatus.CANCELLED,
}
#: Transitions that need a written reason instead of an optional note.
REASON_REQUIRED = frozenset({"reject", "cancel"})

#: Statuses in which the order's terms (configuration, count, warranty) may still be edited.
EDITABLE = frozenset({OrderStatus.DRAFT})


class WarrantyTerm(models.IntegerChoices):
    THREE_YEARS = 36, "3 years"
    FIVE_YEARS = 60, "5 years"


class WeightDtype(models.TextChoices):
    FP32 = "fp32", "FP32 (4 bytes)"
    BF16 = "bf16", "BF16 (2 bytes)"
    FP16 = "fp16", "FP16 (2 bytes)"
    FP8 = "fp8", "FP8 (1 byte)"
    INT8 = "int8", "INT8 (1 byte)"
    INT4 = "int4", "INT4 (0.5 byte)"
    FP4 = "fp4", "FP4 (0.5 byte)"


class KVDtype(models.TextChoices):
    FP16 = "fp16", "FP16 (2 bytes)"
    BF16 = "bf16", "BF16 (2 bytes)"
    FP8 = "fp8", "FP8 (1 byte)"


class ModelPreset(models.TextChoices):
    LLAMA_31_8B = "llama-3.1-8b", "Llama-3.1-8B"
    LLAMA_31_70B = "llama-3.1-70b", "Llama-3.1-70B"
    QWEN_25_72B = "qwen2.5-72b", "Qwen2.5-72B"
    MIXTRAL_8X7B = "mixtral-8x7b", "Mixtral-8x7B"
    DEEPSEEK_V3 = "deepseek-v3", "DeepSeek-V3 (MLA)"
    GLM_46 = "glm-4.6", "GLM-4.6"
