"""Admin of the burn-in app: runs with their findings, read-only (reports come in through the API)."""
