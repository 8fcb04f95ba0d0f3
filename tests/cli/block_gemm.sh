#!/bin/sh
# SPDX-License-Identifier: MIT
# block_gemm.sh - block-scaled operands in `fplab gemm`, `fplab dot` and `fplab reduce`
# (issue 25, item 2): A quantized in blocks along its rows (k), B down its
# columns (k), both through the one load path.  Checked against a
# reference written here in Python with exact rational arithmetic
# (fractions.Fraction) from OCP MX v1.0's rules for mxfp4 (floor scale
# 2^(floor(log2 amax) - 2), e2m1 elements nearest-even, clamped to 6):
#  - the block order: per K-block the exact sum of the element products
#    rounded once (nearest-even) to binary32, times the two scales, added
#    into a binary32 accumulator with one rounding (fplab-models(7));
#  - the sequential order on the dequantized operands, and the same order
#    on those operands given to fplab as binary64 (-f fp64): equal bits;
#  - dot's exact column: the exact dot product of the dequantized vectors
#    (default) and of the vectors as given (--reference given);
#  - k = 40 leaves a shorter last block of 8, as OCP allows;
#  - the issue's done-when commands run and report the block events;
#  - bad models fail with a message and exit 2, and write no file.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

need_numpy
"$PYTHON" -c 'import numpy as np
r = np.random.default_rng(252)
a = (r.standard_normal((3, 40)) * np.exp2(r.integers(-3, 3, (3, 40)))).astype(np.float32)
b = r.standard_normal((40, 2)).astype(np.float32)
a[1, 32:] = 0              # the short block of row 1: zeros (scale 1)
np.save("a.npy", a)
np.save("b.npy", b)
np.save("x.npy", a[0])
np.save("y.npy", b[:, 0])'

cat >ref.py <<'EOF'
import sys, math
from fractions import Fraction as F
import numpy as np

E2M1 = [F(v) for v in (0, 0.5, 1, 1.5, 2, 3, 4, 6)]

def e2m1(q):
    """nearest-even element of |q| in the e2m1 list (even code wins a tie),
    clamped to 6; signed"""
    m = abs(q)
    if m >= 6:
        v = E2M1[-1]
    else:
        i = max(j for j in range(8) if E2M1[j] <= m)
        lo, hi = E2M1[i], E2M1[i + 1]
        v = lo if (m - lo < hi - m or (m - lo == hi - m and i % 2 == 0)) else hi
    return -v if q < 0 else v

def quant(v):
    """one mxfp4 block: (element values, scale) by the floor rule"""
    amax = max(abs(F(x)) for x in v)
    if amax == 0:
        return [F(0)] * len(v), F(1)
    e = math.floor(math.log2(amax))
    while F(2) ** e > amax: e -= 1
    while F(2) ** (e + 1) <= amax: e += 1
    X = F(2) ** (e - 2)            # emax of e2m1 is 2
    return [e2m1(F(x) / X) for x in v], X

def f32(q):
    """q rounded to nearest-even binary32 (normal range: enough here)"""
    if q == 0:
        return F(0)
    s = -1 if q < 0 else 1
    m = abs(q)
    e = math.floor(math.log2(m))
    while F(2) ** e > m: e -= 1
    while F(2) ** (e + 1) <= m: e += 1
    ulp = F(2) ** (e - 23)
    n = m / ulp
    k = math.floor(n)
    if n - k > F(1, 2) or (n - k == F(1, 2) and k % 2):
        k += 1
    return s * k * ulp

B = 32
a = np.load("a.npy").astype(np.float64)
b = np.load("b.npy").astype(np.float64)
M, K = a.shape
N = b.shape[1]
nb = (K + B - 1) // B
# A's blocks along rows, B's down columns
ea = [[None] * K for _ in range(M)]; xa = [[None] * nb for _ in range(M)]
for i in range(M):
    for j in range(nb):
        e, X = quant(a[i, j * B:(j + 1) * B])
        ea[i][j * B:j * B + len(e)] = e; xa[i][j] = X
eb = [[None] * N for _ in range(K)]; xb = [[None] * N for _ in range(nb)]
for c in range(N):
    for j in range(nb):
        e, X = quant(b[j * B:(j + 1) * B, c])
        for t, v in enumerate(e): eb[j * B + t][c] = v
        xb[j][c] = X
blk = np.zeros((M, N)); ad = np.zeros((M, K)); bd = np.zeros((K, N))
for i in range(M):
    for k in range(K): ad[i, k] = float(ea[i][k] * xa[i][k // B])
for k in range(K):
    for c in range(N): bd[k, c] = float(eb[k][c] * xb[k // B][c])
for i in range(M):
    for c in range(N):
        S = F(0)
        for j in range(nb):
            P = f32(sum(ea[i][k] * eb[k][c] for k in range(j * B, min(K, (j + 1) * B))))
            S = f32(S + P * xa[i][j] * xb[j][c])
        blk[i, c] = float(S)
np.save("blk_ref.npy", blk)
np.save("ad.npy", ad)
np.save("bd.npy", bd)
# dot of row 0 of A and column 0 of B: exact, dequantized and as given
x = [F(v) for v in a[0]]; y = [F(v) for v in b[:, 0]]
print(repr(float(sum(ea[0][k] * xa[0][k // B] * eb[k][0] * xb[k // B][0] for k in range(K)))))
print(repr(float(sum(p * q for p, q in zip(x, y)))))
EOF
"$PYTHON" ref.py >exact.txt || fail "the Python reference failed"

# same WHAT FILE1 FILE2: the two .npy files hold the same binary64 bits
same() {
	checks=$((checks + 1))
	"$PYTHON" -c 'import sys, numpy as np
p, q = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if p.shape == q.shape and p.dtype == q.dtype and p.tobytes() == q.tobytes() else 1)' "$2" "$3" ||
		fail "$1: $2 and $3 differ"
}

# --- the block order against the rational reference
fplab gemm -a a.npy -b b.npy -f mxfp4 --acc fp32 --order block -o blk.npy >/dev/null ||
	fail "gemm --order block failed"
same "gemm -f mxfp4 --order block" blk.npy blk_ref.npy

# --- sequential on block operands = sequential on the dequantized values
fplab gemm -a a.npy -b b.npy -f mxfp4 --acc fp32 --order sequential -o seq.npy >/dev/null ||
	fail "gemm -f mxfp4 failed"
fplab gemm -a ad.npy -b bd.npy -f fp64 --acc fp32 --order sequential -o seq_ref.npy >/dev/null ||
	fail "gemm -f fp64 on the dequantized operands failed"
same "gemm -f mxfp4 --order sequential" seq.npy seq_ref.npy
# and the same through fused:16 and a bf16 accumulator in tz
fplab gemm -a a.npy -b b.npy -f mxfp4 --acc bf16:tz --order fused:16 -o f1.npy >/dev/null &&
	fplab gemm -a ad.npy -b bd.npy -f fp64 --acc bf16:tz --order fused:16 -o f2.npy >/dev/null ||
	fail "gemm --order fused:16 failed"
same "gemm -f mxfp4 --order fused:16" f1.npy f2.npy

# --- dot: the exact column against the dequantized and the given inputs
exact_loaded=$(sed -n 1p exact.txt)
exact_given=$(sed -n 2p exact.txt)
col() { awk -F '\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }'; }
checks=$((checks + 1))
got=$(fplab dot -a x.npy -b y.npy -f mxfp4 --tsv | col exact)
"$PYTHON" -c "import sys; sys.exit(0 if float('$got') == float('$exact_loaded') else 1)" ||
	fail "dot -f mxfp4: exact $got, expected $exact_loaded (the dequantized dot)"
checks=$((checks + 1))
got=$(fplab dot -a x.npy -b y.npy -f mxfp4 --reference given --tsv | col exact)
"$PYTHON" -c "import sys; sys.exit(0 if float('$got') == float('$exact_given') else 1)" ||
	fail "dot -f mxfp4 --reference given: exact $got, expected $exact_given"

# --- the block events: 3 rows x 2 blocks of A, 2 blocks x 2 columns of B;
# row 1's short block is all zeros
checks=$((checks + 1))
got=$(fplab gemm -a a.npy -b b.npy -f mxfp4 --tsv | col blocks),$(fplab gemm -a a.npy \
	-b b.npy -f mxfp4 --tsv | col zero_blocks)
[ "$got" = "10,1" ] || fail "gemm -f mxfp4: blocks,zero_blocks $got, expected 10,1"

# --- the issue's done-when commands (smaller k runs the same code)
for o in block sequential; do
	for ref in loaded given; do
		checks=$((checks + 1))
		fplab gemm -m 256 -n 256 -k 1024 --gen normal:0,1 -f mxfp8 --acc fp32 --order $o \
			--reference $ref --tsv >dw.tsv 2>dw.err || fail "done-when --order $o --reference $ref: $(cat dw.err)"
		e=$(col max_rel_error <dw.tsv)
		s=$(col amax_saturated <dw.tsv)
		case $e in ''|-|nan|inf) fail "done-when --order $o --reference $ref: max_rel_error '$e'" ;; esac
		[ "${s:-0}" -gt 0 ] || fail "done-when --order $o: no block saturated under floor ('$s')"
	done
done

# --- bad models: a message and exit 2 (usage), no file
expect_fail "block order on plain formats" 2 "--order block needs both operands in block formats" \
	fplab gemm -m 2 -n 2 -k 64 --gen ones -f e4m3fn --order block -o no.npy
expect_fail "block order on one block operand" 2 "--order block needs both operands" \
	fplab gemm -m 2 -n 2 -k 64 --gen ones --a-format mxfp8 --order block
expect_fail "two block sizes" 2 "one block size for A and B \(A's is 32, B's 16\)" \
	fplab gemm -m 2 -n 2 -k 64 --gen ones --a-format mxfp8 --b-format mxfp8:16 --order block
expect_fail "tiles under the block order" 2 "1-D blocks" \
	fplab gemm -m 2 -n 2 -k 64 --gen ones -f nvfp4:16x16 --order block
expect_fail "rounded products" 2 "products exactly" \
	fplab dot -n 64 --gen ones -f mxfp8 --prod fp16 --order block
expect_fail "a block format is not given" 2 "has no ':given'" \
	fplab dot -n 64 --gen ones -f mxfp8:given
expect_fail "block size 0" 2 "mxfp4:0" \
	fplab gemm -m 2 -n 2 -k 64 --gen ones -f mxfp4:0
expect_fail "a sum has no products" 1 "a sum has no products" \
	fplab reduce sum -n 64 --gen ones -f mxfp8 --order block
checks=$((checks + 1))
[ ! -e no.npy ] || fail "a refused model wrote no.npy"

# the block sizes need not divide k: k = 40 ran above (a block of 8 last);
# one element alone in its block
checks=$((checks + 1))
fplab gemm -m 1 -n 1 -k 33 --gen normal:0,1 -f mxfp8 --order block --tsv >k33.tsv ||
	fail "k = 33 (a last block of 1) failed"
[ "$(col blocks <k33.tsv)" = 4 ] || fail "k = 33: blocks $(col blocks <k33.tsv), expected 4"

# reduce prints the block columns too.  By hand, OCP MX v1.0's floor
# rule on x = (600, 2^-9, 0.25, 0.5) in mxfp8: amax 600, X = 2^(9 - 8) = 2;
# 300 -> 288 (e4m3fn's step is 32 in [256, 512)), 2^-10 is half of
# e4m3fn's least subnormal 2^-9: a tie, to even 0 (one element zeroed);
# 0.125 and 0.25 exact: the values 576, 0, 0.25, 0.5, sum 576.75, mean
# 144.1875.  Softmax along the last axis of the 2 x 4 tensor: 2 blocks.
printf '600\n0.001953125\n0.25\n0.5\n' >r.txt
for op in sum:576.75 mean:144.1875; do
	checks=$((checks + 1))
	fplab reduce "${op%%:*}" -x r.txt -f mxfp8 --acc fp64 --tsv >red.tsv 2>red.err ||
		fail "reduce ${op%%:*} on mxfp8: $(cat red.err)"
	[ "$(col result <red.tsv)" = "${op#*:}" ] && [ "$(col blocks <red.tsv)" = 1 ] &&
		[ "$(col zeroed_elements <red.tsv)" = 1 ] && [ "$(col amax_saturated <red.tsv)" = 0 ] ||
		fail "reduce ${op%%:*} on mxfp8: result $(col result <red.tsv), blocks $(col blocks <red.tsv), zeroed $(col zeroed_elements <red.tsv); expected ${op#*:}, 1, 1"
done
"$PYTHON" -c 'import numpy as np; np.save("r2.npy", np.array([[600, 2**-9, .25, .5], [1, 2, 3, 4]]))'
checks=$((checks + 1))
fplab reduce softmax -x r2.npy -f mxfp8 --tsv >sm.tsv 2>sm.err || fail "softmax on mxfp8: $(cat sm.err)"
[ "$(col blocks <sm.tsv)" = 2 ] && [ "$(col zeroed_elements <sm.tsv)" = 1 ] ||
	fail "softmax on mxfp8 (2 rows): blocks $(col blocks <sm.tsv), zeroed $(col zeroed_elements <sm.tsv); expected 2, 1"
checks=$((checks + 1))
fplab reduce sum -x r.txt -f e4m3fn --tsv >pl.tsv 2>/dev/null
head -1 pl.tsv | grep -q blocks && fail "reduce on a plain format printed block columns"

echo "block_gemm.sh: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
