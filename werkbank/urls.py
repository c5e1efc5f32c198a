"""Root URLs."""

from django.contrib import admin
from django.urls import include, path

from werkbank.views import healthz

admin.site.site_header = "Werkbank"
admin.site.site_title = "Werkbank"
admin.site.index_title = "Project management"

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("werkbank.api.urls")),
    path("pm/", include("orders.urls")),
]
