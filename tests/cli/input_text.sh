#!/bin/sh
# SPDX-License-Identifier: MIT
# input_text.sh - how dot, gemm, reduce, allreduce and optim read their
# inputs: a decimal (or an integer) binary64 cannot hold is rounded ONCE
# into the model's format, refusals name the operand, the index and the
# value, arguments and file names are escaped in messages, limits are
# stated, softmax and logsumexp reduce along the last axis.  Every
# expected value is derived by hand in the comment above its check.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1


# --- a decimal binary64 cannot hold, rounded once (item 3) ---------------
# 65519.99999999999999999 lies below 65520, the midpoint between fp16's
# largest value 65504 and 65536 (where overflow starts): ne gives 65504.
# Through binary64 it is 65520 exactly, a tie, to even: 65536 = inf.
printf '65519.99999999999999999\n' >r.txt
out=$(fplab reduce sum -x r.txt -f fp16 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first result)" = 65504 ] ||
	fail "reduce sum of 65519.99999999999999999 in fp16: $(printf '%s\n' "$out" | tsv_first result), not 65504"
[ "$(printf '%s\n' "$out" | tsv_first overflow)" = 0 ] ||
	fail "reduce sum of 65519.99999999999999999 in fp16 counts an overflow"
checks=$((checks + 2))
expect_out "round agrees" 65504 fplab round -f fp16 r.txt
# 1e400 is above binary64 and every format: loading it into fp16
# overflows, once per element loaded (reduce: x; dot: a and b).
printf '1e400\n1\n' >o.txt
printf '1\n1\n' >one.txt
out=$(fplab reduce sum -x o.txt -f fp16 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first overflow)" = 1 ] ||
	fail "reduce sum: 1e400 not counted as an overflow: $out"
[ "$(printf '%s\n' "$out" | tsv_first result)" = inf ] || fail "reduce sum of 1e400 + 1: not inf"
out=$(fplab dot -a o.txt -b o.txt -f fp16 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first overflow)" = 2 ] ||
	fail "dot: 1e400 in a and b not counted as two overflows: $out"
checks=$((checks + 3))
# 1.00048828125000000001 lies just above 1 + 2^-11, the midpoint between
# fp16's 1 and 1 + 2^-10: ne gives 1.0009765625; through binary64 it is
# the midpoint itself, to even: 1.
printf '1.00048828125000000001\n' >x.txt
printf '1\n' >b1.txt
out=$(fplab dot -a x.txt -b b1.txt -f fp16 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first result)" = 1.0009765625 ] ||
	fail "dot: 1.00048828125000000001 loaded into fp16 is not 1.0009765625: $out"
out=$(fplab reduce mean -x x.txt -f fp16 --acc fp64 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first result)" = 1.0009765625 ] ||
	fail "reduce mean: 1.00048828125000000001 loaded into fp16 is not 1.0009765625: $out"
checks=$((checks + 2))

# The loads of such decimals take the draws the library's loads take
# (element k of a at draw k, of b at draw n + k): in a stochastic mode,
# the loaded values are those `round` gives the same numbers at the
# same positions (--acc fp64 sums 40 fp16 values near 1 exactly).
i=1
while [ $i -le 40 ]; do echo "1.0004$i$i$i$i$i$i$i7"; i=$((i + 1)); done >sr.txt
i=1
while [ $i -le 40 ]; do echo 1; i=$((i + 1)); done >ones.txt
cat ones.txt sr.txt >both.txt
for seed in 1 2; do
	want=$(fplab round -f fp16 -r sp --seed $seed sr.txt | awk '{ s += $1 } END { printf "%.17g\n", s }')
	got=$(fplab reduce sum -x sr.txt -f fp16:sp --acc fp64 --seed $seed --tsv | tsv_first result)
	[ "$got" = "$want" ] || fail "reduce sum, sp, seed $seed: $got, round's loads sum to $want"
	want=$(fplab round -f fp16 -r sp --seed $seed both.txt | tail -n 40 |
		awk '{ s += $1 } END { printf "%.17g\n", s }')
	got=$(fplab dot -a ones.txt -b sr.txt -f fp16:sp --acc fp64 --seed $seed --tsv | tsv_first result)
	[ "$got" = "$want" ] || fail "dot b, sp, seed $seed: $got, round's loads sum to $want"
	checks=$((checks + 2))
done

# --- refusals name the operand, the index and the value (item 7) ---------
printf '0.25\n0.3\n' >h.txt
expect_fail "given: a decimal binary64 cannot hold" 1 \
	"-a h.txt: element 1, a number that binary64 cannot hold .*not a value of its format \(bf16\)" \
	fplab dot -a h.txt -b h.txt -f bf16:given
# 0x1.001p0 = 1 + 2^-12 = 1.000244140625, a binary64 value; bf16 keeps 7
# fraction bits
printf '0.25\n0x1.001p0\n' >h2.txt
expect_fail "given: a value of binary64, not of bf16" 1 \
	"-x h2.txt: element 1 = 1.000244140625 is not a value of its format \(bf16\)" \
	fplab reduce sum -x h2.txt -f bf16:given
# a matrix names the element by its index in the file: [[1, 2], [3, 1 + 2^-12]]
npy m.npy '<f8' '(2, 2)' 3ff0000000000000 4000000000000000 4008000000000000 3ff0010000000000
expect_fail "given: matrix index" 1 \
	"-b m.npy: element \[1, 1\] = 1.000244140625 is not a value of its format \(bf16\)" \
	fplab gemm -a m.npy -b m.npy --a-format fp32 --b-format bf16:given

# generated inputs taken as given are first rounded into the format, for
# every operation as for sum: the mean is the sum divided by 4 (exact)
sum=$(fplab reduce sum --gen normal:0,1 -n 4 -f bf16:given --acc fp64 --tsv | tsv_first result)
mean=$(fplab reduce mean --gen normal:0,1 -n 4 -f bf16:given --acc fp64 --tsv 2>&1 | tsv_first result)
[ -n "$sum" ] && [ "$mean" = "$(awk -v s="$sum" 'BEGIN { printf "%.17g", s / 4 }')" ] ||
	fail "reduce mean of generated input taken as given: '$mean', sum '$sum'"
checks=$((checks + 1))

# --- integer tensors (item 8) ---------------------------------------------
# [1, -2, 3] as '<i4': sum 2
npy i4.npy '<i4' '(3,)' 00000001 fffffffe 00000003
out=$(fplab reduce sum -x i4.npy --tsv)
[ "$(printf '%s\n' "$out" | tsv_first result)" = 2 ] || fail "reduce sum of an int32 .npy: $out"
out=$(fplab dot -a i4.npy -b i4.npy --tsv)
# 1 + 4 + 9
[ "$(printf '%s\n' "$out" | tsv_first result)" = 14 ] || fail "dot of an int32 .npy: $out"
checks=$((checks + 2))
expect_out "allreduce reads an int32 .npy" "ring 3" sh -c \
	'fplab allreduce --inputs i4.npy,i4.npy --tsv | awk -F "\t" "NR == 2 { print \$1, \$7 }"'
# 2^53 + 1 as '<i8' is no binary64: fp64 in tp gives 2^53 + 2, in tz 2^53
# (through binary64's nearest, 2^53, tp would give 2^53)
npy big.npy '<i8' '(1,)' 0020000000000001
out=$(fplab reduce sum -x big.npy -f fp64:tp --acc fp64 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first result)" = 9007199254740994 ] ||
	fail "2^53 + 1 loaded into fp64 in tp: $(printf '%s\n' "$out" | tsv_first result), not 2^53 + 2"
out=$(fplab reduce sum -x big.npy -f fp64:tz --acc fp64 --tsv)
[ "$(printf '%s\n' "$out" | tsv_first result)" = 9007199254740992 ] ||
	fail "2^53 + 1 loaded into fp64 in tz: $(printf '%s\n' "$out" | tsv_first result), not 2^53"
checks=$((checks + 2))
# A stored transposed (--transa) loads in A's logical order: the same
# draws, so the same bits, as A stored as it is (fp64 in sp rounds each
# odd integer above 2^53 up or down at random; B is the identity).
npy A.npy '<i8' '(2, 2)' 0020000000000001 0020000000000003 0020000000000005 0020000000000007
npy AT.npy '<i8' '(2, 2)' 0020000000000001 0020000000000005 0020000000000003 0020000000000007
npy I.npy '<f8' '(2, 2)' 3ff0000000000000 0000000000000000 0000000000000000 3ff0000000000000
for seed in 1 2 3 4 5 6; do
	fplab gemm -a A.npy -b I.npy -f fp64:sp --acc fp64 --seed $seed -o c1.npy >/dev/null &&
	fplab gemm -a AT.npy -b I.npy --transa -f fp64:sp --acc fp64 --seed $seed -o c2.npy \
		>/dev/null && cmp -s c1.npy c2.npy || fail "gemm --transa, seed $seed: other draws"
	checks=$((checks + 1))
done
# allreduce reads it once as well (input_exact_ar.sh): 2^53 + 1 in fp64
# tp is 2^53 + 2 on each node, the sum 2^54 + 4 (exact; through binary64's
# nearest, 2^53, it would be 2^54)
expect_out "allreduce reads 2^53 + 1 once" 18014398509481988 sh -c \
	'fplab allreduce --inputs big.npy,big.npy --comm fp64:tp -o ar.txt >/dev/null && cat ar.txt'

# --- softmax and logsumexp along the last axis (item 8) ------------------
# [[0, 0], [1, 1]] as '<f4': softmax 1/2 everywhere, in the input's shape
# and dtype; logsumexp ln 2 and 1 + ln 2, shape (2,)
npy s.npy '<f4' '(2, 2)' 00000000 00000000 3f800000 3f800000
fplab reduce softmax -x s.npy --acc fp64 -o sm.npy >/dev/null 2>err.txt ||
	fail "softmax of a (2, 2) tensor: $(cat err.txt)"
grep -q "'descr': '<f4'.*'shape': (2, 2" sm.npy ||
	fail "softmax -o: not '<f4' of shape (2, 2): $(head -c 80 sm.npy)"
expect_out "softmax values" "$(printf '0.5\n0.5\n0.5\n0.5')" fplab round -f fp64 --in npy sm.npy
fplab reduce logsumexp -x s.npy --acc fp64 -o ls.npy --out-dtype f64 >/dev/null 2>err.txt ||
	fail "logsumexp of a (2, 2) tensor: $(cat err.txt)"
grep -q "'descr': '<f8'.*'shape': (2,)" ls.npy ||
	fail "logsumexp -o --out-dtype f64: not '<f8' of shape (2,): $(head -c 80 ls.npy)"
checks=$((checks + 3))
expect_out "logsumexp of row 0 is ln 2" 0.6931471805599453 sh -c \
	'fplab round -f fp64 --in npy ls.npy | head -1'
expect_fail "mean takes a vector" 1 "reduce mean takes a vector \(1-D\), not a 2-D tensor" \
	fplab reduce mean -x s.npy

# --- arguments and file names escaped (item 8) ----------------------------
esc=$(printf 'fp16\033[31m')
expect_fail "--acc escaped" 2 "--acc 'fp16\\\\x1b\[31m'" fplab dot --gen ones -n 2 --acc "$esc"
grep -q "$(printf '\033')" "$T/stderr" && fail "--acc: a raw ESC in the message"
expect_fail "file name escaped" 1 "cannot open 'a\\\\x01.txt'" \
	fplab gemm -a "$(printf 'a\001.txt')" -b m.npy
grep -q "$(printf '\001')" "$T/stderr" && fail "gemm: a raw ^A in the message"
expect_fail "--order escaped" 2 "unknown order 'x\\\\x1b'" \
	fplab reduce sum --gen ones -n 2 --order "$(printf 'x\033')"

# --- limits stated (item 8) ------------------------------------------------
expect_fail "-k too large" 2 "-k: '1000000000000' is not a size from 1 to 2\^30" \
	fplab gemm --gen ones -m 1 -n 1 -k 1000000000000
expect_fail "-n too large" 2 "-n: '2000000000000' is not a length from 1 to 2\^40" \
	fplab dot --gen ones -n 2000000000000
expect_fail "e15m112" 2 "exponent bits must be 1..11 and mantissa bits 0..52" \
	fplab dot --gen ones -n 2 --acc e15m112
grep -q "switches" "$T/stderr" && fail "e15m112: the message speaks of switches none gave"

# --- one size rule for gemm, from files as from -m -n -k (item 8) ---------
npy z.npy '<f8' '(0, 2)'
expect_fail "-m 0" 2 "-m: '0' is not a size from 1" fplab gemm --gen ones -m 0 -n 1 -k 1
expect_fail "a 0-row file" 1 "-a z.npy: A is 0x2: gemm takes sizes from 1 to 2\^30" \
	fplab gemm -a z.npy -b m.npy

finish
