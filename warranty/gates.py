"""What the warranty app says blocks the next step, registered in `ready()`: the order gates of
`handed_over` (no deployed server left behind) and `closed` (every server handed over, `orders.gates`;
seed 000 ends with the handover) and the server step "hand over" (`builds.gates`), whose "what is
missing" is `warranty.selectors.hand_over_missing_many`, the same that `server_hand_over` refuses with."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext_lazy, ngettext_lazy

from builds.choices import ServerStatus
from builds.gates import ServersReached, register_servers_gate, register_step
from builds.models import Server
from orders.choices import OrderStatus
from warranty.selectors import hand_over_missing_many

HAND_OVER = "warranty.hand_over"

#: An order closes once every server is handed over; one without servers has nothing to wait for.
SERVERS_HANDED_OVER = ServersReached(
    reached=frozenset({ServerStatus.HANDED_OVER}),
    behind=gettext_lazy("Server %(hostname)s is %(status)s; it must be handed over first."),
    more=ngettext_lazy(
        "%(count)d more server is not handed over yet.",
        "%(count)d more servers are not handed over yet.",
        "count",
    ),
)


#: The order's own handover never runs ahead of its servers (issue #24): a deployed server is handed over on
#: its own (`server_hand_over`, which moves the order along with the last one). Servers not yet deployed are
#: named by deployment's gate of the same target, so they are counted as "reached" here, not named twice.
SERVERS_HANDED_OVER_FIRST = ServersReached(
    reached=frozenset(ServerStatus.values) - {ServerStatus.DEPLOYED},
    behind=gettext_lazy(
        "Server %(hostname)s is %(status)s; hand it over first: the order follows its servers."
    ),
    more=ngettext_lazy(
        "%(count)d more deployed server is not handed over yet.",
        "%(count)d more deployed servers are not handed over yet.",
        "count",
    ),
)


def _hand_over_missing_many(servers: Sequence[Server]) -> dict[int, list[str]]:
    return hand_over_missing_many(servers=servers)


def register_gates() -> None:
    register_servers_gate(
        target=OrderStatus.HANDED_OVER,
        name="warranty.servers_handed_over_first",
        rule=SERVERS_HANDED_OVER_FIRST,
    )
    register_servers_gate(
        target=OrderStatus.CLOSED, name="warranty.servers_handed_over", rule=SERVERS_HANDED_OVER
    )


def register_steps() -> None:
    register_step(
        name=HAND_OVER,
        source=ServerStatus.DEPLOYED,
        target=ServerStatus.HANDED_OVER,
        label=gettext_lazy("Hand over"),
        missing_many=_hand_over_missing_many,
    )
