"""Builds services: every write of the builds app, one module per concern.

Every service is atomic, locks the server it changes, and writes an audit event in the same transaction.
Callers import from this package; the modules are `servers` (creation, assignment, status transitions),
`allocation` (setting stock aside for a server, with the same-lot rule), `installation` (scanning serials
into connectors: install, remove, move), `blacklist` (connectors never to be used again) and `steps`
(build steps and photos).
"""

from builds.services.allocation import server_allocate
from builds.services.blacklist import connector_blacklist
from builds.services.installation import (
    UnknownSerial,
    find_component,
    server_install,
    server_move,
    server_remove,
)
from builds.services.servers import (
    assembly_gaps,
    normalize_hostname,
    server_assign_partner,
    server_mark_assembled,
    server_record_burnin_power,
    server_rename,
    server_start_assembly,
    server_transition,
    servers_create_for_order,
)
from builds.services.steps import detect_image_type, photo_upload, step_log

__all__ = [
    "UnknownSerial",
    "assembly_gaps",
    "connector_blacklist",
    "detect_image_type",
    "find_component",
    "normalize_hostname",
    "photo_upload",
    "server_allocate",
    "server_assign_partner",
    "server_install",
    "server_mark_assembled",
    "server_move",
    "server_record_burnin_power",
    "server_remove",
    "server_rename",
    "server_start_assembly",
    "server_transition",
    "servers_create_for_order",
    "step_log",
]
