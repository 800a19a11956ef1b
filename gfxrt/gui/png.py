"""PNG files with zlib and numpy only: `write_png` (8-bit gray, RGB or RGBA) and `read_png`
(8-bit, non-interlaced; gray, gray+alpha, RGB, RGBA, palette), the format of `GUI.show(filename)`
and gr.tools.imwrite / imread. Arrays are image-ordered: (height, width[, channels]), top row first."""
from __future__ import annotations

import struct
import zlib

from gfxrt.compiler.npcompat import np

_SIG = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type
_CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4, 3: 1}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(img) -> bytes:
    """The PNG bytes of a uint8 image (H, W), (H, W, 1), (H, W, 3) or (H, W, 4)."""
    a = np.asarray(img)
    if a.dtype != np.uint8:
        raise TypeError(f"a PNG image must be uint8, got {a.dtype}")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or a.shape[2] not in _COLOR_TYPES or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"an image is (height, width[, 1|3|4 channels]), got shape {np.shape(img)}")
    h, w, c = a.shape
    rows = np.concatenate([np.zeros((h, 1), np.uint8), np.ascontiguousarray(a).reshape(h, w * c)], axis=1)
    head = struct.pack(">IIBBBBB", w, h, 8, _COLOR_TYPES[c], 0, 0, 0)
    return _SIG + _chunk(b"IHDR", head) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b"")


def write_png(path, img) -> None:
    """Write a uint8 image (H, W[, 1|3|4]) to `path` as PNG."""
    data = encode_png(img)
    with open(path, "wb") as f:
        f.write(data)


def _unfilter(raw: np.ndarray, h: int, stride: int, bpp: int) -> np.ndarray:
    out = np.zeros((h, stride), np.uint8)
    rows = raw.reshape(h, stride + 1)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) & 0xFF
        elif kind in (1, 3, 4):  # depend on the reconstructed left neighbour: byte by byte per pixel
            cur = line.copy()
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                if kind == 1:
                    cur[x] = (cur[x] + a) & 0xFF
                elif kind == 3:
                    cur[x] = (cur[x] + ((a + prev[x]) >> 1)) & 0xFF
                else:
                    b, c = prev[x], prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[x] = (cur[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        else:
            raise ValueError(f"PNG row filter {kind} is not one of 0..4")
        out[y] = cur
        prev = cur
    return out


def read_png(path) -> np.ndarray:
    """A PNG file as uint8 (H, W, channels) (gray: (H, W, 1); palette images as RGB / RGBA)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != _SIG:
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, palette, trns, head = 8, [], None, None, None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            trns = np.frombuffer(body, np.uint8)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if head is None:
        raise ValueError(f"{path}: PNG without a header")
    w, h, depth, ctype, _, _, interlace = head
    if depth != 8 or interlace or ctype not in _CHANNELS:
        raise ValueError(f"{path}: only 8-bit, non-interlaced PNGs are read (bit depth {depth}, "
                         f"colour type {ctype}, interlace {interlace})")
    c = _CHANNELS[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    img = _unfilter(raw, h, w * c, c).reshape(h, w, c)
    if ctype == 3:
        if palette is None:
            raise ValueError(f"{path}: palette PNG without a palette")
        rgb = palette[img[:, :, 0]]
        if trns is None:
            return rgb
        alpha = np.full(len(palette), 255, np.uint8)
        alpha[:len(trns)] = trns
        return np.concatenate([rgb, alpha[img[:, :, 0]][:, :, None]], axis=2)
    return img
