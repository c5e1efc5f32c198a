from rest_framework.routers import DefaultRouter

from warranty.api.packs import HandoverPackViewSet, WarrantyCertificateViewSet

router = DefaultRouter()

# --- handover packs and warranty certificates (warranty/api/packs.py) ------------------------------
router.register("handover/packs", HandoverPackViewSet, basename="handover-pack")
router.register("warranty/certificates", WarrantyCertificateViewSet, basename="warranty-certificate")
# --- end of handover packs -------------------------------------------------------------------------
