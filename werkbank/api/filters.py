"""The API's filter backend: django-filter's, refusing a list parameter it does not know (400).

django-filter ignores a query parameter that is no filter of the list's FilterSet: `?stauts=draft` (or a
filter of another list) then answers every row as if filtered, and a client never learns. A list request
here accepts its FilterSet's parameters, those the view's other filter backends and its paginator document
(`ordering`, `limit`, `offset`, `cursor`) and the renderer's `format`, and refuses anything else with a 400
that names each such parameter (as every 400 names its fields) and lists what the list takes. Only lists:
a detail, or an action that reads its own query parameters, keeps them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters import FilterSet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.settings import api_settings


class FilterBackend(DjangoFilterBackend):
    """DjangoFilterBackend that answers 400 for a query parameter the list does not take."""

    def get_filterset(self, request: Request, queryset: QuerySet, view: Any) -> FilterSet | None:
        # Here rather than in filter_queryset: the filterset is built once, also where a list has none.
        filterset = super().get_filterset(request, queryset, view)
        if getattr(view, "action", None) == "list":
            known = filter_parameters(filterset) | other_parameters(view, type(self))
            unknown = sorted(set(request.query_params) - known)
            if unknown:
                takes = ", ".join(f"`{name}`" for name in sorted(known))
                message = f"Unknown filter parameter; this list takes {takes}."
                raise ValidationError({name: [message] for name in unknown})
        return filterset


def filter_parameters(filterset: FilterSet | None) -> set[str]:
    """The query parameters a FilterSet reads: one per filter, or one per suffix where its widget has
    several (a range's `_min` and `_max`, a date range's `_after` and `_before`)."""
    if filterset is None:
        return set()
    names: set[str] = set()
    for name, field in filterset.form.fields.items():
        widget = field.widget
        suffixes = getattr(widget, "suffixes", None)
        names |= {widget.suffixed(name, suffix) for suffix in suffixes} if suffixes else {name}
    return names


def other_parameters(view: Any, own: type) -> set[str]:
    """What the view's other filter backends and its paginator take, as they document it, and `format`."""
    described: list[dict[str, Any]] = []
    for backend in getattr(view, "filter_backends", ()):
        if not issubclass(backend, own):
            described += backend().get_schema_operation_parameters(view)
    paginator = getattr(view, "paginator", None)
    if paginator is not None:
        described += paginator.get_schema_operation_parameters(view)
    return {parameter["name"] for parameter in described} | {api_settings.URL_FORMAT_OVERRIDE}
