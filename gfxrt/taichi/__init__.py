"""The Taichi compatibility wing: Taichi's names on top of gfxrt's own; nothing below imports it
(docs/design.md, "Layers")."""
