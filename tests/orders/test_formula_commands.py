"""The roi, sizing and power-budget commands: their JSON, their tables and their one-line errors.

End-to-end runs go through ``manage.py`` in a subprocess, for the exit status and stderr; the JSON content
is also checked through ``call_command``. LOG_LEVEL=ERROR keeps the start-up log off stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

REPO = Path(__file__).resolve().parents[2]

ROI_ARGS = [
    "--capex", "100000", "--gpus", "8", "--price", "1.00", "--utilization", "0.6", "--platform-fee", "0",
    "--power-active-kw", "6.3", "--power-idle-kw", "1.2", "--pue", "1.3", "--energy-price", "0.15",
    "--colo", "600", "--horizon", "36", "--discount-rate", "0.10",
]  # fmt: skip
SIZING_ARGS = [
    "--model", "llama-3.1-70b", "--weights", "int8", "--kv-dtype", "fp16", "--context", "16384",
    "--concurrency", "8", "--overhead", "0.12", "--gpus", "1", "--gpu-vram-gb", "96",
]  # fmt: skip
POWER_ARGS = [
    "--psu-count", "5", "--psu-rating-w", "1600", "--redundant", "1", "--load-w", "5920",
    "--efficiency", "0.94", "--circuit-v", "230", "--circuit-a", "16", "--phases", "1",
]  # fmt: skip

NO_HEAD_DIM = ["--params-b", "70", "--layers", "80", "--kv-heads", "8"]


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOG_LEVEL": "ERROR", "DJANGO_SETTINGS_MODULE": "werkbank.settings"}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )


def run_json(command: str, *args: str) -> dict:
    out = StringIO()
    call_command(command, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def replace(args: list[str], option: str, value: str) -> list[str]:
    changed = list(args)
    changed[changed.index(option) + 1] = value
    return changed


def without(args: list[str], option: str) -> list[str]:
    index = args.index(option)
    return args[:index] + args[index + 2 :]


# --- roi -------------------------------------------------------------------------------------------------


def test_roi_command_end_to_end_prints_the_worked_example():
    done = manage("roi", *ROI_ARGS, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["hours_per_month"] == 730
    assert data["revenue_month"] == 3504.00
    assert data["energy_month"] == 606.41
    assert data["net_month"] == 2297.59
    assert data["payback_months"] == pytest.approx(43.52, abs=0.005)
    assert data["npv"] == pytest.approx(-28_346, abs=1)
    assert data["irr_annual"] < 0  # 36 months do not recover the capex
    assert data["breakeven_utilization_target"] == pytest.approx(0.6939, abs=0.0001)
    assert data["breakeven_utilization_opex"] == pytest.approx(0.1507, abs=0.0001)
    assert data["pays_back"] is True
    assert data["meets_target"] is False
    assert "buy_vs_rent_breakeven_utilization" not in data
    assert done.stderr == ""


def test_roi_command_options_for_rent_horizon_residual_and_target():
    data = run_json(
        "roi",
        *replace(ROI_ARGS, "--horizon", "60"),
        "--rent-price", "2.00", "--residual", "0", "--other-opex", "0", "--target-payback", "48",
    )  # fmt: skip
    assert data["npv"] == pytest.approx(9_224, abs=1)
    assert data["irr_annual"] == pytest.approx(0.143, abs=0.001)
    assert data["meets_target"] is True
    assert data["breakeven_month"] == 44
    assert len(data["cashflows"]) == 61
    # (100000/60 + 600) / (730 × (2.00 × 8 − 6.3 × 1.3 × 0.15))
    expected = (100_000 / 60 + 600) / (730 * (16 - 6.3 * 1.3 * 0.15))
    assert data["buy_vs_rent_breakeven_utilization"] == pytest.approx(expected, abs=0.0001)


def test_roi_command_infinite_payback_is_null_in_valid_json():
    done = manage("roi", *replace(ROI_ARGS, "--utilization", "0"), "--json")
    assert done.returncode == 0, done.stderr
    assert "Infinity" not in done.stdout
    data = json.loads(done.stdout)
    assert data["payback_months"] is None
    assert data["pays_back"] is False
    assert data["irr_annual"] is None


def test_roi_command_table_states_the_formulas_and_h():
    out = StringIO()
    call_command("roi", *ROI_ARGS, "--rent-price", "2.5", stdout=out)
    text = out.getvalue()
    assert "H = 730" in text
    assert "N·H·U·P·(1−f)" in text
    assert "3,504.00" in text
    assert "2,297.59" in text
    assert "69.4 %" in text
    assert "Buy-vs-rent" in text


# --- sizing ----------------------------------------------------------------------------------------------


def test_sizing_command_end_to_end_prints_the_seed_example():
    done = manage("sizing", *SIZING_ARGS, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["weights_gb"] == pytest.approx(70.55, abs=0.01)
    assert data["kv_bytes_per_token"] == 327_680
    assert data["kv_cache_gb"] == pytest.approx(42.95, abs=0.01)
    assert data["overhead_gb"] == pytest.approx(13.62, abs=0.01)
    assert 120 <= data["total_gb"] <= 130
    assert data["total_gib"] == pytest.approx(data["total_gb"] * 1e9 / 2**30, abs=0.01)
    assert data["per_gpu_gb"] == data["total_gb"]
    assert data["fits"] is False
    assert data["headroom_gb"] == pytest.approx(96 - data["per_gpu_gb"], abs=0.01)


def test_sizing_command_int4_fits():
    data = run_json("sizing", *replace(SIZING_ARGS, "--weights", "int4"))
    assert 85 <= data["total_gb"] <= 95
    assert data["fits"] is True


def test_sizing_command_takes_an_architecture_instead_of_a_preset():
    args = without(SIZING_ARGS, "--model")
    custom = run_json(
        "sizing", *args, "--params-b", "70.554", "--layers", "80", "--kv-heads", "8", "--head-dim", "128"
    )
    assert custom == {**run_json("sizing", *SIZING_ARGS), "model": None}
    mla = run_json("sizing", *args, "--params-b", "671", "--layers", "61", "--mla-latent-dim", "576")
    assert mla["kv_bytes_per_token"] == 70_272


def test_sizing_command_without_vram_gives_no_verdict():
    data = run_json("sizing", "--model", "llama-3.1-8b", "--context", "8192")
    assert data["fits"] is None
    assert data["headroom_gb"] is None


def test_sizing_command_splits_over_tensor_parallel_gpus():
    data = run_json("sizing", *replace(SIZING_ARGS, "--gpus", "2"))
    assert data["tensor_parallel_gpus"] == 2
    assert data["per_gpu_gb"] == pytest.approx(data["total_gb"] / 2, abs=0.01)
    assert data["fits"] is True


# --- power-budget ----------------------------------------------------------------------------------------


def test_power_budget_command_end_to_end_with_the_hyphenated_name():
    done = manage("power-budget", *POWER_ARGS, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["installed_w"] == 8000
    assert data["usable_w"] == 6400
    # DC side: 5920 W of TDP against 6400 × 0.9 = 5760 W, 160 W short; no efficiency in it.
    assert data["psu_load_w"] == 5920
    assert data["usable_with_headroom_w"] == 5760
    assert data["psu_margin_w"] == -160
    assert data["psu_ok"] is False
    # AC side: 5920 / 0.94 = 6297.87 W at the wall against 0.8 × 230 × 16 = 2944 W.
    assert data["wall_power_w"] == 6297.87
    assert data["wall_power_measured"] is False
    assert data["circuit_continuous_w"] == 2944
    assert data["circuit_margin_w"] == -3353.87
    assert data["circuit_ok"] is False
    assert "psu_demand_w" not in data and "wall_w" not in data


def test_power_budget_command_measured_wall_power_and_headroom():
    data = run_json("power-budget", *POWER_ARGS, "--wall-w", "2900", "--headroom", "1.0")
    assert (data["wall_power_w"], data["wall_power_measured"]) == (2900, True)
    assert data["circuit_margin_w"] == 44
    assert data["circuit_ok"] is True
    assert data["usable_with_headroom_w"] == 6400
    assert data["psu_margin_w"] == 480
    assert data["psu_ok"] is True


def test_power_budget_headroom_defaults_to_the_setting(settings):
    settings.WERKBANK_PSU_HEADROOM = 0.5
    data = run_json("power-budget", *POWER_ARGS)
    assert data["usable_with_headroom_w"] == 3200


def test_power_budget_command_table():
    out = StringIO()
    call_command("power-budget", *POWER_ARGS, stdout=out)
    table = out.getvalue()
    assert "6,400 W" in table
    assert "2,944 W" in table
    assert "PSU load (DC)" in table and "5,920 W" in table
    assert "-160 W (-2.8 %) OVER" in table
    assert "DC load / η = 5920 / 0.94" in table and "6,298 W" in table


# --- bad arguments ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["roi", *replace(ROI_ARGS, "--utilization", "1.5")], "--utilization"),
        (["roi", *replace(ROI_ARGS, "--capex", "-100")], "--capex"),
        (["roi", *replace(ROI_ARGS, "--price", "cheap")], "--price"),
        (["roi", *without(ROI_ARGS, "--capex")], "--capex"),
        (["sizing", *replace(SIZING_ARGS, "--model", "gpt-9")], "--model"),
        (["sizing", *without(SIZING_ARGS, "--model"), *NO_HEAD_DIM], "--head-dim"),
        (["sizing", *replace(SIZING_ARGS, "--weights", "int3")], "--weights"),
        (["power-budget", *replace(POWER_ARGS, "--redundant", "5")], "--redundant"),
        (["power-budget", *replace(POWER_ARGS, "--phases", "2")], "--phases"),
    ],
)  # fmt: skip
def test_bad_argument_exits_2_with_one_line_naming_it(args, names):
    done = manage(*args)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert names in lines[0]
    assert done.stdout == ""


def test_bad_argument_through_call_command_is_a_command_error_with_status_2():
    with pytest.raises(CommandError) as caught:
        call_command("roi", *replace(ROI_ARGS, "--utilization", "1.5"), stdout=StringIO())
    assert caught.value.returncode == 2
    assert "--utilization" in str(caught.value)
    with pytest.raises(CommandError) as caught:
        call_command("roi", *replace(ROI_ARGS, "--gpus", "eight"), stdout=StringIO())
    assert caught.value.returncode == 2
    assert "--gpus" in str(caught.value)
