"""Taichi's compute-graph API, `gr.graph.GraphBuilder` (Taichi's `ti.graph`), on top of gfxrt's
graph capture (gfxrt/graph.py). See docs/graph.md, "Taichi's GraphBuilder".

    sym_x = gr.graph.Arg(gr.graph.ArgKind.NDARRAY, "x", dtype=gr.math.vec2, ndim=1)
    b = gr.graph.GraphBuilder()
    b.dispatch(step, sym_x, ...)          # kernels with symbolic arguments, in order
    g = b.compile()
    g.run({"x": x, ...})                  # binds names to arrays / scalars / vectors, runs

A compiled graph is a list of (kernel, arguments). A capture binds arrays by identity and bakes
scalars in, so `run` keys the binding: the identity of every array and the value of every
scalar or vector argument. The first run of a binding launches the kernels eagerly (which also
compiles them and uploads what their first launch needs); the second captures them into a
`gr.graph()` and replays it, and every later run of that binding replays. The last
`CACHED_BINDINGS` bindings are kept (their graphs pin the arrays they bind, and the graph keeps
the arrays alive); an older one is released. A binding whose capture fails (a kernel that
returns a value, say) runs eagerly from then on.

`gr.graph` is both this namespace and the capture function: `gr.graph()` opens a capture,
`gr.graph.GraphBuilder()` builds a Taichi graph.
"""
from __future__ import annotations

import enum
from collections import OrderedDict

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.textures import RWTextureType, format_of
from gfxrt.compiler.types import DType, MatrixType, VectorType, element_matches, element_shape, f32, scalar_of

from ..data.field import Field
from ..data.ndarray import Ndarray, as_element_type
from ..data.oop import BoundKernel
from ..data.texture import Texture
from ..engine.threadstate import THREAD
from ..errors import GraphCaptureError
from ..graph import Graph as CaptureGraph
from ..graph import graph as capture_graph
from ..kernel import Kernel

CACHED_BINDINGS = 8  # bindings (arrays by identity, scalar values) a compiled graph keeps captured


class ArgKind(enum.Enum):
    """Taichi's `ti.graph.ArgKind`: what a symbolic argument stands for."""

    SCALAR = 0
    NDARRAY = 1
    MATRIX = 2
    TEXTURE = 3
    RWTEXTURE = 4


_POSITIONAL = ("tag", "name", "dtype", "ndim", "field_dim", "element_shape")
_ALLOWED = {ArgKind.SCALAR: {"tag", "name", "dtype"}, ArgKind.MATRIX: {"tag", "name", "dtype"},
            ArgKind.NDARRAY: {"tag", "name", "dtype", "ndim", "field_dim"},
            ArgKind.TEXTURE: {"tag", "name", "ndim"}, ArgKind.RWTEXTURE: {"tag", "name", "ndim", "fmt"}}
_TEXTURES = (ArgKind.TEXTURE, ArgKind.RWTEXTURE)


class Arg:
    """A named, typed placeholder for a kernel argument of a graph (Taichi's `ti.graph.Arg`):

    - `Arg(ArgKind.SCALAR, "dt", gr.f32)`: a scalar;
    - `Arg(ArgKind.NDARRAY, "x", dtype=gr.math.vec2, ndim=1)`: an array of that element type and ndim;
    - `Arg(ArgKind.MATRIX, "g", gr.math.vec3)`: a vector or matrix value;
    - `Arg(ArgKind.TEXTURE, "tex", ndim=2)`: a gr.Texture for a `gr.types.texture(2)` parameter;
    - `Arg(ArgKind.RWTEXTURE, "img", fmt=gr.Format.r32f, ndim=2)`: one for a `gr.types.rw_texture` parameter.

    Positional order as Taichi's: tag, name, dtype, ndim. `element_type` is the dtype given (a
    vector / matrix type for arrays of vectors / matrices); as in Taichi, `dtype()` is its
    scalar type and `element_shape` its shape.
    """

    def __init__(self, *args, **kwargs):
        if len(args) > len(_POSITIONAL):
            raise TypeError(f"gr.graph.Arg takes at most {len(_POSITIONAL)} positional arguments, got {len(args)}")
        for key, v in zip(_POSITIONAL, args):
            if key in kwargs:
                raise TypeError(f"gr.graph.Arg got {key!r} twice")
            kwargs[key] = v
        tag = kwargs.get("tag")
        if not isinstance(tag, ArgKind):
            raise TypeError(f"gr.graph.Arg: tag must be a gr.graph.ArgKind, got {tag!r}")
        if "element_shape" in kwargs:
            raise TypeError("gr.graph.Arg: element_shape was removed in Taichi 1.7; give the element type as dtype "
                            "(gr.types.vector(2, gr.f32), gr.math.mat2, ...)")
        bad = set(kwargs) - _ALLOWED[tag]
        if bad:
            raise TypeError(f"gr.graph.Arg({tag}) takes {sorted(_ALLOWED[tag])}, got {sorted(bad)}")
        if "field_dim" in kwargs:  # Taichi's old name of ndim
            if "ndim" in kwargs:
                raise TypeError("gr.graph.Arg: give ndim or its old name field_dim, not both")
            kwargs["ndim"] = kwargs.pop("field_dim")
        needs = ("name", "ndim", *(("fmt",) if tag is ArgKind.RWTEXTURE else ())) if tag in _TEXTURES else \
            ("name", "dtype", *(("ndim",) if tag is ArgKind.NDARRAY else ()))
        for key in needs:
            if key not in kwargs:
                raise TypeError(f"gr.graph.Arg({tag}) needs {key}")
        self.tag, self.name = tag, kwargs["name"]
        if not isinstance(self.name, str):
            raise TypeError(f"gr.graph.Arg: name must be a str, got {self.name!r}")
        # a texture reads as 4 f32 (Taichi's Arg says the same); a rw_texture's format is its fmt
        self.fmt = format_of(kwargs["fmt"]) if "fmt" in kwargs else None
        self.element_type = as_element_type(kwargs["dtype"]) if tag not in _TEXTURES else f32
        self.ndim = kwargs.get("ndim", 0)
        if isinstance(self.ndim, bool) or not isinstance(self.ndim, int) or self.ndim < 0:
            raise ValueError(f"gr.graph.Arg {self.name!r}: ndim must be a non-negative int, got {self.ndim!r}")
        is_matrix = isinstance(self.element_type, (VectorType, MatrixType))
        if tag is ArgKind.SCALAR and is_matrix:
            raise TypeError(f"gr.graph.Arg {self.name!r}: ArgKind.SCALAR needs a scalar dtype, got {self.element_type}")
        if tag is ArgKind.MATRIX and not is_matrix:
            raise TypeError(f"gr.graph.Arg {self.name!r}: ArgKind.MATRIX needs a vector or matrix type, "
                            f"got {self.element_type}")

    def dtype(self) -> DType:
        """The scalar type (Taichi's `Arg.dtype()`: f32 for an array of vec2)."""
        return scalar_of(self.element_type)

    @property
    def element_shape(self) -> tuple[int, ...]:
        return element_shape(self.element_type)

    @property
    def field_dim(self) -> int:
        """Taichi's old name of ndim."""
        return self.ndim

    def _same(self, other: Arg) -> bool:
        return (self.tag, self.element_type, self.ndim, self.fmt) == (other.tag, other.element_type, other.ndim,
                                                                      other.fmt)

    def check(self, v):
        """The value bound to this argument in a run, checked (TypeError / ValueError); the
        binding key's part for it."""
        where = f"graph argument {self.name!r}"
        if self.tag is ArgKind.NDARRAY:
            if not isinstance(v, Ndarray) or isinstance(v, Field):
                raise TypeError(f"{where} is an NDARRAY: expected a gr.ndarray, got {type(v).__name__}")
            if v.element_type != self.element_type:
                raise TypeError(f"{where}: expected elements of {self.element_type}, got {v.element_type}")
            if v.ndim != self.ndim:
                raise ValueError(f"{where}: expected ndim {self.ndim}, got {v.ndim} (shape {v.shape})")
            return ("a", id(v))
        if self.tag in _TEXTURES:
            if not isinstance(v, Texture):
                raise TypeError(f"{where} is a {self.tag.name}: expected a gr.Texture, got {type(v).__name__}")
            if v.num_dims != self.ndim:
                raise ValueError(f"{where}: expected a {self.ndim}-D texture, got {v!r}")
            if self.fmt is not None and v.format != self.fmt:
                raise TypeError(f"{where}: expected a texture of format {self.fmt.name}, got {v!r}")
            return ("t", id(v))
        if self.tag is ArgKind.SCALAR:
            if not (isinstance(v, (int, float)) or npcompat.scalar_kind(v) in ("i", "u", "f")):
                raise TypeError(f"{where} is a SCALAR: expected an int or float, got {type(v).__name__}")
            return ("s", repr(v))  # repr: -0.0 and 0.0 are different bindings
        a = np.asarray(v)
        if a.dtype == object or a.dtype.kind not in "biuf" or a.shape != self.element_type.shape:
            raise TypeError(f"{where} is a MATRIX: expected a value of shape {self.element_type.shape}, got "
                            f"{type(v).__name__}{' of shape ' + str(a.shape) if a.dtype != object else ''}")
        return ("m", a.dtype.str, a.tobytes())

    def __repr__(self) -> str:
        if self.tag in _TEXTURES:
            fmt = f", fmt=gr.Format.{self.fmt.name}" if self.fmt is not None else ""
            return f"gr.graph.Arg({self.tag}, {self.name!r}, ndim={self.ndim}{fmt})"
        ndim = f", ndim={self.ndim}" if self.tag is ArgKind.NDARRAY else ""
        return f"gr.graph.Arg({self.tag}, {self.name!r}, {self.element_type}{ndim})"


def _param_fits(p, a: Arg) -> str | None:
    """Why the symbolic argument `a` cannot fill kernel parameter `p` (None: it can)."""
    kind, ann = p.kind, p.ann
    if kind == "ndarray":
        if a.tag is not ArgKind.NDARRAY:
            return "the parameter is an ndarray"
        if ann.ndim is not None and ann.ndim != a.ndim:
            return f"the parameter has ndim {ann.ndim}, the Arg {a.ndim}"
        if ann.dtype is not None and not element_matches(ann.dtype, a.element_type):
            return f"the parameter holds {ann.dtype}, the Arg {a.element_type}"
        return None
    if kind == "scalar":
        return None if a.tag is ArgKind.SCALAR and a.element_type == ann else f"the parameter is a scalar of {ann}"
    if kind == "vector":
        if a.tag is not ArgKind.MATRIX or a.element_shape != ann.shape:
            return f"the parameter is a {ann!r}"
        return None
    if kind == "template":
        return None
    if kind == "texture":
        want = ArgKind.RWTEXTURE if isinstance(ann, RWTextureType) else ArgKind.TEXTURE
        if a.tag is not want:
            return f"the parameter is a {ann!r}, an ArgKind.{want.name}"
        if ann.num_dimensions != a.ndim:
            return f"the parameter has {ann.num_dimensions} dimensions, the Arg {a.ndim}"
        if want is ArgKind.RWTEXTURE and a.fmt != ann.fmt:
            return f"the parameter's format is {ann.fmt.name}, the Arg's {a.fmt.name}"
        return None
    return f"a {kind} parameter cannot be a graph argument"


class Sequential:
    """An ordered list of dispatches (Taichi's `builder.create_sequential()`), appended to a
    builder with `builder.append(seq)` (as many times as it should run)."""

    def __init__(self, builder: GraphBuilder):
        self._builder = builder
        self._nodes: list = []

    def dispatch(self, kernel, *args) -> None:
        """Append a launch of `kernel` with these arguments: `gr.graph.Arg`s, bound by name at
        each run, or values (bound as they are, every run)."""
        if isinstance(kernel, BoundKernel):  # a @gr.data_oriented method: its object is the first argument
            kernel, args = kernel.kernel, (kernel.obj, *args)
        if not isinstance(kernel, Kernel):
            raise TypeError(f"dispatch() needs a @gr.kernel, got {type(kernel).__name__}")
        params = kernel._signature()
        if len(args) != len(params):
            raise TypeError(f"dispatch({kernel.__name__}): the kernel takes {len(params)} arguments, "
                            f"{len(args)} were given")
        uses = [(a, kernel, p) for p, a in zip(params, args) if isinstance(a, Arg)]
        for p, v in zip(params, args):  # a plain value is checked now, as the kernel checks it
            if not isinstance(v, Arg) and p.kind in ("scalar", "vector", "ndarray"):
                {"scalar": kernel._check_scalar, "vector": kernel._check_vector,
                 "ndarray": lambda p, v: kernel._array_spec(p, v, p.ann)}[p.kind](p, v)
        for a, _, p in uses:
            why = _param_fits(p, a)
            if why is not None:
                raise TypeError(f"dispatch({kernel.__name__}): {a!r} cannot be argument {p.name!r}: {why}")
        self._builder._declare(uses)
        self._nodes.append((kernel, args))


class GraphBuilder:
    """Taichi's `ti.graph.GraphBuilder`: `dispatch(kernel, *args)` in order,
    `create_sequential()` / `append(seq)`, then `compile()` -> a graph whose `run({name: value})`
    launches them with the named arguments bound."""

    def __init__(self):
        self._args: dict[str, Arg] = {}
        self._checks: dict[tuple, tuple] = {}  # (name, kernel, parameter): the kernel's own check of a value
        self._seq = Sequential(self)

    def _declare(self, uses: list) -> None:
        for a, _, _ in uses:
            old = self._args.get(a.name, a)
            if not old._same(a):
                raise ValueError(f"two graph arguments are named {a.name!r}: {old!r} and {a!r}")
        for a, kernel, p in uses:
            self._args.setdefault(a.name, a)
            if p.kind in ("scalar", "vector"):
                self._checks.setdefault((a.name, id(kernel), p.name), (a.name, kernel, p))

    def dispatch(self, kernel, *args) -> None:
        """Append a launch of `kernel` (see Sequential.dispatch)."""
        self._seq.dispatch(kernel, *args)

    def create_sequential(self) -> Sequential:
        """A new, empty sequence of dispatches; `append` it to run it."""
        return Sequential(self)

    def append(self, seq: Sequential) -> None:
        """Run `seq`'s dispatches here, in order (its dispatches as they are at compile())."""
        if not isinstance(seq, Sequential) or seq._builder is not self:
            raise TypeError("append() takes a Sequential made by this builder's create_sequential()")
        self._seq._nodes.append(seq)

    def compile(self) -> CompiledGraph:
        """The graph: its dispatches, sequences expanded, fixed now."""
        def expand(seq: Sequential):
            for n in seq._nodes:
                if isinstance(n, Sequential):
                    yield from expand(n)
                else:
                    yield n
        return CompiledGraph(list(expand(self._seq)), dict(self._args), list(self._checks.values()))


class CompiledGraph:
    """A compiled `gr.graph.GraphBuilder` (Taichi's `ti.graph.Graph`): `run({name: value})`."""

    def __init__(self, nodes: list, args: dict[str, Arg], checks: list):
        self._nodes = nodes
        self._args = args
        self._checks = checks  # (name, kernel, parameter) of each scalar / vector use
        self._bindings: OrderedDict = OrderedDict()  # key -> [None (ran eagerly once) | graph | "eager", values]

    def run(self, args: dict) -> None:
        """Launch the graph's kernels in order, each Arg bound to `args[name]` (a gr.ndarray of
        the Arg's element type and ndim, an int / float, or a vector / matrix value). Names the
        graph does not use are ignored, as in Taichi. Arguments are checked before anything
        launches (TypeError / ValueError)."""
        if not isinstance(args, dict):
            raise TypeError(f"run() takes a dict of graph arguments, got {type(args).__name__}")
        missing = [n for n in self._args if n not in args]
        if missing:
            raise TypeError(f"run(): missing graph argument(s) {', '.join(map(repr, missing))}")
        key = tuple(a.check(args[n]) for n, a in self._args.items())
        entry = self._bindings.get(key)
        if entry is not None:
            self._bindings.move_to_end(key)
        if entry is None:
            for name, kernel, p in self._checks:  # a new binding: the kernels' own checks of its values
                (kernel._check_scalar if p.kind == "scalar" else kernel._check_vector)(p, args[name])
        if THREAD.tape is not None or THREAD.fwd is not None:
            self._eager(args)  # a Tape records (and differentiates) the launches themselves
            return
        if entry is None:
            self._eager(args)
            self._remember(key, [None, [args[n] for n in self._args]])
            return
        g = entry[0]
        if g is None:
            g = entry[0] = self._capture(args)
        if g == "eager":
            self._eager(args)
        else:
            g.replay()

    def _bound(self, args: dict):
        for kernel, params in self._nodes:
            yield kernel, [args[a.name] if isinstance(a, Arg) else a for a in params]

    def _eager(self, args: dict) -> None:
        for kernel, values in self._bound(args):
            kernel(*values)

    def _capture(self, args: dict):
        g = capture_graph()
        try:
            with g:
                for kernel, values in self._bound(args):
                    kernel(*values)
        except GraphCaptureError:
            return "eager"  # nothing ran: the capture only records
        return g

    def _remember(self, key, entry) -> None:
        self._bindings[key] = entry
        while len(self._bindings) > CACHED_BINDINGS:
            _, (g, _values) = self._bindings.popitem(last=False)
            if isinstance(g, CaptureGraph):
                g.release()

    def release(self) -> None:
        """Release the captured graphs (and the arrays they keep); the graph still runs."""
        for g, _ in self._bindings.values():
            if isinstance(g, CaptureGraph):
                g.release()
        self._bindings.clear()

    def __repr__(self) -> str:
        return f"<gr.graph.Graph: {len(self._nodes)} dispatches, args {list(self._args)}>"


class GraphNamespace:
    """`gr.graph`: call it to capture (`with gr.graph() as g:`, gfxrt/graph.py), or use Taichi's
    `ti.graph` names: `gr.graph.GraphBuilder`, `gr.graph.Arg`, `gr.graph.ArgKind`, `gr.graph.Graph`."""

    GraphBuilder = GraphBuilder
    Sequential = Sequential
    Arg = Arg
    ArgKind = ArgKind
    Graph = CompiledGraph

    def __call__(self) -> CaptureGraph:
        return capture_graph()

    __call__.__doc__ = capture_graph.__doc__

    def __repr__(self) -> str:
        return "<gr.graph: gr.graph() captures; gr.graph.GraphBuilder builds Taichi graphs>"


graph = GraphNamespace()

__all__ = ["Arg", "ArgKind", "GraphBuilder", "Sequential", "CompiledGraph", "GraphNamespace", "graph",
           "CACHED_BINDINGS"]
