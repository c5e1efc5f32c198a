"""A path under /api/ that names nothing answers 404 in JSON, as every other API answer does.

Django's own 404 page is HTML; an API client (and the schema, which documents JSON errors) expects JSON,
also for a URL whose id is not even a number."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found


def not_found(request: HttpRequest, exception: Any = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
