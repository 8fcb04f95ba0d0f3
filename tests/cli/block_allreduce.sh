#!/bin/sh
# SPDX-License-Identifier: MIT
# block_allreduce.sh - `fplab allreduce --comm mxfp8` and other block
# formats (issue 25): each chunk a node sends is quantized as blocks with
# their own scales.  The results of small ring and sequential all-reduces
# equal a reference written here in numpy from the OCP MX v1.0 rules
# (floor scale X = 2^(floor(log2 amax) - emax_elem), elements rounded to
# nearest-even, saturating) and the schedules of fplab-allreduce(1); the
# bytes per node count the scales, worked by hand; bad combinations fail
# with a message.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
	echo "block_allreduce.sh: skip: $PYTHON cannot import numpy" >&2
	exit 77
fi

"$PYTHON" -c 'import numpy as np
r = np.random.default_rng(2025)
for i in range(3):
    g = r.standard_normal(64) * np.exp2(r.integers(-4, 4, 64))
    np.save("g%d.npy" % i, g)
    np.save("s%d.npy" % i, g[:40])'

cat >ref.py <<'EOF2'
import sys
import numpy as np

# element formats: (mantissa bits, exponent of the smallest normal,
# largest finite value, exponent of the largest binade)
ELEM = {"mxfp8": (3, -6, 448.0, 8), "mxfp4": (1, 0, 6.0, 2)}

def elem_round(q, m, emin, vmax):
    a = np.abs(q)
    e = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), emin)
    ulp = np.exp2(e - m)
    v = np.minimum(np.round(a / ulp) * ulp, vmax)   # np.round: half to even
    return np.copysign(v, q)

def Q(x, fmt):
    """OCP MX floor rule over blocks of 32 from x[0]"""
    m, emin, vmax, emax = ELEM[fmt]
    y = np.empty_like(x)
    for b in range(0, len(x), 32):
        blk = x[b:b + 32]
        amax = np.max(np.abs(blk))
        X = 1.0 if amax == 0 else np.exp2(np.floor(np.log2(amax)) - emax)
        y[b:b + 32] = elem_round(blk / X, m, emin, vmax) * X
    return y

algo, fmt, P = sys.argv[1], sys.argv[2], int(sys.argv[3])
pre = "g" if algo == "ring" else "s"
g = [np.load("%s%d.npy" % (pre, i)) for i in range(P)]
q = [Q(x, fmt) for x in g]          # the cast: blocks from element 0
if algo == "ring":
    # P = 2, n = 64, chunks [0,32) and [32,64).  Step 0: node 0 sends
    # chunk 0 to node 1 (adds), node 1 chunk 1 to node 0 (adds); step 1:
    # node 1 sends its chunk 0, quantized again, to node 0 (stores).
    s = q[0] + q[1]                 # exact in binary64 here
    out = np.concatenate([Q(s[:32], fmt), s[32:]])
else:
    # sequential: node 0 adds node 1's then node 2's buffer (each sent
    # quantized again: the floor rule gives back the same blocks), then
    # sends the sum to the others; node 0 keeps its sum.
    out = (q[0] + Q(q[1], fmt)) + Q(q[2], fmt)
got = np.load("out.npy")
bad = np.nonzero(got != out)[0]
print("ok" if len(bad) == 0 else "differ at %s: %r vs %r" % (bad[:4], got[bad[:4]], out[bad[:4]]))
EOF2

# two columns of the first row of a --tsv report
bb() { echo "$(tsv_first bytes_per_node "$1") $(tsv_first bits_per_value "$1")"; }

# ring, 2 nodes, 64 values, accumulator fp64 (every sum exact)
for f in mxfp8 mxfp4; do
	fplab allreduce --comm $f --acc fp64 --inputs g0.npy,g1.npy -o out.npy --tsv >r.tsv 2>r.err
	expect_out "ring $f: node 0's result" "ok" "$PYTHON" ref.py ring $f 2
	# bytes: each node sends 2 chunks of 32: mxfp8 2 * (32 + 1) = 66,
	# mxfp4 2 * (32/2 + 1) = 34; bits per value 8 + 8/32, 4 + 8/32
	case $f in
	mxfp8) want="66 8.25" ;;
	mxfp4) want="34 4.25" ;;
	esac
	expect_out "ring $f: bytes_per_node bits_per_value" "$want" \
		bb r.tsv
done
# the nodes end with different bits (node 0 keeps its chunk 1 unquantized)
expect_out "ring: the warning" "1" grep -c "different bits" r.err

# sequential, 3 nodes, 40 values (a short last block of 8)
fplab allreduce --algo sequential --comm mxfp8 --acc fp64 --inputs s0.npy,s1.npy,s2.npy \
	-o out.npy --tsv >s.tsv 2>/dev/null
expect_out "sequential mxfp8, short block: node 0's result" "ok" "$PYTHON" ref.py seq mxfp8 3
# node 0 sends 40 values to each of 2 nodes: (40 * 8 + 2 * 8) / 8 = 42
# bytes each, 84; bits per value (320 + 16) / 40 = 8.4
expect_out "sequential: bytes, bits" "84 8.4" \
	bb s.tsv

# nvfp4: per 32-value chunk 32 * 4 + 2 * 8 (e4m3 scales of 16) + 32 (the
# tensor scale) = 176 bits = 22 bytes; two chunks 44
fplab allreduce --comm nvfp4 --inputs g0.npy,g1.npy --tsv >n.tsv 2>/dev/null
expect_out "nvfp4 bytes" "44" tsv_first bytes_per_node n.tsv
# a plain format keeps whole bytes per value: e4m3fn 2 * 32 = 64, 8 bits
fplab allreduce --comm e4m3fn --inputs g0.npy,g1.npy --tsv >p.tsv 2>/dev/null
expect_out "e4m3fn bytes, bits" "64 8" \
	bb p.tsv
# the default accumulator of a block comm format is fp32
expect_out "default acc" "fp32:ne" tsv_first acc n.tsv

# stochastic rounding: the bits do not depend on --threads
fplab allreduce --nodes 8 --comm mxfp4:sp --layers 3000:normal:0,1 --seed 7 --threads 1 -o t1.txt >/dev/null 2>&1
fplab allreduce --nodes 8 --comm mxfp4:sp --layers 3000:normal:0,1 --seed 7 --threads 2 -o t3.txt >/dev/null 2>&1
checks=$((checks + 1))
cmp -s t1.txt t3.txt || fail "mxfp4:sp: threads change the bits"

# bad input
expect_fail "block with aps" 2 "a block format carries its own scales" \
	fplab allreduce --nodes 2 --comm mxfp8 --scale aps --layers 64
expect_fail "block accumulator" 2 "--acc 'mxfp4': a block-scaled format is a communication format" \
	fplab allreduce --nodes 2 --comm mxfp8 --acc mxfp4 --layers 64
expect_fail "bad block field" 2 "block format 'mxfp8:zz'" \
	fplab allreduce --nodes 2 --comm mxfp8:zz --layers 64
expect_fail "-o not written on error" 2 "" \
	fplab allreduce --nodes 2 --comm mxfp8:0 --layers 64 -o bad.npy
checks=$((checks + 1))
[ -e bad.npy ] && fail "a file was written on error"

finish
