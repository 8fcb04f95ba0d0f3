#!/bin/sh
# SPDX-License-Identifier: MIT
# tensors.sh - tensors in and out intact (issue 10, point 1): files written
# by numpy go through `fplab round` and are read back by numpy, which must
# find the same shape, storage order, dtype and the values numpy's own
# astype gives.  The Fortran-order round trip comes first.  Also CSV and
# tab-separated text input.  Expected values come from numpy, never fplab.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# CSV and tabs need no numpy
expect_out "csv line" "1 2 3" sh -c "printf '1,2,3\n' | fplab round -f h"
expect_out "csv spaces" "1 2" sh -c "printf '1, 2\n' | fplab round -f h"
expect_out "tabs" "1 2 3" sh -c "printf '1\t2\t3\n' | fplab round -f h"
expect_out "csv to binary" "$(printf '1\n2\n0.0999755859375')" \
	sh -c "printf '1,2\n0.1\n' | fplab round -f h --out f64 | fplab round --in f64"
expect_fail "empty field" 1 "line 2: empty field" sh -c "printf '1\n1,,2\n' | fplab round -f h"
expect_fail "trailing comma" 1 "line 1: empty field" sh -c "printf '1,2,\n' | fplab round -f h"
# the library's text reader (src/io/text.c, as hist reads)
printf '0.1,0.2\n0.3\t0.4\n' >c.txt
expect_out "csv through the tensor reader" "4" sh -c "fplab hist -f h --tsv c.txt | awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"n\") c = i } NR == 2 { print \$c }'"
printf '1\n1,,2\n' >bad.txt
expect_fail "empty field, library reader" 1 "line 2: empty field" fplab hist -f h bad.txt

if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
	echo "skip: numpy missing (the numpy cross-checks of $(basename "$0"))" >&2
	finish
fi

"$PYTHON" - <<'EOF' || fail "numpy could not write the inputs"
import numpy as np
a = (np.arange(12, dtype=np.float64).reshape(3, 4) - 5) / 7
np.save('fo.npy', a.T)                       # fortran_order: True, shape (4, 3)
np.save('fo32.npy', a.astype(np.float32).T)
np.save('c3.npy', (np.arange(24.0).reshape(2, 3, 4) / 3).astype(np.float32))
np.save('f3.npy', np.asfortranarray(np.arange(24.0).reshape(2, 3, 4) / 3))
np.save('f16.npy', a.astype(np.float16))
np.save('be.npy', (np.arange(6, dtype='>f8') / 3).reshape(2, 3))
np.save('be32.npy', (np.arange(6, dtype='>f4') / 3))
np.save('zero_d.npy', np.float32(0.1))
np.save('empty.npy', np.zeros((0, 3), dtype=np.float32))
np.save('e4.npy', np.arange(0, 0x7f, dtype=np.uint8))   # e4m3fn codes
np.save('bf.npy', np.array([0x3f80, 0x40c9, 0x0001, 0xc000], dtype='<u2'))
np.savetxt('m.csv', a, delimiter=',')
np.savez('z.npz', a=a.astype(np.float32), f=np.asfortranarray(a),
         e=np.zeros((0, 2)), s=np.float16(3.3))
EOF

# the Fortran-order round trip first: .npy out keeps shape, order, dtype
fplab round -f h fo.npy -o fo.out.npy || fail "round fo.npy"
fplab round -f h --in npy --out npy fo32.npy -o fo32.out.npy || fail "round --in npy fo32.npy"
# flat outputs are in C (logical) order
fplab round -f h --out f64 fo.npy >fo.f64 || fail "round fo.npy --out f64"
fplab round -f h f3.npy >f3.txt || fail "round f3.npy"
fplab round -f h c3.npy -o c3.out.npy || fail "round c3.npy"
fplab round -f h f16.npy -o f16.out.npy || fail "round f16.npy"
fplab round -f h be.npy -o be.out.npy || fail "round be.npy"
fplab round -f bf16 be32.npy -o be32.out.npy || fail "round be32.npy"
fplab round -f h zero_d.npy -o zero_d.out.npy || fail "round zero_d.npy"
fplab round -f h empty.npy -o empty.out.npy || fail "round empty.npy"
fplab round -f h --out-dtype f16 fo.npy -o fo16.out.npy || fail "--out-dtype f16"
fplab round -f e4m3fn --dtype e4m3fn --in npy e4.npy -o e4.out.npy || fail "e4m3fn codes"
fplab round -f bf16 --subnormal 1 --dtype bf16 --in npy bf.npy -o bf.out.npy || fail "bf16 codes"
fplab round -f h m.csv -o m.out.npy || fail "csv to npy"
fplab round -f h --out-dtype e5m2 c3.npy -o e5.out.npy || fail "--out-dtype e5m2"
fplab calc add -f h --out npy fo.npy fo.npy -o add.out.npy || fail "calc add fo.npy"
fplab calc neg -f h c3.npy -o neg.out.npy || fail "calc neg c3.npy (npy from -o)"
fplab round -f h z.npz -o z.out.npz || fail "npz to npz"
fplab round -f h z.npz -o z.out.safetensors || fail "npz to safetensors"
fplab round -f h --out-dtype bf16 --out safetensors z.npz -o bf.safetensors || fail "safetensors bf16"
fplab round -f e4m3fn --out-dtype e4m3fn --out safetensors z.npz -o e4.safetensors || fail "safetensors e4m3fn"
fplab round -f e5m2 --out-dtype e5m2 --out safetensors z.npz -o e5.safetensors || fail "safetensors e5m2"
fplab round -f h --out-dtype f16 --out safetensors z.npz -o h.safetensors || fail "safetensors f16"
fplab round -f h --out f64 fo.npy -o z2.in.f64 || fail "raw out"
fplab round -f h --in f64 --out npz z2.in.f64 -o raw.out.npz || fail "raw to npz"
expect_fail "npz with fortran members to a flat output" 1 "use --out npz or safetensors" fplab round -f h z.npz
expect_fail "calc: orders differ" 1 "differ in shape or storage order" fplab calc add -f h fo.npy c3.npy

"$PYTHON" - <<'EOF' || fail "numpy disagrees (see above)"
import sys
import numpy as np
bad = 0
def check(what, ok):
    global bad
    if not ok:
        print("FAIL: " + what, file=sys.stderr)
        bad += 1
def h(x):      # round to fp16 (numpy: nearest even), back in x's dtype
    return np.asarray(x).astype(np.float16).astype(np.asarray(x).dtype)
def same(what, got, want):
    check(what + ": dtype %s, want %s" % (got.dtype, want.dtype), got.dtype == want.dtype)
    check(what + ": shape %s, want %s" % (got.shape, want.shape), got.shape == want.shape)
    check(what + ": values", got.shape == want.shape and np.array_equal(got, want))

fo = np.load('fo.npy')
got = np.load('fo.out.npy')
same("fortran f64", got, h(fo))
check("fortran f64: fortran order kept", got.flags.f_contiguous)
same("fortran f32", np.load('fo32.out.npy'), h(np.load('fo32.npy')))
flat = np.fromfile('fo.f64', dtype='<f8')
check("fortran -> f64 in C order", np.array_equal(flat, h(fo).ravel()))
txt = np.array(open('f3.txt').read().split(), dtype=np.float64)
check("fortran 3-d -> text in C order", np.array_equal(txt, h(np.load('f3.npy')).ravel()))
same("c-order 3-d f32", np.load('c3.out.npy'), h(np.load('c3.npy')))
same("f16", np.load('f16.out.npy'), np.load('f16.npy'))
be = np.load('be.npy')
same("big-endian f64", np.load('be.out.npy'), h(be).astype('<f8'))
b32 = np.load('be32.npy').astype('<f4')
u = b32.view(np.uint32).astype(np.uint64)                 # bf16, nearest even
bf = ((u + 0x7fff + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
same("big-endian f32 to bf16", np.load('be32.out.npy'), bf)
same("0-d", np.load('zero_d.out.npy'), h(np.load('zero_d.npy')))
same("empty", np.load('empty.out.npy'), np.load('empty.npy'))
same("--out-dtype f16", np.load('fo16.out.npy'), fo.astype(np.float16))
check("--out-dtype f16: fortran", np.load('fo16.out.npy').flags.f_contiguous)
same("e4m3fn codes", np.load('e4.out.npy'), np.load('e4.npy'))
same("bf16 codes", np.load('bf.out.npy'), np.load('bf.npy'))
m = np.loadtxt('m.csv', delimiter=',')
same("csv", np.load('m.out.npy'), h(m.ravel()))
e5 = np.load('e5.out.npy')
check("e5m2 codes: dtype u1, shape", e5.dtype == np.uint8 and e5.shape == (2, 3, 4))
# e5m2 is binary16's top byte: values of c3 rounded into it, re-read
c3 = np.load('c3.npy').astype(np.float16)
u16 = c3.view(np.uint16).astype(np.uint32)
want = ((u16 + 0x7f + ((u16 >> 8) & 1)) >> 8).astype(np.uint8)
check("e5m2 codes: values", np.array_equal(e5, want))
got = np.load('add.out.npy')
same("calc add, fortran", got, h(fo + fo))
check("calc add: fortran order kept", got.flags.f_contiguous)
same("calc neg, f32", np.load('neg.out.npy'), h(-np.load('c3.npy')))

# .npz: one member per input tensor, named like it, each intact
z = np.load('z.npz')
o = np.load('z.out.npz')
check("npz members %s" % o.files, sorted(o.files) == sorted(z.files))
for k in z.files:
    if k in o.files:
        same("npz member " + k, o[k], h(z[k]))
check("npz fortran member kept", o['f'].flags.f_contiguous)
same("raw to npz arr_0", np.load('raw.out.npz')['arr_0'], h(fo).ravel())

# .safetensors, read by a small reader (no safetensors package here)
import json, struct
def st_read(path):
    b = open(path, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    hdr = json.loads(b[8:8 + n])
    data = b[8 + n:]
    check(path + ": header padded to 8", n % 8 == 0)
    spans = sorted(tuple(v['data_offsets']) for k, v in hdr.items() if k != '__metadata__')
    end = 0
    for a0, a1 in spans:
        check(path + ": data_offsets tile the data", a0 == end)
        end = a1
    check(path + ": no trailing bytes", end == len(data))
    dt = {'F64': '<f8', 'F32': '<f4', 'F16': '<f2', 'BF16': '<u2', 'F8_E4M3': 'u1',
          'F8_E5M2': 'u1'}
    out = {}
    for k, v in hdr.items():
        a0, a1 = v['data_offsets']
        out[k] = (v['dtype'], np.frombuffer(data[a0:a1], dtype=dt[v['dtype']]).reshape(v['shape']))
    return out
t = st_read('z.out.safetensors')
check("safetensors names", sorted(t) == sorted(z.files))
for k in z.files:
    want = h(z[k])
    check("safetensors %s dtype %s" % (k, t[k][0]),
          t[k][0] == {'float32': 'F32', 'float64': 'F64', 'float16': 'F16'}[str(want.dtype)])
    same("safetensors " + k + " (C order)", t[k][1].astype(want.dtype), want)
t = st_read('h.safetensors')
for k in z.files:
    same("safetensors F16 " + k, t[k][1], z[k].astype(np.float16))
t = st_read('bf.safetensors')
f32 = np.ascontiguousarray(h(z["f"])).astype(np.float32)  # fp16 results, to bf16 nearest-even
u = f32.view(np.uint32).astype(np.uint64)
want = ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)
check("safetensors BF16 dtype", t['f'][0] == 'BF16')
same("safetensors BF16 codes", t['f'][1], want)
t = st_read('e5.safetensors')
x = np.ascontiguousarray(z['f']).astype(np.float16)       # e5m2 = top byte of fp16
u16 = x.view(np.uint16).astype(np.uint32)
check("safetensors F8_E5M2 dtype", t['f'][0] == 'F8_E5M2')
same("safetensors F8_E5M2 codes", t['f'][1], ((u16 + 0x7f + ((u16 >> 8) & 1)) >> 8).astype(np.uint8))
t = st_read('e4.safetensors')
check("safetensors F8_E4M3 dtype", t['f'][0] == 'F8_E4M3')
# e4m3fn decoded by hand: s eeee mmm, bias 7, no inf, 0x7f/0xff NaN
def e4(c):
    c = c.astype(np.int64); s = np.where(c & 0x80, -1.0, 1.0); e = (c >> 3) & 15; m = c & 7
    return s * np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7))
vals = np.ascontiguousarray(z['f'])
grid = e4(np.arange(0, 0x7f))
near = np.array([np.sign(v) * grid[np.argmin(np.abs(grid - abs(v)))] for v in vals.ravel()])
check("safetensors F8_E4M3 values", np.array_equal(e4(t['f'][1]).ravel(), near))
sys.exit(1 if bad else 0)
EOF
checks=$((checks + 1))
finish
