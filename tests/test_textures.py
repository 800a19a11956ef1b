"""gr.Texture (Taichi's ti.Texture; gfxrt/data/texture.py, compiler/textures.py): sampling, fetch,
load / store, the host copies, graph arguments and the errors, against Taichi 1.7.4's numbers.

The expected values were produced by the same programs under `ti.init(arch=ti.vulkan)` (Taichi 1.7.4
on lavapipe; Taichi's CPU backend has no textures). Filtered values are also checked against a
numpy bilinear reference with repeat addressing, within a tolerance that admits GPUs' fixed-point
filter weights (8 fractional bits): the tests hold on any adapter, not just on lavapipe."""
import numpy as np
import pytest

import gfxrt as gr

R32F = gr.Format.r32f


@gr.kernel
def _fill(t: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32f, lod=0)):
    for i, j in gr.ndrange(4, 4):
        t.store(gr.Vector([i, j]), gr.Vector([i * 10.0 + j, 0.0, 0.0, 0.0]))


@gr.kernel
def _sample(t: gr.types.texture(num_dimensions=2), uv: gr.types.ndarray(), o: gr.types.ndarray()):
    for k in range(uv.shape[0]):
        c = t.sample_lod(gr.Vector([uv[k, 0], uv[k, 1]]), 0.0)
        f = t.fetch(gr.Vector([k % 4, 1]), 0)
        o[k, 0] = c.r
        o[k, 1] = c.g
        o[k, 2] = c.a
        o[k, 3] = f.r


_UV = np.array([[0.125, 0.125], [0.25, 0.125], [0.3, 0.6], [-0.2, 0.5], [1.3, 0.5], [0.0, 0.0], [1.0, 1.0],
                [0.5, -0.7]], np.float32)
# Taichi 1.7.4 (ti.vulkan): sample_lod(uv).r, .g, .a and fetch((k % 4, 1)).r of the same 4x4 r32f texture
_TAICHI = np.array([[0, 0, 1, 1], [5, 0, 1, 11], [8.9, 0, 1, 21], [28.5, 0, 1, 31], [8.499998, 0, 1, 1],
                    [16.5, 0, 1, 11], [16.5, 0, 1, 21], [15.7, 0, 1, 31]], np.float32)


def _bilinear_repeat(tex: np.ndarray, u: float, v: float) -> float:
    """Bilinear filtering with repeat addressing of tex[x, y] (Vulkan's rule, in float64)."""
    w, h = tex.shape
    x, y = u * w - 0.5, v * h - 0.5
    x0, y0 = int(np.floor(x)), int(np.floor(y))
    a, b = x - x0, y - y0
    t = lambda i, j: tex[i % w, j % h]  # noqa: E731
    return ((1 - a) * (1 - b) * t(x0, y0) + a * (1 - b) * t(x0 + 1, y0) + (1 - a) * b * t(x0, y0 + 1)
            + a * b * t(x0 + 1, y0 + 1))


def test_sample_and_fetch_match_taichi():
    tex = gr.Texture(R32F, (4, 4))
    _fill(tex)
    uv = gr.ndarray(gr.f32, _UV.shape)
    uv.from_numpy(_UV)
    out = gr.ndarray(gr.f32, (len(_UV), 4))
    _sample(tex, uv, out)
    got = out.to_numpy()
    values = np.array([[i * 10.0 + j for j in range(4)] for i in range(4)])
    ref = np.array([_bilinear_repeat(values, u, v) for u, v in _UV.astype(np.float64)])
    assert np.allclose(ref, _TAICHI[:, 0], atol=1e-5)  # Taichi: bilinear, repeat addressing
    # 8-bit filter weights on GPUs: |error| <= (largest neighbour step) / 256 per axis
    np.testing.assert_allclose(got[:, 0], _TAICHI[:, 0], atol=2 * 30 / 256)
    np.testing.assert_array_equal(got[:, 1:], _TAICHI[:, 1:])  # missing channels 0, alpha 1; fetch exact


@gr.kernel
def _fill3(t: gr.types.rw_texture(num_dimensions=3, fmt=gr.Format.r32f, lod=0)):
    for i, j, k in gr.ndrange(4, 4, 4):
        t.store(gr.Vector([i, j, k]), gr.Vector([i + 4.0 * j + 16.0 * k, 0.0, 0.0, 0.0]))


@gr.kernel
def _read3(t: gr.types.texture(num_dimensions=3), o: gr.types.ndarray()):
    o[0] = t.sample_lod(gr.Vector([0.25, 0.5, 0.75]), 0.0).r
    o[1] = t.fetch(gr.Vector([1, 2, 3]), 0).r
    o[2] = t.sample_lod(gr.Vector([0.0, 0.0, 0.0]), 0.0).r


def test_3d_texture_matches_taichi():
    tex = gr.Texture(R32F, (4, 4, 4))
    _fill3(tex)
    out = gr.ndarray(gr.f32, (3,))
    _read3(tex, out)
    np.testing.assert_allclose(out.to_numpy(), [46.5, 57.0, 31.5], atol=3 * 16 / 256)  # Taichi's numbers
    assert out.to_numpy()[1] == 57.0


@gr.kernel
def _rgba8(t: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.rgba8, lod=0)):
    for i, j in gr.ndrange(2, 2):
        t.store(gr.Vector([i, j]), gr.Vector([0.5, 0.25, 1.0, i * 0.3 + j * 0.1]))


@gr.kernel
def _centres(t: gr.types.texture(num_dimensions=2), o: gr.types.ndarray()):
    for i, j in o:
        o[i, j] = t.sample_lod(gr.Vector([(i + 0.5) / 2, (j + 0.5) / 2]), 0.0)


def test_normalized_format_stores_and_reads_as_taichi():
    tex = gr.Texture(gr.Format.rgba8, (2, 2))
    _rgba8(tex)
    out = gr.Vector.ndarray(4, gr.f32, (2, 2))
    _centres(tex, out)
    # Taichi 1.7.4 on lavapipe: the bytes round(v * 255); alpha 0.3 -> 76, 0.1 -> 26, 0.4 -> 102. The
    # float -> unorm8 conversion of a store is the driver's: the H100's gives 127 for 0.5 * 255 and 25
    # for 0.1 * 255, one unit below (Taichi's Vulkan backend stores through the same conversion)
    want = np.array([[[128, 64, 255, 0], [128, 64, 255, 26]], [[128, 64, 255, 76], [128, 64, 255, 102]]])
    got = out.to_numpy() * 255
    np.testing.assert_allclose(got, np.round(got), atol=1e-3)   # reads give back whole bytes / 255
    np.testing.assert_allclose(got, want, atol=1 + 1e-3)
    raw = tex.to_numpy()  # texel (x, y) at element y * w + x of the flattened array
    assert raw.dtype == np.uint8 and raw.shape == (2, 2, 4)
    np.testing.assert_array_equal(raw.reshape(4, 4)[[0, 1, 2, 3], 3], np.round(got[:, :, 3].T.reshape(4)))
    np.testing.assert_allclose(raw.reshape(4, 4)[[0, 1, 2, 3], 3], [0, 76, 26, 102], atol=1)


@gr.kernel
def _int_store(t: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32i, lod=0)):
    for i, j in gr.ndrange(4, 2):
        t.store(gr.Vector([i, j]), gr.Vector([i * 10.0 - j * 3.0, 7.0, 0.0, 0.0]))


@gr.kernel
def _int_load(t: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32i, lod=0), o: gr.types.ndarray()):
    for i, j in o:
        o[i, j] = t.load(gr.Vector([i, j]))


def test_integer_format_reads_as_f32():
    tex = gr.Texture(gr.Format.r32i, (4, 2))
    _int_store(tex)
    out = gr.Vector.ndarray(4, gr.f32, (4, 2))
    _int_load(tex, out)
    got = out.to_numpy()
    np.testing.assert_array_equal(got[..., 0], [[0, -3], [10, 7], [20, 17], [30, 27]])  # Taichi's numbers
    np.testing.assert_array_equal(got[..., 1:3], 0)
    assert tex.to_numpy().dtype == np.int32


@gr.kernel
def _blur_in_place(t: gr.types.rw_texture(num_dimensions=1, fmt=gr.Format.r32f, lod=0)):
    for _i in range(1):  # one thread: a read-modify-write chain through the storage texture
        for k in range(1, 8):
            t.store(k, gr.Vector([t.load(k - 1).r + t.load(k).r, 0.0, 0.0, 0.0]))


def test_rw_texture_loads_its_own_stores():
    tex = gr.Texture(R32F, (8,))
    tex.from_numpy(np.arange(8, dtype=np.float32))
    _blur_in_place(tex)
    np.testing.assert_array_equal(tex.to_numpy(), np.cumsum(np.arange(8)))


@gr.kernel
def _fetch_all(t: gr.types.texture(num_dimensions=2), o: gr.types.ndarray()):
    for i, j in o:
        o[i, j] = t.fetch(gr.Vector([i, j]), 0).r


def test_host_copies_are_taichis_raw_copies():
    a = np.array([[i * 10 + j for j in range(2)] for i in range(4)], np.float32)
    out = gr.ndarray(gr.f32, (4, 2))
    # Taichi 1.7.4's from_ndarray / from_field on a (4, 2) texture: the elements fill it x fastest
    want = [[0, 20], [1, 21], [10, 30], [11, 31]]
    nd = gr.ndarray(gr.f32, (4, 2))
    nd.from_numpy(a)
    f = gr.field(gr.f32, (4, 2))
    f.from_numpy(a)
    for load in ("from_numpy", "from_ndarray", "from_field"):
        tex = gr.Texture(R32F, (4, 2))
        getattr(tex, load)({"from_numpy": a, "from_ndarray": nd, "from_field": f}[load])
        _fetch_all(tex, out)
        np.testing.assert_array_equal(out.to_numpy(), want, err_msg=load)
        np.testing.assert_array_equal(tex.to_numpy(), a)  # to_numpy is from_numpy's inverse
    with pytest.raises(ValueError, match="holds 8 values"):
        gr.Texture(R32F, (4, 2)).from_numpy(np.zeros(9, np.float32))


def test_image_round_trip():
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 256, (3, 5, 3), dtype=np.uint8))  # 5 wide, 3 high
    tex = gr.Texture(gr.Format.rgba8, img.size)
    tex.from_image(img)
    np.testing.assert_array_equal(np.asarray(tex.to_image()), np.asarray(img))
    out = gr.Vector.ndarray(4, gr.f32, (5, 3))

    @gr.kernel
    def texels(t: gr.types.texture(num_dimensions=2), o: gr.types.ndarray()):
        for i, j in o:
            o[i, j] = t.fetch(gr.Vector([i, j]), 0)
    texels(tex, out)
    # Taichi's orientation (its image.rotate(90) then texel (i, j) = pixel array [i, j]): texel (x, y) is
    # the pixel in row y from the top, column x from the right; alpha 0
    px = np.asarray(img)
    want = np.zeros((5, 3, 4))
    for x in range(5):
        for y in range(3):
            want[x, y, :3] = px[y, 4 - x]
    np.testing.assert_allclose(out.to_numpy() * 255, want, atol=1e-3)


def test_graph_texture_arguments():
    A = gr.graph.ArgKind
    tex = gr.Texture(R32F, (4, 4))
    b = gr.graph.GraphBuilder()
    b.dispatch(_fill, gr.graph.Arg(A.RWTEXTURE, "rw", fmt=gr.Format.r32f, ndim=2))
    g_init = b.compile()
    b = gr.graph.GraphBuilder()
    b.dispatch(_fetch_all, gr.graph.Arg(A.TEXTURE, "tex", ndim=2), gr.graph.Arg(A.NDARRAY, "o", gr.f32, ndim=2))
    g = b.compile()
    out = gr.ndarray(gr.f32, (4, 4))
    for _ in range(3):  # eager, then captured, then replayed
        g_init.run({"rw": tex})
        out.fill(0)
        g.run({"tex": tex, "o": out})
        np.testing.assert_array_equal(out.to_numpy(), [[i * 10 + j for j in range(4)] for i in range(4)])
    with pytest.raises(TypeError, match="format r32f"):
        g_init.run({"rw": gr.Texture(gr.Format.rgba8, (4, 4))})
    with pytest.raises(TypeError, match="expected a gr.Texture"):
        g.run({"tex": out, "o": out})
    with pytest.raises(TypeError, match="ArgKind.TEXTURE"):
        gr.graph.GraphBuilder().dispatch(_fetch_all, gr.graph.Arg(A.RWTEXTURE, "t", fmt=R32F, ndim=2), out)


@gr.kernel
def _scale_by_texture(t: gr.types.texture(num_dimensions=2), x: gr.types.ndarray(), y: gr.types.ndarray()):
    for i, j in x:
        y[i, j] = x[i, j] * t.fetch(gr.Vector([i, j]), 0).r


def test_a_texture_read_is_a_constant_for_autodiff():
    tex = gr.Texture(R32F, (4, 4))
    tex.from_numpy(np.arange(16, dtype=np.float32))
    x = gr.ndarray(gr.f32, (4, 4), needs_grad=True)
    y = gr.ndarray(gr.f32, (4, 4), needs_grad=True)
    x.fill(1.0)
    _scale_by_texture(tex, x, y)
    y.grad.fill(1.0)
    _scale_by_texture.grad(tex, x, y)
    np.testing.assert_array_equal(x.grad.to_numpy(), np.arange(16).reshape(4, 4).T)


def test_errors():
    tex = gr.Texture(R32F, (4, 4))
    out = gr.ndarray(gr.f32, (4, 4))
    with pytest.raises(TypeError, match="pass a gr.Texture"):
        _fetch_all(out, out)
    with pytest.raises(ValueError, match="2-D texture"):
        _fetch_all(gr.Texture(R32F, (4, 4, 4)), out)
    with pytest.raises(TypeError, match="annotated fmt=r32f"):
        _fill(gr.Texture(gr.Format.rgba8, (4, 4)))
    with pytest.raises(ValueError, match="texels per axis"):
        gr.Texture(R32F, (1 << 20, 2))
    with pytest.raises(ValueError, match="3-channel"):
        gr.Texture(gr.Format.rgba8.name.replace("rgba", "rgb"), (4, 4))
    with pytest.raises(gr.CompileError, match="cannot be a storage texture"):
        gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r8)

    @gr.kernel
    def by_name(o: gr.types.ndarray()):
        for i, j in o:
            o[i, j] = tex.fetch(gr.Vector([i, j]), 0).r
    with pytest.raises(gr.CompileError, match="pass it as an argument"):
        by_name(out)

    @gr.kernel
    def sample_rw(t: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32f)):
        for _i in range(1):
            t.sample_lod(gr.Vector([0.5, 0.5]), 0.0)
    with pytest.raises(gr.CompileError, match="no attribute 'sample_lod'"):
        sample_rw(tex)

    @gr.kernel
    def store3(t: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32f)):
        for _i in range(1):
            t.store(gr.Vector([0, 0]), gr.Vector([1.0, 2.0, 3.0]))
    with pytest.raises(gr.CompileError, match="4 values"):
        store3(tex)

    @gr.kernel
    def wrong_dims(t: gr.types.texture(num_dimensions=2)):
        for _i in range(1):
            t.fetch(gr.Vector([0, 0, 0]), 0)
    with pytest.raises(gr.CompileError, match="2 coordinate"):
        wrong_dims(tex)

    @gr.kernel
    def both(a: gr.types.texture(num_dimensions=2), b: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32f)):
        for _i in range(1):
            b.store(gr.Vector([0, 0]), a.fetch(gr.Vector([1, 1]), 0))
    with pytest.raises(ValueError, match="one texture"):
        both(tex, tex)
    both(gr.Texture(R32F, (4, 4)), tex)  # two textures: fine


def _paint(t, o, w):  # lowered without a device: the IR's textual form
    for i, j in o:
        c = t.sample_lod(gr.Vector([i / 4, j / 4]), 0.0)
        w.store(gr.Vector([i, j]), c + t.fetch(gr.Vector([i, j]), 0))
        o[i, j] = w.load(gr.Vector([j, i])).r


def test_texture_ir_prints_and_parses_back():
    from gfxrt.compiler.irparse import parse_ir
    from gfxrt.compiler.pipeline import lower
    from gfxrt.compiler.printer import print_ir
    from gfxrt.compiler.spec import ArgSpec
    from gfxrt.compiler.textures import format_of
    args = [ArgSpec("t", "texture", ndim=2, value=(format_of("rgba16f"), False, 0)),
            ArgSpec("o", "ndarray", elem=gr.f32, ndim=2),
            ArgSpec("w", "texture", ndim=2, value=(format_of("rgba32f"), True, 0))]
    ir = lower(_paint, args)
    text = print_ir(ir)
    assert 'texture "t" 0 2 "rgba16f" false 0' in text and "texstore" in text and "(texel:f32=" in text
    back = parse_ir(text)
    assert back.textures == ir.textures
    assert print_ir(back) == text


def test_host_copies_abandon_a_capture():
    tex = gr.Texture(R32F, (4, 4))
    with pytest.raises(gr.GraphCaptureError, match="into a texture"):
        with gr.graph():
            tex.from_numpy(np.zeros((4, 4), np.float32))
    with pytest.raises(gr.GraphCaptureError, match="texture back"):
        with gr.graph():
            tex.to_numpy()
    tex.from_numpy(np.ones((4, 4), np.float32))  # the runtime is untouched
    assert tex.to_numpy().sum() == 16


@gr.kernel
def _struct_for(tex: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32f, lod=0)):
    for i, j in tex:  # every texel, as Taichi's struct-for over a rw_texture
        tex.store(gr.Vector([i, j]), gr.Vector([i + 100.0 * tex.shape[1] + 10.0 * j, 0.0, 0.0, 0.0]))


def test_struct_for_over_a_texture_and_its_shape():
    tex = gr.Texture(R32F, (8, 4))
    _struct_for(tex)
    out = gr.ndarray(gr.f32, (8, 4))
    _fetch_all(tex, out)
    np.testing.assert_array_equal(out.to_numpy(), [[i + 400 + 10 * j for j in range(4)] for i in range(8)])
