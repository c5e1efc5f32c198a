from rest_framework.routers import DefaultRouter

from pm.api.views import (
    QualityLotsViewSet,
    QualityPartsViewSet,
    QualityPositionsViewSet,
    QualitySuppliersViewSet,
)

router = DefaultRouter()
# The fleet's quality (pm/api/views.py): PMs only, read-only.
router.register("quality/lots", QualityLotsViewSet, basename="quality-lot")
router.register("quality/suppliers", QualitySuppliersViewSet, basename="quality-supplier")
router.register("quality/parts", QualityPartsViewSet, basename="quality-part")
router.register("quality/positions", QualityPositionsViewSet, basename="quality-position")
