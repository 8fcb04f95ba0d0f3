#!/bin/sh
# SPDX-License-Identifier: MIT
# experiments/demo.sh - the short demonstration run by `make demo`:
# what happens to numbers in bf16, fp16 and fp8, told by fplab itself.
#   sh experiments/demo.sh [PATH/TO/fplab]
set -eu
FPLAB=${1:-./fplab}
here=$(dirname "$0")
say() { printf '\n== %s\n' "$*"; }

say "0.1 and 1/3 in four formats (nearest-even): value and encoding"
for f in bf16 fp16 e4m3fn e5m2; do
	printf '%-7s' "$f"
	printf '0.1\n0x1.5555555555555p-2\n' | "$FPLAB" round -f "$f" -r ne --out text | tr '\n' ' '
	printf '  bits: '
	printf '0.1\n0x1.5555555555555p-2\n' | "$FPLAB" round -f "$f" -r ne --out bits | tr '\n' ' '
	echo
done

say "the edge of the range: fp16 max is 65504, e4m3fn (OCP) max is 448"
printf '65519.99\n65520\n' | "$FPLAB" round -f fp16 -r ne --out text | paste -d' ' - - | sed 's/^/fp16 ne: 65519.99 65520 -> /'
printf '464\n465\n' | "$FPLAB" round -f e4m3fn -r ne --out text | paste -d' ' - - | sed 's/^/e4m3fn ne: 464 465 -> /'
printf '465\n' | "$FPLAB" round -f e4m3fn -r ne --saturation 1 --out text | sed 's/^/e4m3fn saturating: 465 -> /'

say "one addition, seven rounding modes: fp16 1 + 2^-11 (exactly half an ulp)"
for r in ne na nz tp tn tz od; do
	printf '  %s: ' "$r"
	printf '1 0x1p-11\n' | "$FPLAB" calc add -f fp16 -r "$r" --out text
done

say "stochastic rounding is unbiased: 10000 x round(1 + 2^-12) in fp16"
for r in ne sp; do
	printf '  %s: mean = ' "$r"
	awk 'BEGIN { for (i = 0; i < 10000; i++) print "1.000244140625" }' \
		| "$FPLAB" round -f fp16 -r "$r" --seed 1 --out text \
		| awk '{ s += $1 } END { printf "%.9f (exact 1.000244141)\n", s / NR }'
done

sample=$here/data/sample-grads.npz
if [ -f "$sample" ]; then
	say "gradients of a small model: how much becomes zero in fp16, and does loss scaling help?"
	"$FPLAB" hist "$sample" -f fp16 --tsv | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ printf "  %-18s %6d values, %6.2f%% became zero in fp16\n", $c["tensor"], $c["count"], 100 * $c["became_zero"] / $c["count"] }'
	say "the same dump in e4m3fn with APS per-tensor power-of-two scaling, per binade"
	"$FPLAB" hist "$sample" -f e4m3fn --aps | head -n 32
fi
