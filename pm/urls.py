"""The PM's pages that span every app, under /pm/: the pipeline, the order page and its transitions, the
ROI page and the global search. Every PM page reverses as `pm:<name>`."""

from django.urls import URLPattern, path

from pm.views import pipeline
from pm.views.roi import OrderROIView
from pm.views.search import search_page

app_name = "pm"

urlpatterns: list[URLPattern] = [
    path("", pipeline.pipeline_page, name="pipeline"),
    path("search/", search_page, name="search"),
    path("orders/<int:pk>/", pipeline.order_page, name="order"),
    path("orders/<int:pk>/roi/", OrderROIView.as_view(), name="order-roi"),
    path("orders/<int:pk>/<slug:action>/", pipeline.order_transition, name="order-transition"),
]
