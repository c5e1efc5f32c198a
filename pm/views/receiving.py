"""The PM's receiving page of a purchase order (/pm/purchase-orders/<pk>/receive/, `pm:po-receive`).

The page itself is inventory's (inventory.receiving_page), shared with the bench; here it is for PMs only
(anonymous: the login page; anyone else: 404, as pm.views.pipeline.pm_required), and "back" leads to the
purchase order in the admin.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from inventory.models import PurchaseOrder
from inventory.receiving_page import ReceivePageView
from werkbank.access import is_pm


class PurchaseOrderReceiveView(LoginRequiredMixin, ReceivePageView):
    """Receive serials by lot on any purchase order."""

    url_name = "pm:po-receive"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if request.user.is_authenticated and not is_pm(request.user):
            raise Http404("No such page.")
        return super().dispatch(request, *args, **kwargs)

    def back_link(self, po: PurchaseOrder) -> tuple[str, str]:
        return reverse("admin:inventory_purchaseorder_change", args=[po.pk]), _(
            "The purchase order in the admin"
        )
