"""What gr.init reads besides its arguments: the environment (`read_env`, the only reader of
gfxrt's variables: docs/runtime.md "Knobs"; the device keeps the values, `Device.env`) and
Taichi's `ti.init(...)` options (`taichi_options`; `gr.cfg` is in gfxrt/taichi/init.py).

Taichi passes every field of its CompileConfig through `ti.init(**kwargs)`; programs set
many that mean nothing on WebGPU. gfxrt maps the few with a counterpart and accepts the
others without effect; a name Taichi does not know raises KeyError as in Taichi
("Unrecognized keyword argument(s) for ti.init: ...").
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .backend import IN_BROWSER, calls


def _default_threads() -> int:
    return 1 if IN_BROWSER else min(8, os.cpu_count() or 1)  # (a browser tab starts no threads)


@dataclass(frozen=True)
class Env:
    """The environment knobs, parsed and checked (None: the adapter's own default)."""

    adapter: str | None = None          # GFXRT_ADAPTER: a part of the adapter's name
    arch: str | None = None             # TI_ARCH: overrides gr.init(arch=...)
    log_level: tuple | None = None      # (variable, value): GFXRT_LOG_LEVEL, else TI_LOG_LEVEL
    spin_wait_us: float | None = None   # GFXRT_SPIN_WAIT_US (gfxrt/engine/device.py)
    adstack_shared: bool | None = None  # GFXRT_ADSTACK_SHARED
    ad_loops: str = "auto"              # GFXRT_AD_LOOPS
    ad_gather: bool = True              # GFXRT_AD_GATHER
    ad_gather_items: int = 1 << 19      # GFXRT_AD_GATHER_ITEMS
    loop_cap: int | None = None         # GFXRT_LOOP_CAP
    loop_copies: int = 32               # GFXRT_LOOP_COPIES
    shader_checks: str = "bounds"       # GFXRT_SHADER_CHECKS (gfxrt/engine/program.py)
    pipeline_threads: int = field(default_factory=_default_threads)  # GFXRT_PIPELINE_THREADS
    full_traceback: bool = False        # GFXRT_FULL_TRACEBACK (gfxrt/engine/tracebacks.py)
    max_binding: int | None = None      # GFXRT_MAX_BINDING: bytes per storage binding, below the adapter's


def read_env(env=os.environ) -> Env:
    """The knobs set in `env`; ValueError for a value a knob does not take."""
    def get(name):
        return env.get("GFXRT_" + name) or None
    spin = get("SPIN_WAIT_US")
    if spin is not None and float(spin) < 0:
        raise ValueError(f"GFXRT_SPIN_WAIT_US must be >= 0, not {float(spin)}")
    shared = get("ADSTACK_SHARED")
    if shared not in (None, "0", "1"):
        raise ValueError(f"GFXRT_ADSTACK_SHARED must be 0 or 1, not {shared!r}")
    checks = get("SHADER_CHECKS") or "bounds"
    if checks not in calls.SHADER_CHECKS:
        raise ValueError(f"GFXRT_SHADER_CHECKS must be one of {sorted(calls.SHADER_CHECKS)}, not {checks!r}")
    threads = get("PIPELINE_THREADS")
    if threads is not None and (not threads.isdigit() or int(threads) < 1):
        raise ValueError(f"GFXRT_PIPELINE_THREADS must be a positive integer, not {threads!r}")
    if threads is not None and int(threads) > 1 and IN_BROWSER:
        raise ValueError(f"GFXRT_PIPELINE_THREADS={threads}: Python in a browser tab (Pyodide) cannot start "
                         "threads; leave it unset or 1 there")
    binding = get("MAX_BINDING")
    if binding is not None and (not binding.isdigit() or int(binding) < 2048):
        raise ValueError(f"GFXRT_MAX_BINDING must be an integer number of bytes >= 2048, not {binding!r}")
    level = next(((v, env[v]) for v in ("GFXRT_LOG_LEVEL", "TI_LOG_LEVEL") if env.get(v)), None)
    return Env(adapter=get("ADAPTER"), arch=env.get("TI_ARCH") or None, log_level=level,
               spin_wait_us=None if spin is None else float(spin),
               adstack_shared=None if shared is None else shared == "1",
               ad_loops=get("AD_LOOPS") or "auto", ad_gather=get("AD_GATHER") != "0",
               ad_gather_items=int(get("AD_GATHER_ITEMS") or 1 << 19),
               loop_cap=None if get("LOOP_CAP") is None else int(get("LOOP_CAP")),
               loop_copies=max(1, int(get("LOOP_COPIES") or 32)), shader_checks=checks,
               pipeline_threads=int(threads) if threads else _default_threads(),
               full_traceback=(get("FULL_TRACEBACK") or "").strip().lower() not in ("", "0", "false", "no", "off"),
               max_binding=int(binding) if binding else None)

# name -> what it becomes in gr.init (None: accepted, no effect in gfxrt)
MAPPED = {
    "check_out_of_bound": "debug",   # bounds checks are gfxrt's debug mode
    "ad_stack_size": "adstack_size",
    "default_ad_stack_size": None,   # gfxrt sizes the adstack per launch
    "use_gles": "gles",              # arch=gr.opengl -> gr.gles
    "kernel_profiler": "kernel_profiler",  # a gr.profile() kept open: gr.profiler.print_kernel_profiler_info()
    "fast_math": "fast_math",        # x / c as x * (1 / c) (compiler/passes/simplify.py); on, as Taichi's default
    "log_level": "log_level",        # "warn" and above: no "[gfxrt] Starting on ..." line (gfxrt/engine/messages.py)
}
IGNORED = (
    # memory: gfxrt allocates per container, not from a preallocated pool
    "device_memory_GB", "device_memory_fraction", "packed", "dynamic_index",
    # logging and IR dumps (GFXRT_PRINT_IR does the latter)
    "print_ir", "print_preprocessed_ir", "print_preprocessed", "experimental_ast_refactor",
    "print_kernel_llvm_ir", "print_kernel_llvm_ir_optimized",
    "print_kernel_nvptx", "print_kernel_amdgcn", "print_accessor_ir", "print_ir_dbg_info", "print_kernel_asm",
    "verbose", "verbose_kernel_launches", "gdb_trigger", "short_circuit_operators",
    # optimization switches: gfxrt's pipeline is fixed
    "advanced_optimization", "opt_level", "external_optimization_level", "flatten_if",
    "make_thread_local", "make_block_local", "make_mesh_block_local", "lower_access", "demote_dense_struct_fors",
    "simplify_before_lower_access", "simplify_after_lower_access", "move_loop_invariant_outside_if",
    "cache_loop_invariant_global_vars", "detect_read_only", "real_matrix_scalarize", "force_scalarize_matrix",
    "half2_vectorization", "experimental_auto_mesh_local", "auto_mesh_local_default_occupacy",
    "mesh_localize_to_end_mapping", "mesh_localize_from_end_mapping", "mesh_localize_all_attr_mappings",
    "optimize_mesh_reordered_mapping", "quant_opt_store_fusion", "quant_opt_atomic_demotion",
    "constant_folding", "serial_schedule", "async_mode", "num_compile_threads", "timeline",
    # threads and blocks: WebGPU workgroups are chosen per kernel (gr.loop_config(block_dim=...))
    "cpu_max_num_threads", "cpu_block_dim_adaptive", "default_cpu_block_dim", "default_gpu_block_dim",
    "gpu_max_reg", "saturating_grid_dim", "max_block_dim", "vk_api_version", "cuda_stack_limit",
    # the offline cache is GFXRT_CACHE_DIR, its size bound GFXRT_CACHE_MAX_BYTES
    "offline_cache_file_path", "offline_cache_max_size_of_files", "offline_cache_cleaning_policy",
    "offline_cache_cleaning_factor",
    # Taichi's own bookkeeping
    "require_version", "_test_mode", "debug_autodiff", "check_version",
)


class UnrecognizedOption(KeyError, TypeError):
    """An unknown gr.init option: KeyError as in Taichi, and the TypeError of a Python call."""

    def __str__(self):
        return self.args[0]


def taichi_options(kwargs: dict) -> dict:
    """gr.init's extra keyword arguments as gfxrt settings ({'debug': ..., 'adstack_size': ...})."""
    unknown = [k for k in kwargs if k not in MAPPED and k not in IGNORED]
    if unknown:
        raise UnrecognizedOption(f"Unrecognized keyword argument(s) for gr.init: {', '.join(unknown)}")
    out = {}
    for k, v in kwargs.items():
        to = MAPPED.get(k)
        if to == "debug":
            out["debug"] = out.get("debug", False) or bool(v)
        elif to == "adstack_size" and v:
            out["adstack_size"] = int(v)
        elif to == "log_level":
            out[to] = v
        elif to in ("gles", "kernel_profiler", "fast_math"):
            out[to] = bool(v)
    return out
