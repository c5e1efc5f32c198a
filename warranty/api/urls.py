from rest_framework.routers import DefaultRouter

from warranty.api.attributions import AttributionViewSet
from warranty.api.packs import HandoverPackViewSet, WarrantyCertificateViewSet
from warranty.api.report import SparesEndingViewSet, WarrantyReportViewSet
from warranty.api.supplier_returns import SupplierReturnViewSet
from warranty.api.views import (
    ClaimAttachmentViewSet,
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
# A claim's logs and photos: listed on the claim, each file served after the access check.
router.register("warranty/claim-attachments", ClaimAttachmentViewSet, basename="warranty-claim-attachment")
router.register("handover/servers", HandoverServerViewSet, basename="handover-server")
# Handover packs and warranty certificates (warranty/api/packs.py).
router.register("handover/packs", HandoverPackViewSet, basename="handover-pack")
router.register("warranty/certificates", WarrantyCertificateViewSet, basename="warranty-certificate")
# Returns of failed components to their suppliers (warranty/api/supplier_returns.py).
router.register("warranty/supplier-returns", SupplierReturnViewSet, basename="warranty-supplier-return")
# The PM's warranty report and the spares near the end of their supplier warranty (warranty/api/report.py).
router.register("warranty/report", WarrantyReportViewSet, basename="warranty-report")
router.register("warranty/spares-ending", SparesEndingViewSet, basename="warranty-spares-ending")
# What caused each failure, confirmed or corrected by a PM (warranty/api/attributions.py).
router.register("warranty/attributions", AttributionViewSet, basename="warranty-attribution")
