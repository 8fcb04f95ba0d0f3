#!/bin/sh
# SPDX-License-Identifier: MIT
# accum.sh - `fplab dot`, `gemm`, `reduce` and `models` (issue 11, items
# 4 and 5): the done-when sums of 4096 ones, a GEMM of small integers
# with an fp64 accumulator, sweeps, thread independence of stochastic
# accumulation, tensor files from numpy, -o, and bad input.  Expected
# values are derived by hand in the comments, never from fplab.
. "$(dirname "$0")/lib.inc"

cd "$T" || exit 1

# field NAME FILE: the column NAME of the first row of a TSV report
field() {
	awk -F '\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		NR == 2 { print $k }' "$2"
}

# --- the issue's sums of 4096 ones.  Sequential: the running sum stops
# where 1 is half an ulp, and the tie S + 1 rounds to even S: fp16 (11
# bits) at 2^11 = 2048, bf16 (8 bits) at 2^8 = 256, e4m3fn (4 bits) at
# 2^4 = 16.  Kahan recovers the lost ones; pairwise adds equal powers of
# two, all exact: 4096 is a value of fp16.
for case in "fp16 sequential 2048" "bf16 sequential 256" "e4m3fn sequential 16" \
	    "fp16 kahan 4096" "fp16 pairwise 4096"; do
	set -- $case
	fplab reduce sum --gen ones -n 4096 --acc "$1" --order "$2" --tsv >s.tsv 2>s.err
	expect_out "sum of 4096 ones, --acc $1 --order $2" "$3" field result s.tsv
done
# the exact value is 4096 and the error of 2048 is 1/2
fplab reduce sum --gen ones -n 4096 --acc fp16 --order sequential --tsv >s.tsv
expect_out "exact of 4096 ones" "4096" field exact s.tsv
expect_out "error of 2048" "0.5" field max_rel_error s.tsv
# the header: the columns the man page lists, in order
# (every operation takes one input: one format column, no b_format)
expect_out "reduce header" "$(printf 'op\tformat\tprod\tacc\torder\tout_format\tn\tresult\texact\tmean_rel_error\trms_rel_error\tmax_rel_error\tmedian_rel_error\tnormwise_error\tbound\tinexact\tunderflow\toverflow\tsaturated\tflushed\tinvalid\tbecame_zero\tnan\tinf\tseconds\treference_seconds\tmflops')" head -n 1 s.tsv
# one output: mean, RMS, max and median of one error are that error
expect_out "error of 2048: mean rms median" "0.5 0.5 0.5" eval 'echo $(field mean_rel_error s.tsv) $(field rms_rel_error s.tsv) $(field median_rel_error s.tsv)'
# 2048 + 1 rounds 2048 times (k = 2048..4095), each inexact
expect_out "inexact count" "2048" field inexact s.tsv

# --- a GEMM of small integers: |products| <= 9, |sums| <= 9 * 40 < 2^53,
# every fp64 operation is exact, so the errors are zero
fplab gemm --gen ints:-3,3 -m 7 -n 5 -k 40 --acc fp64 --tsv >g.tsv 2>g.err
expect_out "int gemm max_rel_error" "0" field max_rel_error g.tsv
expect_out "int gemm normwise_error" "0" field normwise_error g.tsv
expect_out "int gemm sizes" "7 5 40" awk -F '\t' 'NR == 2 { print $7, $8, $9 }' g.tsv
checks=$((checks + 1))
[ -s g.err ] && fail "int gemm wrote to stderr: $(cat g.err)"

# --- a sweep: header and one row per combination, -f outermost, --order innermost
fplab reduce sum --gen ones -n 4096 --acc fp16,bf16 --order sequential,kahan --tsv >w.tsv
expect_out "sweep rows" "5" eval 'wc -l <w.tsv | tr -d " "'
expect_out "sweep order" "fp16:ne sequential 2048
fp16:ne kahan 4096
bf16:ne sequential 256
bf16:ne kahan 4096" awk -F '\t' 'NR > 1 { print $4, $5, $8 }' w.tsv
# a -r list: the default mode of the roundings with none (the loads and the
# accumulator here), the accumulator's own :tz kept
expect_out "-r list" "fp32:sp fp16:tz
fp32:ne fp16:tz" eval "fplab reduce sum --gen ones -n 3 -r sp,ne --acc fp16:tz --tsv | awk -F '\t' 'NR > 1 { print \$2, \$4 }'"
# JSON: one document of 4 objects; NDJSON: 4 lines
if "$PYTHON" -c 'import json' 2>/dev/null; then
	fplab reduce sum --gen ones -n 64 --acc fp16,bf16 --order sequential,kahan --json >w.json
	expect_out "json rows" "4 64" "$PYTHON" -c '
import json
d = json.load(open("w.json"))
print(len(d), d[0]["result"])'
fi
fplab reduce sum --gen ones -n 64 --acc fp16,bf16 --order sequential,kahan --ndjson >w.nd
expect_out "ndjson rows" "4" eval 'wc -l <w.nd | tr -d " "'

# --- threads: stochastic accumulation has the same bits on 1 and 2
# threads, and other bits with another seed
gemm_sp() {
	fplab gemm --gen normal:0,1 -m 16 -n 12 -k 300 -f bf16 --acc fp16 -r sp "$@"
}
gemm_sp --threads 1 -o t1.npy --tsv >t1.tsv
gemm_sp --threads 2 -o t2.npy --tsv >t2.tsv
gemm_sp --threads 2 --seed 7 -o t3.npy >/dev/null
checks=$((checks + 1))
cmp -s t1.npy t2.npy || fail "stochastic gemm: --threads 1 and 2 give different bits"
checks=$((checks + 1))
cmp -s t1.npy t3.npy && fail "stochastic gemm: --seed 7 gives the same bits as seed 0"
checks=$((checks + 1))
# every column but the three timings (seconds, reference_seconds, mflops)
[ "$(cut -f1-26 t1.tsv)" = "$(cut -f1-26 t2.tsv)" ] ||
	fail "stochastic gemm: reports differ with threads: $(cat t1.tsv t2.tsv)"

# --- text input: 1 + 2 + 3 + 4 = 10; a 2x2 gemm by hand
printf '1 2\n3 4\n' >x.txt
fplab reduce sum -x x.txt --tsv >x.tsv
expect_out "text sum" "10" field result x.tsv

# --- numpy files
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	"$PYTHON" -c '
import numpy as np
np.save("a.npy", np.array([1.5, 2, -3], dtype=np.float32))
np.save("b.npy", np.array([4, 0.25, 2], dtype=np.float32))
np.save("b4.npy", np.array([4, 0.25, 2, 1], dtype=np.float32))
np.save("A.npy", np.array([[1, 2], [3, 4]], dtype=np.float64))
np.save("B.npy", np.array([[5, 6], [7, 8]], dtype=np.float64))
np.save("M.npy", np.ones((2, 3)))
np.savez("ab.npz", x=np.array([1.5, 2, -3]), y=np.array([4, 0.25, 2]))'
	# 1.5*4 + 2*0.25 - 3*2 = 6 + 0.5 - 6 = 0.5
	fplab dot -a a.npy -b b.npy --tsv -o r.npy >d.tsv
	expect_out "dot of numpy files" "0.5" field result d.tsv
	expect_out "dot -o read by numpy" "() 0.5" "$PYTHON" -c '
import numpy as np
r = np.load("r.npy")
print(r.shape, float(r))'
	fplab dot -a ab.npz:x -b ab.npz:y --tsv >z.tsv
	expect_out "dot of npz members" "0.5" field result z.tsv
	# [[1,2],[3,4]] [[5,6],[7,8]] = [[19,22],[43,50]]; with A transposed
	# [[1,3],[2,4]] [[5,6],[7,8]] = [[26,30],[38,44]]
	fplab gemm -a A.npy -b B.npy -o C.npy >/dev/null
	fplab gemm -a A.npy -b B.npy --transa -o CT.npy >/dev/null
	expect_out "gemm -o read by numpy" "(2, 2) [19.0, 22.0, 43.0, 50.0] [26.0, 30.0, 38.0, 44.0]" "$PYTHON" -c '
import numpy as np
c = np.load("C.npy"); t = np.load("CT.npy")
print(c.shape, c.ravel().tolist(), t.ravel().tolist())'
	# bad shapes and files
	expect_fail "dot lengths differ" 1 "a.npy has 3 elements but -b b4.npy has 4" \
		fplab dot -a a.npy -b b4.npy
	expect_fail "dot of a matrix" 1 "M.npy: a dot product takes a vector" \
		fplab dot -a M.npy -b b.npy
	expect_fail "gemm inner sizes" 1 "M.npy is 2x3 and -b M.npy is 2x3: the inner" \
		fplab gemm -a M.npy -b M.npy
	expect_fail "npz without a member" 1 "ab.npz' holds 2 tensors .*ab.npz:NAME" \
		fplab dot -a ab.npz -b b.npy
	expect_fail "npz member missing" 1 "ab.npz' has no tensor 'z'" \
		fplab dot -a ab.npz:z -b b.npy
	checks=$((checks + 1))
	fplab gemm -a M.npy -b M.npy -o bad.npy 2>/dev/null
	[ -e bad.npy ] && fail "a failed gemm left bad.npy"
else
	echo "skip: numpy checks need python3 with numpy" >&2
fi

# --- bad command lines (exit 2) and bad data (exit 1)
expect_fail "unknown order" 2 "unknown order 'sequentail'; did you mean 'sequential'" \
	fplab reduce sum --gen ones -n 4 --order sequentail
expect_fail "missing -n" 2 "needs -n N" fplab reduce sum --gen ones
expect_fail "missing -k" 2 "missing -k" fplab gemm --gen ones -m 2 -n 2
expect_fail "no input" 2 "no input" fplab dot
expect_fail "unknown acc" 2 "unknown format 'fp61'; did you mean 'fp16'" \
	fplab dot --gen ones -n 4 --acc fp61
expect_fail "unknown profile" 2 "unknown profile 'fp32fma'; did you mean 'fp32-fma'" \
	fplab dot --gen ones -n 4 --profile fp32fma
expect_fail "unknown op" 2 "unknown operation 'summ'" fplab reduce summ --gen ones -n 4
expect_fail "refused switch" 2 "--subnormal is not an option" \
	fplab reduce sum --gen ones -n 4 --subnormal 0
expect_fail "-o with a sweep" 2 "a sweep of 2 models" \
	fplab reduce sum --gen ones -n 4 --acc fp16,bf16 -o s.npy
printf '0.1\n0.25\n' > g.txt
expect_fail "given inputs not in the format" 1 "not a value of its format" \
	fplab dot -a g.txt -b g.txt -f bf16:given
# a command that fails before its first row leaves stdout empty: no
# header without rows, in any report format
for r in "" --tsv --json --ndjson; do
	expect_fail "given inputs, report ${r:-text}" 1 "not a value of its format" \
		fplab dot -a g.txt -b g.txt -f bf16:given $r
	checks=$((checks + 1))
	[ -s "$T/stdout" ] && fail "a failed dot ${r:-text} wrote to stdout: $(head -c 80 "$T/stdout")"
done
# generated inputs of a ':given' model are rounded into its format first:
# uniform draws then equal their bf16 roundings, which -f bf16 also takes
fplab dot --gen uniform:0,1 -n 64 -f bf16:given --tsv | cut -f8 > given.out
fplab dot --gen uniform:0,1 -n 64 -f bf16 --tsv | cut -f8 > rounded.out
checks=$((checks + 1))
cmp -s given.out rounded.out && [ "$(sed -n 2p given.out)" != "" ] \
	|| fail "generated inputs under -f bf16:given: not the -f bf16 result"
expect_fail "missing file" 1 "cannot open 'nope.npy'" fplab reduce sum -x nope.npy

# --- a long run in a pipe: no progress bar, nothing on stderr
fplab gemm --gen normal:0,1 -m 128 -n 128 -k 512 -f bf16 --acc fp16,bf16,fp32 -r sp \
	--order sequential,kahan --tsv >long.tsv 2>long.err
checks=$((checks + 1))
[ -s long.err ] && fail "stderr in a pipe is not empty: $(od -c long.err | head -n 3)"
expect_out "long sweep rows" "7" eval 'wc -l <long.tsv | tr -d " "'

# --- a failed computation never looks accurate (issue 23, item 2): a
# NaN or infinite result of a finite exact value counts as relative error
# +inf; an output whose exact value is NaN or infinite is not compared
# (its error cells are empty), and the nan and inf columns count results.
# dot of 16 values in [100, 101]: every product is above 10^4, beyond
# e4m3fn's largest finite 448; e4m3fn has no infinity, so the first
# addition into the accumulator gives NaN, and NaN stays.  The exact value
# (the inputs are fp32 values, products exact) is finite.
fplab dot -n 16 --gen uniform:100,101 --acc e4m3fn --tsv >f.tsv
expect_out "failed dot: result nan inf" "nan 1 0" \
	eval 'echo $(field result f.tsv) $(field nan f.tsv) $(field inf f.tsv)'
expect_out "failed dot: errors +inf" "inf inf inf inf inf" \
	eval 'echo $(field mean_rel_error f.tsv) $(field rms_rel_error f.tsv) $(field max_rel_error f.tsv) $(field median_rel_error f.tsv) $(field normwise_error f.tsv)'
# lognormal:100,1 draws near e^100 ~ 2.7e43, beyond fp32's 3.4e38: loaded
# into fp32 they become +inf, the loaded inputs' exact products are +inf
# (not compared: empty errors), and the 2x2 results are all +inf.
fplab gemm --gen lognormal:100,1 -m 2 -n 2 -k 2 --tsv >f.tsv
expect_out "overflowed loads: not compared" "|||| 0 4" \
	eval 'echo "$(field mean_rel_error f.tsv)|$(field max_rel_error f.tsv)|$(field median_rel_error f.tsv)|$(field normwise_error f.tsv)|" $(field nan f.tsv) $(field inf f.tsv)'
# --reference given: the exact values of the drawn inputs are finite
# (~1e87), every result +inf: error +inf
fplab gemm --gen lognormal:100,1 -m 2 -n 2 -k 2 --reference given --tsv >f.tsv
expect_out "overflow against given inputs" "inf inf inf 4" \
	eval 'echo $(field max_rel_error f.tsv) $(field mean_rel_error f.tsv) $(field normwise_error f.tsv) $(field inf f.tsv)'
# e4m3fn loads of 500..600 (above 448, no infinity, no saturation): NaN
fplab dot -n 4 --gen uniform:500,600 -f e4m3fn --reference given --tsv >f.tsv
expect_out "e4m3fn overflow, --reference given" "nan 1 inf" \
	eval 'echo $(field result f.tsv) $(field nan f.tsv) $(field max_rel_error f.tsv)'
# all-NaN inputs (binary32 quiet NaN 0x7fc00000): every exact value is
# NaN, nothing is compared, every result is NaN
. "$SRCDIR/tests/cli/hist.inc"
npy_f32 nan4.npy 0x7fc00000 0x7fc00000 0x7fc00000 0x7fc00000
{ npy_header '<f4' '2, 2'; for i in 1 2 3 4; do le32 0x7fc00000; done; } >nan22.npy
fplab dot -a nan4.npy -b nan4.npy --tsv >f.tsv
expect_out "NaN inputs, dot" "nan nan 1 |||" \
	eval 'echo $(field result f.tsv) $(field exact f.tsv) $(field nan f.tsv) "|$(field max_rel_error f.tsv)|$(field mean_rel_error f.tsv)|"'
fplab gemm -a nan22.npy -b nan22.npy --tsv >f.tsv
expect_out "NaN inputs, gemm" "4 0 |||" \
	eval 'echo $(field nan f.tsv) $(field inf f.tsv) "|$(field max_rel_error f.tsv)|$(field normwise_error f.tsv)|"'
# reduce mean, --reference given: the mean of four ~1e43 values is
# finite, the fp32 loads are +inf, the result +inf
fplab reduce mean --gen lognormal:100,1 -n 4 --reference given --tsv >f.tsv
expect_out "reduce mean overflow" "inf inf 1" \
	eval 'echo $(field result f.tsv) $(field max_rel_error f.tsv) $(field inf f.tsv)'

# --- no value: an empty TSV cell and JSON null, never "nan" (item 6):
# gemm has no single result, softmax none, nor a normwise error or bound
if "$PYTHON" -c 'import json' 2>/dev/null; then
	fplab gemm --gen normal:0,1 -m 2 -n 2 -k 3 --json >nv.json
	fplab reduce softmax --gen normal:0,1 -n 4 --json >>nv.json
	fplab dot -a nan4.npy -b nan4.npy --json >>nv.json
	checks=$((checks + 1))
	"$PYTHON" -c '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]).read().replace("]\n[", "]\x00[").split("\x00")]
g, s, d = docs[0][0], docs[1][0], docs[2][0]
assert g["result"] is None and g["exact"] is None, g
assert g["reference_seconds"] >= 0 and g["nan"] == 0 and g["inf"] == 0, g
assert s["result"] is None and s["normwise_error"] is None and s["bound"] is None, s
assert d["max_rel_error"] is None and d["result"] == "nan" and d["nan"] == 1, d
' nv.json || fail "no-value cells are not JSON null: $(cat nv.json)"
fi
fplab reduce softmax --gen normal:0,1 -n 4 --tsv >nv.tsv
expect_out "no value in TSV" "|||" \
	eval 'echo "|$(field result nv.tsv)|$(field normwise_error nv.tsv)|$(field bound nv.tsv)"'

# --- reference_seconds: the time of the exact reference, apart
fplab gemm --gen normal:0,1 -m 8 -n 8 -k 64 --tsv >rs.tsv
checks=$((checks + 1))
awk -F '\t' -v r="$(field reference_seconds rs.tsv)" 'BEGIN { exit !(r ~ /^[0-9.e+-]+$/ && r + 0 > 0) }' ||
	fail "reference_seconds is not a positive time: $(cat rs.tsv)"

# --- models: every order and profile
fplab models --tsv >m.tsv
expect_out "models" "order sequential
order pairwise[:L]
order blocked:B[:FMT]
order kahan
order neumaier
order fused:F[:W[:tz|ne[:expsum]]][/P[:FMT]]
order pairs[:B[/L][:FMT]]
order evenodd[:B]
order block[:FMT[:MODE]]
profile fp32-fma
profile fp32-mul-add
profile avx512bf16
profile amx-bf16
profile onednn-bf16
profile fp16-fma
profile h100-bf16
profile h100-fp16
profile h100-fp8
profile h100-fp8-fast" awk -F '\t' 'NR > 1 { print $1, $2 }' m.tsv
finish
