#!/bin/sh
# SPDX-License-Identifier: MIT
# swamping.sh - the mixed-precision slides' (seed 001) "precision gap in
# sum": A + B loses B when A/B is large.  For fp16, bf16, fp32, e4m3fn,
# e5m2 and a custom e5m7, `fplab calc add` (nearest even) measures the
# ratio from which B is partly lost (A + B inexact) and wholly lost
# (A + B == A), and the rule for any format is checked against it.
#
#   sh experiments/swamping.sh [FPLAB]
#
# A is 1 (even significand: a tie rounds down to A) or 1 + ulp (odd: a
# tie rounds up, away from A); B = 2^-k or 1.5 2^-k, k = 0, 1, ...; each
# column is the first ratio A/B at which the sum is inexact (partly lost)
# or equals A (wholly lost).  With m fraction
# bits (p = m + 1), ulp(A) = 2^-m:
#   1 + 2^-k is exact while 2^-k >= ulp, i.e. A/B <= 2^m;
#   B < ulp(A) makes the sum inexact: B is at least partly lost for every
#     A once A/B > 2^(m+1) = 2^p (A/B > sig(A) 2^m, sig(A) in [1, 2));
#   B < ulp(A)/2 makes it round back to A: wholly lost for every A once
#     A/B > 2^(m+2); at A/B = 2^(m+1) exactly, with A a power of two, B is
#     half an ulp and the tie goes to A (even): lost; with an odd A it is
#     not, and the first loss is at 2^(m+2).
#   Below A/B = 2^(m+1) B is never wholly lost.
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}

# first FMT A PRED [SIG]: the first k in 0..64 where A + SIG 2^-k (SIG 1 by
# default, or 0x1.8 = 1.5) in FMT meets PRED: "inexact" or "lost"
first() {
	_k=0
	while [ $_k -le 64 ]; do
		printf '%s %sp-%d\n' "$2" "${4:-0x1}" $_k
		_k=$((_k + 1))
	done | "$FPLAB" calc add -f "$1" --flags --tsv |
		awk -F '\t' -v pred="$3" -v a="$2" "$TSV_AWK"'
			NR == 1 { tsvhead(); next }
			{ k = NR - 2
			  hit = pred == "inexact" ? ($tsvcol("flags") ~ /inexact/) : ($tsvcol("result") == $tsvcol("a"))
			  if (hit) { print k; exit } }'
}

printf '%-7s %3s  %-14s %-14s %-14s %-14s  %s\n' format m "partly, B=2^-k" "partly, B=1.5*" \
	"wholly, A=1" "wholly, A=1+u" "rule"
bad=0
for f in fp16 bf16 fp32 e4m3fn e5m2 e5m7; do
	m=$("$FPLAB" formats "$f" --tsv | awk -F '\t' "$TSV_AWK"'NR == 1 { tsvhead() } NR == 2 { print $tsvcol("m") }')
	odd=$(awk -v m="$m" 'BEGIN { printf "%.17g", 1 + 2 ^ -m }')
	p1=$(first "$f" 1 inexact)
	p2=$(first "$f" 1 inexact 0x1.8)
	w1=$(first "$f" 1 lost)
	w2=$(first "$f" "$odd" lost)
	# the rule's predictions: 2^-k exact up to k = m; lost from m + 1
	# (even A, the tie) and m + 2 (odd A)
	if [ "$p1" = $((m + 1)) ] && [ "$p2" = "$m" ] && [ "$w1" = $((m + 1)) ] && [ "$w2" = $((m + 2)) ]; then
		ok="agrees"
	else
		ok="DISAGREES"
		bad=1
	fi
	printf '%-7s %3s  %-14s %-14s %-14s %-14s  %s\n' "$f" "$m" "2^$p1" "2^$p2/1.5" "2^$w1" \
		"2^$w2" "$ok"
done
cat <<EOF

(ratios A/B; B = 1.5*: B = 1.5 2^-k, whose second bit is lost first)
seed 001 (the mixed-precision slides): "A+B, if A/B>2^10, B will degrade to zero.
For FP32, the ratio can be up to 2^23" (the issue adds 2^7 for bf16: m = 7).
fplab, for m fraction bits (p = m + 1) and nearest-even rounding: B keeps
the bits at or above ulp(A); it is at least partly lost (A + B inexact) for
every A once A/B > 2^(m+1) = 2^p, earlier when B has low bits (B = 1.5 2^-k:
from 2^m/1.5), and wholly lost (A + B == A) for every A once A/B > 2^(m+2);
at 2^(m+1) a tie goes to the even one of A and A + ulp, so a power of two A
loses B there (column 5), an odd A keeps it (column 6).  Below 2^(m+1) B is
never wholly lost.
So the seed's 2^10 (fp16) and 2^23 (fp32) are 2^m, the start of the PARTLY
lost range: just above 2^10, B = 0.99 2^-10 with A = 1 gives 1 + 2^-10 (B
rounded to a whole ulp, not to zero).  B degrades to zero, as the seed says,
only from 2^11 (A a power of two) to 2^12 (any A) in fp16, 2^8 to 2^9 in
bf16, 2^24 to 2^25 in fp32: one to two binades later than stated.
Verdict: that a large ratio swamps B is reproduced; the seed's thresholds
(2^10, 2^23) are NOT, as the ratios where B degrades to zero: they are where
B starts to lose bits.  Exact arithmetic, no randomness: nothing to spread.
EOF
exit $bad
