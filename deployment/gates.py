"""What the deployment app says blocks the next step, registered in `ready()`: the order gate of the
handover (every server deployed, `orders.gates`) and the server step "deploy" (`builds.gates`), whose "what
is missing" is `deployment.selectors.deploy_missing_many`, the same that `server_deploy` refuses with."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext_lazy, ngettext_lazy

from builds.choices import ServerStatus
from builds.gates import ServersReached, register_servers_gate, register_step
from builds.models import Server
from deployment.choices import DEPLOYED_OR_LATER
from deployment.selectors import deploy_missing_many
from orders.choices import OrderStatus

DEPLOY = "deployment.deploy"

#: No handover until every server of the order is deployed.
SERVERS_DEPLOYED = ServersReached(
    reached=DEPLOYED_OR_LATER,
    behind=gettext_lazy("Server %(hostname)s is %(status)s; it must be deployed first."),
    more=ngettext_lazy(
        "%(count)d more server is not deployed yet.", "%(count)d more servers are not deployed yet.", "count"
    ),
    no_servers=gettext_lazy("Order %(reference)s has no servers to hand over."),
)


def _deploy_missing_many(servers: Sequence[Server]) -> dict[int, list[str]]:
    return deploy_missing_many(servers=servers)


def register_gates() -> None:
    register_servers_gate(
        target=OrderStatus.HANDED_OVER, name="deployment.servers_deployed", rule=SERVERS_DEPLOYED
    )


def register_steps() -> None:
    register_step(
        name=DEPLOY,
        source=ServerStatus.BURN_IN_PASSED,
        target=ServerStatus.DEPLOYED,
        label=gettext_lazy("Deploy"),
        missing_many=_deploy_missing_many,
    )
