"""API routes of the inventory app."""

from rest_framework.routers import SimpleRouter

from inventory.api.views import PartViewSet

router = SimpleRouter()
router.register("inventory/parts", PartViewSet, basename="part")
