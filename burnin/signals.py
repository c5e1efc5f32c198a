"""Domain events of the burn-in app, for the apps above it (warranty), which burnin must not import.

Each signal is sent inside the sending service's transaction: a receiver's writes commit or roll back with
it. Receivers must be idempotent.
"""

from django.dispatch import Signal

#: A field check or post-repair run drifted from the server's baseline with at least one `fail` finding
#: (seed 003: only measuring the machine again where it stands tells a fault that travels with it from one
#: its old environment caused). Sent once, when the run is stored; a report posted again sends nothing.
#: Each finding's evidence names the GPU: `serial`, `component_id`, `baseline_run`, `baseline`, `value`.
#: sender=BurnInRun, run=<BurnInRun>, findings=<list[Finding]> (severity fail, code drift_*), actor=<user>
drift_failed = Signal()

#: A run was stored and analysed (every purpose): the warranty app attributes its `fail` findings to what
#: caused them (issue #29: the card, the connector, the host or the room). Sent once, when the run is
#: stored, after its findings; a report posted again sends nothing.
#: sender=BurnInRun, run=<BurnInRun>, findings=<list[Finding]> (all findings of the run), actor=<user>
run_analysed = Signal()
