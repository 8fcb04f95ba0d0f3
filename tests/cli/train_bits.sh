#!/bin/sh
# SPDX-License-Identifier: MIT
# train_bits.sh - the bits of a tiny `fplab train` run are pinned, so that
# speed work on the trainer or the GEMM fast paths cannot change them
# silently: for fp32, fp8-e4m3, bf16-mixed and fp16-mixed, 2 epochs of the
# generated set on 16-32-4 (ReLU zeros in the hidden layer, so the zero
# products of every GEMM direction are taken), on 1 and 2 threads, the
# --tsv report (without its seconds) and the -o weights must be
#  (1) the same bits as the reference path (FPLAB_ACCUM=ref: the engine's
#      scalar fma step by step, no fast path, no kernel), an independent
#      computation of the same values; and
#  (2) the cksum recorded below: taken from the commit before the GEMM
#      zero-product shortcut (e529063, whose fp8-e4m3 run takes the
#      fallbacks to the engine), and equal to the reference path's there.
#      A change of it is a change of results, never a speed change: say
#      so in the commit that updates it.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

PIN_TSV="3417062093 1624"
PIN_W="2769859324 11840"

# run TAG THREADS [ENV]: every policy's report and weights into TAG.*
run() {
	_tag=$1 _th=$2
	shift 2
	for p in fp32 fp8-e4m3 bf16-mixed fp16-mixed; do
		env "$@" fplab train --data generated --layers 16-32-4 --epochs 2 --batch 16 \
			--threads "$_th" --policy "$p" --tsv -o "$_tag.$p.safetensors" \
			>"$_tag.$p.tsv" 2>"$_tag.$p.err" || fail "$_tag $p: exit $?: $(cat "$_tag.$p.err")"
		awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "seconds") s = i }
			{ $s = ""; print }' "$_tag.$p.tsv" >>"$_tag.tsv"
		cat "$_tag.$p.safetensors" >>"$_tag.w"
	done
}

run ref 1 FPLAB_ACCUM=ref
for th in 1 2; do
	run auto$th "$th"
	checks=$((checks + 2))
	cmp -s ref.tsv auto$th.tsv || fail "$th thread(s): the report is not the reference path's: $(diff ref.tsv auto$th.tsv | head -4)"
	cmp -s ref.w auto$th.w || fail "$th thread(s): the weights are not the reference path's"
done
expect_out "the reports' pinned cksum" "$PIN_TSV" eval "cksum <ref.tsv"
expect_out "the weights' pinned cksum" "$PIN_W" eval "cksum <ref.w"
finish
