"""Token login: username and password in, a token out.

The raw token is shown once; only its digest is kept."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view, inline_serializer
from knox.views import LoginView as KnoxLoginView
from knox.views import LogoutAllView as KnoxLogoutAllView
from knox.views import LogoutView as KnoxLogoutView
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle


class LoginThrottle(AnonRateThrottle):
    rate = "20/min"


class LoginView(KnoxLoginView):
    """Exchange a username and password for an API token (knox: stored hashed, expires)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [LoginThrottle]
    serializer_class = AuthTokenSerializer

    @extend_schema(
        request=AuthTokenSerializer,
        responses={
            200: inline_serializer(
                "TokenResponse",
                {"expiry": serializers.DateTimeField(allow_null=True), "token": serializers.CharField()},
            )
        },
    )
    def post(self, request: Request, format: Any = None) -> Response:
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        request.user = serializer.validated_data["user"]
        return super().post(request, format=format)


@extend_schema_view(post=extend_schema(request=None, responses={204: None}, summary="Revoke this token."))
class LogoutView(KnoxLogoutView):
    """Revoke the token the request was made with."""


@extend_schema_view(
    post=extend_schema(request=None, responses={204: None}, summary="Revoke all your tokens.")
)
class LogoutAllView(KnoxLogoutAllView):
    """Revoke every token of the requesting user."""
