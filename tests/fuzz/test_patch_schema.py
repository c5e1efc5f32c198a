"""Every PATCH answers with what its schema promises, whichever fields it is sent (issue #26, finding 11).

DRF leaves a read-only field's `default=` out of a partial update's answer, so `PATCH /api/v1/sites/{id}/`
once answered without `customer_name`, which the `Site` schema marks required. Here every PATCH operation of
`/api/schema/` is sent, as a PM, an empty body and each single field it takes (the value the object has) on
the first object of the fuzz world it can name, and an empty body on the second and the last, and each
answer is held to the schema.
"""

from __future__ import annotations

from typing import Any

from knox.models import AuthToken
from schemathesis.core.failures import FailureGroup

from tests.fuzz.fuzz_rig import CHECKS, FuzzWorld, api_operations, real_ids


def _bodies(operation: Any, current: dict[str, Any]) -> list[dict[str, Any]]:
    """An empty body, then each field the request takes, set to what the object answers now."""
    content = operation.definition.raw.get("requestBody", {}).get("content", {})
    reference = content.get("application/json", {}).get("schema", {}).get("$ref", "")
    schemas = operation.schema.raw_schema["components"]["schemas"]
    names = schemas[reference.rsplit("/", 1)[-1]]["properties"] if reference else {}
    return [{}] + [{name: current[name]} for name in names if name in current]


def test_every_patch_answers_with_every_field_its_schema_requires(
    fuzz_world: FuzzWorld, keep_the_test_connection: None
) -> None:
    _, token = AuthToken.objects.create(user=fuzz_world.t.pm)
    headers = {"Authorization": f"Token {token}"}
    patches = [operation for operation in api_operations() if operation.method.upper() == "PATCH"]
    assert len(patches) >= 9, "the schema lost its PATCH operations"
    answered: dict[str, int] = {}
    failures: list[str] = []
    for operation in patches:
        [parameter] = [parameter.name for parameter in operation.path_parameters]
        ids = real_ids(operation.path, parameter)
        assert ids, f"the fuzz world has nothing for {operation.label} to change"
        read = operation.Case(method="GET", path_parameters={parameter: ids[0]}).call(headers=headers)
        sends = [(ids[0], body) for body in _bodies(operation, read.json())]
        sends += [(pk, {}) for pk in dict.fromkeys([*ids[1:2], ids[-1]]) if pk != ids[0]]
        for pk, body in sends:
            case = operation.Case(path_parameters={parameter: pk}, body=body, media_type="application/json")
            response = case.call(headers=headers)
            answered[operation.label] = answered.get(operation.label, 0) + (response.status_code == 200)
            try:
                case.validate_response(response, checks=CHECKS)
            except FailureGroup as group:
                failures.append(f"{operation.label} {pk} {body}: {group}")
    assert not failures, "\n\n".join(failures)
    assert all(answered.get(operation.label) for operation in patches), (
        f"some PATCH never succeeded: {answered}"
    )
