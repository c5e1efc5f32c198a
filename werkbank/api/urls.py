"""The core's API: authentication, organizations, the schema and its docs.

The core knows no app: the root URL configuration (``werkbank/urls.py``) puts ``router`` together with
every app's router under ``/api/v1/``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponseBase
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from werkbank.api.auth import LoginView, LogoutAllView, LogoutView
from werkbank.api.views import OrganizationViewSet


class _PublicDocsOnly:
    """The schema and its docs answer 404 unless settings.WERKBANK_PUBLIC_API_DOCS (off in production)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.WERKBANK_PUBLIC_API_DOCS:
            raise Http404("The API schema is not published here.")
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]


class SchemaView(_PublicDocsOnly, SpectacularAPIView):
    pass


class DocsView(_PublicDocsOnly, SpectacularSwaggerView):
    pass


router = SimpleRouter()
router.register("organizations", OrganizationViewSet, basename="organization")

urlpatterns = [
    path("v1/auth/login/", LoginView.as_view(), name="knox_login"),
    path("v1/auth/logout/", LogoutView.as_view(), name="knox_logout"),
    path("v1/auth/logoutall/", LogoutAllView.as_view(), name="knox_logoutall"),
    path("schema/", SchemaView.as_view(), name="schema"),
    path("docs/", DocsView.as_view(url_name="schema"), name="api-docs"),
]
