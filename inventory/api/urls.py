"""API routes of the inventory app."""

from rest_framework.routers import SimpleRouter

from inventory.api.views import (
    BatchLotViewSet,
    ComponentViewSet,
    LabelBatchViewSet,
    PartViewSet,
    PurchaseOrderLineViewSet,
    PurchaseOrderViewSet,
    StockMovementViewSet,
    SupplierViewSet,
)

router = SimpleRouter()
router.register("inventory/parts", PartViewSet, basename="part")
router.register("inventory/suppliers", SupplierViewSet, basename="supplier")
router.register("inventory/purchase-orders", PurchaseOrderViewSet, basename="purchase-order")
router.register("inventory/purchase-order-lines", PurchaseOrderLineViewSet, basename="purchase-order-line")
router.register("inventory/lots", BatchLotViewSet, basename="lot")
router.register("inventory/components", ComponentViewSet, basename="component")
router.register("inventory/stock-movements", StockMovementViewSet, basename="stock-movement")
router.register("inventory/label-batches", LabelBatchViewSet, basename="label-batch")
