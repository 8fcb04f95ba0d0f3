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

# count zeros nan_inf underflow subnormal normal overflow, by hand:
#   fp16:   26 2 3 4 4 10 3      bf16 (subnormals on): 26 2 3 1 1 18 1
#   e5m2:   26 2 3 7 1 9 4       e4m3fn: 26 2 3 8 2 5 6
# bf16 without subnormals (the CLI default, as CPFloat's): 2^-130 rounds
# to 0 (nearer than 2^-126): 26 2 3 2 0 18 1
for c in "fp16 2 3 4 4 10 3" "bf16_--subnormal_1 2 3 1 1 18 1" "bf16 2 3 2 0 18 1" \
	"e5m2 2 3 7 1 9 4" "e4m3fn 2 3 8 2 5 6"; do
	set -- $c
	f=$(echo "$1" | tr _ ' ')
	want=$(printf 'known\t26\t%s\t%s\t%s\t%s\t%s\t%s' "$2" "$3" "$4" "$5" "$6" "$7")
	expect_out "known.npy $f" "$want" sh -c "fplab hist -f $f --tsv known.npy | sed 1d | cut -f1,3-9"
	expect_out "known.safetensors $f" "$want" \
		sh -c "fplab hist -f $f --tsv known.safetensors | sed 1d | cut -f1,3-9"
done
# saturation moves the e4m3fn overflows to +-448 but they still count as overflow
expect_out "e4m3fn saturating" "$(printf '8\t2\t5\t6')" \
	sh -c "fplab hist -f e4m3fn --saturation 1 --tsv known.npy | sed 1d | cut -f6-9"
# the TSV header
expect_out "tsv header" "$(printf 'tensor\tdtype\tcount\tzeros\tnan_inf\tunderflow\tsubnormal\tnormal\toverflow')" \
	sh -c "fplab hist --tsv known.npy | head -n 1 | cut -f1-9"

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
# the six classes add up to count in every row
checks=$((checks + 1))
awk -F'\t' 'NR > 1 && $3 != $4 + $5 + $6 + $7 + $8 + $9 { bad = 1 } END { exit bad }' npz.tsv ||
	fail "classes do not add up to count"

# the chart (done-when: prints), --json
fplab hist "$SAMPLE/sample-grads.npz" --format e4m3fn >chart 2>err
checks=$((checks + 1))
[ $? = 0 ] && grep -q 'conv1.weight.grad' chart && grep -q '(total)' chart &&
	grep -q 'max 448' chart && grep -q '█' chart || fail "chart: $(head -5 chart) $(cat err)"
checks=$((checks + 1))
grep -q "$(printf '\033')" chart && fail "colour escapes written to a pipe"
fplab hist -f fp16 --json known.npy >j 2>err || fail "json: $(cat err)"
checks=$((checks + 1))
grep -q '"underflow": 4, "subnormal": 4, "normal": 10, "overflow": 3' j || fail "json counts: $(cat j)"

# scaling by 2^10 in fp16, value by value: normal 1 -1.5 2^-8 2^-16 -2^-20
# 2^-24 2^-6 2^-7 (8); subnormal 2^-30 0.75*2^-24 2^-25 (3); underflow
# 2^-130 2^-140 (2); overflow 1000 -2^17 2^100 FLT_MAX 65504 448 464 465 (8)
expect_out "--scale 2^10" "$(printf '2\t3\t8\t8')" \
	sh -c "fplab hist -f fp16 --scale 2^10 --tsv known.npy | sed 1d | cut -f6-9"
expect_out "--loss-scale 1024 = --scale 2^10" "$(printf '2\t3\t8\t8')" \
	sh -c "fplab hist -f fp16 --loss-scale 1024 --tsv known.npy | sed 1d | cut -f6-9"
# --aps on {2^-30, 2^-26, 2^-20}: k = 35, all normal
npy_f32 small.npy 0x30800000 0x32800000 0x35800000
expect_out "--aps" "$(printf '0\t0\t3\t0\t2^35')" \
	sh -c "fplab hist -f fp16 --aps --tsv small.npy | sed 1d | cut -f6-9,17"
expect_out "--mx 32" "$(printf '0\t0\t3\t0\tmx')" \
	sh -c "fplab hist -f e4m3fn --mx 32 --tsv small.npy | sed 1d | cut -f6-9,17"
# raw input with --dtype, --offset, --count: {junk, 1, 2^-30, nan};
# count zeros underflow subnormal normal overflow of {1, 2^-30} in fp16
{ le32 0xdeadbeef; le32 0x3f800000; le32 0x30800000; le32 0x7fc00000; } >raw.bin
expect_out "raw f32" "$(printf '2\t0\t1\t0\t1\t0')" \
	sh -c "fplab hist --dtype f32 --offset 4 --count 2 --tsv raw.bin | sed 1d | cut -f3-4,6-9"
# count nan_inf underflow normal overflow of {1, 2^-30, nan}
expect_out "raw from stdin" "$(printf '3\t1\t1\t1\t0')" \
	sh -c "tail -c 12 raw.bin | fplab hist --dtype f32 --tsv - | sed 1d | cut -f3,5,6,8,9"
finish
