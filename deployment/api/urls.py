"""API routes of the deployment app, under /api/v1/."""

from rest_framework.routers import SimpleRouter

from deployment.api.elevation import RackElevationViewSet

router = SimpleRouter()
# A rack's front elevation (SVG) only: no list or detail route of its own.
router.register("racks", RackElevationViewSet, basename="rack-elevation")
