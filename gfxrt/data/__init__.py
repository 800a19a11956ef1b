"""The data wing: ndarrays, fields, host element access, copies (docs/design.md, "Layers")."""
