"""Benchmark modules: each registers one or more benchmarks (bench.registry.benchmark).

ORDER fixes the order of tables and runs; a new module not listed here runs after these.
"""
ORDER = ["launch", "bandwidth", "reduction", "scan", "stencil", "matmul", "atomics", "compile", "graph", "copies",
         "autodiff", "gui", "browser"]
