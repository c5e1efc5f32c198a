"""API routes of the burn-in app, under /api/v1/burnin/."""

from rest_framework.routers import SimpleRouter

from burnin.api.views import RunViewSet, ServerReportViewSet

router = SimpleRouter()
router.register("burnin/servers", ServerReportViewSet, basename="burnin-server")
router.register("burnin/runs", RunViewSet, basename="burnin-run")
