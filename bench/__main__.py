"""Run every benchmark against a throwaway test database (PostgreSQL when DATABASE_URL names it).

`python -m bench` runs them all; `python -m bench deployment burnin_charts` only the ones named (the module
names without `bench_`).
"""

from __future__ import annotations

import os
import sys

import django


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "werkbank.settings")
    django.setup()
    from django.contrib.contenttypes.models import ContentType
    from django.core import signals
    from django.core.management import call_command
    from django.db import close_old_connections, connection
    from django.test.utils import setup_test_environment

    from bench import (
        bench_burnin,
        bench_burnin_analysis,
        bench_burnin_charts,
        bench_deployment,
        bench_handover,
        bench_labels,
        bench_orders,
        bench_receive,
        bench_search,
    )

    benches = {
        "orders": bench_orders,
        "receive": bench_receive,
        "labels": bench_labels,
        "burnin_analysis": bench_burnin_analysis,
        "burnin": bench_burnin,
        "burnin_charts": bench_burnin_charts,
        "deployment": bench_deployment,
        "handover": bench_handover,
        "search": bench_search,
    }
    chosen = sys.argv[1:] or list(benches)
    unknown = [name for name in chosen if name not in benches]
    if unknown:
        print(f"unknown bench(es) {', '.join(unknown)}; choose from {', '.join(benches)}", file=sys.stderr)
        return 2

    setup_test_environment()
    # As Django's TestCase does: keep one connection across requests, so queries can be counted.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
        for number, name in enumerate(chosen):
            if number:
                # Each bench seeds its own world; empty the tables between them so that none meets another's
                # rows (the handover bench seeds the demo, whose order numbers the orders bench also uses).
                call_command("flush", interactive=False, verbosity=0)
                ContentType.objects.clear_cache()
            benches[name].run()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
