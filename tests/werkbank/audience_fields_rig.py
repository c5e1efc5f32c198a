"""The fields each API route answers with, by serializer, and the internal ones that the rule of
`werkbank/audiences.py` withholds, by name: the words of the table in test_audiences.py."""

from __future__ import annotations

from tests.werkbank.audience_fields_report import PHASED
from tests.werkbank.audience_rig import nested, rows

# The internal fields, by the rule's words (werkbank/audiences.py). Every set below is a full set of fields
# minus these, so the table says by name what each role does not receive.
PURCHASING = {"list_price", "preferred_supplier"}  # the builder's prices and suppliers
PO_INTERNAL = {
    "supplier",
    "supplier_name",
    "supplier_country",
    "currency",
    "non_eu_override_reason",
    "quality_override_reason",
    "notes",
    "lines[].unit_price",
}
SUPPLIER_NAME = {"supplier_name"}
ORDER_INTERNAL = {"approval_override_reason", "purchase_orders", "notes", "allowed_transitions"}
ROI_INTERNAL = {"note", "created_by"}
SUBCONTRACTOR = {"partner", "partner_name"}  # who built a server: not the customer's business

ORGANIZATION = {"id", "name", "kind", "contact_email", "language", "created_at"}
PART = {
    "id",
    "category",
    "manufacturer",
    "mpn",
    "name",
    "vram_gb",
    "tdp_w",
    "pcie_gen",
    "pcie_lanes",
    "u_height",
    "specs",
    "list_price",
    "preferred_supplier",
    "created_at",
}
SUPPLIER = {"id", "name", "vat_id", "country", "is_eu", "contact_name", "contact_email", "created_at"}
PO_LINE = {
    "id",
    "purchase_order",
    "part",
    "part_mpn",
    "part_name",
    "quantity",
    "unit_price",
    "quantity_received",
    "remaining",
}
PO = {
    "id",
    "number",
    "supplier",
    "supplier_name",
    "supplier_country",
    "status",
    "currency",
    "deliver_to",
    "non_eu_override_reason",
    "quality_override_reason",
    "notes",
    "sent_at",
    "created_at",
} | nested("lines", PO_LINE, many=True)
PO_DETAIL = PO | {"quality_warnings"}  # one PO, not the list, says what the quality checks flag
LOT = {
    "id",
    "lot_code",
    "part",
    "part_mpn",
    "supplier_name",
    "date_code",
    "country_of_origin",
    "component_count",
    "created_at",
}
LABEL_BATCH = {
    "id",
    "title",
    "lot",
    "purchase_order",
    "count",
    "status",
    "progress",
    "error",
    "attempts",
    "pdf_url",
    "pdf_sha256",
    "pdf_size",
    "requested_by",
    "created_at",
    "started_at",
    "finished_at",
}
COMPONENT = {
    "id",
    "serial",
    "manufacturer",
    "part",
    "part_mpn",
    "lot",
    "lot_code",
    "purchase_order",
    "supplier_name",
    "country_of_origin",
    "status",
    "location",
    "received_at",
}
MOVEMENT = {
    "id",
    "component",
    "serial",
    "actor",
    "created_at",
    "from_status",
    "to_status",
    "from_location",
    "to_location",
    "reason",
}
CONFIGURATION = {
    "id",
    "name",
    "description",
    "psu_count",
    "psu_rating_w",
    "psu_redundant",
    "burnin_hours",
    "usable_psu_w",
    "created_at",
} | nested("lines", {"part", "part_mpn", "part_name", "category", "quantity"}, many=True)
ORDER = {
    "id",
    "reference",
    "customer",
    "customer_name",
    "configuration",
    "configuration_name",
    "server_count",
    "warranty_months",
    "status",
    "status_display",
    "allowed_transitions",
    "approval_override_reason",
    "circuit_v",
    "circuit_a",
    "circuit_phases",
    "spare_percent",
    "burnin_hours",
    "purchase_orders",
    "notes",
    "created_at",
    "updated_at",
}
APPROVAL = {"approvable", "override_reason"} | nested(
    "checks", {"name", "ok", "summary", "numbers"}, many=True
)
# The events order's trail: order.update (notes), submit, approve, approve_override, procure.
EVENTS_PM = rows(
    {
        "id",
        "created_at",
        "actor",
        "verb",
        "before",
        "before.status",
        "before.notes",
        "before.failed_checks",
        "after",
        "after.status",
        "after.notes",
        "after.override_reason",
        "after.purchase_orders",
        "note",
    }
)
# Status changes only, without the PM's note, the actor, the override or the purchase orders.
EVENTS_CUSTOMER = rows({"id", "created_at", "verb", "before", "before.status", "after", "after.status"})
ROI = {
    "id",
    "order",
    "order_reference",
    "version",
    "created_by",
    "created_at",
    "note",
    "currency",
    "capex",
    "gpu_count",
    "price_per_gpu_hour",
    "utilization",
    "platform_fee",
    "power_active_kw",
    "power_idle_kw",
    "energy_price_kwh",
    "pue",
    "colo_month",
    "other_opex_month",
    "horizon_months",
    "discount_rate_annual",
    "residual_value",
    "rent_price_per_gpu_hour",
    "target_payback_months",
    "hours_per_month",
    "revenue_month",
    "energy_month",
    "net_month",
    "payback_months",
    "npv",
    "irr_annual",
    "breakeven_utilization_target",
    "breakeven_utilization_opex",
    "buy_vs_rent_breakeven_utilization",
}
TRANSITION_CHECKS = {"order", "status"} | nested(
    "transitions", {"action", "target", "ready", "missing", "overridable", "needs_reason"}, many=True
)
WORKLOAD = nested(
    "workload",
    {
        "preset",
        "params_b",
        "layers",
        "kv_heads",
        "head_dim",
        "mla_latent_dim",
        "weights_dtype",
        "kv_dtype",
        "context_tokens",
        "concurrency",
        "tensor_parallel_gpus",
        "overhead_fraction",
        "updated_at",
    },
) | nested(
    "sizing",
    {
        "weights_gb",
        "weights_gib",
        "kv_bytes_per_token",
        "kv_cache_gb",
        "kv_cache_gib",
        "overhead_gb",
        "total_gb",
        "total_gib",
        "per_gpu_gb",
        "per_gpu_gib",
        "total_vram_gb",
        "fits",
        "headroom_gb",
    },
)
SERVER = {
    "id",
    "order",
    "order_reference",
    "sequence",
    "hostname",
    "asset_tag",
    "chassis_serial",
    "partner",
    "partner_name",
    "status",
    "connector_count",
    "installed_count",
    "blacklisted_count",
    "created_at",
}
CONNECTOR = {
    "id",
    "server",
    "server_hostname",
    "name",
    "kind",
    "position",
    "numa_node",
    "pcie_gen",
    "pcie_lanes",
    "cooling_block",
    "blacklist",  # null here: no connector of the world is blacklisted
}
CONNECTOR_MAP = {"server", "hostname", "status", "columns"} | nested(
    "connectors",
    {
        "id",
        "name",
        "kind",
        "position",
        "numa_node",
        "pcie_gen",
        "pcie_lanes",
        "cooling_block",
        "state",
        "serial",
        "part_mpn",
        "installation",
        "blacklist_reason",
        "blacklisted_at",
    },
    many=True,
)
INSTALLATION = {
    "id",
    "server",
    "server_hostname",
    "connector",
    "connector_name",
    "component",
    "serial",
    "part_mpn",
    "active",
    "installed_by",
    "installed_at",
    "removed_by",
    "removed_at",
    "removal_reason",
}
ALLOCATION = {
    "id",
    "server",
    "server_hostname",
    "component",
    "serial",
    "part_mpn",
    "lot_code",
    "allocated_by",
    "allocated_at",
    "lot_override_reason",
    "released_at",
}
STEP = {"id", "server", "kind", "actor", "created_at", "notes", "data", "photos"}
PHOTO = {"id", "server", "step", "content_type", "size_bytes", "uploaded_by", "created_at"}
LAYOUT = {"id", "chassis", "chassis_mpn", "chassis_name", "description", "columns"} | nested(
    "connectors",
    {"id", "name", "kind", "position", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"},
    many=True,
)
RUN = {
    "id",
    "server",
    "asset_tag",
    "hostname",
    "purpose",
    "accepted_at",
    "report_id",
    "probe_version",
    "schema_version",
    "started_at",
    "ended_at",
    "result",
    "rules_version",
    "binding",
    "full_load_s",
    "target_s",
    "uploaded_by",
    "created_at",
    "findings_fail",
    "findings_warn",
    "findings_info",
}
RUN_FINDING = {
    "id",
    "code",
    "severity",
    "subject",
    "gpu_index",
    "message",
    "text",
    "params",
    "explained_by",
    "evidence",
    "rule_version",
    "waived_by",
    "waived_at",
    "waiver_reason",
}
FINDING = RUN_FINDING | {"run", "server", "hostname", "waived"}
RUN_DETAIL = RUN | {"stages", "gpu_results"} | nested("findings", RUN_FINDING, many=True)
GATE = {"asset_tag", "hostname", "status", "passed", "ready", "missing"} | nested(
    "run", {"id", "report_id", "started_at", "ended_at", "result", "rules_version"}
)
TELEMETRY = {"run", "started_at", "span_s", "interval_s", "series"}
SITE = {
    "id",
    "name",
    "kind",
    "operator",
    "customer",
    "customer_name",
    "address",
    "country",
    "eu",
    "rack_count",
    "created_at",
}
FEED = {"id", "name", "leg", "voltage_v", "current_a", "phases", "rated_w", "continuous_limit_w"}
FEED_LOAD = FEED | {"load_w", "limit_w", "margin_w", "percent_of_limit", "percent_of_rated", "ok"} | PHASED
RACK = {"id", "site", "site_name", "name", "height_u", "placement_count", "created_at"}
RACK_POWER = {"rack", "rack_name", "site_name"} | nested(
    "feeds",
    FEED_LOAD | nested("servers", {"hostname", "occupied", "wall_w", "source", "source_label"}, many=True),
    many=True,
)
POWER_FEED = FEED | {"rack", "rack_name"}
PLACEMENT = {
    "id",
    "server",
    "hostname",
    "asset_tag",
    "rack",
    "rack_name",
    "site_name",
    "lowest_u",
    "top_u",
    "height_u",
    "face",
    "measured_wall_w",
    "power_override_reason",
    "placed_at",
} | nested("feeds", {"id", "name", "phase", "phase_assumed"}, many=True)
NETWORK = {
    "id",
    "server",
    "hostname",
    "asset_tag",
    "management_ip",
    "bmc_ip",
    "bmc_mac",
    "bmc_credentials_set",  # never the credentials themselves
    "updated_at",
}
LISTING = {
    "id",
    "server",
    "hostname",
    "asset_tag",
    "platform",
    "machine_id",
    "verification",
    "reliability",
    "listed_on",
    "verified_on",
    "note",
    "is_current",
    "recorded_by",
    "recorded_at",
}
PACK = {
    "id",
    "server",
    "asset_tag",
    "hostname",
    "revision",
    "language",
    "status",
    "progress",
    "error",
    "attempts",
    "pdf_url",
    "pdf_sha256",
    "pdf_size",
    "zip_url",
    "zip_sha256",
    "zip_size",
    "generated_by",
    "created_at",
    "started_at",
    "finished_at",
}
PACK_INTERNAL = {"error", "attempts", "generated_by"}  # a failure's text, the retries, a PM's login
DEPLOY_STATE = (
    {"asset_tag", "hostname", "status", "deployed", "ready", "missing", "listing"}  # listing: null here
    | nested(
        "placement",
        {"id", "rack", "rack_name", "site_name", "lowest_u", "top_u", "face"}
        | nested("feeds", {"id", "name"}, many=True),
    )
    | nested("network", {"management_ip", "bmc_ip", "bmc_mac", "bmc_credentials_set"})
)

USERNAME = "usernames: login names stay with PMs and the bench"

WARRANTY_RECORD = {
    "id",
    "kind",
    "serial",
    "description",
    "server",
    "server_hostname",
    "order",
    "order_reference",
    "customer",
    "start_date",
    "term_months",
    "end_date",
    "replaces",
    "replaces_serial",
    "replaced_by",
    "replaced_by_serial",
    "replaced_at",
}
WARRANTY_REGISTRATION = {
    "id",
    "component",
    "serial",
    "server",
    "server_hostname",
    "customer",
    "customer_name",
    "registered_at",
}
WARRANTY_CLAIM = {
    "id",
    "number",
    "record",
    "serial",
    "customer",
    "status",
    "description",
    "decision_note",
    "replacement_record",
    "finding",
    "opened_by",
    "supplier_return",
    "created_at",
    "updated_at",
}
CLAIM_INTERNAL = {"opened_by", "supplier_return"}  # a login name; the builder's supplier business
SUPPLIER_RETURN = {
    "id",
    "number",
    "status",
    "component",
    "serial",
    "mpn",
    "lot_code",
    "supplier",
    "supplier_name",
    "supplier_warranty_ends",
    "claim",
    "claim_number",
    "attribution",
    "reason",
    "supplier_rma_number",
    "shipped_at",
    "closed_at",
    "outcome",
    "outcome_note",
    "credit_amount",
    "currency",
    "replacement",
    "replacement_serial",
    "created_by",
    "created_at",
}
ATTRIBUTION = {
    "id",
    "server",
    "server_hostname",
    "stage",
    "occurred_at",
    "proposed_cause",
    "proposed_reason",
    "cause",
    "component",
    "component_serial",
    "lot_code",
    "connector",
    "connector_name",
    "confirmed",
    "confirmed_by",
    "confirmed_at",
    "note",
    "created_at",
} | nested("source", {"kind", "claim", "number"})  # the audience rig's row: a filed claim
HANDOVER_STATE = {"asset_tag", "hostname", "status", "handed_over", "ready", "missing"}
#: A row of the fleet's quality (pm/api): every stage in `by_stage`; the detail adds `evidence` (opaque here,
#: its rows are tests/pm/test_quality_api.py's).
QUALITY_ROW = {
    "key",
    "label",
    "category",
    "units",
    "in_service",
    "unit_years",
    "failures",
    "rate",
    "low",
    "high",
    "threshold",
    "min_units",
    "flagged",
} | nested("by_stage", {"bench", "burn_in", "field", "claim"})
