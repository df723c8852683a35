#!/usr/bin/env bash
# Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
#
# ob1x-monitoring heatmap: a 5-rank and a 1024-rank matrix drawn as PNG and
# SVG. PNG: the signature, width and height from IHDR (the documented
# layout: matrix at x = 6 * (digits of the last rank + 6), y = 36, cells of
# min(48, 768 / ranks) pixels, colour scale on the right), decoded pixels:
# zero cells white, the largest cell the top colour of the scale, others
# neither. SVG: well-formed XML, one cell element per non-zero cell (1024
# ranks: per non-zero 4 x 4 bucket), the title and the units in the text.
set -u
. "$OB1X_SRCDIR/test/monitoring-tools/tool.sh"
command -v python3 >/dev/null || {
    echo "python3 is needed to decode the pictures"
    exit 77
}

# 5 ranks: a ring (1000 bytes) plus one heavy pair (0,2: 5000 bytes).
cat >"$work/five_size_all.mat" <<'MAT'
0 1000 5000 0 1000 
1000 0 1000 0 0 
5000 1000 0 1000 0 
0 0 1000 0 1000 
1000 0 0 1000 0 
MAT
python3 - "$work/big_msg_all.mat" <<'PY' || fail "cannot write the 1024-rank matrix"
import sys
n = 1024
with open(sys.argv[1], "w") as f:
    for i in range(n):
        f.write(" ".join(str((i * 7 + j) % 50 + 1) if abs(i - j) in (1, 2, 300) else "0"
                         for j in range(n)) + " \n")
PY
"$tool" heatmap --title t "$work/five_size_all.mat" || fail "heatmap five"
"$tool" heatmap "$work/big_msg_all.mat" || fail "heatmap big"
"$tool" heatmap --svg -o "$work/only" "$work/five_size_all.mat" || fail "heatmap --svg -o"
[ -s "$work/only.svg" ] && [ ! -e "$work/only.png" ] || fail "--svg -o: only.svg alone expected"

python3 - "$work" <<'PY' || fail "picture check"
import struct, sys, zlib
import xml.dom.minidom

work = sys.argv[1]
bad = []

def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(path + ": no PNG signature")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, ctype = ihdr[:4]
    if (depth, ctype) != (8, 2):
        raise SystemExit(path + ": not 8-bit RGB")
    raw, stride, rows, prev = zlib.decompress(idat), 3 * w, [], bytearray(3 * w)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - 3] if x >= 3 else 0
            b, c = prev[x], prev[x - 3] if x >= 3 else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, rows

def pixel(rows, x, y):
    return tuple(rows[y][3 * x:3 * x + 3])

def check_png(path, n, mat, want_w, want_h):
    w, h, rows = read_png(path)
    if (w, h) != (want_w, want_h):
        bad.append("%s: %dx%d, expected %dx%d" % (path, w, h, want_w, want_h))
        return
    cs = max(1, min(48, 768 // n))
    x0, y0 = 6 * (len(str(n - 1)) + 6), 36
    top = max(max(r) for r in mat)
    for i in range(n):
        for j in range(n):
            px = pixel(rows, x0 + j * cs + cs // 2, y0 + i * cs + cs // 2)
            v = mat[i][j]
            if v == 0 and px != (255, 255, 255):
                bad.append("%s: zero cell %d,%d is %s" % (path, i, j, px))
            elif v == top and px != (250, 230, 38):
                bad.append("%s: largest cell %d,%d is %s" % (path, i, j, px))
            elif 0 < v < top and px in ((255, 255, 255), (250, 230, 38)):
                bad.append("%s: cell %d,%d (%g) is %s" % (path, i, j, v, px))

def check_svg(path, mat, b, words):
    doc = xml.dom.minidom.parse(path)
    cells = [r for r in doc.getElementsByTagName("rect") if r.getAttribute("class") == "cell"]
    n = len(mat)
    nb = (n + b - 1) // b
    want = sum(1 for I in range(nb) for J in range(nb)
               if any(mat[i][j] for i in range(I * b, min(n, I * b + b))
                      for j in range(J * b, min(n, J * b + b))))
    if len(cells) != want:
        bad.append("%s: %d cells, expected %d" % (path, len(cells), want))
    text = " ".join(t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild)
    for w in words:
        if w not in text:
            bad.append("%s: no '%s' in the text" % (path, w))

def load(path):
    return [[float(v) for v in line.split()] for line in open(path) if line.strip()]

five = load(work + "/five_size_all.mat")
big = load(work + "/big_msg_all.mat")
# 5 ranks: 48 px cells, matrix 240 px at x 42; scale at 306, picture 414 x 316.
check_png(work + "/five_size_all.png", 5, five, 414, 316)
# 1024 ranks: 1 px cells at x 60, picture 1216 x 1100.
check_png(work + "/big_msg_all.png", 1024, big, 1216, 1100)
check_svg(work + "/five_size_all.svg", five, 1, ["t", "bytes", "4.88 KiB"])
check_svg(work + "/big_msg_all.svg", big, 4, ["big_msg_all.mat (4 ranks per cell)", "messages"])
check_svg(work + "/only.svg", five, 1, ["five_size_all.mat"])
if bad:
    print("\n".join(bad[:20]))
    raise SystemExit(1)
print("pictures as expected")
PY
exit 0
