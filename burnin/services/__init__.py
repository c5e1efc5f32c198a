"""Burn-in services, one module per concern: `ingest` (a probe report in, stored and analysed in one
transaction), `samples` (its telemetry rows, by COPY) and `gate` (waivers, and passing or failing a
server's burn-in). Import from the modules."""
