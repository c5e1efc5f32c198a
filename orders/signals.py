"""Domain events of the orders app, for the apps above it (builds, warranty), which orders must not import.

`order_transitioned` is sent inside the transition's transaction, after the status changed: a receiver's
writes commit or roll back with it. Receivers must be idempotent.
"""

from django.dispatch import Signal

#: sender=Order, order=<Order>, actor=<user>, before=<status>, after=<status>
order_transitioned = Signal()
