"""The vertex normals of an indexed mesh drawn without `normals=`, as Taichi computes them: the
mean of the unit normals of the triangles around each vertex (a kernel on the device for
gfxrt containers, numpy for host arrays). A mesh without indices needs none: its vertex
shader takes each triangle's own normal (gfxrt/ui/shaders.py).
"""
import weakref

from gfxrt.compiler.builtins import BUILTINS
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.types import f32

from ..data.field import field
from ..data.ndarray import Ndarray
from ..kernel import kernel
from ..types import template, vector

atomic_add = BUILTINS["atomic_add"]
_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@kernel
def _indexed_normals(vertices: template(), indices: template(), normals: template(), weights: template()):
    for i in range(vertices.shape[0]):
        normals[i] = [0.0, 0.0, 0.0]
        weights[i] = 0.0
    for t in range(indices.shape[0] // 3):
        ia, ib, ic = indices[t * 3], indices[t * 3 + 1], indices[t * 3 + 2]
        a, b, c = vertices[ia], vertices[ib], vertices[ic]
        n = (a - b).cross(a - c).normalized()
        atomic_add(normals[ia], n)
        atomic_add(normals[ib], n)
        atomic_add(normals[ic], n)
        atomic_add(weights[ia], 1.0)
        atomic_add(weights[ib], 1.0)
        atomic_add(weights[ic], 1.0)
    for i in range(vertices.shape[0]):
        if weights[i] > 0.0:
            normals[i] = normals[i] / weights[i]


def indexed_normals(vertices, indices):
    """Per-vertex normals (a gfxrt vector field, or an (n, 3) numpy array) of the triangles
    `indices` (3 per triangle) over `vertices`."""
    if isinstance(vertices, Ndarray) and isinstance(indices, Ndarray):
        n = vertices.shape[0]
        out = _cache.get(vertices)
        if out is None or out[0].shape[0] != n:
            out = _cache[vertices] = (field(vector(3, f32), (n,)), field(f32, (n,)))
        _indexed_normals(vertices, _flat(indices), *out)
        return out[0]
    v = np.asarray(vertices.to_numpy() if isinstance(vertices, Ndarray) else vertices, np.float64).reshape(-1, 3)
    t = np.asarray(indices.to_numpy() if isinstance(indices, Ndarray) else indices).reshape(-1, 3).astype(np.int64)
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    fn = np.cross(a - b, a - c)
    fn /= np.maximum(np.linalg.norm(fn, axis=1, keepdims=True), 1e-30)
    acc, w = np.zeros_like(v), np.zeros(len(v))
    for k in range(3):
        np.add.at(acc, t[:, k], fn)
        np.add.at(w, t[:, k], 1.0)
    return (acc / np.maximum(w, 1.0)[:, None]).astype(np.float32)


def _flat(indices):
    """Indices as a 1-d container (Taichi accepts a field of int vectors, one per triangle, too)."""
    if len(getattr(indices, "element_shape", ())) == 0 and len(indices.shape) == 1:
        return indices
    data = indices.to_numpy().reshape(-1)
    flat = field(indices._scalar, data.shape)
    flat.from_numpy(data)
    return flat
