"""A rack's front elevation as SVG: `GET /api/v1/racks/{id}/elevation.svg/`.

Only this detail action: the racks' list and detail live in a viewset of their own. The rack is looked up
through `visible_to(user, VIEW)`, so another tenant's rack is a 404; servers in it the viewer may not see
are drawn only as "occupied" (`deployment.elevation`).
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.utils import translation
from django.utils.html import escape
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from deployment.elevation import rack_elevation_svg
from deployment.models import Rack
from werkbank.access import Purpose
from werkbank.api.viewsets import VisibleToMixin
from werkbank.errors import InvalidInput

SVG = "image/svg+xml"


class SVGRenderer(BaseRenderer):
    """Lets a client ask for `Accept: image/svg+xml`; an error then comes back as a small SVG saying it."""

    media_type = SVG
    format = "svg"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        if isinstance(data, str):
            return data.encode("utf-8")
        text = escape(data.get("detail", json.dumps(data)) if isinstance(data, dict) else json.dumps(data))
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="30">'
            f'<text x="4" y="20">{text}</text></svg>'
        ).encode()


class RackElevationViewSet(VisibleToMixin, viewsets.GenericViewSet):
    """The front elevation of a rack the user may see, with its power feeds' loads."""

    queryset = Rack.objects.all()
    purpose = Purpose.VIEW
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer, SVGRenderer]
    pagination_class = None
    filter_backends: list = []

    @extend_schema(
        summary="The rack's front elevation as SVG.",
        parameters=[
            OpenApiParameter(
                "lang",
                str,
                enum=[code for code, _name in settings.LANGUAGES],
                description="The language of the drawing's words and figures (a page embeds it in its own "
                "language); English when left out, as every answer of the API.",
            )
        ],
        responses={
            (200, SVG): OpenApiResponse(
                OpenApiTypes.STR,
                description="U numbers down the side (U1 at the bottom), each server over its U range "
                "(named with its status when the caller may see it, else just “occupied”), free U empty, "
                "and one bar per power feed: its load against V × A × phases, marked at the continuous "
                "limit.",
            ),
            404: OpenApiResponse(description="No such rack, or one the caller may not see."),
        },
    )
    @action(detail=True, methods=["get"], url_path="elevation.svg", url_name="svg")
    def elevation(self, request: Request, pk: str | None = None) -> HttpResponse:
        rack = self.get_object()
        language = request.query_params.get("lang") or settings.LANGUAGE_CODE
        if language not in {code for code, _name in settings.LANGUAGES}:
            known = ", ".join(code for code, _name in settings.LANGUAGES)
            raise InvalidInput("lang", f"the drawing's language is one of {known}; got {language!r}.")
        with translation.override(language):
            svg = rack_elevation_svg(rack=rack, user=request.user)
        response = HttpResponse(svg, content_type=SVG)
        response["Content-Language"] = language
        return response


class RackElevationFile(RackElevationViewSet):
    """The same drawing at `/api/v1/racks/{id}/elevation.svg`, without the router's trailing slash (a link
    to an .svg file has none). Left out of the schema: the router's route documents it."""

    schema = None
