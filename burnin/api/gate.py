"""API of the burn-in gate: findings and their waivers, and a server's pass or fail.

Everyone who sees a server (PMs, its partner's members, its order's customer) sees its findings and its gate
state; only PMs waive findings and pass or fail burn-in. A member who sees the object gets a 403 saying so,
anyone else a 404.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from builds.models import Server
from burnin.api.gate_filters import FindingFilter
from burnin.api.gate_serializers import FindingSerializer, GateStateSerializer
from burnin.gates import burnin_gate_state
from burnin.models import Finding
from burnin.services.gate import finding_waive, server_fail_burnin, server_pass_burnin
from werkbank.api.permissions import require_pm
from werkbank.api.serializers import NoteSerializer, ReasonSerializer
from werkbank.api.viewsets import ScopedReadOnlyViewSet, VisibleToMixin


def pm_action(**options: Any) -> Any:
    """A POST action for PMs: the lookup (through `visible_to`) answers 404 first; the view then says 403."""
    return action(
        detail=True,
        methods=["post"],
        permission_classes=[IsAuthenticated],
        filterset_class=None,
        pagination_class=None,
        **options,
    )


class FindingViewSet(ScopedReadOnlyViewSet):
    """What the analysis found in the burn-in runs the user may see, with the PMs' waivers."""

    queryset = Finding.objects.select_related("run__server", "waived_by")
    serializer_class = FindingSerializer
    filterset_class = FindingFilter
    ordering_fields = ["id", "severity", "code"]

    @extend_schema(
        request=ReasonSerializer,
        responses={200: FindingSerializer},
        summary="Waive a warn or fail finding with a written reason (PMs only); audited on the server.",
    )
    @pm_action()
    def waive(self, request: Request, pk: str | None = None) -> Response:
        finding = self.get_object()
        require_pm(request, "Only project managers waive findings.")
        payload = ReasonSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        finding_waive(finding=finding, actor=request.user, reason=payload.validated_data["reason"])
        return Response(self.get_serializer(self.get_queryset().get(pk=finding.pk)).data)


class ServerGateViewSet(VisibleToMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """A server's burn-in gate, by asset tag: where it stands, and the PM's pass or fail."""

    queryset = Server.objects.all()
    serializer_class = GateStateSerializer
    lookup_field = "asset_tag"
    lookup_value_regex = "[^/.]+"
    filterset_class = None
    pagination_class = None

    def _state(self, server: Server) -> dict[str, Any]:
        return GateStateSerializer(
            burnin_gate_state(server=server), context=self.get_serializer_context()
        ).data

    @extend_schema(responses={200: GateStateSerializer}, summary="The server's burn-in gate state.")
    def retrieve(self, request: Request, asset_tag: str | None = None) -> Response:
        return Response(self._state(self.get_object()))

    @extend_schema(
        request=NoteSerializer,
        responses={200: GateStateSerializer},
        summary="burn-in → burn-in passed (PMs only); 409 lists every finding that still blocks.",
    )
    @pm_action(url_path="pass", url_name="pass")
    def pass_burnin(self, request: Request, asset_tag: str | None = None) -> Response:
        server = self.get_object()
        require_pm(request, "Only project managers pass a server's burn-in.")
        payload = NoteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return Response(
            self._state(server_pass_burnin(server=server, actor=request.user, **payload.validated_data))
        )

    @extend_schema(
        request=ReasonSerializer,
        responses={200: GateStateSerializer},
        summary="burn-in → burn-in failed, back to the partner for rework (PMs only; a reason is required).",
    )
    @pm_action(url_path="fail", url_name="fail")
    def fail_burnin(self, request: Request, asset_tag: str | None = None) -> Response:
        server = self.get_object()
        require_pm(request, "Only project managers fail a server's burn-in.")
        payload = ReasonSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return Response(
            self._state(server_fail_burnin(server=server, actor=request.user, **payload.validated_data))
        )
