"""The PM's pages that span every app, under /pm/: the pipeline, the order page and its transitions, the
ROI page, the global search, the warranty report and the fleet's quality. Every PM page reverses as
`pm:<name>`."""

from django.urls import URLPattern, path

from pm.views import pipeline, quality, servers, warranty
from pm.views.receiving import PurchaseOrderReceiveView
from pm.views.roi import OrderROIView
from pm.views.search import search_page

app_name = "pm"

urlpatterns: list[URLPattern] = [
    path("", pipeline.pipeline_page, name="pipeline"),
    path("search/", search_page, name="search"),
    path("warranty/", warranty.warranty_page, name="warranty"),
    path("warranty/records.csv", warranty.warranty_csv, name="warranty-csv"),
    path("quality/", quality.quality_page, name="quality"),
    path("quality/<slug:kind>.csv", quality.quality_csv, name="quality-csv"),
    # A key holds ':' and a lot code may hold '/': the path converter takes both.
    path("quality/<slug:kind>/<path:key>/", quality.evidence_page, name="quality-evidence"),
    path("orders/<int:pk>/", pipeline.order_page, name="order"),
    path("orders/<int:pk>/roi/", OrderROIView.as_view(), name="order-roi"),
    path("orders/<int:pk>/assign/", servers.order_assign, name="order-assign"),
    path("servers/<int:pk>/pack/", servers.server_pack, name="server-pack"),
    path("servers/<int:pk>/hand-over/", servers.server_hand_over_view, name="server-hand-over"),
    path("purchase-orders/<int:pk>/receive/", PurchaseOrderReceiveView.as_view(), name="po-receive"),
    path("orders/<int:pk>/<slug:action>/", pipeline.order_transition, name="order-transition"),
]
