"""Builds services: every write of the builds app, one module per concern.

Every service is atomic, locks the server it changes, and writes an audit event in the same transaction.
Callers import from this package; the modules are `servers` (creation, assignment, status transitions),
`allocation` (setting stock aside for a server, with the same-lot rule), `installation` (scanning serials
into connectors: install, remove, move), `blacklist` (connectors never to be used again), `steps`
(build steps and photos) and `catalogue` (chassis layouts and checklists).
"""

from builds.services.allocation import server_allocate
from builds.services.assignment import order_assign_partner, partner_assigned_notice_send
from builds.services.blacklist import connector_blacklist
from builds.services.catalogue import (
    checklist_item_add,
    checklist_item_remove,
    checklist_item_update,
    layout_connector_add,
    layout_connector_remove,
    layout_connector_update,
    layout_create,
    layout_update,
)
from builds.services.installation import (
    UnknownSerial,
    find_component,
    installation_of,
    server_install,
    server_move,
    server_remove,
    server_swap_component,
)
from builds.services.servers import (
    lock_server,
    normalize_hostname,
    server_assign_partner,
    server_mark_assembled,
    server_record_burnin_power,
    server_rename,
    server_set_chassis_serial,
    server_start_assembly,
    server_transition,
    servers_create_for_order,
)
from builds.services.steps import CheckedPhoto, photo_check, photo_upload, step_log

__all__ = [
    "CheckedPhoto",
    "UnknownSerial",
    "checklist_item_add",
    "checklist_item_remove",
    "checklist_item_update",
    "connector_blacklist",
    "find_component",
    "installation_of",
    "layout_connector_add",
    "layout_connector_remove",
    "layout_connector_update",
    "layout_create",
    "layout_update",
    "lock_server",
    "normalize_hostname",
    "order_assign_partner",
    "partner_assigned_notice_send",
    "photo_check",
    "photo_upload",
    "server_allocate",
    "server_assign_partner",
    "server_install",
    "server_mark_assembled",
    "server_move",
    "server_record_burnin_power",
    "server_remove",
    "server_rename",
    "server_set_chassis_serial",
    "server_start_assembly",
    "server_swap_component",
    "server_transition",
    "servers_create_for_order",
    "step_log",
]
