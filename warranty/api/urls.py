from rest_framework.routers import DefaultRouter

from warranty.api.packs import HandoverPackViewSet, WarrantyCertificateViewSet
from warranty.api.views import (
    HandoverServerViewSet,
    WarrantyClaimViewSet,
    WarrantyRecordViewSet,
    WarrantyRegistrationViewSet,
)

router = DefaultRouter()
# Warranty records, registrations, claims, hand-over (warranty/api/views.py).
router.register("warranty/records", WarrantyRecordViewSet, basename="warranty-record")
router.register("warranty/registrations", WarrantyRegistrationViewSet, basename="warranty-registration")
router.register("warranty/claims", WarrantyClaimViewSet, basename="warranty-claim")
router.register("handover/servers", HandoverServerViewSet, basename="handover-server")
# Handover packs and warranty certificates (warranty/api/packs.py).
router.register("handover/packs", HandoverPackViewSet, basename="handover-pack")
router.register("warranty/certificates", WarrantyCertificateViewSet, basename="warranty-certificate")
