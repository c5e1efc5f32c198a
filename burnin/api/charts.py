"""The telemetry endpoint: a run's samples downsampled in SQL, for charts.

`GET /api/v1/burnin/telemetry/{run_id}/?max_points=1000`. A viewset of its own (the runs' list and detail
live in burnin/api/views.py), looked up by the run's id through `visible_to(user, VIEW)`: PMs, the
server's partner and the order's customer; anyone else gets a 404.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from burnin.models import BurnInRun
from burnin.selectors import MAX_POINTS_DEFAULT, MAX_POINTS_MAX, MAX_POINTS_MIN, Telemetry, telemetry_series
from werkbank.access import Purpose
from werkbank.api.viewsets import VisibleToMixin


class TelemetryQuerySerializer(serializers.Serializer):
    max_points = serializers.IntegerField(
        min_value=MAX_POINTS_MIN,
        max_value=MAX_POINTS_MAX,
        default=MAX_POINTS_DEFAULT,
        help_text=f"Time buckets per GPU and series, {MAX_POINTS_MIN} to {MAX_POINTS_MAX}.",
    )


class GpuSeriesSerializer(serializers.Serializer):
    """Parallel arrays, one entry per time bucket that holds samples (a missing bucket is a gap)."""

    t = serializers.ListField(
        child=serializers.FloatField(), help_text="Middle of the time bucket, seconds since the run's start."
    )
    temp_c = serializers.ListField(child=serializers.FloatField(allow_null=True), help_text="Mean.")
    temp_max_c = serializers.ListField(child=serializers.FloatField(allow_null=True), help_text="Peak.")
    margin_c = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        help_text="Lowest T.Limit margin to the slowdown point.",
    )
    power_w = serializers.ListField(child=serializers.FloatField(allow_null=True), help_text="Mean.")
    sm_mhz = serializers.ListField(child=serializers.FloatField(allow_null=True), help_text="Mean.")
    throttled = serializers.ListField(
        child=serializers.BooleanField(),
        help_text="A sample had HW slowdown, SW/HW thermal slowdown or HW power brake (mask & 0xE8).",
    )
    power_capped = serializers.ListField(
        child=serializers.BooleanField(), help_text="A sample had the SW power cap (0x4): normal at load."
    )


class TelemetrySerializer(serializers.Serializer):
    run = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    span_s = serializers.FloatField(help_text="Start to end of the run.")
    interval_s = serializers.FloatField(help_text="Width of one time bucket.")
    series = serializers.DictField(child=GpuSeriesSerializer(), help_text="By GPU index.")


def telemetry_payload(telemetry: Telemetry) -> dict[str, Any]:
    return {
        "run": telemetry.run_id,
        "started_at": telemetry.started_at,
        "span_s": telemetry.span_s,
        "interval_s": telemetry.interval_s,
        "series": {
            str(index): {
                "t": gpu.t_s,
                "temp_c": gpu.temp_c,
                "temp_max_c": gpu.temp_max_c,
                "margin_c": gpu.margin_min_c,
                "power_w": gpu.power_w,
                "sm_mhz": gpu.sm_mhz,
                "throttled": gpu.throttled,
                "power_capped": gpu.power_capped,
            }
            for index, gpu in sorted(telemetry.series.items())
        },
    }


class TelemetryViewSet(VisibleToMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """A run's telemetry, downsampled in the database to at most `max_points` per GPU and series."""

    queryset = BurnInRun.objects.all()
    purpose = Purpose.VIEW
    permission_classes = [IsAuthenticated]
    serializer_class = TelemetrySerializer
    lookup_url_kwarg = "run_id"

    @extend_schema(
        parameters=[TelemetryQuerySerializer],
        responses={200: TelemetrySerializer},
        summary="A run's telemetry per GPU and series, downsampled to at most `max_points`.",
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        run = self.get_object()  # another tenant's run is a 404 before any parameter is read
        query = TelemetryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        telemetry = telemetry_series(run=run, max_points=query.validated_data["max_points"])
        # The payload is plain lists already: running 9 × 1,000 values per GPU through serializer fields
        # would cost more than the query. TelemetrySerializer describes it for the schema.
        return Response(telemetry_payload(telemetry))
