"""API views of the burn-in app: the probe posts its report here, and everyone who sees a server reads its
runs.

- `POST /api/v1/burnin/servers/{asset_tag}/reports/`: the probe's upload (`python -m probe upload`). The
  server is named by its asset tag, the label on the chassis the technician types. PMs and the server's
  partner members may post; a customer who follows the server gets a 403 saying so; anyone else a 404.
- `GET /api/v1/burnin/runs/` and `/runs/{id}/`: the runs of the servers the user sees (PMs, the partner,
  the order's customer), one run with its stages, GPU results and findings.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from builds.choices import ServerStatus
from builds.models import Server
from burnin.api.serializers import RunDetailSerializer, RunSerializer
from burnin.choices import Severity
from burnin.filters import RunFilter
from burnin.models import BurnInRun, Finding
from burnin.services import ingest
from werkbank.access import Purpose
from werkbank.api.viewsets import ScopedReadOnlyViewSet, VisibleToMixin


def _finding_count(severity: str) -> Coalesce:
    """Findings of one severity per run, as a subquery: computed for the rows of the page only."""
    counted = (
        Finding.objects.filter(run=OuterRef("pk"), severity=severity)
        .order_by()
        .values("run")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def runs_with_counts() -> QuerySet:
    return BurnInRun.objects.select_related("server", "uploaded_by").annotate(
        findings_fail=_finding_count(Severity.FAIL),
        findings_warn=_finding_count(Severity.WARN),
        findings_info=_finding_count(Severity.INFO),
    )


def run_in_full(queryset: QuerySet) -> QuerySet:
    return queryset.prefetch_related(
        "stages",
        "gpu_results",
        Prefetch("findings", queryset=Finding.objects.select_related("waived_by")),
    )


class PostsReports(IsAuthenticated):
    """PMs and the server's partner members post reports; once the server is handed over, the customer's
    members too, field checks only (`burnin.services.ingest.may_post` decides by the report's purpose).
    The server was looked up among those the user sees, so a stranger already got a 404; a customer of the
    order sees the server, and is told why not."""

    message = (
        "Customers post only field checks, and only once the server is handed over: burn-in and "
        "post-repair reports come from project managers and the server's assembly partner."
    )

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if obj.status == ServerStatus.HANDED_OVER:
            return True
        return Server.objects.visible_to(request.user, purpose=Purpose.BENCH).filter(pk=obj.pk).exists()


class ServerReportViewSet(VisibleToMixin, viewsets.GenericViewSet):
    """A server's burn-in reports, the server named by its asset tag (e.g. WB-2026-0003-01)."""

    queryset = Server.objects.all()
    serializer_class = RunDetailSerializer
    permission_classes = [PostsReports]
    lookup_field = "asset_tag"
    # Asset tags are letters, digits, dots, dashes and underscores (WB-YYYY-NNNN-NN).
    lookup_value_regex = "[A-Za-z0-9][A-Za-z0-9._-]*"
    filterset_class = None
    pagination_class = None

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        # A refused upload (404, 400, 413, …) is answered once its body is read: see discard_unread_body.
        if self.action == "reports" and response.status_code >= 400:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            ingest.discard_unread_body(request.stream, content_length=length)
        return super().finalize_response(request, response, *args, **kwargs)

    @extend_schema(
        request={"application/json": OpenApiTypes.OBJECT},
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="SHA-256 (hex) of the report as written, as the probe sends it; when given, it "
                "must match the uploaded report.",
            ),
            OpenApiParameter(
                "Content-Encoding",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                enum=["gzip", "identity"],
                description="gzip for a compressed body (a body that starts with gzip's magic bytes is "
                "read as gzip anyway).",
            ),
        ],
        responses={
            201: RunDetailSerializer,
            200: OpenApiResponse(RunDetailSerializer, description="This report was already stored."),
            400: OpenApiResponse(description="Not a valid report: names the JSON path of the first error."),
            403: OpenApiResponse(
                description="Customers post field checks of a handed-over server only (the report's purpose)."
            ),
            409: OpenApiResponse(
                description="The server's status does not take a report of this purpose: burn-in while "
                "assembled or in burn-in; field check and post-repair once deployed or handed over."
            ),
            413: OpenApiResponse(description="Larger than WERKBANK_MAX_REPORT_BYTES uncompressed."),
        },
        summary="Upload a probe report (burn-in, field check, post-repair; JSON, gzip allowed); idempotent "
        "by the report's hash.",
    )
    @action(detail=True, methods=["post"])
    def reports(self, request: Request, asset_tag: str | None = None) -> Response:
        server = self.get_object()
        try:
            body = ingest.read_report_body(
                request.stream, content_encoding=request.headers.get("Content-Encoding", "")
            )
        except ingest.ReportTooLarge as exc:
            return Response({exc.field: [exc.field_message]}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        run, created = ingest.report_ingest(
            server=server,
            actor=request.user,
            raw=body.raw,
            gz=body.gz,
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        run = run_in_full(runs_with_counts()).get(pk=run.pk)
        return Response(
            RunDetailSerializer(run, context=self.get_serializer_context()).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


@extend_schema_view(
    list=extend_schema(summary="List burn-in runs, newest first."),
    retrieve=extend_schema(summary="Show one burn-in run with everything the analysis found."),
)
class RunViewSet(ScopedReadOnlyViewSet):
    """Burn-in runs of the servers the user sees, newest first; one run with everything the analysis
    found."""

    queryset = runs_with_counts()
    filterset_class = RunFilter
    ordering_fields = ["id", "started_at", "created_at"]

    def get_queryset(self) -> QuerySet:
        queryset = super().get_queryset()
        return run_in_full(queryset) if self.action == "retrieve" else queryset

    def get_serializer_class(self) -> type[RunSerializer]:
        return RunDetailSerializer if self.action == "retrieve" else RunSerializer
