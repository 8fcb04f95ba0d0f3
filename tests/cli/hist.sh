#!/bin/sh
# SPDX-License-Identifier: MIT
# hist.sh - `fplab hist` (issue 4): exact counts for a hand-built .npy of
# known values in fp16, bf16, e5m2 and e4m3fn (expected counts derived by
# hand, see tests/thist.c for the value-by-value table); the same values as
# .safetensors give the same report; the sample dump as .npz, .safetensors
# and .npy gives identical rows; the chart, --json, scaling options.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1
SAMPLE=$SRCDIR/experiments/data

# shellcheck disable=SC2086
npy_f32 known.npy $KNOWN
# shellcheck disable=SC2086
st_f32 known.safetensors known $KNOWN

# n zeros nan_inf became_zero subnormal normal overflow, by hand:
#   fp16:   26 2 3 4 4 10 3      bf16 (subnormals on): 26 2 3 1 1 18 1
#   e5m2:   26 2 3 7 1 9 4       e4m3fn: 26 2 3 8 2 5 6
# bf16 without subnormals (the CLI default, as CPFloat's): 2^-130 rounds
# to 0 (nearer than 2^-126): 26 2 3 2 0 18 1
for c in "fp16 2 3 4 4 10 3" "bf16_--subnormal_1 2 3 1 1 18 1" "bf16 2 3 2 0 18 1" \
	"e5m2 2 3 7 1 9 4" "e4m3fn 2 3 8 2 5 6"; do
	set -- $c
	f=$(echo "$1" | tr _ ' ')
	want=$(printf 'known\t26\t%s\t%s\t%s\t%s\t%s\t%s' "$2" "$3" "$4" "$5" "$6" "$7")
	expect_out "known.npy $f" "$want" sh -c "fplab hist -f $f --tsv known.npy | tsvcut tensor $CLASSES"
	expect_out "known.safetensors $f" "$want" \
		sh -c "fplab hist -f $f --tsv known.safetensors | tsvcut tensor $CLASSES"
done
# saturation moves the e4m3fn overflows to +-448 but they still count as overflow
expect_out "e4m3fn saturating" "$(printf '8\t2\t5\t6')" \
	sh -c "fplab hist -f e4m3fn --saturation 1 --tsv known.npy | tsvcut became_zero subnormal normal overflow"
# the TSV header: the classes, the shared statistics (src/cli/cli.h), the
# fractions and the scales
expect_out "tsv header" "$(printf 'tensor\tdtype\tn\tzeros\tnan_inf\tsubnormal\tnormal\tinexact\tunderflow\toverflow\tsaturated\tflushed\tinvalid\tbecame_zero\tmean_rel_error\trms_rel_error\tmax_rel_error\tmean_abs_error\trms_abs_error\tmax_abs_error\tbecame_zero_frac\tsubnormal_frac\toverflow_frac\tamax\tapplied_scale\taps_log2\tbest_log2')" \
	sh -c "fplab hist --tsv known.npy | head -n 1"

# identical reports: .npz, .safetensors (all columns, every tensor and the total)
fplab hist -f e4m3fn --tsv "$SAMPLE/sample-grads.npz" >npz.tsv 2>err || fail "sample npz: $(cat err)"
fplab hist -f e4m3fn --tsv "$SAMPLE/sample-grads.safetensors" >st.tsv 2>err || fail "sample st: $(cat err)"
checks=$((checks + 1))
cmp -s npz.tsv st.tsv || fail "sample .npz and .safetensors reports differ: $(diff npz.tsv st.tsv | head -5)"
checks=$((checks + 1))
[ "$(wc -l <npz.tsv)" -eq 10 ] || fail "sample: expected header + 8 tensors + total, got $(wc -l <npz.tsv) lines"
# .npy of the first tensor = the same row (name aside)
fplab hist -f e4m3fn --tsv "$SAMPLE/sample-conv1.npy" | sed 1d | cut -f2- >a
fplab hist -f e4m3fn --tsv --tensor conv1.weight.grad "$SAMPLE/sample-grads.npz" | sed 1d | cut -f2- >b
checks=$((checks + 1))
cmp -s a b || fail ".npy and .npz rows of conv1 differ"
# the six classes add up to n in every row
checks=$((checks + 1))
tsvcut $CLASSES <npz.tsv | awk -F'\t' '$1 != $2 + $3 + $4 + $5 + $6 + $7 { bad = 1 } END { exit bad }' ||
	fail "classes do not add up to n"

# the chart (done-when: prints), --json
fplab hist "$SAMPLE/sample-grads.npz" --format e4m3fn >chart 2>err
checks=$((checks + 1))
[ $? = 0 ] && grep -q 'conv1.weight.grad' chart && grep -q '(total)' chart &&
	grep -q 'max 448' chart && grep -q '█' chart || fail "chart: $(head -5 chart) $(cat err)"
checks=$((checks + 1))
grep -q "$(printf '\033')" chart && fail "colour escapes written to a pipe"
fplab hist -f fp16 --json known.npy >j 2>err || fail "json: $(cat err)"
checks=$((checks + 1))
"$PYTHON" -c 'import json, sys
t = json.load(open("j"))["tensors"][0]
sys.exit(0 if [t[k] for k in ("became_zero", "subnormal", "normal", "overflow")] == [4, 4, 10, 3] else 1)' ||
	fail "json counts: $(cat j)"

# scaling by 2^10 in fp16, value by value: normal 1 -1.5 2^-8 2^-16 -2^-20
# 2^-24 2^-6 2^-7 (8); subnormal 2^-30 0.75*2^-24 2^-25 (3); became zero
# 2^-130 2^-140 (2); overflow 1000 -2^17 2^100 FLT_MAX 65504 448 464 465 (8)
expect_out "--scale 2^10" "$(printf '2\t3\t8\t8')" \
	sh -c "fplab hist -f fp16 --scale 2^10 --tsv known.npy | tsvcut became_zero subnormal normal overflow"
expect_out "--loss-scale 1024 = --scale 2^10" "$(printf '2\t3\t8\t8')" \
	sh -c "fplab hist -f fp16 --loss-scale 1024 --tsv known.npy | tsvcut became_zero subnormal normal overflow"
# --aps on {2^-30, 2^-26, 2^-20}: k = 35, all normal
npy_f32 small.npy 0x30800000 0x32800000 0x35800000
expect_out "--aps" "$(printf '0\t0\t3\t0\t2^35')" \
	sh -c "fplab hist -f fp16 --aps --tsv small.npy | tsvcut became_zero subnormal normal overflow applied_scale"
# --mx 32 = block:e4m3fn:e8m0:32:floor: one block, X = 2^(-20 - 8):
# quotients 2^-2, 2^2, 2^8, all normal; the scale is the block's
expect_out "--mx 32" "$(printf '0\t0\t3\t0\tblock')" \
	sh -c "fplab hist -f e4m3fn --mx 32 --tsv small.npy | tsvcut became_zero subnormal normal overflow applied_scale"
# raw input with --dtype, --offset, --count: {junk, 1, 2^-30, nan};
# n zeros became_zero subnormal normal overflow of {1, 2^-30} in fp16
{ le32 0xdeadbeef; le32 0x3f800000; le32 0x30800000; le32 0x7fc00000; } >raw.bin
expect_out "raw f32" "$(printf '2\t0\t1\t0\t1\t0')" \
	sh -c "fplab hist --dtype f32 --offset 4 --count 2 --tsv raw.bin | tsvcut n zeros became_zero subnormal normal overflow"
# n nan_inf became_zero normal overflow of {1, 2^-30, nan}
expect_out "raw from stdin" "$(printf '3\t1\t1\t1\t0')" \
	sh -c "tail -c 12 raw.bin | fplab hist --dtype f32 --tsv - | tsvcut n nan_inf became_zero normal overflow"
# one vocabulary (issue 10 point 2): the IEEE underflow flag and "became
# zero" differ.  fp16 (min subnormal 2^-24), values by hand:
#   0.75*2^-24 rounds to 2^-24: underflow, inexact, a subnormal, error 2^-26
#   2^-26 rounds to 0: underflow, inexact, became zero, error 2^-26
#   2^-20, a subnormal fp16 holds: no event, error 0;  1 and +0: exact
# inexact 2, underflow 2, flushed 0, became_zero 1, subnormal 2; absolute
# error over the 5 finite values: mean 2^-25/5, max 2^-26; relative over
# the 4 nonzero: max 1 (the zero), mean (1/3 + 1)/4 = 1/3
npy_f32 tiny.npy 0x33400000 0x32800000 0x35800000 0x3f800000 0x00000000
expect_out "underflow is not became_zero" "$(printf '2\t2\t0\t1\t2\t5.960464477539063e-09\t1.4901161193847656e-08\t1')" \
	sh -c "fplab hist -f fp16 --tsv tiny.npy | tsvcut inexact underflow flushed became_zero subnormal mean_abs_error max_abs_error max_rel_error"
expect_out "the overflow column is the overflow class" "$(printf '3\t3')" \
	sh -c "fplab hist -f fp16 --tsv known.npy | tsvcut overflow overflow"
fplab hist -f fp16 tiny.npy >chart2 2>err || fail "chart of tiny.npy: $(cat err)"
checks=$((checks + 1))
grep -q 'became zero 1 ' chart2 && grep -q 'underflow 2 ' chart2 && grep -q 'flushed 0 ' chart2 ||
	fail "the chart does not name became zero, underflow and flushed: $(cat chart2)"

# --ndjson: one object per tensor and one for the total, each line valid
# JSON with the TSV's columns
fplab hist -f fp16 --ndjson tiny.npy known.npy >nd 2>err || fail "ndjson: $(cat err)"
fplab hist -f fp16 --tsv tiny.npy known.npy | head -n 1 >hdr
checks=$((checks + 1))
"$PYTHON" -c 'import json, sys
lines = open("nd").read().splitlines()
cols = open("hdr").read().rstrip("\n").split("\t")
rows = [json.loads(l) for l in lines]
assert len(rows) == 3, len(rows)
assert [r["tensor"] for r in rows] == ["tiny.npy:tiny", "known.npy:known", "(total)"], rows
assert all(list(r) == cols for r in rows), "keys differ from the TSV header"
assert rows[2]["became_zero"] == 5 and rows[2]["underflow"] == 2 + rows[1]["underflow"]' 2>err ||
	fail "--ndjson: $(cat err) $(cat nd)"
finish
