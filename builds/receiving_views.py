"""The bench's receiving page (/bench/purchase-orders/<pk>/receive/, `bench:po-receive`): the partner
whose workshop a purchase order is delivered to receives its serials by lot.

The page is inventory's (inventory.receiving_page), shared with the PM's; here it is for whoever has a
bench (customers and outsiders: 404), on the purchase orders delivered to a workshop the user receives
for (`PurchaseOrder.objects.visible_to(user, purpose=RECEIVE)`): another partner's PO, or one delivered
to our own warehouse, is a 404.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from builds.views import BenchMixin
from inventory.models import PurchaseOrder
from inventory.receiving_page import ReceivePageView


class BenchReceiveView(BenchMixin, ReceivePageView):
    """Receive a delivery to the user's workshop, by lot."""

    url_name = "bench:po-receive"

    def purchase_orders(self, request: HttpRequest) -> QuerySet[PurchaseOrder]:
        return super().purchase_orders(request).filter(deliver_to__isnull=False)

    def back_link(self, po: PurchaseOrder) -> tuple[str, str]:
        return reverse("bench:list"), _("Builds on the bench")
