"""Device objects for one compiled kernel: shader module, layouts and one pipeline per task."""
from __future__ import annotations

from compiler.errors import InternalCompilerError
from compiler.spec import KernelSpec


class Program:
    """The pipelines of a `KernelSpec` on one device. Creating it validates the WGSL; a
    rejection is a compiler bug and raises `InternalCompilerError` with the code attached."""

    def __init__(self, device, spec: KernelSpec):
        import wgpu
        self.spec = spec
        stage = wgpu.ShaderStage.COMPUTE
        entries = [{"binding": b.binding, "visibility": stage,
                    "buffer": {"type": "read-only-storage" if b.read_only else "storage"}}
                   for b in spec.bindings]
        try:
            module = device.create_shader_module(code=spec.wgsl, label=spec.name)
            self.bind_group_layout = device.create_bind_group_layout(entries=entries)
            self.layout = device.create_pipeline_layout(bind_group_layouts=[self.bind_group_layout],
                                                        immediate_size=spec.params_size)
            self.pipelines = [device.create_compute_pipeline(
                layout=self.layout, compute={"module": module, "entry_point": t.entry}, label=t.entry)
                for t in spec.tasks]
        except Exception as e:  # naga/driver rejected our WGSL: a compiler bug, never an abort
            raise InternalCompilerError(f"{type(e).__name__}: {e}", spec.wgsl) from None
