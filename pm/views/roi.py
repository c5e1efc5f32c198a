"""The ROI page of an order: its gate figures and the cumulative cash flow."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.safestring import mark_safe
from django.views.generic import DetailView

from orders.charts import cashflow_svg
from orders.models import Order
from orders.selectors import assessment_result, order_gate_report
from werkbank.access import is_pm
from werkbank.views import VisibleToViewMixin


class PMOnlyMixin:
    """PM pages: anyone else gets a 404, as for an object outside their view."""

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        if request.user.is_authenticated and not is_pm(request.user):
            raise Http404("No such page.")
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]


class OrderROIView(VisibleToViewMixin, PMOnlyMixin, DetailView):
    """The order's gate: the cumulative cash flow as an SVG next to the ROI, sizing and power figures."""

    model = Order
    template_name = "pm/order_roi.html"
    context_object_name = "order"

    def get_queryset(self) -> Any:
        return super().get_queryset().select_related("customer", "configuration")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        report = order_gate_report(order=self.object)
        context.update(report)
        assessment = report["assessment"]
        if assessment is not None:
            result = assessment_result(assessment=assessment)
            context["chart"] = mark_safe(
                cashflow_svg(
                    cashflows=result.cashflows,
                    breakeven_month=result.breakeven_month,
                    currency=assessment.currency,
                )
            )
            context["result"] = result
        return context
