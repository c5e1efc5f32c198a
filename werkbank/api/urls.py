"""The API: one router that holds every app's routes, plus authentication and the schema."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from builds.api.urls import router as builds_router
from inventory.api.urls import router as inventory_router
from orders.api.urls import router as orders_router
from werkbank.api.auth import LoginView, LogoutAllView, LogoutView
from werkbank.api.views import OrganizationViewSet

router = DefaultRouter()
router.register("organizations", OrganizationViewSet, basename="organization")
for app_router in (inventory_router, orders_router, builds_router):
    router.registry.extend(app_router.registry)

urlpatterns = [
    path("v1/auth/login/", LoginView.as_view(), name="knox_login"),
    path("v1/auth/logout/", LogoutView.as_view(), name="knox_logout"),
    path("v1/auth/logoutall/", LogoutAllView.as_view(), name="knox_logoutall"),
    path("v1/", include(router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]
