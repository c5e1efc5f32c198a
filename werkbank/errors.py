"""Domain errors. Services raise them; the API maps them to 400 and 409, the admin to messages."""

from __future__ import annotations


class DomainError(Exception):
    """Base class of errors a service raises on purpose."""

    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(DomainError):
    """Bad input: names the field and the rule it broke (HTTP 400)."""

    status_code = 400

    def __init__(self, field: str, message: str, *, rows: list[dict] | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.field_message = message
        #: Row-level details for file uploads: [{"row": 3, "column": "serial", "message": "..."}].
        self.rows = rows or []


class RuleViolation(DomainError):
    """A business rule does not hold: says what is missing (HTTP 409)."""

    status_code = 409

    def __init__(
        self, message: str, *, missing: list[str] | None = None, code: str = "rule_violation"
    ) -> None:
        super().__init__(message)
        self.missing = missing or [message]
        self.code = code


class UnknownObject(DomainError):
    """What was looked up (a scanned serial, say) does not exist for this user (HTTP 404), naming it."""

    status_code = 404

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.field_message = message
