"""The engine wing: the device and its interface, memory, the dispatch recorder, the launcher,
GfxRuntime and the process context (docs/design.md, "Layers")."""
