"""The browsable API (development only; production answers JSON): an action's form shows the input the
action declares for the schema, not the viewset's object.

DRF builds the browsable API's forms from `view.get_serializer()`, the viewset's object serializer, so the
form of `POST /orders/{id}/approve/` showed an order's fields instead of the note and the override reason.
An operation's input is declared once, with @extend_schema(request=...) (werkbank/api/transitions.py does
it for every transition); the forms here use that declaration where it names another serializer, and an
empty form (a button) where the action takes no body (request=None).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rest_framework import renderers, serializers


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    """DRF's browsable API, with each operation's forms for the input it declares."""

    def get_rendered_html_form(self, data: Any, view: Any, method: str, request: Any) -> Any:
        with _declared_input(view, method) as swapped:
            # Not the answer's serializer either: after a POST that is the object again.
            return super().get_rendered_html_form(None if swapped else data, view, method, request)

    def get_raw_data_form(self, data: Any, view: Any, method: str, request: Any) -> Any:
        with _declared_input(view, method) as swapped:
            return super().get_raw_data_form(None if swapped else data, view, method, request)


def declared_input(view: Any, method: str) -> type[serializers.BaseSerializer] | None:
    """The serializer the operation declares as its input, where that is not the view's own; None else."""
    handler = getattr(view, getattr(view, "action", None) or method.lower(), None)
    schema_class = getattr(handler, "kwargs", {}).get("schema")
    if schema_class is None:
        return None
    schema = schema_class()
    schema.view, schema.method, schema.path = view, method.upper(), ""
    declared = schema.get_request_serializer()
    if declared is None:
        return serializers.Serializer  # no body: a form with nothing but its button
    if isinstance(declared, serializers.BaseSerializer):
        declared = type(getattr(declared, "child", declared))
    if not (isinstance(declared, type) and issubclass(declared, serializers.BaseSerializer)):
        return None  # a raw schema (a probe report, say): DRF's own form
    try:
        own = view.get_serializer_class()
    except (AttributeError, AssertionError):  # an APIView, or a viewset without a serializer of its own
        own = None
    return None if declared is own else declared


@contextmanager
def _declared_input(view: Any, method: str) -> Iterator[bool]:
    declared = declared_input(view, method)
    if declared is None:
        yield False
        return
    context = view.get_serializer_context() if hasattr(view, "get_serializer_context") else {}
    view.get_serializer = lambda *args, **kwargs: declared(context={"request": view.request, **context})
    try:
        yield True
    finally:
        del view.get_serializer
