"""Token login: username and password in, a token out.

The raw token is shown once; knox keeps its SHA-512 digest and its first 15 characters (to find the row).
Failed logins count toward the lockout shared with the HTML logins (werkbank/security.py): the lockout
answers 429 through axes' middleware. Each user holds at most REST_KNOX["TOKEN_LIMIT_PER_USER"] live
tokens; a login beyond that answers 409."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from knox.views import LoginView as KnoxLoginView
from knox.views import LogoutAllView as KnoxLogoutAllView
from knox.views import LogoutView as KnoxLogoutView
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from werkbank.services import api_token_limit_check


class LoginView(KnoxLoginView):
    """Exchange a username and password for an API token (knox: stored hashed, expires)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []  # the lockout (django-axes) limits logins, shared with the HTML logins
    serializer_class = AuthTokenSerializer

    @extend_schema(
        request=AuthTokenSerializer,
        responses={
            200: inline_serializer(
                "TokenResponse",
                {"expiry": serializers.DateTimeField(allow_null=True), "token": serializers.CharField()},
            ),
            400: OpenApiResponse(description="Wrong username or password."),
            409: OpenApiResponse(description="The user already holds the most live tokens allowed."),
            429: OpenApiResponse(
                response=inline_serializer(
                    "LoginLockedOut",
                    {
                        "detail": serializers.CharField(),
                        "code": serializers.CharField(),
                        "reason": serializers.ChoiceField(
                            choices=["username_at_address", "address", "username_delay"]
                        ),
                        "rule": serializers.CharField(),
                        "retry_after_seconds": serializers.IntegerField(),
                        "retry_after_minutes": serializers.IntegerField(),
                    },
                ),
                description=(
                    "Too many failed logins for this username from this address, or from this address, "
                    "or this address must wait before its next try for a username that failed often "
                    "(werkbank/security.py). Retry-After names the seconds to wait."
                ),
            ),
        },
    )
    def post(self, request: Request, format: Any = None) -> Response:
        # authenticate() gets the HttpRequest: axes marks a locked-out attempt on it, and its middleware
        # then answers 429 (werkbank.security.lockout_response) instead of this view's 400.
        serializer = AuthTokenSerializer(data=request.data, context={"request": request._request})
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        api_token_limit_check(user=user)
        request.user = user
        return super().post(request, format=format)


@extend_schema_view(post=extend_schema(request=None, responses={204: None}, summary="Revoke this token."))
class LogoutView(KnoxLogoutView):
    """Revoke the token the request was made with."""


@extend_schema_view(
    post=extend_schema(request=None, responses={204: None}, summary="Revoke all your tokens.")
)
class LogoutAllView(KnoxLogoutAllView):
    """Revoke every token of the requesting user."""
