"""Just enough PNG decoding to count a screenshot's colours (no imaging library needed)."""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # grey, RGB, grey + alpha, RGBA


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def pixels(png: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """``(width, height, pixels)`` of an 8-bit, non-interlaced PNG, pixels row by row."""
    if not png.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    position, data = len(SIGNATURE), b""
    width = height = depth = colour = interlace = 0
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        chunk = png[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            data += chunk
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
    step = CHANNELS[colour]
    stride = width * step
    raw = zlib.decompress(data)
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        filter_type, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up = previous[i]
            corner = previous[i - step] if i >= step else 0
            if filter_type == 1:
                line[i] = (line[i] + left) & 0xFF
            elif filter_type == 2:
                line[i] = (line[i] + up) & 0xFF
            elif filter_type == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif filter_type == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(line)
        previous = line
    out = [tuple(row[x * step : x * step + 3]) for row in rows for x in range(width)]
    return width, height, out


def ink(png: bytes) -> tuple[int, float]:
    """How many distinct colours a picture has, and the share of its pixels that are not
    its most common (background) colour."""
    _, _, found = pixels(png)
    counts: dict[tuple[int, ...], int] = {}
    for pixel in found:
        counts[pixel] = counts.get(pixel, 0) + 1
    background = max(counts.values())
    return len(counts), 1 - background / len(found)
