"""API routes of the burn-in app, under /api/v1/burnin/."""

from rest_framework.routers import SimpleRouter

from burnin.api.charts import TelemetryViewSet
from burnin.api.gate import FindingViewSet, ServerGateViewSet
from burnin.api.views import RunViewSet, ServerReportViewSet

router = SimpleRouter()
# The probe's upload, by the server's asset tag, and the runs it made.
router.register("burnin/servers", ServerReportViewSet, basename="burnin-server")
router.register("burnin/runs", RunViewSet, basename="burnin-run")
# The gate: findings with their waivers, and a server's pass or fail by asset tag.
router.register("burnin/findings", FindingViewSet, basename="burnin-finding")
router.register("burnin/server-gate", ServerGateViewSet, basename="burnin-server-gate")
# The telemetry of a run, downsampled for the charts.
router.register("burnin/telemetry", TelemetryViewSet, basename="burnin-telemetry")
