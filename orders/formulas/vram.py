"""VRAM sizing (reference §1, §2; seed 001): the VRAM a model needs to serve its workload, against the
configuration's VRAM per GPU and in total.

GB = 10**9 bytes and GiB = 2**30 bytes; the results give both.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, fields
from typing import Any

from orders.formulas.inputs import GB, GIB, Bound, FormulaInputError, _set

#: Bounds of the workload (VRAM sizing) inputs. The largest public models have ~2,000 B parameters,
#: 128 layers, 128 KV heads of 256, and contexts of 10 M tokens.
SIZING_BOUNDS: dict[str, Bound] = {
    "params_b": Bound(0, 100_000, low_open=True, reason="50 times the largest public model (2 T)"),
    "layers": Bound(1, 10_000, integer=True, reason="today's deepest models have under 200 layers"),
    "kv_heads": Bound(1, 4_096, integer=True, reason="models have at most 128 attention heads"),
    "head_dim": Bound(1, 65_536, integer=True, reason="head dimensions are 64–256"),
    "mla_latent_dim": Bound(1, 65_536, integer=True, reason="DeepSeek's latent is 576"),
    "context_tokens": Bound(1, 100_000_000, integer=True, reason="the longest contexts are 10 M tokens"),
    "concurrency": Bound(1, 1_000_000, integer=True, reason="a server serves at most thousands at once"),
    "tensor_parallel_gpus": Bound(1, 1_024, integer=True, reason="64 GPUs per server, 16 servers"),
    "overhead_fraction": Bound(0, 1, reason="the seed's 10–15 %; over 100 % is no estimate"),
    "gpu_count": Bound(1, 65_536, integer=True, reason="the configuration's GPUs in the whole order"),
    "gpu_vram_gb": Bound(0, 100_000, low_open=True, reason="today's largest GPU has under 300 GB"),
}


#: Bytes per element. fp32 4, fp16/bf16 2, fp8/int8 1, int4/fp4 0.5. ``awq`` is 4-bit group-quantised
#: weights with their scales and zeros, ≈ 4.16 bits (group 128, reference §1). ``q8_0``/``q4_0`` are
#: llama.cpp's block formats, 34 and 18 bytes per 32 values (reference §1).
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
    "awq": 4.16 / 8,
    "q8_0": 34 / 32,
    "q4_0": 18 / 32,
}


def dtype_bytes(field: str, dtype: str) -> float:
    """Bytes per element of ``dtype`` (case-insensitive); FormulaInputError naming ``field`` if unknown."""
    key = str(dtype).strip().lower()
    if key not in DTYPE_BYTES:
        raise FormulaInputError(field, f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}.")
    return DTYPE_BYTES[key]


@dataclass(frozen=True, kw_only=True)
class ModelArchitecture:
    """What sizing needs from a model's config.json (reference §2). ``params_b`` in billions.

    For MLA models (DeepSeek) ``mla_latent_dim`` = kv_lora_rank + qk_rope_head_dim, and, as in vLLM,
    ``kv_heads`` = 1 and ``head_dim`` = the latent dimension.
    """

    params_b: float
    layers: int
    kv_heads: int
    head_dim: int
    mla_latent_dim: int | None = None
    source: str = ""


#: Known architectures, from the reference's table (§2). Parameter counts are the totals: every expert
#: of an MoE model must be resident.
PRESETS: dict[str, ModelArchitecture] = {
    "llama-3.1-8b": ModelArchitecture(
        params_b=8.030,
        layers=32,
        kv_heads=8,
        head_dim=128,
        source="NaniDAO/Meta-Llama-3.1-8B-Instruct-ablated (_name_or_path meta-llama)",
    ),
    "llama-3.1-70b": ModelArchitecture(
        params_b=70.554,
        layers=80,
        kv_heads=8,
        head_dim=128,
        source="mlabonne/Llama-3.1-70B-Instruct-lorablated; FriendliAI int8 copy",
    ),
    "qwen2.5-72b": ModelArchitecture(
        params_b=72.706,
        layers=80,
        kv_heads=8,
        head_dim=128,
        source="m8than/banana-2-b-72b (_name_or_path Qwen/Qwen2.5-72B-Instruct)",
    ),
    "mixtral-8x7b": ModelArchitecture(
        params_b=46.70,
        layers=32,
        kv_heads=8,
        head_dim=128,
        source="mistralai/Mixtral-8x7B-Instruct-v0.1 @eba92302 (46.70 B total, 12.88 B active)",
    ),
    "deepseek-v3": ModelArchitecture(
        params_b=671.0,
        layers=61,
        kv_heads=1,
        head_dim=576,
        mla_latent_dim=576,
        source=(
            "amd/DeepSeek-R1-0528-MXFP4 config; vLLM DeepseekV3Config (MLA: kv_lora_rank 512 + "
            "qk_rope_head_dim 64); 671 B is DeepSeek's publicly stated total, not in the reference table"
        ),
    ),
    "glm-4.6": ModelArchitecture(
        params_b=355.0,
        layers=92,
        kv_heads=8,
        head_dim=128,
        source=(
            "zai-org/GLM-4.7-FP8; RedHatAI/GLM-4.6-NVFP4 (MTP layer not counted); 355 B is Z.ai's "
            "publicly stated total, not in the reference table"
        ),
    ),
}

_ARCHITECTURE_FIELDS = ("params_b", "layers", "kv_heads", "head_dim", "mla_latent_dim")


@dataclass(frozen=True, kw_only=True)
class SizingInputs:
    """Inputs of the VRAM check (seed 001; reference §1).

    ``params_b`` in billions. ``kv_heads`` and ``head_dim`` may be left out (None or 0) for an MLA model:
    they become 1 and ``mla_latent_dim`` (vLLM's convention). ``overhead_fraction`` defaults to 0.12, inside
    the seed's 10–15 %. The model is split over ``tensor_parallel_gpus``; ``gpu_count`` (the
    configuration's GPUs, default ``tensor_parallel_gpus``) and ``gpu_vram_gb`` give the VRAM to compare.
    """

    params_b: float
    layers: int
    kv_heads: int | None = None
    head_dim: int | None = None
    mla_latent_dim: int | None = None
    weights_dtype: str = "fp16"
    kv_dtype: str = "fp16"
    context_tokens: int
    concurrency: int = 1
    overhead_fraction: float = 0.12
    tensor_parallel_gpus: int = 1
    gpu_vram_gb: float | None = None
    gpu_count: int | None = None

    def __post_init__(self) -> None:
        for name in ("params_b", "layers"):
            if getattr(self, name) is None:
                raise FormulaInputError(name, "missing architecture field: give it or choose a preset.")
        latent = None
        if self.mla_latent_dim is not None:
            latent = int(SIZING_BOUNDS["mla_latent_dim"].check("mla_latent_dim", self.mla_latent_dim))
        kv_heads, head_dim = self.kv_heads, self.head_dim
        if latent is not None:
            # MLA caches one latent per layer: the head fields do not enter the formula, so an unset (None
            # or 0) value takes vLLM's convention instead of failing.
            kv_heads = kv_heads or 1
            head_dim = head_dim or latent
        for name, value in (("kv_heads", kv_heads), ("head_dim", head_dim)):
            if value is None:
                raise FormulaInputError(
                    name, "missing architecture field: give it (or mla_latent_dim) or choose a preset."
                )
        tp = _sized("tensor_parallel_gpus", self.tensor_parallel_gpus)
        gpu_count = tp if self.gpu_count is None else _sized("gpu_count", self.gpu_count)
        if gpu_count < tp:
            raise FormulaInputError(
                "gpu_count", f"the model is split over {tp} GPUs but the configuration has {gpu_count}."
            )
        vram = None if self.gpu_vram_gb is None else _sized("gpu_vram_gb", self.gpu_vram_gb)
        dtype_bytes("weights_dtype", self.weights_dtype)
        dtype_bytes("kv_dtype", self.kv_dtype)
        _set(
            self,
            params_b=_sized("params_b", self.params_b),
            layers=_sized("layers", self.layers),
            kv_heads=_sized("kv_heads", kv_heads),
            head_dim=_sized("head_dim", head_dim),
            mla_latent_dim=latent,
            weights_dtype=str(self.weights_dtype).strip().lower(),
            kv_dtype=str(self.kv_dtype).strip().lower(),
            context_tokens=_sized("context_tokens", self.context_tokens),
            concurrency=_sized("concurrency", self.concurrency),
            overhead_fraction=_sized("overhead_fraction", self.overhead_fraction),
            tensor_parallel_gpus=tp,
            gpu_vram_gb=vram,
            gpu_count=gpu_count,
        )


def _sized(field: str, value: Any) -> Any:
    """``value`` checked against its :data:`SIZING_BOUNDS`; an int for the whole-number fields."""
    bound = SIZING_BOUNDS[field]
    number = bound.check(field, value)
    return int(number) if bound.integer else number


def sizing_inputs_from_preset(name: str, **overrides: Any) -> SizingInputs:
    """SizingInputs for a known model (:data:`PRESETS`), with ``overrides`` for any field.

    Raises FormulaInputError("model", …) for an unknown preset, and names any unknown or missing field.
    """
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise FormulaInputError("model", f"unknown preset {name!r}; known: {', '.join(PRESETS)}.")
    architecture = PRESETS[key]
    values: dict[str, Any] = {field: getattr(architecture, field) for field in _ARCHITECTURE_FIELDS}
    known = {f.name: f for f in fields(SizingInputs)}
    for field, value in overrides.items():
        if field not in known:
            raise FormulaInputError(field, "not a sizing input.")
        values[field] = value
    for field in known.values():
        if field.name not in values and field.default is MISSING:
            raise FormulaInputError(field.name, "is required.")
    return SizingInputs(**values)


@dataclass(frozen=True)
class SizingResult:
    """Outputs of :func:`sizing`: GB = 10**9 B, GiB = 2**30 B; ``per_gpu`` is the busiest GPU."""

    weights_gb: float
    kv_bytes_per_token: float
    kv_cache_gb: float
    overhead_gb: float
    total_gb: float
    total_gib: float
    per_gpu_gb: float
    per_gpu_gib: float
    weights_gib: float
    kv_cache_gib: float
    total_vram_gb: float | None
    fits: bool | None
    headroom_gb: float | None


def kv_bytes_per_token(
    *, layers: int, kv_heads: int, head_dim: int, kv_bytes: float, mla_latent_dim: int | None = None
) -> float:
    """KV-cache bytes per token.

    GQA/MHA: 2 × L × n_kv × d_head × b_kv (K and V, only the KV heads; vLLM ``AttentionSpec``).
    MLA: L × latent × b_kv (one compressed latent, no factor 2; vLLM ``MLAAttentionSpec``).
    """
    if mla_latent_dim is not None:
        return layers * mla_latent_dim * kv_bytes
    return 2 * layers * kv_heads * head_dim * kv_bytes


def sizing(inputs: SizingInputs) -> SizingResult:
    """VRAM a model needs to serve ``concurrency`` requests of ``context_tokens`` each (seed 001).

    - weights W = params × bytes/param
    - KV = context × concurrency × kv_bytes_per_token (the worst case: every request at full context)
    - overhead = o × (W + KV); total = W + KV + overhead. total is the model's own sum, as in the seed,
      without the copies tensor parallelism replicates.
    - per GPU = (W / tp + KV_gpu) × (1 + o). Each GPU holds ceil(n_kv / tp) of the n_kv KV heads, so
      KV_gpu = KV × ceil(n_kv/tp) / n_kv: KV is replicated when tp > n_kv (reference §1). This equals the
      reference's max(1, n_kv // tp) whenever one divides the other (the layouts vLLM accepts) and takes
      the busiest GPU for uneven splits (e.g. 6 GPUs, 8 KV heads). MLA has a single latent "head",
      replicated in full on every GPU.
    - fits = per_gpu ≤ VRAM per GPU and total ≤ VRAM × gpu_count; headroom = VRAM − per_gpu (per GPU).
      None without a VRAM figure.
    """
    w_bytes = dtype_bytes("weights_dtype", inputs.weights_dtype)
    kv_elem = dtype_bytes("kv_dtype", inputs.kv_dtype)
    per_token = kv_bytes_per_token(
        layers=inputs.layers,
        kv_heads=inputs.kv_heads or 1,
        head_dim=inputs.head_dim or 1,
        kv_bytes=kv_elem,
        mla_latent_dim=inputs.mla_latent_dim,
    )
    weights = inputs.params_b * 1e9 * w_bytes
    kv_total = inputs.context_tokens * inputs.concurrency * per_token
    factor = 1 + inputs.overhead_fraction
    total = (weights + kv_total) * factor

    tp = inputs.tensor_parallel_gpus
    if inputs.mla_latent_dim is not None:
        kv_share = 1.0
    else:
        n_kv = inputs.kv_heads or 1
        kv_share = math.ceil(n_kv / tp) / n_kv
    per_gpu = (weights / tp + kv_total * kv_share) * factor

    total_vram = fits = headroom = None
    if inputs.gpu_vram_gb is not None:
        count = inputs.gpu_count or tp
        total_vram = inputs.gpu_vram_gb * count
        fits = per_gpu / GB <= inputs.gpu_vram_gb and total / GB <= total_vram
        headroom = inputs.gpu_vram_gb - per_gpu / GB

    return SizingResult(
        weights_gb=weights / GB,
        kv_bytes_per_token=per_token,
        kv_cache_gb=kv_total / GB,
        overhead_gb=(weights + kv_total) * inputs.overhead_fraction / GB,
        total_gb=total / GB,
        total_gib=total / GIB,
        per_gpu_gb=per_gpu / GB,
        per_gpu_gib=per_gpu / GIB,
        weights_gib=weights / GIB,
        kv_cache_gib=kv_total / GIB,
        total_vram_gb=total_vram,
        fits=fits,
        headroom_gb=headroom,
    )
