"""Schemathesis' stateful phase: sequences of calls that feed one answer's ids into the next request.

Schemathesis infers the links between operations from the schema (dependency analysis: a `POST /sites/`
answers a `Site` whose `id` a `GET /sites/{id}/` takes; about 600 links). Each scenario is up to 6 steps as
a PM, a partner member or a customer member, in a savepoint rolled back after it, so every scenario meets
the fuzz world as fuzz_rig.py builds it. Each step carries a token made for it alone and must pass the
checks of test_schemathesis.py. Failures are collected, not raised, so that Hypothesis does not spend the
time budget shrinking them.

WERKBANK_FUZZ_SCENARIOS=N: scenarios per role (default 20).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from django.db import transaction
from hypothesis import HealthCheck, settings
from knox.models import AuthToken
from schemathesis.core.failures import FailureGroup

from tests.fuzz.fuzz_rig import CHECKS, FuzzWorld
from werkbank.wsgi import application

SCENARIOS = int(os.environ.get("WERKBANK_FUZZ_SCENARIOS", "20"))
STATEFUL = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "phases": {
            "coverage": {"enabled": False},
            "stateful": {"enabled": True, "inference": {"algorithms": ["dependency-analysis"]}},
        }
    }
)


@pytest.mark.parametrize("role", ["pm", "partner", "customer"])
def test_sequences_of_calls_answer_as_the_schema_says(
    role: str, fuzz_world: FuzzWorld, keep_the_test_connection: None
) -> None:
    user = {"pm": fuzz_world.t.pm, "partner": fuzz_world.t.user_p, "customer": fuzz_world.t.user_a}[role]
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=STATEFUL)
    failures: dict[tuple[str, str], str] = {}
    steps: list[str] = []

    class Scenario(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            self.savepoint = transaction.savepoint()

        def teardown(self) -> None:
            transaction.savepoint_rollback(self.savepoint)

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            _, token = AuthToken.objects.create(user=user)
            return {"headers": {"Authorization": f"Token {token}"}}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            steps.append(case.operation.label)
            try:
                case.validate_response(response, checks=CHECKS)
            except FailureGroup as group:
                for failure in group.exceptions:
                    failures.setdefault((case.operation.label, failure.title), str(group))

    Scenario.run(
        settings=settings(
            max_examples=SCENARIOS,
            stateful_step_count=6,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )
    assert schema.statistic.transitions.selected > 100, "Schemathesis inferred (almost) no links"
    assert len(steps) >= SCENARIOS, f"the scenarios made only {len(steps)} calls"
    report = "\n\n".join(
        f"== {label}: {title}\n{detail}" for (label, title), detail in sorted(failures.items())
    )
    assert not failures, f"{len(failures)} failure(s) as {role}:\n{report}"
