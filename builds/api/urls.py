"""API routes of the builds app."""

from rest_framework.routers import SimpleRouter

from builds.api.views import (
    AllocationViewSet,
    BuildPhotoViewSet,
    BuildStepViewSet,
    ChassisLayoutViewSet,
    ConnectorViewSet,
    InstallationViewSet,
    ServerViewSet,
)

router = SimpleRouter()
router.register("builds/servers", ServerViewSet, basename="server")
router.register("builds/connectors", ConnectorViewSet, basename="connector")
router.register("builds/installations", InstallationViewSet, basename="installation")
router.register("builds/allocations", AllocationViewSet, basename="allocation")
router.register("builds/steps", BuildStepViewSet, basename="build-step")
router.register("builds/photos", BuildPhotoViewSet, basename="build-photo")
router.register("builds/layouts", ChassisLayoutViewSet, basename="chassis-layout")
