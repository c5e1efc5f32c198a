"""Domain events of the builds app, for the apps above it (warranty), which builds must not import.

Each signal is sent inside the sending service's transaction: a receiver's writes commit or roll back with
it. Receivers must be idempotent.
"""

from django.dispatch import Signal

#: Components were set aside for a customer's server: their warranty is now registered in the customer's
#: name (seed 000: "vollständige Garantieunterlagen auf den Namen des Kunden"); the warranty app keeps it.
#: sender=Server, server=<Server>, allocations=<list[Allocation]>, customer=<Organization>, actor=<user>
components_allocated = Signal()

#: A connector was blacklisted on the bench (seed 003: a connector that trains a card narrow stays unused
#: for the machine's life); the warranty app attributes the failure to it. Sent inside the blacklisting's
#: transaction, once (a connector is blacklisted at most once).
#: sender=ConnectorBlacklist, blacklist=<ConnectorBlacklist>, actor=<user>
connector_blacklisted = Signal()
