"""API routes of the burn-in app, under /api/v1/burnin/."""

from rest_framework.routers import SimpleRouter

from burnin.api.charts import TelemetryViewSet

router = SimpleRouter()
router.register("burnin/telemetry", TelemetryViewSet, basename="burnin-telemetry")
