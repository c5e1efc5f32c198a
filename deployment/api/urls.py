"""API routes of the deployment app, under /api/v1/."""

from rest_framework.routers import SimpleRouter

from deployment.api.elevation import RackElevationViewSet
from deployment.api.prefixes import IPPrefixViewSet, SiteNextAddressViewSet
from deployment.api.views import (
    DeploymentServerViewSet,
    NetworkViewSet,
    PlacementViewSet,
    PlatformListingViewSet,
    PowerFeedViewSet,
    RackViewSet,
    SiteViewSet,
)

router = SimpleRouter()
router.register("sites", SiteViewSet, basename="site")
# A site's next free address of a role only, on the same prefix (PMs).
router.register("sites", SiteNextAddressViewSet, basename="site-address")
router.register("prefixes", IPPrefixViewSet, basename="ip-prefix")
router.register("racks", RackViewSet, basename="rack")
# A rack's front elevation (SVG) only, on the same prefix: no list or detail route of its own.
router.register("racks", RackElevationViewSet, basename="rack-elevation")
router.register("power-feeds", PowerFeedViewSet, basename="power-feed")
router.register("placements", PlacementViewSet, basename="placement")
router.register("networks", NetworkViewSet, basename="network")
router.register("platform-listings", PlatformListingViewSet, basename="platform-listing")
# A server's deployment state and the PM's deploy, by asset tag (like burnin/server-gate).
router.register("deployment/servers", DeploymentServerViewSet, basename="deployment-server")
