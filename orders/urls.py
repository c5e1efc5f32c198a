"""PM pages of the orders app, under /pm/ (the root URL configuration joins them with the portal's PM pages
into the `pm` namespace)."""

from django.urls import path

from orders.views import OrderROIView

urlpatterns = [
    path("orders/<int:pk>/roi/", OrderROIView.as_view(), name="order-roi"),
]
