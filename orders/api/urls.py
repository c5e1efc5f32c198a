"""API routes of the orders app."""

from rest_framework.routers import SimpleRouter

from orders.api.views import OrderViewSet, ROIAssessmentViewSet, ServerConfigurationViewSet

router = SimpleRouter()
router.register("configurations", ServerConfigurationViewSet, basename="configuration")
router.register("orders", OrderViewSet, basename="order")
router.register("roi-assessments", ROIAssessmentViewSet, basename="roi-assessment")
