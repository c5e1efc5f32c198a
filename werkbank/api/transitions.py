"""The POST action of one status transition, shared by the apps' viewsets (CONVENTIONS.md, habit 4).

Each transition is its own endpoint, `POST /<objects>/{pk}/<verb>/`, backed by the same service as the admin
action and the HTML form. The action does only what every such endpoint does: look the object up through the
viewset (so an object outside the user's scope is a 404), validate the small input body, call the service,
and answer the object as the viewset serializes it, re-read through the scoped queryset. The service's domain
errors become their 400/409 answers in the API's exception handler (werkbank.api.exceptions), not here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from werkbank.api.schema import first_sentence


def transition_action(
    name: str,
    *,
    service: Callable[..., Any],
    subject: str,
    body: type[Serializer],
    response: type[Serializer],
    summary: str | None = None,
    **options: Any,
) -> Any:
    """The `@action` for transition `name`: `service(<subject>=obj, actor=user, **body)` on one object.

    `subject` is the keyword the service takes the object by ("order", "server", "po"); `body` the input
    serializer and `response` the viewset's serializer, both named for the schema. The summary defaults to
    the first sentence of the service's docstring, the description is all of it. The URL is the name with
    dashes (`start_assembly` → `start-assembly/`), and the method keeps the name, because DRF routes an
    action by its function's name. `options` go to `@action`
    (permission classes, no filters or paging).
    """

    def transition(self: Any, request: Request, pk: str | None = None) -> Response:
        obj = self.get_object()
        payload = body(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        service(**{subject: obj}, actor=request.user, **payload.validated_data)
        return Response(self.get_serializer(self.get_queryset().get(pk=obj.pk)).data)

    transition.__name__ = name
    routed = action(detail=True, methods=["post"], url_path=name.replace("_", "-"), **options)(transition)
    # Outside @action, which replaces the function's `kwargs`, where drf-spectacular keeps the schema: an
    # @extend_schema under it is lost, and the action documented the viewset's whole object as its body.
    documented = extend_schema(
        request=body,
        responses={200: response},
        summary=summary or first_sentence(service.__doc__),
        description=inspect.cleandoc(service.__doc__ or ""),
    )
    return documented(routed)
