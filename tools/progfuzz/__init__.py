"""progfuzz: random programs in the gfxrt kernel language, checked against an independent
reference evaluator (forward values and gradients). See docs/testing.md.

    python -m tools.progfuzz --count 2000 --jobs 2 --out /tmp/progfuzz
"""
