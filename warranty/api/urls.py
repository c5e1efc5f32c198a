from rest_framework.routers import DefaultRouter

router = DefaultRouter()

# --- warranty records, registrations, claims, hand-over (warranty/api/views.py) --------------------------
from warranty.api.views import (  # noqa: E402
    HandoverServerViewSet,
    WarrantyClaimViewSet,
    WarrantyRecordViewSet,
    WarrantyRegistrationViewSet,
)

router.register("warranty/records", WarrantyRecordViewSet, basename="warranty-record")
router.register("warranty/registrations", WarrantyRegistrationViewSet, basename="warranty-registration")
router.register("warranty/claims", WarrantyClaimViewSet, basename="warranty-claim")
router.register("handover/servers", HandoverServerViewSet, basename="handover-server")
