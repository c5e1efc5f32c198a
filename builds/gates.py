"""What blocks an order or a server from moving on: builds' order gates and the one registry of server steps.

Order gates (`orders.gates`): builds registers "an order in assembly has servers" and "every server is
assembled". `ServersReached` is the one rule behind every gate of the form "every server of the order is at
least X"; burn-in, deployment and warranty register theirs with `register_servers_gate`.

Server steps: each app registers, in its `AppConfig.ready()`, the step it owns (`register_step`): builds
starts assembly (and rework) and marks a server assembled, burnin waits for the probe's report and passes
burn-in, deployment deploys, warranty hands over. A step leaves one status for another along
`SERVER_TRANSITIONS`, has the label its button and the board show, and a bulk "what is missing": the
sentences that keep each of many servers from it (`{server id: sentences}`, empty: it may go), in a fixed
number of queries however many servers are asked. Each status has at most one step; the one side arrow,
burn_in → burn_in_failed, is a PM's verdict and no step. `next_steps` gives every server the step from its
status with its blockers, asking each step once for all its servers: the PM's pipeline and order page, the
bench and the deployment page show what it answers, and each step's transition service refuses with the
same function, so a page and a refusal never disagree.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext_lazy

from builds.choices import AT_LEAST_ASSEMBLED, SERVER_TRANSITIONS, ServerStatus, status_in_sentence
from builds.models import BuildStep, ChecklistItem, Installation, Server
from orders.choices import OrderStatus
from orders.gates import named_at_most, register
from orders.models import ConfigurationLine

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise, StrPromise

    from orders.models import Order

# --- order gates -----------------------------------------------------------------------------------------


def _order_servers(orders: Sequence[Order]) -> dict[int, list[tuple[str, str]]]:
    """(hostname, status) of each order's servers in their sequence, for many orders in one query."""
    servers: dict[int, list[tuple[str, str]]] = {order.pk: [] for order in orders}
    rows = (
        Server.objects.filter(order_id__in=list(servers))
        .order_by("order_id", "sequence")
        .values_list("order_id", "hostname", "status")
    )
    for order_id, hostname, status in rows:
        servers[order_id].append((hostname, status))
    return servers


@dataclass(frozen=True)
class ServersReached:
    """The order gate "every server of the order has reached one of `reached`", in one query for many
    orders. The sentences are lazy, so they speak the language active when the gate runs:

    - `behind`: one server that has not ("Server %(hostname)s is %(status)s; it must ... first.");
    - `more`: how many more there are beyond the ten named (`ngettext_lazy(..., "count")`);
    - `no_servers`: an order without servers ("Order %(reference)s has no servers to ..."); None lets such
      an order through.
    """

    reached: Collection[str]
    behind: StrPromise
    more: StrPromise
    no_servers: StrPromise | None = None

    def check_many(self, orders: Sequence[Order]) -> dict[int, list[str]]:
        by_order = _order_servers(orders)
        missing: dict[int, list[str]] = {}
        for order in orders:
            servers = by_order[order.pk]
            if not servers and self.no_servers is not None:
                missing[order.pk] = [self.no_servers % {"reference": order.reference}]
                continue
            missing[order.pk] = named_at_most(
                [
                    self.behind % {"hostname": hostname, "status": status_in_sentence(status)}
                    for hostname, status in servers
                    if status not in self.reached
                ],
                more=lambda count: self.more % {"count": count},
            )
        return missing

    def check(self, order: Order) -> list[str]:
        return self.check_many([order])[order.pk]


def register_servers_gate(*, target: str, name: str, rule: ServersReached) -> None:
    """Register `rule` as the order gate `name` of `target`, with its bulk form."""
    register(target=target, name=name, check=rule.check, check_many=rule.check_many)


def orders_have_servers(orders: Sequence[Order]) -> dict[int, list[str]]:
    """No assembly for an order without servers (they are created when the order goes to procurement)."""
    with_servers = set(
        Server.objects.filter(order_id__in=[order.pk for order in orders])
        .order_by()
        .values_list("order_id", flat=True)
        .distinct()
    )
    return {
        order.pk: []
        if order.pk in with_servers
        else [_("Order %(reference)s has no servers to assemble.") % {"reference": order.reference}]
        for order in orders
    }


def order_has_servers(order: Order) -> list[str]:
    return orders_have_servers([order])[order.pk]


#: No burn-in until every server of the order is at least assembled.
SERVERS_ASSEMBLED = ServersReached(
    reached=AT_LEAST_ASSEMBLED,
    behind=gettext_lazy("Server %(hostname)s is %(status)s; it must be assembled first."),
    more=ngettext_lazy(
        "%(count)d more server is not assembled yet.",
        "%(count)d more servers are not assembled yet.",
        "count",
    ),
    no_servers=gettext_lazy("Order %(reference)s has no servers to burn in."),
)


def register_gates() -> None:
    register(
        target=OrderStatus.ASSEMBLY,
        name="builds.order_has_servers",
        check=order_has_servers,
        check_many=orders_have_servers,
    )
    register_servers_gate(target=OrderStatus.BURN_IN, name="builds.servers_assembled", rule=SERVERS_ASSEMBLED)


# --- the registry of server steps ------------------------------------------------------------------------

#: A step's bulk "what is missing": every server asked → the sentences that keep it from the step.
StepMissing = Callable[[Sequence[Server]], Mapping[int, Iterable[str]]]


@dataclass(frozen=True)
class ServerStep:
    """One registered step: `source` → `target` along `SERVER_TRANSITIONS`, its label, its bulk check."""

    name: str
    source: str
    target: str
    label: StrOrPromise
    missing_many: StepMissing

    def missing(self, servers: Sequence[Server]) -> dict[int, list[str]]:
        """What keeps each of `servers` from this step (every server asked has an entry)."""
        if not servers:
            return {}
        answer = self.missing_many(servers)
        return {server.pk: list(answer.get(server.pk, ())) for server in servers}


@dataclass(frozen=True)
class NextStep:
    """A server's next step as every page shows it: the step's name and label, and what still blocks it
    (empty: it may go)."""

    name: str
    label: StrOrPromise
    missing: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not self.missing


_STEPS: dict[str, ServerStep] = {}


def register_step(
    *, name: str, source: str, target: str, label: StrOrPromise, missing_many: StepMissing
) -> ServerStep:
    """Register the step `name` from `source` to `target`. The same name again replaces it (a `ready()` that
    runs twice adds nothing); a second step from one status, or a step the transition map does not allow,
    is a programming error."""
    source, target = str(source), str(target)
    if target not in SERVER_TRANSITIONS.get(source, frozenset()):
        raise ValueError(f"Step {name}: the server lifecycle has no arrow {source} → {target}.")
    taken = next((step.name for step in _STEPS.values() if step.source == source and step.name != name), None)
    if taken is not None:
        raise ValueError(f"Step {name}: status {source} already has its step, {taken}.")
    step = ServerStep(name=name, source=source, target=target, label=label, missing_many=missing_many)
    _STEPS[name] = step
    return step


def registered_steps() -> list[ServerStep]:
    """Every registered step, in registration order."""
    return list(_STEPS.values())


def step_named(name: str) -> ServerStep:
    """The registered step `name` (KeyError when no app registered it)."""
    return _STEPS[name]


def step_from(status: str) -> ServerStep | None:
    """The step a server in `status` takes next, or None (handed over: nothing follows)."""
    return next((step for step in _STEPS.values() if step.source == status), None)


def step_missing(*, name: str, servers: Sequence[Server]) -> dict[int, list[str]]:
    """What keeps each of `servers` from the step `name`, whatever their status (the deployment page asks
    about deploying a server that is still in burn-in)."""
    return step_named(name).missing(servers)


def next_steps(servers: Sequence[Server]) -> dict[int, NextStep]:
    """Each server's next step with what blocks it, asking each step once for all its servers (a stage
    without servers costs nothing). Servers without a next step are left out. The servers need `order`
    selected (assembly reads the order's configuration)."""
    by_step: dict[str, list[Server]] = defaultdict(list)
    for server in servers:
        step = step_from(server.status)
        if step is not None:
            by_step[step.name].append(server)
    answer: dict[int, NextStep] = {}
    for name, asked in by_step.items():
        step = _STEPS[name]
        for server_id, missing in step.missing(asked).items():
            answer[server_id] = NextStep(name=step.name, label=step.label, missing=missing)
    return {server.pk: answer[server.pk] for server in servers if server.pk in answer}


def next_step(server: Server) -> NextStep | None:
    """`next_steps` of one server."""
    return next_steps([server]).get(server.pk)


# --- builds' own steps: assembly -------------------------------------------------------------------------

START_ASSEMBLY = "builds.start_assembly"
START_REWORK = "builds.start_rework"
MARK_ASSEMBLED = "builds.mark_assembled"


def assembly_start_missing(server: Server) -> list[str]:
    """What a server lacks before its assembly (or rework) may start: an assigned partner."""
    return [] if server.partner_id is not None else [_("an assigned assembly partner")]


def assembly_start_missing_many(servers: Sequence[Server]) -> dict[int, list[str]]:
    """`assembly_start_missing` of many servers: no query, the partner is on the row."""
    return {server.pk: assembly_start_missing(server) for server in servers}


def assembly_gaps(server: Server) -> list[str]:
    """What stands between the server and `assembled`: missing steps, uninstalled BOM, blacklisted use."""
    return assembly_gaps_many([server])[server.pk]


def assembly_gaps_many(servers: Sequence[Server]) -> dict[int, list[str]]:
    """`assembly_gaps` of many servers at once (`{server id: gaps}`), in four queries however many there are:
    the PM's pipeline shows every assembling server's gaps with it."""
    servers = list(servers)
    ids = [server.pk for server in servers]
    configuration_ids = {server.order.configuration_id for server in servers}
    logged: dict[int, set[str]] = defaultdict(set)
    for server_id, kind in BuildStep.objects.filter(server_id__in=ids).values_list("server_id", "kind"):
        logged[server_id].add(kind)
    checklists: dict[int, list[ChecklistItem]] = defaultdict(list)
    for item in ChecklistItem.objects.filter(configuration_id__in=configuration_ids):
        checklists[item.configuration_id].append(item)
    bills: dict[int, list[ConfigurationLine]] = defaultdict(list)
    lines = ConfigurationLine.objects.filter(configuration_id__in=configuration_ids).select_related("part")
    for line in lines:
        bills[line.configuration_id].append(line)
    installed: dict[int, Counter[int]] = defaultdict(Counter)
    on_blacklisted: dict[int, list[str]] = defaultdict(list)
    rows = Installation.objects.filter(server_id__in=ids, removed_at__isnull=True).values_list(
        "server_id", "component__part_id", "component__serial", "connector__name", "connector__blacklist__id"
    )
    for server_id, part_id, serial, connector, blacklisted in rows:
        installed[server_id][part_id] += 1
        if blacklisted is not None:
            on_blacklisted[server_id].append(
                _("%(serial)s sits in blacklisted connector %(connector)s")
                % {"serial": serial, "connector": connector}
            )
    gaps: dict[int, list[str]] = {}
    for server in servers:
        configuration_id = server.order.configuration_id
        found = [
            _("build step not logged: %(step)s") % {"step": item.get_kind_display()}
            for item in checklists[configuration_id]
            if item.kind not in logged[server.pk]
        ]
        for line in bills[configuration_id]:
            have = installed[server.pk].get(line.part_id, 0)
            if have < line.quantity:
                found.append(
                    _("%(missing)d of %(quantity)d %(mpn)s not installed")
                    % {"missing": line.quantity - have, "quantity": line.quantity, "mpn": line.part.mpn}
                )
        gaps[server.pk] = found + on_blacklisted[server.pk]
    return gaps


def register_steps() -> None:
    register_step(
        name=START_ASSEMBLY,
        source=ServerStatus.PLANNED,
        target=ServerStatus.ASSEMBLING,
        label=gettext_lazy("Start assembly"),
        missing_many=assembly_start_missing_many,
    )
    # The same service as the first assembly (`server_start_assembly`): the partner works on it again.
    register_step(
        name=START_REWORK,
        source=ServerStatus.BURN_IN_FAILED,
        target=ServerStatus.ASSEMBLING,
        label=gettext_lazy("Start rework"),
        missing_many=assembly_start_missing_many,
    )
    register_step(
        name=MARK_ASSEMBLED,
        source=ServerStatus.ASSEMBLING,
        target=ServerStatus.ASSEMBLED,
        label=gettext_lazy("Mark assembled"),
        missing_many=assembly_gaps_many,
    )
