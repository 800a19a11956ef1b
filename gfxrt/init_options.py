"""Taichi's `ti.init(...)` options that `gr.init` accepts beyond its own (gfxrt/context.py
reads them through `taichi_options`; `gr.cfg` is in gfxrt/taichi_init.py).

Taichi passes every field of its CompileConfig through `ti.init(**kwargs)`; programs set
many that mean nothing on WebGPU. gfxrt maps the few with a counterpart and accepts the
others without effect; a name Taichi does not know raises KeyError as in Taichi
("Unrecognized keyword argument(s) for ti.init: ...").
"""
from __future__ import annotations

# name -> what it becomes in gr.init (None: accepted, no effect in gfxrt)
MAPPED = {
    "check_out_of_bound": "debug",   # bounds checks are gfxrt's debug mode
    "ad_stack_size": "adstack_size",
    "default_ad_stack_size": None,   # gfxrt sizes the adstack per launch
    "use_gles": "gles",              # arch=gr.opengl -> gr.gles
    "kernel_profiler": "kernel_profiler",  # a gr.profile() kept open: gr.profiler.print_kernel_profiler_info()
    "log_level": "log_level",        # "warn" and above: no "[gfxrt] Starting on ..." line (gfxrt/messages.py)
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
    "fast_math", "advanced_optimization", "opt_level", "external_optimization_level", "flatten_if",
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
        elif to in ("gles", "kernel_profiler"):
            out[to] = bool(v)
    return out
