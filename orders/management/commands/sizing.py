"""``manage.py sizing``: the VRAM a model needs and whether it fits (orders.formulas.sizing)."""

from __future__ import annotations

from typing import Any

from orders.formulas import (
    DTYPE_BYTES,
    PRESETS,
    FormulaInputError,
    SizingInputs,
    SizingResult,
    sizing,
    sizing_inputs_from_preset,
)

from ._formula_cli import MONEY, FormulaCommand, fmt, result_dict

#: Options that describe the model; with --model they override the preset's values.
ARCHITECTURE_OPTIONS = {
    "params_b": "--params-b",
    "layers": "--layers",
    "kv_heads": "--kv-heads",
    "head_dim": "--head-dim",
    "mla_latent_dim": "--mla-latent-dim",
}


class Command(FormulaCommand):
    help = (
        "Weights, KV cache and overhead of a model in GB (10^9 B) and GiB (2^30 B), per GPU and in total, "
        "against the configuration's VRAM."
    )
    option_names = {
        "model": "--model",
        **ARCHITECTURE_OPTIONS,
        "weights_dtype": "--weights",
        "kv_dtype": "--kv-dtype",
        "context_tokens": "--context",
        "concurrency": "--concurrency",
        "overhead_fraction": "--overhead",
        "tensor_parallel_gpus": "--tensor-parallel",
        "gpu_count": "--gpus",
        "gpu_vram_gb": "--gpu-vram-gb",
    }

    def add_arguments(self, parser: Any) -> None:
        dtypes = ", ".join(DTYPE_BYTES)
        model = parser.add_argument_group("model: a preset, or the architecture options (they override one)")
        model.add_argument("--model", help=f"Preset: {', '.join(PRESETS)}.")
        model.add_argument("--params-b", type=float, help="Parameters in billions.")
        model.add_argument("--layers", type=int, help="Transformer layers.")
        model.add_argument("--kv-heads", type=int, help="KV heads (GQA); 1 for MLA.")
        model.add_argument("--head-dim", type=int, help="Head dimension.")
        model.add_argument("--mla-latent-dim", type=int, help="MLA latent: kv_lora_rank + qk_rope_head_dim.")
        parser.add_argument("--weights", default="fp16", help=f"Weights dtype ({dtypes}); default fp16.")
        parser.add_argument("--kv-dtype", default="fp16", help=f"KV-cache dtype ({dtypes}); default fp16.")
        parser.add_argument("--context", type=int, required=True, help="Context tokens per request.")
        parser.add_argument("--concurrency", type=int, default=1, help="Concurrent requests; default 1.")
        parser.add_argument("--overhead", type=float, default=0.12, help="Overhead fraction; default 0.12.")
        parser.add_argument("--gpus", type=int, default=None, help="GPUs in the configuration; default 1.")
        parser.add_argument(
            "--tensor-parallel", type=int, default=None, help="GPUs the model is split over; default --gpus."
        )
        parser.add_argument("--gpu-vram-gb", type=float, default=None, help="VRAM per GPU in GB (10^9 B).")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of a table.")

    def handle(self, *args: Any, **options: Any) -> None:
        gpus = options["gpus"]
        tp = options["tensor_parallel"] or gpus or 1
        common = {
            "weights_dtype": options["weights"],
            "kv_dtype": options["kv_dtype"],
            "context_tokens": options["context"],
            "concurrency": options["concurrency"],
            "overhead_fraction": options["overhead"],
            "tensor_parallel_gpus": tp,
            "gpu_count": gpus,
            "gpu_vram_gb": options["gpu_vram_gb"],
        }
        architecture = {field: options[field] for field in ARCHITECTURE_OPTIONS}
        try:
            if options["model"]:
                given = {field: value for field, value in architecture.items() if value is not None}
                inputs = sizing_inputs_from_preset(options["model"], **given, **common)
            else:
                inputs = SizingInputs(**architecture, **common)
        except FormulaInputError as exc:
            raise self.input_error(exc) from exc
        result = sizing(inputs)
        if options["json"]:
            data = {
                "model": options["model"],
                **result_dict(result, decimals={}, default=MONEY),
                "tensor_parallel_gpus": inputs.tensor_parallel_gpus,
                "gpu_count": inputs.gpu_count,
            }
            self.write_json(data)
        else:
            self.write_table(options["model"], inputs, result)

    def write_table(self, model: str | None, i: SizingInputs, r: SizingResult) -> None:
        if i.mla_latent_dim is not None:
            kv_formula = f"L·latent·b_kv = {i.layers} × {i.mla_latent_dim} × {i.kv_dtype}"
        else:
            kv_formula = f"2·L·n_kv·d_head·b_kv = 2 × {i.layers} × {i.kv_heads} × {i.head_dim} × {i.kv_dtype}"
        tp = i.tensor_parallel_gpus
        rows = [
            (
                "Weights",
                f"params × bytes = {i.params_b:g} B × {i.weights_dtype}",
                f"{fmt(r.weights_gb, 2, 'GB')} ({fmt(r.weights_gib, 2, 'GiB')})",
            ),
            ("KV per token", kv_formula, fmt(r.kv_bytes_per_token, 0, "B")),
            (
                "KV cache",
                f"context × concurrency × per token = {i.context_tokens} × {i.concurrency}",
                f"{fmt(r.kv_cache_gb, 2, 'GB')} ({fmt(r.kv_cache_gib, 2, 'GiB')})",
            ),
            ("Overhead", f"o × (W + KV), o = {i.overhead_fraction:g}", fmt(r.overhead_gb, 2, "GB")),
            ("Total", "W + KV + overhead", f"{fmt(r.total_gb, 2, 'GB')} ({fmt(r.total_gib, 2, 'GiB')})"),
            (
                "Per GPU",
                f"(W/tp + KV share) × (1 + o), tp = {tp}",
                f"{fmt(r.per_gpu_gb, 2, 'GB')} ({fmt(r.per_gpu_gib, 2, 'GiB')})",
            ),
        ]
        if r.fits is not None:
            rows += [
                ("VRAM", f"{i.gpu_count} × {i.gpu_vram_gb:g} GB", fmt(r.total_vram_gb, 2, "GB")),
                ("Headroom per GPU", "VRAM − per GPU", fmt(r.headroom_gb, 2, "GB")),
                ("Fits", "per GPU ≤ VRAM and total ≤ all VRAM", "yes" if r.fits else "no"),
            ]
        self.write_rows(f"VRAM sizing of {model or 'a custom model'} (GB = 10^9 B, GiB = 2^30 B)", rows)
