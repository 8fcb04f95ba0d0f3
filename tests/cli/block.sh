#!/bin/sh
# SPDX-License-Identifier: MIT
# block.sh - block-scaled formats through `fplab round` and `fplab formats`
# (issue 25): the dequantized values of mxfp4 (OCP MX floor rule) and
# nvfp4 (two levels, exact quotients) equal a reference written here in
# Python from the specifications with exact rational arithmetic
# (fractions.Fraction, nearest-even over the element and scale value
# lists), for .npy and .npz tensors with short last blocks, zeros and a
# NaN block; the shape is kept and the values are binary64 (NVFP4's need
# up to 30 bits); stochastic rounding does not
# depend on --threads; the block events in the report; packed codes and
# scales decode in numpy to the values written and read back; bad specs,
# a scale tensor that does not match its codes, and unsupported
# combinations fail with a message and write no file.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

need_numpy
"$PYTHON" -c 'import numpy as np
r = np.random.default_rng(25)
w = (r.standard_normal((4, 64)) * np.exp2(r.integers(-6, 6, (4, 64)))).astype(np.float32)
w[1, :32] = 0          # a block of zeros
w[2, 5] = 7.5 * 2**-3  # nothing special; amax edge below
np.save("w.npy", w)
a = r.standard_normal((3, 40))           # 40 = 32 + a short block of 8
b = r.standard_normal(20).astype(np.float32)
b[17] = np.nan                           # the second block of 16 is NaN under nvfp4
np.savez("z.npz", a=a, b=b)
np.save("big.npy", r.standard_normal(200000).astype(np.float32))'

# The reference: OCP MX floor (mxfp4) and NVFP4, exactly.
cat >ref.py <<'EOF'
import sys, math
from fractions import Fraction as F
import numpy as np

E2M1 = [F(v) for v in (0, 0.5, 1, 1.5, 2, 3, 4, 6)]
E4M3 = sorted({F(m, 8) * F(2) ** -6 for m in range(1, 8)} |
              {F(8 + m, 8) * F(2) ** e for e in range(-6, 9) for m in range(8)
               if not (e == 8 and m == 7)} | {F(0)})

def nearest_even(vals, q):
    """q >= 0 rounded to nearest in the sorted list, ties to the even
    index (code), saturating at the last."""
    if q >= vals[-1]:
        return vals[-1]
    i = max(k for k in range(len(vals)) if vals[k] <= q)
    lo, hi = vals[i], vals[i + 1]
    if q - lo < hi - q or (q - lo == hi - q and i % 2 == 0):
        return lo
    return hi

def rnd(vals, q, D):
    """the dequantized value of x = q D: sign kept, zeros signed"""
    return math.copysign(float(nearest_even(vals, abs(q)) * D), float(q))

def fp32(q):
    """a positive rational rounded to nearest-even binary32 (normal range)"""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if F(2) ** e > q:
        e -= 1
    m = q / F(2) ** (e - 23)
    n = math.floor(m)
    if m - n > F(1, 2) or (m - n == F(1, 2) and n % 2):
        n += 1
    return n * F(2) ** (e - 23)

def mxfp4(x):
    out = np.empty_like(x, dtype=np.float64)
    for row in range(x.shape[0]):
        for b0 in range(0, x.shape[1], 32):
            blk = x[row, b0:b0 + 32]
            if not np.all(np.isfinite(blk)):
                out[row, b0:b0 + 32] = np.nan
                continue
            amax = max(abs(float(v)) for v in blk)
            X = F(1) if amax == 0 else F(2) ** (math.frexp(amax)[1] - 1 - 2)
            for j, v in enumerate(blk):
                out[row, b0 + j] = rnd(E2M1, F(float(v)) / X, X)
    return out

def nvfp4(x):
    flat = x.reshape(-1, x.shape[-1])
    fin = [abs(float(v)) for v in flat.ravel() if np.isfinite(v)]
    amax_t = max(fin) if fin else 0.0
    s = fp32(F(amax_t) / 2688) if amax_t else F(1)
    out = np.empty(flat.shape)
    for row in range(flat.shape[0]):
        for b0 in range(0, flat.shape[1], 16):
            blk = flat[row, b0:b0 + 16]
            if not np.all(np.isfinite(blk)):
                out[row, b0:b0 + 16] = np.nan
                continue
            amax = max(abs(float(v)) for v in blk)
            X = F(1) if amax == 0 else nearest_even(E4M3, F(amax) / (6 * s))
            X = max(X, F(2) ** -9)
            D = X * s
            for j, v in enumerate(blk):
                out[row, b0 + j] = rnd(E2M1, F(float(v)) / D, D)
    return out.reshape(x.shape)

fn = {"mxfp4": mxfp4, "nvfp4": nvfp4}[sys.argv[1]]
src = np.load(sys.argv[2])
got = np.load(sys.argv[3])
pairs = [(k, src[k], got[k]) for k in src.files] if sys.argv[2].endswith(".npz") else [("", src, got)]
bad = 0
for name, x, y in pairs:
    x2 = x if x.ndim == 2 else x.reshape(1, -1)
    want = fn(x2).reshape(x.shape)
    if y.dtype != np.float64 or y.shape != x.shape:
        print("tensor %s: dtype/shape %s %s, want float64 %s" % (name, y.dtype, y.shape, x.shape))
        bad += 1
    for i, (a, b) in enumerate(zip(want.ravel(), y.astype(np.float64).ravel())):
        if not ((np.isnan(a) and np.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))):
            if bad < 5:
                print("tensor %s element %d: got %r want %r" % (name, i, b, a))
            bad += 1
print("mismatches", bad)
EOF

ref() {
	checks=$((checks + 1))
	out=$("$PYTHON" ref.py "$@" 2>&1)
	[ "$out" = "mismatches 0" ] || fail "$1 $2: $out"
}

fplab round -f mxfp4 w.npy -o d.npy || fail "round -f mxfp4 w.npy"
ref mxfp4 w.npy d.npy
fplab round -f mxfp4 z.npz -o dz.npz || fail "round -f mxfp4 z.npz"
ref mxfp4 z.npz dz.npz
fplab round -f nvfp4 w.npy -o n.npy || fail "round -f nvfp4 w.npy"
ref nvfp4 w.npy n.npy
fplab round -f nvfp4 z.npz -o nz.npz || fail "round -f nvfp4 z.npz"
ref nvfp4 z.npz nz.npz

# Packed output (the issue's "done when"): codes and scales that numpy
# reads as uint8 and decodes, by the OCP and NVFP4 layouts written here
# (e2m1: sign bit 3, magnitude index 0..7; e8m0: 2^(code - 127); e4m3fn
# by its bit fields; fp4 two codes per byte, low nibble first), to what
# -o FILE.npy / .npz wrote.
fplab round -f mxfp4 w.npy -o w4.safetensors --out-dtype mxfp4 || fail "packed mxfp4"
fplab round --out-dtype nvfp4 z.npz -o z4.npz || fail "packed nvfp4"
checks=$((checks + 1))
out=$("$PYTHON" -c 'import numpy as np, json, struct
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])
def e2m1(c):
    return np.where(c & 8, -1.0, 1.0) * E2M1[c & 7]
def nibbles(b, L):
    return np.stack([b & 15, b >> 4], -1).reshape(b.shape[:-1] + (-1,))[..., :L]
def e4m3(c):
    c = c.astype(np.int64); e = (c >> 3) & 15; m = c & 7
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    v = np.where((c & 127) == 127, np.nan, v)  # S.1111.111: the NaN scale
    return np.where(c & 128, -v, v)
bad = 0
raw = open("w4.safetensors", "rb").read()
hl = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + hl])
def get(k):
    a, b = h[k]["data_offsets"]
    assert h[k]["dtype"] == "U8"
    return np.frombuffer(raw[8 + hl + a:8 + hl + b], np.uint8).reshape(h[k]["shape"])
d = np.load("d.npy")
v = e2m1(nibbles(get("w.codes"), 64)) * np.repeat(2.0 ** (get("w.scales").astype(int) - 127), 32, -1)
bad += int((v != d).sum())
z, dz = np.load("z4.npz"), np.load("nz.npz")
for k in ("a", "b"):
    L = dz[k].shape[-1]
    assert z[k + ".codes"].dtype == np.uint8 and z[k + ".scales"].dtype == np.uint8
    X = np.repeat(e4m3(z[k + ".scales"]), 16, -1)[..., :L]
    v = e2m1(nibbles(z[k + ".codes"], L)) * X * np.float64(z[k + ".tensor_scale"][0])
    bad += int((~((v == dz[k]) | (np.isnan(v) & np.isnan(dz[k])))).sum())
print("mismatches", bad)' 2>&1)
[ "$out" = "mismatches 0" ] || fail "packed codes do not decode to the values: $out"

# and read back: -f mxfp4 on the pair decodes it to the same values
fplab round -f mxfp4 w4.safetensors -o back.npy || fail "reading packed mxfp4 back"
fplab round -f nvfp4 z4.npz -o zback.npz || fail "reading packed nvfp4 back"
checks=$((checks + 1))
out=$("$PYTHON" -c 'import numpy as np
a, b = np.load("back.npy"), np.load("d.npy")
z, w = np.load("zback.npz"), np.load("nz.npz")
bad = int((a != b).sum()) + sum(int((~((z[k] == w[k]) | (np.isnan(z[k]) & np.isnan(w[k])))).sum()) for k in w.files)
print("mismatches", bad, sorted(z.files))' 2>&1)
[ "$out" = "mismatches 0 ['a', 'b']" ] || fail "packed files read back: $out"
# a scale tensor that does not match its codes
"$PYTHON" -c 'import numpy as np
np.savez("badpack.npz", **{"t.codes": np.zeros((2, 16), np.uint8), "t.scales": np.full((2, 2), 127, np.uint8)})'
expect_fail "scales do not match" 1 "t.scales holds 4 scale codes; the blocks of t.codes under mxfp4 need 2" \
	fplab round -f mxfp4 badpack.npz -o bad3.npy
checks=$((checks + 1))
[ ! -e bad3.npy ] || fail "a failed read-back left an output file"

# the general spelling of mxfp4 gives the same bits
fplab round -f block:e2m1:e8m0:32:floor w.npy -o g.npy || fail "round -f block:..."
checks=$((checks + 1))
cmp -s d.npy g.npy || fail "block:e2m1:e8m0:32:floor differs from mxfp4"

# a Fortran-order tensor (numpy's np.save of a transposed array) is the
# same tensor: its blocks run along its last axis as numpy shows it, so
# the values equal those of the C-order copy (the .npy kept in Fortran
# order), the text output is in C order, and hist sees the same blocks
"$PYTHON" -c 'import numpy as np; np.save("wf.npy", np.asfortranarray(np.load("w.npy")))'
fplab round -f mxfp4 wf.npy -o df.npy || fail "round -f mxfp4 on a Fortran-order tensor"
fplab round -f mxfp4 wf.npy -o df.txt && fplab round -f mxfp4 w.npy -o dc.txt ||
	fail "round -f mxfp4 to text"
checks=$((checks + 1))
out=$("$PYTHON" -c 'import numpy as np
d, f = np.load("d.npy"), np.load("df.npy")
print(f.flags["F_CONTIGUOUS"] and not f.flags["C_CONTIGUOUS"], np.array_equal(d, f, equal_nan=True))')
[ "$out" = "True True" ] || fail "Fortran-order mxfp4: (kept Fortran order, values equal) = $out"
checks=$((checks + 1))
cmp -s dc.txt df.txt || fail "Fortran-order mxfp4 to text: not the C-order values"
checks=$((checks + 1))
[ "$(fplab hist -f mxfp4 --tsv wf.npy | cut -f2-)" = "$(fplab hist -f mxfp4 --tsv w.npy | cut -f2-)" ] ||
	fail "hist -f mxfp4: the Fortran-order tensor's report differs"

# stochastic rounding of elements: the same on 1 and 2 threads
fplab round -f mxfp4 -r sp --seed 9 --threads 1 big.npy -o s1.npy || fail "sp, 1 thread"
fplab round -f mxfp4 -r sp --seed 9 --threads 2 big.npy -o s2.npy 2>/dev/null || fail "sp, 2 threads"
checks=$((checks + 1))
cmp -s s1.npy s2.npy || fail "mxfp4 sp: 1 and 2 threads differ"
fplab round -f mxfp4 -r sp --seed 10 --threads 1 big.npy -o s3.npy || fail "sp, seed 10"
checks=$((checks + 1))
cmp -s s1.npy s3.npy && fail "mxfp4 sp: seeds 9 and 10 agree: nothing stochastic"

# block events: 7.5 alone has X = 2^(2-2) = 1 under floor and saturates
# to 6 (one element, its block's largest); under rceil X = 2, 7.5/2 = 3.75
# -> 4, no saturation.  A block of zeros; a NaN block.
col() { fplab round --tsv "$@" | awk -F'\t' -v c="$COL" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i } NR == 2 { print $k }'; }
printf '7.5\n' >s.txt
COL=saturated expect_out "floor saturates 7.5" "1" col -f mxfp4 s.txt
COL=amax_saturated expect_out "floor: its block's largest" "1" col -f mxfp4 s.txt
COL=amax_saturated expect_out "rceil does not" "0" col -f mxfp4:rceil s.txt
expect_out "rceil: 7.5 -> 8" "8" fplab round -f mxfp4:rceil s.txt
printf '0 0 0 -0\n' >zero.txt
COL=zero_blocks expect_out "a block of zeros" "1" col -f mxfp4 zero.txt
expect_out "zeros keep their sign" "$(printf '0\n0\n0\n-0')" fplab round -f mxfp4 zero.txt
printf '1 nan 3\n' >nan.txt
COL=nan_blocks expect_out "a NaN block" "1" col -f mxfp4 nan.txt
expect_out "a NaN block is all NaN" "$(printf 'nan\nnan\nnan')" fplab round -f mxfp4 nan.txt
# 3 x 40: 3 rows of 2 blocks (32 + 8); 20: one block of 20
COL=blocks expect_out "blocks of 3x40 and 20 under mxfp4" "7" col -f mxfp4 --no-values z.npz
COL=bits_per_value expect_out "bits per value of one full block" "4.25" col -f mxfp4 w.npy

# a sweep of block and plain formats: each row is the run of its format
# alone (own draws from 0), the block columns 0 for a plain format, whose
# bits per value is its width; stdin is read once and kept for every
# format; a packed file is refused (only its own format decodes it)
fplab round -f mxfp4,fp16,nvfp4 -r ne,sp --seed 3 --tsv w.npy >sw.tsv || fail "a sweep of block formats"
for fr in mxfp4:ne mxfp4:sp nvfp4:sp fp16:sp; do
	checks=$((checks + 1))
	fplab round -f "${fr%:*}" -r "${fr#*:}" --seed 3 --tsv w.npy >one.tsv
	[ "$(grep "^${fr%:*}	${fr#*:}	" sw.tsv)" = "$(tail -1 one.tsv)$([ "${fr%:*}" = fp16 ] && printf '\t16\t0\t0\t0\t0\t0')" ] ||
		fail "sweep row $fr differs from its run alone: $(grep "^${fr%:*}	${fr#*:}	" sw.tsv) vs $(tail -1 one.tsv)"
done
checks=$((checks + 1))
[ "$(wc -l <sw.tsv)" = 7 ] || fail "a sweep of 3 formats x 2 modes printed $(wc -l <sw.tsv) lines"
checks=$((checks + 1))
[ "$(fplab round -f mxfp4,e2m1 --tsv <s.txt | cut -f1,3,20,21 | tr '\t\n' ' ')" = "format n bits_per_value blocks mxfp4 1 12 1 e2m1 1 4 0 " ] ||
	fail "a sweep from stdin: $(fplab round -f mxfp4,e2m1 --tsv <s.txt 2>&1 | cut -f1,3,20,21 | tr '\t\n' ' ')"
# a .fmt file naming a block format
printf '# mxfp4 with the rceil rule, blocks of 16\nname = myfp4\nblock = mxfp4:rceil:16\n' >my.fmt
expect_out "block .fmt: rceil" "8" fplab round -f my.fmt s.txt
COL=format expect_out "block .fmt: its name" "myfp4" col -f my.fmt s.txt
printf 'block = mxfp4\ne = 4\n' >bad.fmt
expect_fail "block .fmt with a plain key" 2 "bad.fmt: line 2: only 'block' and 'name' apply" \
	fplab round -f bad.fmt s.txt

# formats
expect_out "formats --blocks" "mxfp4	4.25" sh -c "fplab formats --blocks --tsv | awk -F'\t' '\$1 == \"mxfp4\" { print \$1 \"\t\" \$7 }'"
expect_out "formats nvfp4" "bits_per_value 4.5" sh -c "fplab formats nvfp4 | grep bits"

# refused, with a message and no file
expect_fail "block size 0" 2 "block size '0' must be a positive integer" fplab round -f mxfp4:0 w.npy -o bad1.npy
expect_fail "negative block size" 2 "block size '-2'" fplab round -f block:e2m1:e8m0:-2 w.npy -o bad1.npy
expect_fail "scale without NaN" 2 "scale format 'e2m1' cannot hold a scale" \
	fplab round -f block:e4m3fn:e2m1 w.npy -o bad1.npy
expect_fail "a sweep over a packed file" 1 "w4.safetensors' holds packed codes and scales" \
	fplab round -f mxfp4,mxfp8 w4.safetensors
expect_fail "packed output to .npy" 2 "--out-dtype mxfp4: packed codes and scales are a pair" \
	fplab round -f mxfp4 w.npy -o bad2.npy --out-dtype mxfp4
expect_fail "packed output of another format" 2 "--out-dtype mxfp8: packed codes are those of -f" \
	fplab round -f mxfp4 w.npy -o bad2.safetensors --out-dtype mxfp8
expect_fail "--flags" 2 "--flags: a block format" fplab round -f mxfp4 --flags s.txt
expect_fail "calc rounds one result at a time" 2 "-f mxfp4: a block-scaled format scales whole blocks" \
	fplab calc add -f mxfp4 s.txt s.txt
expect_fail "a block format is no accumulator" 2 "--acc 'mxfp4': a block-scaled format is a load format" \
	fplab gemm -m 2 -n 2 -k 32 --gen normal:0,1 --acc mxfp4
expect_fail "--subnormal with a block format" 2 "apply to plain formats" \
	fplab round -f mxfp4 --subnormal 0 s.txt
checks=$((checks + 1))
[ ! -e bad1.npy ] && [ ! -e bad2.safetensors ] && [ ! -e bad2.npy ] ||
	fail "a refused run left an output file"

finish
