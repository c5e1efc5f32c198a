"""What an order's export carries of the orders app (see werkbank/exports.py): the order itself with its ROI
assessments, workload, status notices and purchase-order links, and its configuration with the bill of
materials."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from orders.models import (
        ConfigurationLine,
        Order,
        OrderPurchaseOrder,
        ROIAssessment,
        ServerConfiguration,
        StatusNotice,
        Workload,
    )

    exports.carry(Order, found=lambda record: [record.order], numbered_by="reference")
    for model in (ROIAssessment, Workload, StatusNotice, OrderPurchaseOrder):
        exports.carry(model, found=lambda record, model=model: model.objects.filter(order=record.order))
    exports.carry(ServerConfiguration)
    exports.carry(
        ConfigurationLine,
        found=lambda record: ConfigurationLine.objects.filter(configuration_id=record.order.configuration_id),
    )
