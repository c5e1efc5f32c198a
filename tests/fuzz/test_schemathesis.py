"""Schemathesis fuzzes every operation of `/api/schema/` as a PM, a partner member and a customer member.

For each role and each operation it sends a bounded number of examples drawn from the schema (positive,
and negative where the operation has inputs to break), each with the role's knox token, into a world where
a path id names a real object about half of the time (fuzz_rig.py). Every answer must be no server error
(5xx), a status code the schema documents for the operation, the documented content type, and a body that
the schema's response for that status accepts. Each request runs in a savepoint rolled back after it, so
every example meets the same world. All failures are collected and reported together, one per operation
and kind of failure.

The stateful phase (sequences of calls) runs in test_stateful.py, every PATCH's answer in
test_patch_schema.py.

Alone: `make test PYTEST_ARGS=tests/fuzz` (WERKBANK_FUZZ_EXAMPLES=N: examples per operation and mode).
"""

from __future__ import annotations

import os
import random
import re
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from knox.models import AuthToken
from schemathesis.checks import CheckFunction
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode

from tests.fuzz.fuzz_rig import CHECKS, FuzzWorld, api_operations, real_ids

EXAMPLES = int(os.environ.get("WERKBANK_FUZZ_EXAMPLES", "5"))
# WERKBANK_FUZZ_OPERATIONS=REGEX: fuzz only the operations whose label ("PATCH /api/v1/sites/{id}/") matches.
ONLY = re.compile(os.environ.get("WERKBANK_FUZZ_OPERATIONS", ""))
# Known defects being fixed elsewhere: (METHOD, path) -> (checks not run there, the defect).
# Remove each entry once its fix is merged.
KNOWN: dict[tuple[str, str], tuple[set[CheckFunction], str]] = {
    # (method, path): (checks skipped, the defect being fixed). Empty: every known defect is fixed.
}
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def _strategy(operation: Any) -> Any:
    strategies = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        try:
            strategies.append(operation.as_strategy(generation_mode=mode))
        except Exception:  # an operation with nothing to break has no negative cases
            continue
    return st.one_of(strategies)


@pytest.mark.parametrize("role", ["pm", "partner", "customer"])
def test_the_api_answers_every_fuzzed_request_as_its_schema_says(
    role: str, fuzz_world: FuzzWorld, keep_the_test_connection: None
) -> None:
    user = {"pm": fuzz_world.t.pm, "partner": fuzz_world.t.user_p, "customer": fuzz_world.t.user_a}[role]
    failures: dict[tuple[str, str], str] = {}

    def send(case: Any) -> None:
        # Revoking a token would revoke the fuzzer's own: every request carries a token made for it alone.
        _, token = AuthToken.objects.create(user=user)
        for name in list(case.path_parameters or {}):
            ids = real_ids(case.path, name)
            if ids and random.random() < 0.5:
                case.path_parameters[name] = random.choice(ids)
        savepoint = transaction.savepoint()
        try:
            response = case.call(headers={"Authorization": f"Token {token}"})
        finally:
            transaction.savepoint_rollback(savepoint)
        excluded, _defect = KNOWN.get((case.method.upper(), case.path), (set(), ""))
        try:
            case.validate_response(response, checks=[check for check in CHECKS if check not in excluded])
        except FailureGroup as group:
            for failure in group.exceptions:
                failures.setdefault((case.operation.label, failure.title), str(group))

    operations = api_operations()
    assert len(operations) > 100, "the schema lost its operations"
    for operation in (operation for operation in operations if ONLY.search(operation.label)):

        @FUZZ_SETTINGS
        @given(case=_strategy(operation))
        def fuzz(case: Any) -> None:
            send(case)

        fuzz()
    report = "\n\n".join(
        f"== {label}: {title}\n{detail}" for (label, title), detail in sorted(failures.items())
    )
    assert not failures, f"{len(failures)} failure(s) as {role}:\n{report}"
