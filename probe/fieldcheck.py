"""The ``field-check`` command: the burn-in's stages, time-boxed, for a machine in the field.

A customer runs it weekly (``probe/systemd/``) and uploads the report; Werkbank compares it GPU by GPU
with the server's own burn-in. So the bench is the burn-in's bench, measurement for measurement (the same
copy sizes, GEMM size and NUMA placement): a figure that drifts must not drift because it was measured
differently. What is shorter is the burn, and what is different is the SEL:

* **Time box.** The whole run fits in ``--duration``. The bench runs first, limited to what remains
  after the finalize reserve and the burn floor; when its share is spent it stops after the current
  measurement and the stage reads ``interrupted`` with what was not measured. The burn gets what remains,
  and at least the floor.
* **Safe.** A GPU that is busy at the start (utilisation at or above ``BUSY_UTIL_PCT``) is not loaded:
  the bench and the burn are skipped with the reason, so a weekly timer never fights a customer's job or
  reports a slowdown that the job caused. ``--allow-busy`` loads anyway.
* **SEL since the last run.** A small JSON state file (``--state-dir``) keeps the last SEL event the
  previous run saw (id, time, identity). Only events after it are reported, as ``during_run`` (they
  happened in the window this report covers). The first run, or a run whose state cannot be read, reports
  the whole SEL as history (``during_run`` false). A missing or unwritable state directory is not fatal:
  the report's errors say so.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from probe import sel
from probe.burnin import BENCH_LIMIT_BASE_S, BENCH_LIMIT_PER_GPU_S, BurnIn
from probe.common import atomic_write_text, iso, utc_now

#: The shortest ``--duration`` accepted: below it the stages cannot even start and end.
MIN_DURATION_S = 2.0
#: The burn keeps at least this (two minutes of all GPUs at full load bring them to their steady-state
#: temperature and power, which is what the drift rules compare), or a fifth of a short time box.
BURN_FLOOR_S, BURN_FLOOR_SHARE = 120.0, 0.2
#: Kept free at the end for the finalize stage: nvidia-smi -q -x of 8 GPUs and a full SEL read take tens of
#: seconds on a slow BMC.
FINALIZE_RESERVE_S, FINALIZE_RESERVE_SHARE = 60.0, 0.1
#: A GPU at or above this utilisation at the start is in use (an idle GPU reads 0 %).
BUSY_UTIL_PCT = 10.0
#: Field checks write a checkpoint every five minutes: a 15 min run would otherwise have none.
FIELD_CHECKPOINT_S = 300.0
STATE_FILE = "field-check-state.json"
STATE_FORMAT = 1


class FieldCheck(BurnIn):
    """One field check: a :class:`BurnIn` with purpose ``field_check``, a time box and a SEL window."""

    def __init__(
        self,
        out: str,
        time_box_s: float,
        interval_s: float,
        *,
        state_dir: str = "/var/lib/werkbank-probe",
        allow_busy: bool = False,
        checkpoint_s: float = FIELD_CHECKPOINT_S,
        **kwargs: Any,
    ) -> None:
        self.time_box_s = time_box_s
        self.burn_floor_s = min(BURN_FLOOR_S, BURN_FLOOR_SHARE * time_box_s)
        self.reserve_s = min(FINALIZE_RESERVE_S, FINALIZE_RESERVE_SHARE * time_box_s)
        # Until the bench has run, the planned burn is everything but the reserve.
        super().__init__(
            out,
            round(time_box_s - self.reserve_s, 1),
            interval_s,
            checkpoint_s=checkpoint_s,
            purpose="field_check",
            **kwargs,
        )
        self.state_dir = state_dir
        self.state_file = os.path.join(state_dir, STATE_FILE)
        self.allow_busy = allow_busy
        self.previous: dict[str, Any] | None = None  # the "sel" part of the previous run's state
        self.window: dict[str, Any] = {
            "state_file": self.state_file,
            "first_run": True,
            "since_id": None,
            "since_ts_utc": None,
            "since_found": None,
            "left_out": 0,
            "saved": False,
        }

    # ----------------------------------------------------------------- time box
    def _remaining(self) -> float:
        return self._started_mono + self.time_box_s - time.monotonic()

    def _bench_limit(self, n_gpus: int) -> tuple[float, bool]:
        watchdog = BENCH_LIMIT_BASE_S + BENCH_LIMIT_PER_GPU_S * n_gpus
        share = self._remaining() - self.reserve_s - self.burn_floor_s
        return max(0.0, min(share, watchdog)), True

    def _burn_seconds(self) -> float:
        seconds = max(self.burn_floor_s, self._remaining() - self.reserve_s)
        self.duration_s = round(seconds, 1)
        return seconds

    def _load_refusal(self) -> str | None:
        if self.allow_busy or not self.doc_start:
            return None
        busy = [
            f"GPU {g['index']} ({g['util_pct']:g} %)"
            for g in self.doc_start["gpus"]
            if g.get("util_pct") is not None and g["util_pct"] >= BUSY_UTIL_PCT
        ]
        if not busy:
            return None
        return (
            f"in use at the start: {', '.join(busy)} utilisation; a field check does not load busy GPUs "
            "(--allow-busy loads them anyway)"
        )

    # ----------------------------------------------------------------- SEL window and state
    def _load_state(self) -> None:
        if not os.path.isdir(self.state_dir):
            self.error(
                "sel_state",
                f"state directory {self.state_dir} does not exist: the whole SEL is reported as history",
            )
            return
        try:
            with open(self.state_file, encoding="utf-8") as fh:
                state = json.load(fh)
        except FileNotFoundError:
            return  # the first field check on this machine
        except (OSError, ValueError) as exc:
            self.error(
                "sel_state", f"cannot read {self.state_file}: {exc}; the whole SEL is reported as history"
            )
            return
        part = state.get("sel") if isinstance(state, dict) else None
        if not isinstance(part, dict) or state.get("format") != STATE_FORMAT:
            self.error(
                "sel_state", f"{self.state_file} is not a state this probe wrote; the whole SEL is history"
            )
            return
        self.previous = part
        last = part.get("last") or {}
        self.window.update(first_run=False, since_id=last.get("id"), since_ts_utc=last.get("ts_utc"))

    def _sel_window(self, events: list[dict[str, Any]], phase: str) -> list[bool | None]:
        if phase != "start":
            return [True] * len(events)
        if self.previous is None:
            return [False] * len(events)
        last = self.previous.get("last")
        if not last:
            return [True] * len(events)  # the SEL was empty at the last run: everything is new
        keys = [list(sel.event_key(ev)) for ev in events]
        if last.get("key") in keys:
            cut = keys.index(last["key"]) + 1
            self.window.update(since_found=True, left_out=cut)
            return [None] * cut + [True] * (len(events) - cut)
        # Cleared or wrapped since: keep what is newer than the last event seen. An event without a time
        # (pre-init) cannot be placed and is kept, so nothing new is lost.
        since = last.get("ts_utc") or last.get("ts_bmc")
        self.error(
            "sel_state",
            f"the last SEL event of the previous run ({last.get('id')}) is no longer in the SEL (cleared "
            "or wrapped); events are kept by time",
        )
        window: list[bool | None] = []
        for ev in events:
            when = ev.get("ts_utc") if last.get("ts_utc") else ev.get("ts_bmc")
            window.append(None if since and when and when <= since else True)
        self.window.update(since_found=False, left_out=window.count(None))
        return window

    def _save_state(self) -> None:
        events = self.sel_last_read
        if events is None:
            return  # no SEL was read: the previous state still describes the last SEL seen
        last = events[-1] if events else None
        state = {
            "format": STATE_FORMAT,
            "saved_at": iso(utc_now()),
            "report": os.path.abspath(self.out),
            "sel": {
                "last": None
                if last is None
                else {
                    "id": last["id"],
                    "ts_utc": last["ts_utc"],
                    "ts_bmc": last["ts_bmc"],
                    "key": list(sel.event_key(last)),
                },
                "entries": len(events),
            },
        }
        try:
            if not os.path.isdir(self.state_dir):
                os.mkdir(self.state_dir, 0o755)  # one level only: a mistyped parent is not created
            atomic_write_text(self.state_file, json.dumps(state, indent=2) + "\n")
        except OSError as exc:
            self.error(
                "sel_state",
                f"cannot write {self.state_file}: {exc.strerror or exc}; the next field check reports the "
                "whole SEL again",
            )
            return
        self.window["saved"] = True

    # ----------------------------------------------------------------- stages
    def _inventory(self) -> None:
        self._load_state()
        super()._inventory()

    def _finalize(self) -> None:
        super()._finalize()
        self._save_state()

    # ----------------------------------------------------------------- report
    def _extra_params(self) -> dict[str, Any]:
        return {
            "time_box_s": self.time_box_s,
            "burn_floor_s": round(self.burn_floor_s, 1),
            "state_dir": self.state_dir,
        }

    def _extra_host_memory(self) -> dict[str, Any]:
        return {"sel_window": dict(self.window)}
