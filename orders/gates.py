"""Order gates: what an order still lacks before it may move to a status.

The apps above `orders` (builds, burn-in, deployment, warranty) know when an order may move on; `orders` must
not import them. So each of them registers a check here, in its `AppConfig.ready()`:

    from orders import gates
    gates.register(target=OrderStatus.BURN_IN, name="builds.servers_assembled", check=servers_not_assembled)

A check takes the order (locked, inside the transition's transaction) and returns what is missing, as plain
sentences ("Server wb-2026-0001-03 is planned; it must be assembled first."); an empty list means it holds.
The sentences go through gettext when the check runs, so they speak the active language: German on a German
page, English in the API (which activates English for every request) and in whatever is stored.
A gate may also give `check_many`, the same check for many orders at once in a fixed number of queries
(`{order id: sentences}`): the PM's pipeline shows what blocks a hundred orders without a query per order.
The single check should be the bulk one asked about one order, so the two can never disagree.
The transition service asks every check of its target and refuses with one 409 that lists all of them, and
`GET /api/v1/orders/{id}/transition-checks/` shows the same before anyone clicks. Checks only read: effects
of a transition go through the `order_transitioned` signal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orders.models import Order

GateCheck = Callable[["Order"], Iterable[str]]
#: The bulk form of a check: every order of the sequence → what it lacks (an order that lacks nothing may be
#: left out of the answer).
GateCheckMany = Callable[[Sequence["Order"]], Mapping[int, Iterable[str]]]

#: A refusal names at most this many objects (servers, say), then says how many more there are.
NAMED_AT_MOST = 10


@dataclass(frozen=True)
class Gate:
    """One registered check: the app-qualified `name` makes registration idempotent."""

    name: str
    target: str
    check: GateCheck
    check_many: GateCheckMany | None = None

    def missing_many(self, orders: Sequence[Order]) -> dict[int, list[str]]:
        """What each order lacks by this gate: the bulk check where there is one, else one check per order."""
        if self.check_many is None:
            return {order.pk: list(self.check(order)) for order in orders}
        answer = self.check_many(orders)
        return {order.pk: list(answer.get(order.pk, ())) for order in orders}


_REGISTRY: dict[str, dict[str, Gate]] = {}


def register(*, target: str, name: str, check: GateCheck, check_many: GateCheckMany | None = None) -> Gate:
    """Register `check` (and its bulk form `check_many`) for orders moving to `target`. Registering the same
    name again replaces it, so a `ready()` that runs twice (as it may in tests) adds nothing."""
    gate = Gate(name=name, target=str(target), check=check, check_many=check_many)
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


def missing_for_many(*, orders: Sequence[Order], target: str) -> dict[int, list[str]]:
    """`missing_for` of many orders at once, `{order id: sentences}`, in a fixed number of queries per gate
    that has a bulk form (each gate registered by the apps has one)."""
    missing: dict[int, list[str]] = {order.pk: [] for order in orders}
    if not orders:
        return missing
    for gate in gates_for(target):
        for order_id, sentences in gate.missing_many(orders).items():
            missing[order_id].extend(sentences)
    return missing


def named_at_most(
    sentences: Sequence[str], *, more: Callable[[int], str], limit: int = NAMED_AT_MOST
) -> list[str]:
    """The first `limit` sentences, then one sentence `more(n)` for the `n` left out: a 409 about a hundred
    servers stays readable."""
    named = list(sentences[:limit])
    if len(sentences) > limit:
        named.append(more(len(sentences) - limit))
    return named
