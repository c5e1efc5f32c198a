"""The core's API: authentication, organizations, the schema and its docs.

The core knows no app: the root URL configuration (``werkbank/urls.py``) puts ``router`` together with
every app's router under ``/api/v1/``.
"""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from werkbank.api.auth import LoginView, LogoutAllView, LogoutView
from werkbank.api.views import OrganizationViewSet

router = SimpleRouter()
router.register("organizations", OrganizationViewSet, basename="organization")

urlpatterns = [
    path("v1/auth/login/", LoginView.as_view(), name="knox_login"),
    path("v1/auth/logout/", LogoutView.as_view(), name="knox_logout"),
    path("v1/auth/logoutall/", LogoutAllView.as_view(), name="knox_logoutall"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]
