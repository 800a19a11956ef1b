"""The WGSL of gr.GUI's 2D drawing (gfxrt/gui/painter.py builds the pipelines).

Coordinates are Taichi's: a position (x, y) in [0, 1]^2, x to the right, y up, lands on the pixel
of index (x * width, y * height) counted from the bottom-left (the pixel's centre: Taichi's canvas
samples pixel i at i). Every shader works in those pixel units, `px`, y up, and converts at the end.

One bind group layout for all of them: 0 the draw's parameters (uniform `U`), 1..3 read-only
storage buffers (positions, per-item colours 0xRRGGBB, per-item radii; a 16-byte dummy when
unused). Positions are f32 pairs read straight from the buffer a kernel wrote (a gfxrt field or
ndarray), or uploaded from numpy.
"""
from __future__ import annotations

COMMON = """
struct U {
    res: vec2<f32>,     // width, height in pixels
    radius: f32,        // radius (circles) or half width (lines) in pixels, when not per item
    flags: u32,         // 1: per-item colours, 2: per-item radii
    color: u32,         // 0xRRGGBB, when not per item
    channels: u32,      // set_image: channels per pixel
    offset: u32,        // first item
    _pad: u32,
};
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> pos: array<f32>;
@group(0) @binding(2) var<storage, read> colors: array<u32>;
@group(0) @binding(3) var<storage, read> radii: array<f32>;

fn rgb(c: u32) -> vec3<f32> {
    return vec3<f32>(f32((c >> 16u) & 255u), f32((c >> 8u) & 255u), f32(c & 255u)) / 255.0;
}
fn item_color(i: u32) -> vec3<f32> {
    if ((u.flags & 1u) != 0u) { return rgb(colors[i]); }
    return rgb(u.color);
}
fn item_radius(i: u32) -> f32 {
    if ((u.flags & 2u) != 0u) { return radii[i]; }
    return u.radius;
}
// pixel units (y up, pixel centres at integers) -> clip space
fn clip(p: vec2<f32>) -> vec4<f32> {
    return vec4<f32>((p + 0.5) / u.res * 2.0 - 1.0, 0.0, 1.0);
}
// the fragment's pixel in pixel units
fn pixel(frag: vec4<f32>) -> vec2<f32> {
    return vec2<f32>(frag.x - 0.5, u.res.y - frag.y - 0.5);
}
// a unit quad's corner (two triangles) for vertex k of 6
// (0, 1, 2), (0, 2, 3) of the corners (-1, -1), (1, -1), (1, 1), (-1, 1); arithmetic, no local array
fn corner(k: u32) -> vec2<f32> {
    let q = select(select(k, k - 2u, k >= 3u), 0u, k == 3u);  // corner index: 0 1 2 0 2 3
    return vec2<f32>(select(-1.0, 1.0, q == 1u || q == 2u), select(-1.0, 1.0, q >= 2u));
}
"""

# circles: one triangle per circle (3 vertices, not instanced), antialiased edge one pixel wide
CIRCLES = COMMON + """
struct V {
    @builtin(position) frag: vec4<f32>,
    @location(0) @interpolate(flat) center: vec2<f32>,
    @location(1) @interpolate(flat) radius: f32,
    @location(2) @interpolate(flat) color: vec3<f32>,
};
@vertex fn vs(@builtin(vertex_index) vi: u32) -> V {
    let i = vi / 3u + u.offset;
    let k = vi % 3u;
    let c = vec2<f32>(pos[2u * i], pos[2u * i + 1u]) * u.res;
    let r = item_radius(i);
    // one triangle around the circle (inradius r + 1): half the triangles of a quad, and the
    // per-triangle setup is what a CPU rasterizer (lavapipe) pays most for tiny circles
    let t = f32(k) * 2.0943951 + 1.5707963;
    var o: V;
    o.frag = clip(c + vec2<f32>(cos(t), sin(t)) * (2.0 * (r + 1.0)));
    o.center = c;
    o.radius = r;
    o.color = item_color(i);
    return o;
}
@fragment fn fs(v: V) -> @location(0) vec4<f32> {
    let a = clamp(v.radius - distance(pixel(v.frag), v.center), 0.0, 1.0);
    if (a <= 0.0) { discard; }
    return vec4<f32>(v.color, a);
}
"""

# lines: a quad around each segment (begin, end: 4 floats per line), capsule distance
LINES = COMMON + """
struct V {
    @builtin(position) frag: vec4<f32>,
    @location(0) @interpolate(flat) a: vec2<f32>,
    @location(1) @interpolate(flat) b: vec2<f32>,
    @location(2) @interpolate(flat) radius: f32,
    @location(3) @interpolate(flat) color: vec3<f32>,
};
@vertex fn vs(@builtin(vertex_index) vi: u32) -> V {
    let i = vi / 6u + u.offset;
    let k = vi % 6u;
    let a = vec2<f32>(pos[4u * i], pos[4u * i + 1u]) * u.res - 0.5;
    let b = vec2<f32>(pos[4u * i + 2u], pos[4u * i + 3u]) * u.res - 0.5;
    let r = item_radius(i);
    var t = b - a;
    let len = length(t);
    if (len > 0.0) { t = t / len; } else { t = vec2<f32>(1.0, 0.0); }
    let nrm = vec2<f32>(-t.y, t.x);
    let c = corner(k);
    let e = r + 1.0;
    let base = select(a - t * e, b + t * e, c.x > 0.0);
    var o: V;
    o.frag = clip(base + nrm * (c.y * e));
    o.a = a;
    o.b = b;
    o.radius = r;
    o.color = item_color(i);
    return o;
}
@fragment fn fs(v: V) -> @location(0) vec4<f32> {
    let p = pixel(v.frag);
    let ab = v.b - v.a;
    let h = clamp(dot(p - v.a, ab) / max(dot(ab, ab), 1e-12), 0.0, 1.0);
    let a = clamp(v.radius - distance(p, v.a + ab * h), 0.0, 1.0);
    if (a <= 0.0) { discard; }
    return vec4<f32>(v.color, a);
}
"""

# triangles: 6 floats per triangle, not antialiased (Taichi's canvas fills the covered pixels)
TRIANGLES = COMMON + """
struct V {
    @builtin(position) frag: vec4<f32>,
    @location(0) @interpolate(flat) color: vec3<f32>,
};
@vertex fn vs(@builtin(vertex_index) k: u32) -> V {
    let i = k / 3u + u.offset;
    let j = 6u * i + 2u * (k % 3u);
    var o: V;
    o.frag = clip(vec2<f32>(pos[j], pos[j + 1u]) * u.res - 0.5);
    o.color = item_color(i);
    return o;
}
@fragment fn fs(v: V) -> @location(0) vec4<f32> {
    return vec4<f32>(v.color, 1.0);
}
"""

# set_image: a full-frame triangle reading img[x, y, channel] (x to the right, y up; float in [0, 1])
# straight from the array's buffer. Channels as Taichi's cook_image: 1 gray, 2 (r, g, 0), 3 rgb, 4 rgba;
# to bytes as Taichi's screenshots: floor(v * 255)
IMAGE = COMMON + """
@vertex fn vs(@builtin(vertex_index) k: u32) -> @builtin(position) vec4<f32> {
    let c = array<vec2<f32>, 3>(vec2<f32>(-1.0, -1.0), vec2<f32>(3.0, -1.0), vec2<f32>(-1.0, 3.0));
    return vec4<f32>(c[k], 0.0, 1.0);
}
@fragment fn fs(@builtin(position) frag: vec4<f32>) -> @location(0) vec4<f32> {
    let w = u32(u.res.x);
    let h = u32(u.res.y);
    let x = min(u32(frag.x), w - 1u);
    let y = h - 1u - min(u32(frag.y), h - 1u);
    let c = u.channels;
    let at = (x * h + y) * c + u.offset;
    var v = vec3<f32>(pos[at], 0.0, 0.0);
    if (c == 1u) { v = vec3<f32>(v.x, v.x, v.x); }
    if (c >= 2u) { v.y = pos[at + 1u]; }
    if (c >= 3u) { v.z = pos[at + 2u]; }
    return vec4<f32>(floor(clamp(v, vec3<f32>(0.0), vec3<f32>(1.0)) * 255.0) / 255.0, 1.0);
}
"""

# presenting a frame on a window's surface (gfxrt/gui/window.py): a full-screen triangle copying texels;
# the frame holds sRGB-encoded bytes (Taichi's colours): onto an -srgb surface, which encodes what it
# is given, they go decoded (DECODE true), so that the screen shows the frame's bytes
BLIT = """
const DECODE: bool = {decode};
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var<uniform> surface: vec4<f32>;  // the surface's width, height (the frame is scaled to it)
fn decoded(c: vec3<f32>) -> vec3<f32> {{
    return select(pow((c + 0.055) / 1.055, vec3<f32>(2.4)), c / 12.92, c <= vec3<f32>(0.04045));
}}
@vertex fn vs(@builtin(vertex_index) k: u32) -> @builtin(position) vec4<f32> {{
    let c = array<vec2<f32>, 3>(vec2<f32>(-1.0, -1.0), vec2<f32>(3.0, -1.0), vec2<f32>(-1.0, 3.0));
    return vec4<f32>(c[k], 0.0, 1.0);
}}
@fragment fn fs(@builtin(position) frag: vec4<f32>) -> @location(0) vec4<f32> {{
    let size = textureDimensions(src);
    let p = min(vec2<u32>(frag.xy * vec2<f32>(size) / surface.xy), size - vec2<u32>(1u, 1u));
    let t = textureLoad(src, p, 0);
    if (DECODE) {{ return vec4<f32>(decoded(t.rgb), t.a); }}
    return t;
}}
"""
