"""Order gates: what an order still lacks before it may move to a status.

The apps above `orders` (builds, burn-in, deployment, warranty) know when an order may move on; `orders` must
not import them. So each of them registers a check here, in its `AppConfig.ready()`:

    from orders import gates
    gates.register(target=OrderStatus.BURN_IN, name="builds.servers_assembled", check=servers_not_assembled)

A check takes the order (locked, inside the transition's transaction) and returns what is missing, as plain
sentences ("Server wb-2026-0001-03 is planned; it must be assembled first."); an empty list means it holds.
The transition service asks every check of its target and refuses with one 409 that lists all of them, and
`GET /api/v1/orders/{id}/transition-checks/` shows the same before anyone clicks. Checks only read: effects
of a transition go through the `order_transitioned` signal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orders.models import Order

GateCheck = Callable[["Order"], Iterable[str]]

#: A refusal names at most this many objects (servers, say), then says how many more there are.
NAMED_AT_MOST = 10


@dataclass(frozen=True)
class Gate:
    """One registered check: the app-qualified `name` makes registration idempotent."""

    name: str
    target: str
    check: GateCheck


_REGISTRY: dict[str, dict[str, Gate]] = {}


def register(*, target: str, name: str, check: GateCheck) -> Gate:
    """Register `check` for orders moving to `target`. Registering the same name again replaces it, so a
    `ready()` that runs twice (as it may in tests) adds nothing."""
    gate = Gate(name=name, target=str(target), check=check)
    _REGISTRY.setdefault(gate.target, {})[name] = gate
    return gate


def unregister(*, target: str, name: str) -> None:
    """Remove a check (for tests that register a temporary one)."""
    _REGISTRY.get(str(target), {}).pop(name, None)


def gates_for(target: str) -> list[Gate]:
    """The checks of one target, in registration order."""
    return list(_REGISTRY.get(str(target), {}).values())


def missing_for(*, order: Order, target: str) -> list[str]:
    """Everything the registered checks say is missing before `order` may move to `target`."""
    return [sentence for gate in gates_for(target) for sentence in gate.check(order)]


def named_at_most(
    sentences: Sequence[str], *, more: Callable[[int], str], limit: int = NAMED_AT_MOST
) -> list[str]:
    """The first `limit` sentences, then one sentence `more(n)` for the `n` left out: a 409 about a hundred
    servers stays readable."""
    named = list(sentences[:limit])
    if len(sentences) > limit:
        named.append(more(len(sentences) - limit))
    return named
