#!/bin/sh
# SPDX-License-Identifier: MIT
# input_exact_ar.sh - allreduce and optim read a number of their files
# once (fpl_wide_hold): a decimal binary64 cannot hold is rounded into
# the format of its first rounding as the decimal itself, not through its
# nearest binary64.  Every expected value is derived by hand in the
# comment above its check; "twice" names what rounding the nearest
# binary64 again would give, which the checks rule out.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# ar WHAT WANT FILE OPTION...: allreduce of FILE on node 0 and 0 on node 1
# (the sum is node 0's cast value: adding 0 is exact), its -o output
ar() {
	_what=$1 _want=$2 _f=$3
	shift 3
	checks=$((checks + 1))
	_got=$(fplab allreduce --inputs "$_f",zero.txt "$@" -o out.txt 2>err.txt >rep.tsv &&
		cat out.txt)
	[ "$_got" = "$_want" ] || fail "allreduce $_what: '$_got', expected '$_want' ($(cat err.txt))"
}

printf '0\n' >zero.txt
# fp16's largest value is 65504, the next binade would start at 65536:
# 65519.99999999999999999 lies below their midpoint 65520, so ne gives
# 65504 (inexact, no overflow); twice: binary64 holds 65520, the tie,
# which ne rounds to the even 65536, an overflow (inf)
printf '65519.99999999999999999\n' >max.txt
ar "65519.99999999999999999 in fp16 ne" 65504 max.txt --comm fp16 --tsv
[ "$(tsv_first overflow <rep.tsv)" = 0 ] || fail "allreduce 65519.99999999999999999: an overflow counted"
[ "$(tsv_first inexact <rep.tsv)" = 1 ] || fail "allreduce 65519.99999999999999999: not inexact"
checks=$((checks + 2))

# 1e400 is beyond every format: fp16 ne gives inf and counts an overflow
# (twice: binary64's inf, cast exactly, counts none)
printf '1e400\n' >big.txt
ar "1e400 in fp16 ne" inf big.txt --comm fp16 --tsv
[ "$(tsv_first overflow <rep.tsv)" = 1 ] || fail "allreduce 1e400: overflow $(tsv_first overflow <rep.tsv), not 1"
# 1e-400 is below half fp16's least subnormal 2^-24: ne gives 0, with an
# underflow (twice: binary64's 0, exact, counts none)
printf '1e-400\n' >tiny.txt
ar "1e-400 in fp16 ne" 0 tiny.txt --comm fp16 --tsv
[ "$(tsv_first underflow <rep.tsv)" = 1 ] || fail "allreduce 1e-400: underflow $(tsv_first underflow <rep.tsv), not 1"
checks=$((checks + 2))

# fp16 has 11 bits: 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10.
# 1.000488281250000000000000000001 = 1 + 2^-11 + 10^-30 lies above it: ne
# gives 1 + 2^-10 = 1.0009765625 (twice: binary64's 1 + 2^-11, the tie,
# to the even 1)
printf '1.000488281250000000000000000001\n' >tie.txt
ar "1 + 2^-11 + 1e-30 in fp16 ne" 1.0009765625 tie.txt --comm fp16
# 1 + 10^-30 lies above 1: tp gives 1 + 2^-10 (twice: binary64's 1, to 1)
printf '1.000000000000000000000000000001\n' >up.txt
ar "1 + 1e-30 in fp16 tp" 1.0009765625 up.txt --comm fp16:tp
# -(1 + 10^-30) lies below -1: tn gives -(1 + 2^-10) (twice: -1)
printf -- '-1.000000000000000000000000000001\n' >dn.txt
ar "-(1 + 1e-30) in fp16 tn" -1.0009765625 dn.txt --comm fp16:tn
# 1 - 10^-30 lies below 1, whose fp16 neighbour below is 1 - 2^-11 (the
# binade [1/2, 1) has spacing 2^-11): tz gives 0.99951171875 (twice: 1)
printf '0.999999999999999999999999999999\n' >tz.txt
ar "1 - 1e-30 in fp16 tz" 0.99951171875 tz.txt --comm fp16:tz
# APS with P = 2: the largest k with 2 (1 + 10^-30) 2^k < 65504 is 14, so
# the cast rounds 2^14 + 2^14 10^-30 in tp to 2^14 + 16 (fp16's spacing
# at 2^14), and the result, unscaled, is 1 + 2^-10 again (twice: 1)
ar "1 + 1e-30 in fp16 tp, aps" 1.0009765625 up.txt --comm fp16:tp --scale aps
# loss:4 (a power of two): 4 + 4 10^-30 in tp gives 4 + 2^-8, unscaled
# 1 + 2^-10 (twice: 1)
ar "1 + 1e-30 in fp16 tp, loss:4" 1.0009765625 up.txt --comm fp16:tp --scale loss:4
# --fp32-layers casts into binary32 in ne: 1 + 2^-24 + 10^-30 lies above
# the midpoint of 1 and 1 + 2^-23 (twice: binary64 holds 1 + 2^-24, the
# tie, to the even 1), so 1 + 2^-23 = 1.00000011920928955078125, whose
# shortest binary64 spelling is 1.0000001192092896
printf '1.000000059604644775390625000000000001\n' >f32.txt
ar "1 + 2^-24 + 1e-36, an fp32 layer" 1.0000001192092896 f32.txt --comm fp16 --fp32-layers 0

# fp64 (53 bits) rounds the decimal in its own mode: 1 + 10^-30 in tp is
# 1 + 2^-52 = 1.0000000000000002 (twice: 1), 1 - 10^-30 in tz is 1 - 2^-53
# = 0.9999999999999999 (twice: 1), 0.1 in ne its nearest 0.1
ar "1 + 1e-30 in fp64 tp" 1.0000000000000002 up.txt --comm fp64:tp
ar "1 - 1e-30 in fp64 tz" 0.9999999999999999 tz.txt --comm fp64:tz
printf '0.1\n' >tenth.txt
ar "0.1 in fp64 ne" 0.1 tenth.txt --comm fp64

# An int64 binary64 cannot hold is read once too: 2^53 + 1 in fp64 tp is
# 2^53 + 2 on each node, their sum 2^54 + 4 (twice: 2^53, sum 2^54)
npy i8.npy '<i8' '(1,)' 0020000000000001
expect_out "allreduce of 2^53 + 1 on two nodes, fp64 tp" 18014398509481988 sh -c \
	'fplab allreduce --inputs i8.npy,i8.npy --comm fp64:tp -o o.txt >/dev/null && cat o.txt'
# --stacked: node 0's 2^53 + 1 and node 1's 0, fp64 tz: 2^53
npy st.npy '<i8' '(2, 1)' 0020000000000001 0000000000000000
expect_out "allreduce --stacked 2^53 + 1, fp64 tz" 9007199254740992 sh -c \
	'fplab allreduce --stacked st.npy --comm fp64:tz -o o.txt >/dev/null && cat o.txt'
# A binary64 .npy is the number itself: 65520 (0x40effe0000000000: 2^15
# (2 - 2^-11)) is the fp16 tie and ne rounds it to 65536, an overflow
npy f8.npy '<f8' '(1,)' 40effe0000000000
npy z8.npy '<f8' '(1,)' 0000000000000000
expect_out "65520 from an .npy in fp16 ne" inf sh -c \
	'fplab allreduce --inputs f8.npy,z8.npy --comm fp16 -o o.txt >/dev/null && cat o.txt'

# Stochastic rounding reads R bits below the format's last: binary64's
# round to odd holds them exactly when p + R <= 52 (fp16: 11 + 32), not
# for fp32 (24 + 32): a warning then, none with --sr-bits 28
fplab allreduce --inputs tie.txt,zero.txt --comm fp32:sp >/dev/null 2>err.txt
grep -q "warning: .*fp32:sp.*binary64 cannot hold" err.txt ||
	fail "allreduce fp32:sp, R = 32: no warning ($(cat err.txt))"
fplab allreduce --inputs tie.txt,zero.txt --comm fp32:sp --sr-bits 28 >/dev/null 2>err.txt
[ -s err.txt ] && fail "allreduce fp32:sp, R = 28: $(cat err.txt)"
fplab allreduce --inputs tie.txt,zero.txt --comm fp16:sp >/dev/null 2>err.txt
[ -s err.txt ] && fail "allreduce fp16:sp: $(cat err.txt)"
checks=$((checks + 3))

# --mpi (when fplab-mpi and mpirun are here): each rank reads the same
# files and holds the same numbers, so the cast gives 65504 there too
if [ -x "$(dirname "$FPLAB")/fplab-mpi" ] && command -v mpirun >/dev/null 2>&1 &&
	command -v timeout >/dev/null 2>&1; then
	_root=
	[ "$(id -u)" = 0 ] && _root=--allow-run-as-root
	if ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --oversubscribe $_root -np 2 \
		"$FPLAB" allreduce --mpi --inputs max.txt,zero.txt --comm fp16 -o mpi.txt \
		>/dev/null 2>err.txt; then
		[ "$(cat mpi.txt)" = 65504 ] ||
			fail "allreduce --mpi 65519.99999999999999999 in fp16 ne: $(cat mpi.txt)"
		checks=$((checks + 1))
	fi
fi

# --- optim ----------------------------------------------------------------
# drift is |w - w_ref| / |w_ref|, w_ref the FP64 reference's (binary64 in
# ne: the decimal's nearest binary64).  near A B: |A - B| <= 1e-12 |B|
near() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d;
		exit !(a != "" && d <= 1e-12 * (b < 0 ? -b : b)) }'
}
# --init 65519.99999999999999999, lr 0: the weight is its fp16 rounding
# 65504, the reference's 65520: drift 16/65520 (twice: inf)
fplab optim --init max.txt -g zero.txt --lr 0 --policy none:fp16 --tsv >o.tsv 2>err.txt
near "$(tsv_first drift <o.tsv)" "$(awk 'BEGIN { printf "%.17g", 16 / 65520 }')" ||
	fail "optim --init 65519.99999999999999999: drift $(tsv_first drift <o.tsv), not 16/65520"
# -g 65519.99999999999999999 from w = 0, lr 1 (none:fp16 computes w - g
# in fp16, exactly here): w = -65504, the reference's -65520: the same
# drift (twice: the gradient casts to inf)
fplab optim --init zero.txt -g max.txt --lr 1 --policy none:fp16 --tsv >o.tsv 2>err.txt
near "$(tsv_first drift <o.tsv)" "$(awk 'BEGIN { printf "%.17g", 16 / 65520 }')" ||
	fail "optim -g 65519.99999999999999999: drift $(tsv_first drift <o.tsv), not 16/65520"
[ "$(tsv_first opt_overflow <o.tsv)" = 0 ] || fail "optim -g 65519.99999999999999999: an overflow"
# -g 1e400: the cast into fp16 overflows (twice: inf, no overflow)
fplab optim --init zero.txt -g big.txt --lr 1 --policy none:fp16 --tsv >o.tsv 2>err.txt
[ "$(tsv_first opt_overflow <o.tsv)" = 1 ] || fail "optim -g 1e400: overflow $(tsv_first opt_overflow <o.tsv), not 1"
# -g 1 + 10^-30 with grad-rnd=tp: the gradient is 1 + 2^-10, w = -(1 +
# 2^-10), the reference's -1: drift 2^-10 (twice: 0)
fplab optim --init zero.txt -g up.txt --lr 1 --policy none:fp16,grad-rnd=tp --tsv >o.tsv \
	2>err.txt
[ "$(tsv_first drift <o.tsv)" = 0.0009765625 ] ||
	fail "optim -g 1 + 1e-30, grad tp: drift $(tsv_first drift <o.tsv), not 2^-10"
# the same with a constant loss scale 4 (a power of two): the cast of
# 4 + 4 10^-30 in tp is 4 + 2^-8, unscaled 1 + 2^-10
fplab optim --init zero.txt -g up.txt --lr 1 --loss-scale 4 --policy none:fp16,grad-rnd=tp \
	--tsv >o.tsv 2>err.txt
[ "$(tsv_first drift <o.tsv)" = 0.0009765625 ] ||
	fail "optim -g 1 + 1e-30, grad tp, scale 4: drift $(tsv_first drift <o.tsv), not 2^-10"
checks=$((checks + 6))
# --grad-stack of int64 steps [0, 2^53 + 1] and [2^53 + 1, 0], fp64
# gradients in tp: each 2^53 + 1 casts to 2^53 + 2 (the reference's ne: to
# the even 2^53), so w after step 1 is [0, -(2^53 + 2)] against [0, -2^53],
# after step 2 [-(2^53 + 2), -(2^53 + 2)] against [-2^53, -2^53]: drift
# 2 / 2^53 = 2^-52 both times (twice: 0)
npy gs.npy '<i8' '(2, 2)' 0000000000000000 0020000000000001 0020000000000001 0000000000000000
npy w2.npy '<f8' '(2,)' 0000000000000000 0000000000000000
expect_out "optim --grad-stack of 2^53 + 1 in fp64 tp" \
	"$(printf '2.220446049250313e-16\n2.220446049250313e-16')" sh -c \
	'fplab optim --init w2.npy --grad-stack gs.npy --lr 1 --every 1 \
		--policy none:fp64,grad-rnd=tp --tsv | awk -F "\t" "NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"drift\") k = i }
		NR > 1 { print \$k }"'
# grad-rnd=sp into fp32 with R = 32 is not exact: a warning
fplab optim --init zero.txt -g tie.txt --policy none:fp32,grad-rnd=sp >/dev/null 2>err.txt
grep -q "warning: none:fp32,grad-rnd=sp: the gradients: .*binary64 cannot hold" err.txt ||
	fail "optim fp32 sp, R = 32: no warning ($(cat err.txt))"
fplab optim --init zero.txt -g tie.txt --policy none:fp16,grad-rnd=sp >/dev/null 2>err.txt
[ -s err.txt ] && fail "optim fp16 sp: $(cat err.txt)"
checks=$((checks + 2))

finish
