"""The PM's pages that span every app, under /pm/ (the pipeline, the order page, the search).

The root URL configuration joins these with the orders app's ROI page into one `pm` namespace, so every
PM page reverses as `pm:<name>` whichever app renders it.
"""

from django.urls import URLPattern, path

from portal.views import pm
from portal.views.search import search_page

urlpatterns: list[URLPattern] = [
    path("", pm.pipeline_page, name="pipeline"),
    path("search/", search_page, name="search"),
    path("orders/<int:pk>/", pm.order_page, name="order"),
    path("orders/<int:pk>/<slug:action>/", pm.order_transition, name="order-transition"),
]
