"""Root URLs: the composition root, the one module of the core that imports the apps (see the layers
contract in pyproject.toml). Each app's API router joins the core's under /api/v1/, so a new app adds its
routes here without the core knowing it.
"""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from builds.api.urls import router as builds_router
from burnin.api.urls import router as burnin_router
from deployment.api.elevation import RackElevationFile
from deployment.api.urls import router as deployment_router
from inventory.api.urls import router as inventory_router
from orders.api.urls import router as orders_router
from pm.api.urls import router as pm_router
from warranty.api.urls import router as warranty_router
from werkbank.api.urls import router as core_router
from werkbank.views import LogoutView, healthz, home

admin.site.site_header = "Werkbank"
admin.site.site_title = "Werkbank"
admin.site.index_title = "Project management"

api_router = DefaultRouter()  # its root view at /api/v1/ lists every route below
for app_router in (
    core_router,
    inventory_router,
    orders_router,
    builds_router,
    burnin_router,
    deployment_router,
    warranty_router,
    pm_router,
):
    api_router.registry.extend(app_router.registry)

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("werkbank.api.urls")),
    # The elevation is a file: it answers without the router's trailing slash too, as an .svg link expects.
    path(
        "api/v1/racks/<int:pk>/elevation.svg",
        RackElevationFile.as_view({"get": "elevation"}),
        name="rack-elevation-file",
    ),
    path("api/v1/", include(api_router.urls)),
    path("pm/", include("pm.urls")),
    path("bench/", include("builds.urls")),
    path("burnin/", include("burnin.urls")),
    path("deployment/", include("deployment.urls")),
    path("portal/", include("portal.urls")),
    path("verify/", include("warranty.urls")),
    path("i18n/", include("django.conf.urls.i18n")),  # the frame's language switch (set_language)
    # The admin's login refuses non-staff users; partners (and customers) log in here.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
]

# A path under /api/ that names nothing answers 404 in JSON (found by the API fuzzer, tests/fuzz).
handler404 = "werkbank.api.not_found.not_found"
