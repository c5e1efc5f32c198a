"""Run every benchmark against a throwaway test database (PostgreSQL when DATABASE_URL names it).

`python -m bench` runs them all; `python -m bench deployment burnin_charts` only the ones named (the module
names without `bench_`). Each bench prints its detail as it goes; at the end the runner prints one table of
the key figures each recorded (bench.report: figure, value, target, pass or miss) and writes the same as
JSON to var/bench/results.json (`--json PATH` elsewhere). It exits 1 when a bench failed, and with
`--fail-on-miss` also when a figure missed its target.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

import django


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "werkbank.settings")
    django.setup()
    from django.contrib.contenttypes.models import ContentType
    from django.core import signals
    from django.core.management import call_command
    from django.db import close_old_connections, connection
    from django.test.utils import override_settings, setup_test_environment

    from bench import (
        bench_burnin,
        bench_burnin_analysis,
        bench_burnin_charts,
        bench_burnin_refusals,
        bench_deployment,
        bench_drift,
        bench_handover,
        bench_labels,
        bench_orders,
        bench_quality,
        bench_receive,
        bench_scale,
        bench_search,
        report,
    )
    from werkbank.apps import freeze_startup_heap

    benches = {
        "orders": bench_orders,
        "receive": bench_receive,
        "labels": bench_labels,
        "burnin_analysis": bench_burnin_analysis,
        "burnin": bench_burnin,
        "burnin_charts": bench_burnin_charts,
        "burnin_refusals": bench_burnin_refusals,
        "drift": bench_drift,
        "deployment": bench_deployment,
        "handover": bench_handover,
        "search": bench_search,
        # The scale dataset without its telemetry samples, with failures added (the last but one: the flush
        # after it removes a million rows).
        "quality": bench_quality,
        # Last: it seeds three million rows, which the flush before the next bench would have to remove.
        "scale": bench_scale,
    }
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("benches", nargs="*", metavar="bench", help=f"any of: {', '.join(benches)}")
    parser.add_argument(
        "--json", type=Path, default=report.DEFAULT_PATH, help="where to write the figures as JSON"
    )
    parser.add_argument("--fail-on-miss", action="store_true", help="exit 1 when a figure misses its target")
    arguments = parser.parse_args()
    chosen = arguments.benches or list(benches)
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
    # The API's throttle (werkbank.api.throttling) would answer 429 past WERKBANK_API_RATE requests a minute
    # of one user: the benches make thousands. Off for them (when on, it costs one cache round trip each).
    unthrottled = override_settings(WERKBANK_API_RATE=None)
    unthrottled.enable()
    # Measure as a server process runs: werkbank/wsgi.py freezes the startup heap once the application is
    # loaded (bench_orders times one series without it, for the ratio).
    print(f"froze the startup heap: {freeze_startup_heap():,} objects, as werkbank/wsgi.py does")
    failed: list[str] = []
    started = time.perf_counter()
    try:
        print(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
        for number, name in enumerate(chosen):
            if number:
                # Each bench seeds its own world; empty the tables between them so that none meets another's
                # rows (the handover bench seeds the demo, whose order numbers the orders bench also uses).
                call_command("flush", interactive=False, verbosity=0)
                ContentType.objects.clear_cache()
            print(f"\n== {name} ==", flush=True)
            report.begin(name)
            bench_started = time.perf_counter()
            try:
                benches[name].run()
            except Exception:
                traceback.print_exc()
                failed.append(name)
                report.record("FAILED (see the traceback above)", 1, "error", target=0)
            report.record("duration of the bench", time.perf_counter() - bench_started, "s")
    finally:
        unthrottled.disable()
        connection.creation.destroy_test_db(old_name, verbosity=0)
    total = time.perf_counter() - started
    report.begin("all")
    report.record("duration of the run", total, "s", target=15 * 60 if chosen == list(benches) else None)
    print(f"\n{report.table()}\n\n{report.summary()}")
    path = report.write_json(
        arguments.json, meta={"database": connection.vendor, "benches": chosen, "duration_s": round(total, 1)}
    )
    print(f"figures written to {path}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    missed = [figure for figure in report.figures() if figure.verdict == "miss"]
    return 1 if missed and arguments.fail_on_miss else 0


if __name__ == "__main__":
    sys.exit(main())
