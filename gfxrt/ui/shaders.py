"""The WGSL of gr.ui's drawing: one module, one bind group layout, an entry point per kind of
draw. Vertex shaders read the containers kernels write as storage buffers of 32-bit words
(gfxrt/ui/sources.py), so a draw needs no vertex buffer and no copy.

Bindings (group 0): 0 the draw's uniform `Draw`, 1 the scene's uniform `Scene` (camera,
lights, window size), 2 the point lights, 3 positions (or an image's texels), 4 per-vertex
colours, 5 per-vertex radii or normals, 6 indices, 7 the 4x4 transforms of mesh instances
(row-major: a vertex is drawn at M @ (x, 1)).

Draw.a = (first element, first index, flags, colour components); Draw.b = (position
components, image width, image height, image channels); Draw.params = (radius or width,
two-sided, first instance, -). Flags: the FLAG_* constants below.
Positions on a canvas are in [0, 1]^2 with y up, as Taichi's.

The shading follows Taichi 1.7.4's GGUI shaders: particles are camera-facing squares shaded
as spheres (Lambert in camera space, the sphere's depth written per fragment), meshes are
Lambert-lit in world space (two-sided: |n.l|), colours are ambient * colour plus the sum of
the point lights' diffuse terms.
"""

FLAG_COLORS, FLAG_RADII, FLAG_INDICES, FLAG_NORMALS, FLAG_CANVAS, FLAG_INSTANCES = 1, 2, 4, 8, 16, 32

WGSL = """
struct Draw { color: vec4f, params: vec4f, a: vec4i, b: vec4i }
struct Scene { view: mat4x4f, proj: mat4x4f, cam: vec4f, ambient: vec4f, size: vec4f }
struct Light { pos: vec4f, color: vec4f }
@group(0) @binding(0) var<uniform> d: Draw;
@group(0) @binding(1) var<uniform> s: Scene;
@group(0) @binding(2) var<storage, read> lights: array<Light>;
@group(0) @binding(3) var<storage, read> pos: array<f32>;
@group(0) @binding(4) var<storage, read> col: array<f32>;
@group(0) @binding(5) var<storage, read> aux: array<f32>;
@group(0) @binding(6) var<storage, read> idx: array<u32>;
@group(0) @binding(7) var<storage, read> xf: array<f32>;

fn has(flag: i32) -> bool { return (d.a.z & flag) != 0; }

fn position(i: u32) -> vec3f {
    let c = u32(d.b.x);
    let k = i * c;
    if (c == 2u) { return vec3f(pos[k], pos[k + 1u], 0.0); }
    return vec3f(pos[k], pos[k + 1u], pos[k + 2u]);
}

fn color(i: u32) -> vec4f {
    if (!has(1)) { return d.color; }
    let c = u32(d.a.w);
    let k = i * c;
    var a = 1.0;
    if (c == 4u) { a = col[k + 3u]; }
    return vec4f(col[k], col[k + 1u], col[k + 2u], a);
}

fn element(v: u32) -> u32 {
    if (has(4)) { return idx[u32(d.a.y) + v] + u32(d.a.x); }
    return u32(d.a.x) + v;
}

// a canvas position ([0, 1]^2, y up) in clip space
fn canvas(p: vec3f) -> vec4f { return vec4f(p.xy * 2.0 - 1.0, 0.0, 1.0); }

fn offset(v: u32) -> vec2f {
    var o = array<vec2f, 6>(vec2f(-1.0, 1.0), vec2f(1.0, -1.0), vec2f(-1.0, -1.0),
                            vec2f(-1.0, 1.0), vec2f(1.0, 1.0), vec2f(1.0, -1.0));
    return o[v % 6u];
}

fn lit(c: vec3f, p: vec3f, n: vec3f, camera_space: bool, two_sided: bool) -> vec3f {
    var result = s.ambient.xyz * c;
    for (var i = 0u; i < u32(s.size.w); i++) {
        var lp = lights[i].pos.xyz;
        if (camera_space) { let q = s.view * vec4f(lp, 1.0); lp = q.xyz / q.w; }
        let l = normalize(lp - p);
        var f = dot(l, normalize(n));
        if (two_sided) { f = abs(f); } else { f = max(f, 0.0); }
        result += f * c * lights[i].color.xyz;
    }
    return result;
}

struct Sprite { @builtin(position) p: vec4f, @location(0) cam: vec3f, @location(1) c: vec4f,
                @location(2) uv: vec2f, @location(3) r: f32 }

@vertex fn vs_particles(@builtin(vertex_index) v: u32, @builtin(instance_index) n: u32) -> Sprite {
    let i = u32(d.a.x) + n;
    let x = position(i);
    var r = d.params.x;
    if (has(2)) { r = aux[i]; }
    var o: Sprite;
    o.uv = offset(v);
    o.c = color(i);
    o.r = r;
    let h = r / (s.size.z * length(x - s.cam.xyz));
    let pc = s.view * vec4f(x, 1.0);
    o.cam = pc.xyz / pc.w;
    var pp = s.proj * pc;
    pp.x += o.uv.x * h * pp.w;
    pp.y += o.uv.y * h * s.size.x / s.size.y * pp.w;
    o.p = pp;
    return o;
}

struct Shaded { @location(0) c: vec4f, @builtin(frag_depth) depth: f32 }

@fragment fn fs_particles(f: Sprite) -> Shaded {
    let q = dot(f.uv, f.uv);
    if (q >= 1.0) { discard; }
    let z = sqrt(1.0 - q);
    let n = vec3f(f.uv, z);
    var o: Shaded;
    o.c = vec4f(lit(f.c.rgb, f.cam + n * f.r, n, true, false), f.c.a);
    let pz = s.proj * vec4f(0.0, 0.0, f.cam.z + z * f.r, 1.0);
    o.depth = clamp(pz.z / pz.w, 0.0, 1.0);
    return o;
}

struct Surface { @builtin(position) p: vec4f, @location(0) x: vec3f, @location(1) n: vec3f,
                 @location(2) c: vec4f }

// an instance's transform applied to x (Taichi's mesh_instance: lighting still sees x itself)
fn instance(x: vec3f, n: u32) -> vec3f {
    if (!has(32)) { return x; }
    let k = (n + u32(d.params.z)) * 16u;
    let p = vec4f(x, 1.0);
    let q = vec4f(dot(vec4f(xf[k], xf[k + 1u], xf[k + 2u], xf[k + 3u]), p),
                  dot(vec4f(xf[k + 4u], xf[k + 5u], xf[k + 6u], xf[k + 7u]), p),
                  dot(vec4f(xf[k + 8u], xf[k + 9u], xf[k + 10u], xf[k + 11u]), p),
                  dot(vec4f(xf[k + 12u], xf[k + 13u], xf[k + 14u], xf[k + 15u]), p));
    return q.xyz / q.w;
}

@vertex fn vs_mesh(@builtin(vertex_index) v: u32, @builtin(instance_index) inst: u32) -> Surface {
    return surface(v, inst);
}

// show_wireframe: a line list of each triangle's three edges, 6 vertices per triangle: edge e of
// triangle t joins its corners e and (e + 1) % 3 (WebGPU has no polygon mode: Taichi draws lines)
@vertex fn vs_mesh_wire(@builtin(vertex_index) v: u32, @builtin(instance_index) inst: u32) -> Surface {
    return surface(v / 6u * 3u + ((v % 6u) / 2u + v % 2u) % 3u, inst);
}

fn surface(v: u32, inst: u32) -> Surface {
    let i = element(v);
    let x = position(i);
    var n: vec3f;
    if (has(8)) {
        n = vec3f(aux[3u * i], aux[3u * i + 1u], aux[3u * i + 2u]);
    } else {  // a triangle's own normal, as Taichi computes it for vertices without indices
        let t = i / 3u * 3u;
        let a = position(t);
        n = normalize(cross(a - position(t + 1u), a - position(t + 2u)));
    }
    var o: Surface;
    o.x = x;
    o.n = n;
    o.c = color(i);
    if (has(16)) { o.p = canvas(x); } else { o.p = s.proj * s.view * vec4f(instance(x, inst), 1.0); }
    return o;
}

@fragment fn fs_mesh(f: Surface) -> @location(0) vec4f {
    return vec4f(lit(f.c.rgb, f.x, f.n, false, d.params.y != 0.0), f.c.a);
}

@fragment fn fs_flat(f: Surface) -> @location(0) vec4f { return f.c; }

// lines: a screen-space quad per segment, `params.x` wide in pixels
struct Stroke { @builtin(position) p: vec4f, @location(0) c: vec4f }

fn project(x: vec3f) -> vec4f {
    if (has(16)) { return canvas(x); }
    return s.proj * s.view * vec4f(x, 1.0);
}

@vertex fn vs_lines(@builtin(vertex_index) v: u32, @builtin(instance_index) n: u32) -> Stroke {
    let i0 = element(2u * n);
    let i1 = element(2u * n + 1u);
    let p0 = project(position(i0));
    let p1 = project(position(i1));
    let px = vec2f(s.size.x, s.size.y) * 0.5;
    let a = p0.xy / p0.w * px;
    let b = p1.xy / p1.w * px;
    var dir = b - a;
    if (length(dir) < 1e-6) { dir = vec2f(1.0, 0.0); }
    let side = normalize(vec2f(-dir.y, dir.x)) * d.params.x * 0.5 / px;
    let o = offset(v);
    var p = p0;
    var c = color(i0);
    if (o.x > 0.0) { p = p1; c = color(i1); }
    var r: Stroke;
    r.p = vec4f(p.xy + side * o.y * p.w, p.z, p.w);
    r.c = c;
    return r;
}

@fragment fn fs_lines(f: Stroke) -> @location(0) vec4f { return f.c; }

// canvas circles: `params.x` is the radius as a fraction of the window's height
struct Disk { @builtin(position) p: vec4f, @location(0) c: vec4f, @location(1) uv: vec2f }

@vertex fn vs_circles(@builtin(vertex_index) v: u32, @builtin(instance_index) n: u32) -> Disk {
    let i = u32(d.a.x) + n;
    var r = d.params.x;
    if (has(2)) { r = aux[i]; }
    var o: Disk;
    o.uv = offset(v);
    o.c = color(i);
    o.p = canvas(position(i));
    o.p.x += o.uv.x * r / s.size.x * s.size.y * 2.0;
    o.p.y += o.uv.y * r * 2.0;
    return o;
}

@fragment fn fs_circles(f: Disk) -> @location(0) vec4f {
    if (dot(f.uv, f.uv) >= 1.0) { discard; }
    return f.c;
}

// canvas.set_image: the texels of an image indexed [x, y] (y up), stretched over the window
@vertex fn vs_image(@builtin(vertex_index) v: u32) -> @builtin(position) vec4f {
    let q = array<vec2f, 3>(vec2f(-1.0, -1.0), vec2f(3.0, -1.0), vec2f(-1.0, 3.0));
    return vec4f(q[v], 0.0, 1.0);
}

@fragment fn fs_image(@builtin(position) fp: vec4f) -> @location(0) vec4f {
    let w = d.b.y;
    let h = d.b.z;
    let c = u32(d.b.w);
    let x = clamp(i32(fp.x / s.size.x * f32(w)), 0, w - 1);
    let y = clamp(i32((s.size.y - fp.y) / s.size.y * f32(h)), 0, h - 1);
    let k = u32(x * h + y) * c;
    if (c == 1u) { return vec4f(vec3f(pos[k]), 1.0); }
    var a = 1.0;
    if (c == 4u) { a = pos[k + 3u]; }
    return vec4f(pos[k], pos[k + 1u], pos[k + 2u], a);
}
"""
