"""Order services: every write of the orders app, one module per concern.

Every service is atomic, re-reads the row it changes under a lock, checks the transition map and its
preconditions, and writes an audit event in the same transaction. Callers import from this package; the
modules are `configurations`, `orders` (create and edit), `transitions` (one function per status change),
`notices` (customer e-mails) and `roi` (ROI assessments and the workload).
"""

from orders.services.configurations import configuration_create, configuration_update
from orders.services.notices import notice_send_once, order_status_notice_send
from orders.services.orders import order_create, order_update
from orders.services.roi import roi_assess, roi_inputs, roi_preview, workload_set
from orders.services.transitions import (
    TRANSITION_SERVICES,
    order_approve,
    order_cancel,
    order_close,
    order_hand_over,
    order_procure,
    order_reject,
    order_start_assembly,
    order_start_burn_in,
    order_start_deployment,
    order_submit,
    procurement_plan,
)

__all__ = [
    "TRANSITION_SERVICES",
    "configuration_create",
    "configuration_update",
    "notice_send_once",
    "order_approve",
    "order_cancel",
    "order_close",
    "order_create",
    "order_hand_over",
    "order_procure",
    "order_reject",
    "order_start_assembly",
    "order_start_burn_in",
    "order_start_deployment",
    "order_status_notice_send",
    "order_submit",
    "order_update",
    "procurement_plan",
    "roi_assess",
    "roi_inputs",
    "roi_preview",
    "workload_set",
]
