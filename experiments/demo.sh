#!/bin/sh
# SPDX-License-Identifier: MIT
# experiments/demo.sh - the short demonstration run by `make demo` (under
# a minute on two cores): what happens to numbers in bf16, fp16 and fp8,
# then what the lab is for (sums, GEMM, all-reduce, optimizer steps, the
# CPU's own kernels, training), told by fplab itself.
#   sh experiments/demo.sh [PATH/TO/fplab]
# Report columns are picked by name (cols below), never by position, so
# that a column added to a report does not break the demonstration; a
# column that has gone is an error (tests/cli/demo.sh runs this script).
set -eu
FPLAB=${1:-./fplab}
here=$(dirname "$0")
. "$here/lib.sh"
say() { printf '\n== %s\n' "$*"; }
note() { printf '   %s\n' "$*"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fplab-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# cols [NAME=VALUE]... NAME...: a TSV report on stdin (one header line)
# printed as an aligned table of the named columns, keeping the rows whose
# column NAME is VALUE.  A name may list alternatives, "a|b" (a column
# renamed); a name found nowhere in the header is an error.
cols() {
	awk -F'\t' -v spec="$*" "$TSV_AWK"'
	NR == 1 {
		tsvhead()
		nw = nf = 0
		ns = split(spec, s, " ")
		for (i = 1; i <= ns; i++) {
			if (index(s[i], "=")) {
				nw++
				wcol[nw] = tsvcol(substr(s[i], 1, index(s[i], "=") - 1))
				wval[nw] = substr(s[i], index(s[i], "=") + 1)
			} else {
				nf++
				fcol[nf] = tsvcol(s[i])
				fname[nf] = s[i]
				sub(/\|.*/, "", fname[nf])
			}
		}
		rows = 1
		for (j = 1; j <= nf; j++)
			cell[1, j] = $fcol[j]
		next
	}
	{
		for (k = 1; k <= nw; k++)
			if ($wcol[k] != wval[k])
				next
		rows++
		for (j = 1; j <= nf; j++)
			cell[rows, j] = $fcol[j]
	}
	END {
		if (tsv_bad)
			exit 1
		for (j = 1; j <= nf; j++)
			for (r = 1; r <= rows; r++)
				if (length(cell[r, j]) > w[j])
					w[j] = length(cell[r, j])
		for (r = 1; r <= rows; r++) {
			line = "  "
			for (j = 1; j <= nf; j++)
				line = line sprintf(j < nf ? "%-" w[j] + 2 "s" : "%s", cell[r, j])
			print line
		}
	}'
}

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
	"$FPLAB" hist "$sample" -f fp16 --tsv | awk -F'\t' "$TSV_AWK"'NR == 1 { tsvhead(); next }
		{ printf "  %-18s %6d values, %6.2f%% became zero in fp16\n", $tsvcol("tensor"), $tsvcol("n"),
		  100 * $tsvcol("became_zero") / $tsvcol("n") }'
	say "the same dump in e4m3fn with APS per-tensor power-of-two scaling, per binade (first lines)"
	"$FPLAB" hist "$sample" -f e4m3fn --aps | head -n 16
fi

say "summing 4096 ones in fp16: sequentially the sum sticks at 2048, Kahan's compensation does not"
note "(from 2048 on an fp16 ulp is 2, so 2048 + 1 is a tie and rounds back to even 2048)"
"$FPLAB" reduce sum --gen ones -n 4096 --acc fp16 --order sequential,kahan --tsv \
	| cols acc order result exact

say "a 64x64x256 GEMM, e4m3fn inputs, exact products, fp16 accumulator, under two orders"
note "sequential: one fp16 chain of 256 terms; blocked:32:fp32: fp16 chains of 32 added into fp32."
note "normwise_error, ||C - exact|| / || |A||B| || (Frobenius norms), beside its bound gamma_K"
note "(K: the roundings one term can see, 256 or 32 + 8)"
"$FPLAB" gemm -m 64 -n 64 -k 256 --gen normal:0,1 --seed 1 -f e4m3fn --acc fp16 \
	--order sequential,blocked:32:fp32 --tsv | cols order median_rel_error normwise_error bound

say "all-reduce of one layer's gradients (9408 values, lognormal) over 256 nodes in e5m2"
note "a ring (510 steps) adds each value into a partial sum of up to 255 others; hierarchical, groups"
note "of 16 (46 steps), into one of at most 15: fewer swamped additions, for more bytes per node"
"$FPLAB" allreduce --nodes 256 --comm e5m2 --algo ring,hier --group 16 \
	--layers 9408:lognormal:-8,1 --seed 1 --tsv \
	| cols layer=total algo group steps bytes_per_node 'avg_rel_error|mean_rel_error' max_rel_error

say "1000 SGD steps (lr 1e-3) with fp16 weights: updates vanish without an fp32 master copy"
note "vanished: w + update == w in fp16; stale: the fp16 copy lags the fp32 master, which keeps them"
"$FPLAB" optim --steps 1000 --optim sgd --lr 1e-3 --policy none:fp16 --policy fp32-master:fp16 --tsv \
	| cols policy vanished_frac stale_frac drift

say "the CPU's own kernels beside their emulated twins"
"$FPLAB" info | grep '^native_' | sed 's/^/  /'
# the first kernel this CPU runs, most specialised first, and its profile
profile=
for kp in amx-bf16:amx-bf16 avx512fp16:fp16-fma avx512bf16:avx512bf16 fma32:fp32-fma; do
	if "$FPLAB" info | grep -q "^native_${kp%%:*} *yes"; then
		profile=${kp#*:}
		break
	fi
done
if [ -n "$profile" ]; then
	note "a 2x2x512 GEMM, profile $profile: the native kernel's first outputs (fp32 bits) and the emulation's"
	g="gemm -m 2 -n 2 -k 512 --gen normal:0,1 --seed 3 --profile $profile"
	"$FPLAB" $g --backend native -o "$tmp/native.npy" >/dev/null
	"$FPLAB" $g --backend emu -o "$tmp/emu.npy" >/dev/null
	"$FPLAB" round -f fp32 --out bits "$tmp/native.npy" >"$tmp/native.bits"
	"$FPLAB" round -f fp32 --out bits "$tmp/emu.npy" >"$tmp/emu.bits"
	"$FPLAB" round -f fp32 --out text "$tmp/emu.npy" >"$tmp/emu.text"
	printf '  %-12s %-12s %s\n' native emulated value
	paste "$tmp/native.bits" "$tmp/emu.bits" "$tmp/emu.text" | awk -F'\t' '{ printf "  %-12s %-12s %s\n", $1, $2, $3 }'
	note "and on a 64x64x1024 GEMM (mismatches: outputs whose bits differ; must be 0):"
	"$FPLAB" gemm -m 64 -n 64 -k 1024 --gen normal:0,1 --seed 3 --profile "$profile" --backend both --tsv \
		| cols backend kernel mismatches max_rel_error
else
	note "this CPU runs none of fplab's native GEMM kernels (FPLAB_KERNELS=ref, or no AVX2/FMA)"
fi

say "training a 784-64-10 MLP for one epoch on 4000 examples under four precision policies"
if [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
	data="--data fashion-mnist --test-limit 2000"
	note "on Fashion-MNIST (test accuracy over 2000 test images)"
else
	data="--data generated:6000:784:10 --test-limit 2000"
	note "on a generated set (Fashion-MNIST is not installed: apt-get install dataset-fashion-mnist)"
fi
note "fp16-pure: weights, gradients and updates in fp16, no master and no loss scaling;"
note "fp16-mixed: an fp32 master and dynamic loss scaling; bf16-mixed: an fp32 master"
"$FPLAB" train --layers 784-64-10 --epochs 1 --train-limit 4000 $data --seed 1 \
	--policy fp32 --policy fp16-pure --policy fp16-mixed --policy bf16-mixed --tsv \
	| cols policy test_accuracy vanished_frac grad_underflow skipped loss_scale
