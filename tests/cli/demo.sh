#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - `make demo`'s script, experiments/demo.sh, runs to its end
# with this fplab, prints nothing on stderr, and its tables say what the
# spec says they must.  Expected values are worked out by hand:
#  - 0.1 in fp16 is 0x2e66 (0.1 = 1.6 * 2^-4: exponent 15 - 4 = 11, so
#    0 01011 .., fraction round(0.6 * 1024) = 614 = 0x266), 1/3 is 0x3555
#    (1.333.. * 2^-2: exponent 13, fraction 1365.33 -> 1365 = 0x155);
#  - 65520 is fp16's max 65504 plus half its ulp 32: a tie, rounded to
#    even, i.e. up, overflowing to inf; 465 is past e4m3fn's 448 + 32/2,
#    so NaN, or 448 saturating;
#  - 4096 ones summed in fp16: from 2048 on the ulp is 2, 2048 + 1 ties
#    to even 2048 for ever; Kahan's compensation carries the lost ones;
#  - a ring all-reduce over P = 256 nodes takes 2(P - 1) = 510 steps, the
#    hierarchical one with G = 16: (G - 1) + 2(P/G - 1) + 1 = 46
#    (fplab-allreduce(1));
#  - a native kernel and its emulated profile give the same bits.
# It also prints the demonstration's wall time (`make demo` must take
# under a minute on two idle cores; the test does not fail on a busy one).
. "$(dirname "$0")/lib.inc"

t0=$(date +%s)
sh "$SRCDIR/experiments/demo.sh" "$FPLAB" >"$T/demo.out" 2>"$T/demo.err"
rc=$?
t1=$(date +%s)
echo "demo.sh: experiments/demo.sh ran in $((t1 - t0)) s"
checks=$((checks + 1))
if [ "$rc" -ne 0 ] || [ -s "$T/demo.err" ]; then
	fail "experiments/demo.sh: exit status $rc, stderr:"
	sed 's/^/  stderr: /' "$T/demo.err" >&2
	tail -n 5 "$T/demo.out" | sed 's/^/  stdout: /' >&2
fi

# has WHAT EXTENDED-REGEX: a line of the demonstration matches
has() {
	checks=$((checks + 1))
	grep -Eq -- "$2" "$T/demo.out" || fail "$1: no line matches '$2'"
}
has "0.1 and 1/3 in fp16" '^fp16 .*bits: 0x2e66 0x3555 *$'
has "fp16 overflow" '^fp16 ne: 65519\.99 65520 -> 65504 inf$'
has "e4m3fn overflow" '^e4m3fn ne: 464 465 -> 448 nan$'
has "e4m3fn saturating" '^e4m3fn saturating: 465 -> 448$'
has "sequential fp16 sum" '^ +fp16:ne +sequential +2048 +4096 *$'
has "kahan fp16 sum" '^ +fp16:ne +kahan +4096 +4096 *$'
has "gemm sequential" '^ +sequential +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+ *$'
has "gemm blocked" '^ +blocked:32:fp32 +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+ *$'
has "ring all-reduce" '^ +ring +([^ ]+ +)?510 '
has "hierarchical all-reduce" '^ +hier +16 +46 '
has "fp16 optimizer without master" '^ +none:fp16 +0\.[0-9]*[1-9]'
has "fp16 optimizer with master" '^ +fp32-master:fp16 '
has "native kernels listed" '^ +native_fma32 +(yes|no)'
for p in fp32 fp16-pure fp16-mixed bf16-mixed; do
	has "training policy $p" "^ +$p +[01]\\.[0-9]+ "
done

# the normwise error of each GEMM row under its bound
checks=$((checks + 1))
awk '/^  order +median_rel_error +normwise_error +bound/ { on = 1; next }
	on && NF == 4 { n++; if (!($3 + 0 <= $4 + 0)) bad = 1; next }
	on { exit }
	END { exit !(n == 2 && !bad) }' "$T/demo.out" \
	|| fail "gemm: normwise_error is not under its bound in both rows"

# a native kernel the CPU runs: its bits equal the emulation's, 0 mismatches
if grep -q '^  native  *emulated  *value$' "$T/demo.out"; then
	checks=$((checks + 1))
	awk '/^  native  *emulated  *value$/ { on = 1; next }
		on && /^  0x/ { n++; if ($1 != $2) bad = 1; next }
		on { exit }
		END { exit !(n == 4 && !bad) }' "$T/demo.out" \
		|| fail "native kernel: bits differ from the emulated profile's"
	has "native mismatches" '^ +native +[a-z0-9-]+ +0 '
else
	echo "demo.sh: skip the native comparison: this CPU runs none of the GEMM kernels"
fi
finish
