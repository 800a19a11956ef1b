"""IR -> IR passes that keep the IR's meaning and form (simplify; verify checks the IR) and the
target-level rewrites only the code generator consumes (atomic demotion; reductions add
per-task accumulators). Which run when, in which order: compiler/pipeline.py."""
