"""The schema documents each operation as a client needs it (issue #24): an action on one object declares
its own input, not the object; every operation sits in one of the API's areas and has a summary.

13 of the 35 actions on an object once declared the viewset's whole object as their body (an
@extend_schema under @action is lost), so the browsable API showed the object's form and a generated client
could not send `override_reason` to `approve`. The areas are settings.WERKBANK_API_AREAS
(werkbank/api/schema.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from drf_spectacular.generators import SchemaGenerator

from tests import factories

METHODS = {"get", "post", "put", "patch", "delete"}
#: POST `<collection>/{id}/<action>/`: an action on one object.
OBJECT_ACTION = re.compile(r"^(?P<collection>.+/)\{[^}/]+\}/[^{}/]+/$")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in METHODS
    ]


def _component(content: dict[str, Any] | None) -> str | None:
    """The component a JSON body or answer refers to (of a list: of its items, paginated or not)."""
    schema = ((content or {}).get("application/json") or {}).get("schema") or {}
    ref = schema.get("$ref") or (schema.get("items") or {}).get("$ref")
    return ref.rsplit("/", 1)[-1] if ref else None


def _answer(operation: dict[str, Any] | None, schema: dict[str, Any]) -> str | None:
    """The component an operation answers with 200 or 201; a page's `results` count as their items."""
    responses = (operation or {}).get("responses", {})
    named = _component((responses.get("200") or responses.get("201") or {}).get("content"))
    page = schema["components"]["schemas"].get(named or "", {})
    results = page.get("properties", {}).get("results", {}).get("items", {}).get("$ref")
    return results.rsplit("/", 1)[-1] if results else named


def _object_components(schema: dict[str, Any], collection: str, action: dict[str, Any]) -> set[str]:
    """The viewset's object serializer, as components: what its detail and list answer, and what the
    action itself answers (a transition answers the object), each also as a request body."""
    paths = schema["paths"]
    answers = {_answer(action, schema), _answer(paths.get(collection, {}).get("get"), schema)}
    for path, operations in paths.items():
        if re.fullmatch(re.escape(collection) + r"\{[^}/]+\}/", path):
            answers.add(_answer(operations.get("get"), schema))
    names = {name for name in answers if name}
    return names | {f"{name}Request" for name in names} | {f"Patched{name}Request" for name in names}


def test_no_action_on_an_object_takes_the_whole_object_as_its_body(schema):
    actions = [
        (path, operation, OBJECT_ACTION.match(path)["collection"])
        for method, path, operation in _operations(schema)
        if method == "post" and OBJECT_ACTION.match(path)
    ]
    assert actions, "no POST action on an object found: has the URL layout changed?"
    wrong = []
    for path, operation, collection in actions:
        bodies = operation.get("requestBody", {}).get("content", {})
        refs = {_component({"application/json": body}) for body in bodies.values()} - {None}
        objects = _object_components(schema, collection, operation)
        if refs & objects:
            wrong.append(f"POST {path} takes {sorted(refs & objects)}")
    assert not wrong, "declare the action's input serializer: @extend_schema(request=...)\n" + "\n".join(
        wrong
    )


def test_the_order_and_purchase_order_transitions_declare_their_own_inputs(schema):
    """What a client must be able to send: the approval's override, procurement's workshop, the PO's
    overrides, a reason where one is required."""

    def fields(path: str) -> set[str]:
        body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        return set(schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]["properties"])

    assert fields("/api/v1/orders/{id}/approve/") == {"note", "override_reason"}
    assert fields("/api/v1/orders/{id}/procure/") == {"note", "deliver_to"}
    assert fields("/api/v1/orders/{id}/reject/") == {"reason"}
    assert fields("/api/v1/orders/{id}/submit/") == {"note"}
    assert fields("/api/v1/inventory/purchase-orders/{id}/send/") == {
        "note",
        "override_reason",
        "quality_override_reason",
    }
    assert fields("/api/v1/inventory/purchase-orders/{id}/cancel/") == {"reason"}
    assert fields("/api/v1/inventory/purchase-orders/{id}/close/") == {"note"}
    approve = schema["paths"]["/api/v1/orders/{id}/approve/"]["post"]
    assert _answer(approve, schema) == "Order"


def test_every_operation_sits_in_one_area_and_has_a_summary(schema):
    areas = set(settings.WERKBANK_API_AREAS)
    assert [tag["name"] for tag in schema["tags"]] == list(settings.WERKBANK_API_AREAS)
    wrong = []
    used: set[str] = set()
    for method, path, operation in _operations(schema):
        tags = operation.get("tags", [])
        summary = operation.get("summary", "")
        if len(tags) != 1 or tags[0] not in areas:
            wrong.append(
                f"{method.upper()} {path}: tags {tags} (name its first segment in WERKBANK_API_AREAS)"
            )
        used.update(tags)
        if not summary.strip() or "\n" in summary or not summary.endswith((".", "?", "!")):
            wrong.append(f"{method.upper()} {path}: summary {summary!r} (one sentence, ending in a stop)")
    assert not wrong, "\n".join(wrong)
    assert used == areas, f"areas without an operation: {sorted(areas - used)}"


@pytest.mark.django_db
def test_the_browsable_apis_form_for_an_action_shows_its_input(tenants, client):
    """DRF builds the forms from the viewset's serializer; werkbank/api/renderers.py uses the declared
    input: approving an order shows the note and the override reason, not an order's fields."""
    order = factories.OrderFactory(customer=tenants.customer_a)
    client.force_login(tenants.pm)
    page = client.get(f"/api/v1/orders/{order.pk}/approve/", HTTP_ACCEPT="text/html")
    assert page.status_code == 405  # GET is not allowed: the page offers the POST form
    html = page.content.decode()
    assert 'name="override_reason"' in html and 'name="note"' in html
    assert 'name="configuration"' not in html and 'name="server_count"' not in html
    # The object's own form stays where the object is the input.
    edit = client.get(f"/api/v1/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    assert 'name="server_count"' in edit and 'name="override_reason"' not in edit
