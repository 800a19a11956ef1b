"""Structs as in Taichi (tests/python/test_custom_struct.py, test_struct.py, the dataclass
docs) with ti renamed to gr: struct types and fields, struct locals, arguments and return
values, nested structs, @gr.dataclass methods, element access from the host, gradients."""
import numpy as np
import pytest
from pytest import approx

import gfxrt as gr

N = 8
vec3f = gr.types.vector(3, float)


def test_struct_member_access():
    x = gr.Struct.field({"a": gr.f32, "b": gr.f32}, shape=(N,))
    y = gr.Struct.field({"a": gr.f32, "b": gr.f32})
    gr.root.dense(gr.i, N // 4).dense(gr.i, 4).place(y)

    @gr.kernel
    def init():
        for i in x:
            x[i].a = i
            y[i].a = i

    @gr.kernel
    def run():
        for i in x:
            x[i].b = x[i].a

    init()
    run()
    for i in range(N):
        y[i].b = y[i].a * 2 + 1
    assert np.array_equal(x.to_numpy()["b"], np.arange(N))
    assert np.array_equal(y.b.to_numpy(), np.arange(N) * 2 + 1)


def test_struct_whole_access_and_arithmetic():
    x = gr.Struct.field({"a": gr.i32, "b": gr.f32}, shape=(N,))
    y = gr.Struct.field({"a": gr.f32, "b": gr.i32})
    gr.root.dense(gr.i, N).place(y)

    @gr.kernel
    def init():
        for i in x:
            x[i] = gr.Struct(a=2 * i, b=1.01 * i)

    @gr.kernel
    def run():
        for i in x:
            y[i] = x[i] * 2 + 1

    init()
    for i in range(N):
        assert x[i].a == 2 * i
        assert x[i].b == approx(1.01 * i, rel=1e-4)
    run()
    for i in range(N):
        assert y[i].a == 4 * i + 1
        assert y[i].b == int((1.01 * i) * 2 + 1)
    for i in range(N):
        y[i] = gr.Struct(a=x[i].a, b=int(x[i].b))
    assert np.array_equal(y.a.to_numpy(), 2 * np.arange(N))


def test_struct_fill():
    x = gr.Struct.field({"a": gr.f32, "b": gr.types.vector(3, gr.i32)}, shape=(N,))
    x.a.fill(1.0)
    x.b.fill(1.5)
    assert x[3].a == 1.0 and list(x[3].b) == [1, 1, 1]
    x.fill(2.5)
    assert x[2].a == 2.5 and list(x[2].b) == [2, 2, 2]

    @gr.kernel
    def fill_elements():
        for i in x:
            x[i].fill(i + 0.5)

    fill_elements()
    d = x.to_numpy()
    assert np.array_equal(d["a"], np.arange(N) + 0.5)
    assert np.array_equal(d["b"], np.repeat(np.arange(N)[:, None], 3, 1))


def test_nested_struct_type():
    line3f = gr.types.struct(linedir=vec3f, length=float)
    mystruct = gr.types.struct(line=line3f, idx=int)
    x = mystruct.field(shape=(N,))

    @gr.kernel
    def init():
        for i in x:
            x[i] = mystruct(1)

    @gr.kernel
    def run():
        for i in x:
            v = vec3f(1)
            line = line3f(linedir=v, length=i + 0.5)
            x[i] = mystruct(line=line, idx=i)

    init()  # one number is positional (Taichi 1.7.4): line = line3f(1) = (linedir=(1, 1, 1), length=0), idx = 0
    assert x[5].idx == 0 and np.allclose(x[5].line.linedir.to_numpy(), 1.0) and x[5].line.length == 0.0
    run()
    for i in range(N):
        assert x[i].idx == i and x[i].line.length == i + 0.5
    for i in range(N):
        x[i] = mystruct(3)
    assert x[4].idx == 0 and np.allclose(x[4].line.linedir.to_numpy(), 3.0) and x[4].line.length == 0.0
    x[2] = gr.Struct({"line": {"linedir": vec3f(1), "length": 2.5}, "idx": 2})
    assert x[2].line.length == 2.5 and x[2].idx == 2
    x.fill(5)
    d = x.to_numpy()
    assert np.all(d["line"]["linedir"] == 5.0) and np.all(d["idx"] == 5)
    d["idx"] = np.arange(N, dtype=np.int32)
    x.from_numpy(d)
    assert x[6].idx == 6


def test_struct_assign_between_fields():
    line3f = gr.types.struct(linedir=vec3f, length=float)
    mystruct = gr.types.struct(line=line3f, idx=int)
    x = mystruct.field(shape=(N,))
    y = gr.field(line3f, shape=(N,))

    @gr.kernel
    def init():
        for i in y:
            y[i] = line3f(linedir=vec3f(1), length=i + 0.5)

    @gr.kernel
    def run():
        for i in x:
            x[i].idx = i
            x[i].line = y[i]

    init()
    run()
    for i in (0, 7):
        assert x[i].idx == i and x[i].line.length == i + 0.5
    x.fill(5)
    x[3].line = y[3]
    assert x[3].line.length == 3.5 and np.allclose(x[3].line.linedir.to_numpy(), 1.0)


def test_dataclass_methods():
    @gr.dataclass
    class Sphere:
        center: vec3f
        radius: gr.f32

        @gr.func
        def area(self):
            return 4 * 3.14 * self.radius * self.radius

        def py_scope_area(self):
            return 4 * 3.14 * self.radius * self.radius

    assert np.isclose(Sphere(center=vec3f(0.0), radius=2.0).py_scope_area(), 4.0 * 3.14 * 4.0)

    @gr.kernel
    def get_area() -> gr.f32:
        sphere = Sphere(center=vec3f(0.0), radius=2.0)
        return sphere.area()

    assert np.isclose(get_area(), 4.0 * 3.14 * 4.0)
    spheres = Sphere.field(shape=(4,))
    spheres[3] = Sphere(center=vec3f(0.0), radius=2.0)

    @gr.kernel
    def get_area_field() -> gr.f32:
        return spheres[3].area()

    assert np.isclose(get_area_field(), 4.0 * 3.14 * 4.0)
    assert gr.struct_class is gr.dataclass


def test_implicit_casts():
    vec2i = gr.types.vector(2, int)
    vec2f = gr.types.vector(2, float)
    structi = gr.types.struct(a=int, b=vec2i)
    structf = gr.types.struct(a=float, b=vec2f)

    @gr.kernel
    def f2i() -> int:
        s = structi(2.5)
        return s.a + s.b[0] + s.b[1]

    @gr.kernel
    def i2f() -> float:
        s = structf(2)
        return s.a + s.b[0] + s.b[1]

    v = f2i()  # S(x) sets the first member only, as Taichi 1.7.4 does (2, not 6)
    assert type(v) is int and v == 2
    s = structi(2.5)
    assert s.a == 2 and s.b[0] + s.b[1] == 0
    v = i2f()
    assert type(v) is float and v == approx(2.0)


def test_struct_from_number_errors():
    """Assigning a number to a struct is Taichi's "Only dict or Struct can be assigned to a
    Struct"; x[i].fill(v) is the way to set every component."""
    st = gr.types.struct(a=float, v=vec3f)
    x = st.field(shape=(2,))

    @gr.kernel
    def assign():
        x[0] = 7

    @gr.kernel
    def fill():
        x[1].fill(7)

    with pytest.raises(gr.CompileError, match="a number is not a struct"):
        assign()
    fill()
    assert x[1].a == 7 and np.all(x[1].v.to_numpy() == 7)


def test_local_struct_copies_are_values():
    a = gr.Struct({"a": 2, "b": 3})
    f = gr.Struct.field({"a": gr.i32, "b": gr.i32}, shape=())
    f[None].a = 2
    f[None].b = 3
    out = gr.field(gr.i32, shape=8)

    @gr.kernel
    def run():
        b = a                      # a struct from Python: constants
        out[0] = b.a * 10 + b.b
        c = f[None]
        c.a = 5
        c.b = 9
        out[1] = c.a * 10 + c.b
        out[2] = f[None].a * 10 + f[None].b
        d = gr.Struct({"a": 2, "b": 3})
        e = d
        e.a = 7
        out[3] = d.a * 10 + e.a

    run()
    assert list(out.to_numpy()[:4]) == [23, 59, 23, 27]


def test_struct_arguments_returns_and_funcs():
    S = gr.types.struct(a=gr.f32, v=vec3f, n=gr.i32)
    Outer = gr.types.struct(s=S, w=gr.f32)

    @gr.func
    def scaled(p: S, k) -> S:
        q = p
        q.a *= k
        q.v = q.v * k
        return q

    @gr.func
    def pick(p, flag):
        if flag > 0:
            return p
        return S(a=-1.0)

    @gr.kernel
    def run(p: S, o: Outer, flag: gr.i32) -> Outer:
        q = scaled(p, 2.0)
        r = pick(q, flag)
        return Outer(s=r, w=o.w + o.s.a + r.n)

    r = run(S(a=1.5, v=[1, 2, 3], n=4), {"s": {"a": 10.0}, "w": 0.5}, 1)
    assert r.s.a == 3.0 and list(r.s.v) == [2, 4, 6] and r.s.n == 4 and r.w == 14.5
    r = run(S(a=1.5, v=[1, 2, 3], n=4), Outer(w=1.0), 0)
    assert r.s.a == -1.0 and r.s.n == 0 and r.w == 1.0
    with pytest.raises(TypeError):
        run(S(), {"nope": 1}, 0)


def test_struct_field_grad():
    P = gr.types.struct(x=gr.f32, v=gr.types.vector(2, gr.f32), id=gr.i32)
    p = P.field(shape=(N,), needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)
    p.x.from_numpy(np.arange(N, dtype=np.float32))
    p.v.fill(2.0)

    @gr.kernel
    def compute():
        for i in p:
            loss[None] += p[i].x ** 2 + p[i].v.x * p[i].v.y

    with gr.Tape(loss):
        compute()
    g = p.grad
    assert p.id.grad is None and "id" not in g.to_numpy()
    assert np.allclose(g.x.to_numpy(), 2 * np.arange(N))
    assert np.allclose(g.to_numpy()["v"], 2.0)


def test_struct_for_and_shape_in_kernels():
    S = gr.types.struct(a=gr.i32, b=gr.f32)
    s = S.field(shape=(3, 4))
    total = gr.field(gr.i32, shape=())

    @gr.kernel
    def run():
        for i, j in s:
            s[i, j].a = i * s.shape[1] + j
            s.b[i, j] = 0.5
        for I in gr.grouped(s):  # noqa: E741
            total[None] += s[I].a

    run()
    assert total[None] == sum(range(12))
    assert s.shape == (3, 4) and s.b[2, 3] == 0.5


def test_struct_errors():
    S = gr.types.struct(a=gr.f32)
    with pytest.raises(TypeError, match="field"):
        S.ndarray(shape=4)
    s = S.field(shape=4)

    @gr.kernel
    def bad():
        for i in s:
            s[i].b = 1.0

    with pytest.raises(gr.CompileError, match="no member 'b'"):
        bad()
    with pytest.raises(AttributeError):
        s[0].b = 1.0


def test_docs_example():  # docs/language.md "Structs"
    vec3 = gr.types.vector(3, gr.f32)
    Particle = gr.types.struct(x=vec3, v=vec3, m=gr.f32, id=gr.i32)
    ps = Particle.field(shape=16, needs_grad=True)

    @gr.dataclass
    class Sphere:
        center: vec3
        radius: gr.f32

        @gr.func
        def area(self):
            return 4 * 3.14159 * self.radius ** 2

    @gr.kernel
    def step(dt: gr.f32, s: Sphere) -> Particle:
        for i in ps:
            ps[i].x += ps[i].v * dt
            if (ps[i].x - s.center).norm() < s.radius:
                ps[i].v = -ps[i].v
        p = Particle(m=s.area(), id=7)
        p.x.y = 1.0
        return p

    ps.v.fill(1.0)
    x = np.zeros((16, 3), np.float32)
    x[:8] = 10.0
    ps.x.from_numpy(x)
    p = step(0.5, Sphere(center=[0, 0, 0], radius=2.0))
    assert p.id == 7 and p.m == approx(4 * 3.14159 * 4) and list(p.x) == [0, 1, 0] and list(p.v) == [0, 0, 0]
    v = ps.to_numpy()["v"]
    assert np.all(v[:8] == 1.0) and np.all(v[8:] == -1.0)
    assert ps.grad.to_numpy()["x"].shape == (16, 3)


def test_print_struct(capsys):
    S = gr.types.struct(a=gr.f32, v=gr.types.vector(2, gr.i32))

    @gr.kernel
    def show():
        p = S(a=1.5, v=[1, 2])
        print("p =", p)

    show()
    gr.sync()
    assert "p = {'a': 1.5, 'v': [1, 2]}" in capsys.readouterr().out


def test_struct_control_flow_and_reductions():
    R = gr.types.struct(u=gr.f32, hits=gr.i32)
    x = gr.field(gr.f32, shape=16)
    x.from_numpy(np.arange(16, dtype=np.float32))
    g = R.field(shape=(2, 2), layout=gr.Layout.SOA)

    @gr.func
    def integrate(u0, steps) -> R:
        r = R(u=u0)
        k = 0
        while k < steps:
            r.u = r.u * 0.5
            if r.u < 1.0:
                r.hits += 1
                return r                   # an early return of a struct
            k += 1
        return r

    @gr.kernel
    def run() -> R:
        acc = R(0)
        for i in x:
            r = integrate(x[i], 3)
            acc.u += r.u                   # a kernel-scope struct member: a reduction
            acc.hits += r.hits
        g[1, 1] = acc
        return acc

    r = run()
    ref_u, ref_h = 0.0, 0
    for v in range(16):
        u, h = float(v), 0
        for _ in range(3):
            u *= 0.5
            if u < 1.0:
                h = 1
                break
        ref_u, ref_h = ref_u + u, ref_h + h
    assert r.u == approx(ref_u) and r.hits == ref_h
    assert g[1, 1].hits == ref_h and g[0, 0].hits == 0


def test_dataclass_methods_taichi_test_struct():  # Taichi's tests/python/test_struct.py
    @gr.dataclass
    class Foo:
        x: gr.f32
        y: gr.f32

        @gr.func
        def add(self, other: gr.template()):
            return Foo(self.x + other.x, self.y + other.y)

        def add_python(self, other):
            return Foo(self.x + other.x, self.y + other.y)

    @gr.kernel
    def foo_x(x: Foo) -> gr.f32:
        return x.add(x).x

    @gr.kernel
    def foo(x: Foo) -> Foo:
        return x.add(x)

    assert foo_x(Foo(1, 2)) == 2
    b = foo(Foo(1, 2))
    assert b.x == 2 and b.y == 4
    c = b.add_python(b)
    assert c.x == 4 and c.y == 8

    @gr.dataclass
    class Inner:
        a: int

        @gr.func
        def get(self):
            return self.a

    @gr.dataclass
    class Nested:
        f: Inner

        @gr.func
        def testme(self) -> int:
            return self.f.get()

    @gr.kernel
    def k() -> int:
        x = Nested(Inner(42))
        return x.testme()

    assert k() == 42
    assert Nested(Inner(3)).f.a == 3
    with pytest.raises(gr.CompileError, match="Default values in @dataclass is not supported"):
        @gr.dataclass
        class Bad:
            a: int
            b: float = 3.14


def test_struct_conditional_expression_and_loops():
    S = gr.types.struct(a=gr.f32, n=gr.i32)
    out = S.field(shape=4)

    @gr.kernel
    def run(k: gr.i32):
        for i in out:
            p = S(a=1.0, n=i) if i < k else S(a=2.0, n=-i)
            for _ in range(3):
                p.a *= 2.0
            out[i] = p

    run(2)
    d = out.to_numpy()
    assert list(d["a"]) == [8, 8, 16, 16] and list(d["n"]) == [0, 1, -2, -3]


def test_nested_struct_return_and_func_annotations():  # Taichi's test_return.py / test_function.py
    s0 = gr.types.struct(a=gr.math.vec3, b=gr.i16)
    s1 = gr.types.struct(a=gr.f32, b=s0)

    @gr.kernel
    def foo() -> s1:
        return s1(a=1, b=s0(a=gr.math.vec3(100, 0.2, 3), b=65537))

    ret = foo()
    assert ret.a == approx(1) and ret.b.a[0] == approx(100) and ret.b.a[1] == approx(0.2) and ret.b.b == 1

    @gr.func
    def add(s: s1) -> s1:
        return s1(a=s.a + 1, b=s.b)

    @gr.kernel
    def bar(s: s1) -> gr.f32:
        t = add(s)
        return t.a + t.b.a[0] + t.b.b

    assert bar(s1(a=2.0, b=s0(a=[1, 2, 3], b=5))) == 9.0
    assert bar({"a": 2.0, "b": {"a": [1, 2, 3], "b": 5}}) == 9.0
    assert s1.field(shape=4, offset=(2,)).a.offset == (2,)  # offsets: tests/test_taichi_forms2.py


def test_struct_grad_in_kernels_and_ndarray_refusal():
    S = gr.types.struct(x=gr.f32, m=gr.types.matrix(2, 2, gr.f32))
    s = S.field(shape=4, needs_grad=True)
    out = gr.field(gr.f32, shape=4)

    @gr.kernel
    def read_grads():
        for i in s:
            out[i] = s.grad[i].x + s.grad[i].m[1, 0]

    s.grad.x.fill(1.0)
    s.grad[2].m = [[0, 0], [5, 0]]
    read_grads()
    assert list(out.to_numpy()) == [1, 1, 6, 1]
    with pytest.raises(TypeError, match="no ndarray of structs"):
        gr.types.ndarray(dtype=S, ndim=1)
    with pytest.raises(TypeError, match="no ndarray of structs"):
        gr.ndarray(S, shape=3)


def test_struct_fields_as_template_arguments():
    S = gr.types.struct(a=gr.f32, v=gr.math.vec2)
    s, t = S.field(shape=4), S.field(shape=4)

    @gr.func
    def copy_one(dst: gr.template(), src: gr.template(), i):
        dst[i] = src[i]
        dst[i].a += 1.0

    @gr.kernel
    def k(dst: gr.template(), src: gr.template()):
        for i in src:
            copy_one(dst, src, i)

    s.a.from_numpy(np.arange(4, dtype=np.float32))
    s[2].v = [3, 4]
    k(t, s)
    assert list(t.a.to_numpy()) == [1, 2, 3, 4] and t[2].v.y == 4.0 and t[2].v[0] == 3.0
    t[1].v.x = 9.0
    assert list(t[1].v) == [9.0, 0.0]
    k(s, t)
    assert list(s.a.to_numpy()) == [2, 3, 4, 5] and list(s[1].v) == [9.0, 0.0]


def test_struct_argument_in_gradient_kernels():
    S = gr.types.struct(k=gr.f32, off=gr.f32)
    x = gr.field(gr.f32, shape=4, needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def f(p: S):
        for i in x:
            loss[None] += p.k * x[i] ** 2 + p.off

    x.from_numpy(np.arange(4, dtype=np.float32))
    for _ in range(2):  # the second call takes the same (checked) path
        x.grad.fill(0)
        loss[None] = 0
        loss.grad[None] = 1
        f(S(k=3.0, off=1.0))
        f.grad(S(k=3.0, off=1.0))
        assert np.allclose(x.grad.to_numpy(), 6 * np.arange(4))
        assert loss[None] == approx(3 * 14 + 4)


def test_list_literals_into_vector_and_matrix_targets():  # `grid_v[i, j] = [0, 0]` as in mpm99
    S = gr.types.struct(v=gr.math.vec2, m=gr.math.mat2)
    s = S.field(shape=2)
    g = gr.Vector.field(2, gr.f32, shape=2)

    @gr.kernel
    def run(x: gr.f32):
        for i in s:
            s[i].v = [x, i]
            s[i].m = [[1, 2], [3, x]]
            g[i] = [0, x * 2]
            p = gr.Vector([0.0, 0.0])
            p = [x, x]
            g[i].x += p[0]

    run(1.5)
    assert list(s[1].v) == [1.5, 1.0] and np.array_equal(s[0].m, [[1, 2], [3, 1.5]])
    assert np.array_equal(g.to_numpy(), [[1.5, 3.0], [1.5, 3.0]])


def test_atomics_on_struct_members():
    S = gr.types.struct(a=gr.i32, b=gr.f32)
    s = S.field(shape=())

    @gr.kernel
    def k() -> gr.i32:
        for i in range(10):
            gr.atomic_add(s[None].a, 1)
            gr.atomic_max(s[None].b, i * 0.5)
        q = S(a=1)
        for j in range(3):
            gr.atomic_add(q.a, j)      # a kernel-scope struct member: a reduction
        return q.a

    assert k() == 4 and s[None].a == 10 and s[None].b == 4.5
