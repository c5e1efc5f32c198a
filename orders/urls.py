"""PM pages of the orders app, under /pm/."""

from django.urls import path

from orders.views import OrderROIView

app_name = "pm"

urlpatterns = [
    path("orders/<int:pk>/roi/", OrderROIView.as_view(), name="order-roi"),
]
