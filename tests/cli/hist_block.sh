#!/bin/sh
# SPDX-License-Identifier: MIT
# hist_block.sh - `fplab hist -f BLOCK` (issue 25, item 2): the per-tensor
# view of the elements after block scaling and the block view (blocks,
# scales, elements lost per block) for small tensors whose every block is
# worked out by hand below, in 1-D blocks, blocks along axis 0, 2-D tiles,
# the whole tensor and NVFP4's two levels; --mx N as a spelling of
# block:FMT:e8m0:N:floor (same numbers); stochastic rounding independent
# of --threads; the SVG; bad specs and option clashes.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1
SAMPLE=$SRCDIR/experiments/data/sample-grads.npz

# ------------------------------------------------------- 1. 1-D, by hand
# mxfp4:4 = e2m1 elements (0 0.5 1 1.5 2 3 4 6; emax 2), e8m0 scales,
# blocks of 4, OCP's floor rule X = 2^(floor(log2 amax) - 2), quotients
# rounded to nearest-even, saturating.  Six blocks:
#  A  7 1 0.25 0           X = 1: 7 is the tie 6|8, even is 8 > 6:
#                          overflow, saturated to 6 (and it is the amax);
#                          1 normal; 0.25 the tie 0|0.5 -> 0: flushed; 0 zero
#  B  0 0 0 0              a zero block (scale 1, not in the scale bins)
#  C  6 -5 0.09375 0.1875  X = 1: 6 normal; -5 tie 4|6 -> -4 normal;
#                          both small ones below 0.25 -> 0: 2 flushed
#  D  nan 1 2 0            a NaN block: nan_inf 1, the finite nonzero 1 and
#                          2 dequantize to NaN: overflow 2; 0 zero
#  E  0.75 0.5 0.0625 2^-10  X = 2^(-1-2) = 1/8: quotients 6 4 (normal),
#                          0.5 (subnormal), 2^-7 -> 0 (flushed)
#  F  2^200 2^199 -2^150 1  X = 2^198 beyond e8m0's 2^127: clamped (scale
#                          clamped 1); the three large ones saturate (amax
#                          among them), 1 / 2^127 -> 0: flushed
# Classes: zeros 1+4+1 = 6, nan_inf 1, became_zero 1+2+1+1 = 5,
# subnormal 1, normal 1+2+2 = 5, overflow 1+2+3 = 6: 24 values.
# Events: saturated 1+3 = 4.  Blocks 6, zero 1, NaN 1, scale clamped 1,
# largest saturated 2 (A, F), blocks with a flushed element 4 (A C E F),
# with a saturated one 2 (A F); scales over A C E F: 1/8 .. 2^127;
# bits per value 4 + 8/4 = 6; no tensor scale: 1.
printf '%s\n' 7 1 0.25 0  0 0 0 0  6 -5 0.09375 0.1875  nan 1 2 0 \
	0.75 0.5 0.0625 0x1p-10  0x1p200 0x1p199 -0x1p150 1 >six.txt
want=$(printf '24\t6\t1\t5\t1\t5\t6\t4\t6\t1\t1\t1\t2\t4\t2\t0.125\t1.7014118346046923e+38\t6\t1')
expect_out "mxfp4:4 by hand" "$want" sh -c "fplab hist -f mxfp4:4 --tsv six.txt |
	tsvcut $CLASSES saturated blocks zero_blocks nan_blocks scale_clamped amax_saturated \
	blocks_flushed blocks_saturated min_scale max_scale bits_per_value tensor_scale"
# the same blocks in the general spelling
expect_out "block:e2m1:e8m0:4:floor" "$want" sh -c "fplab hist -f block:e2m1:e8m0:4:floor --tsv six.txt |
	tsvcut $CLASSES saturated blocks zero_blocks nan_blocks scale_clamped amax_saturated \
	blocks_flushed blocks_saturated min_scale max_scale bits_per_value tensor_scale"
# --json: the scale bins 2^-3 (E) .. 2^127 (F), A and C at 2^0; the
# losses per block over the five blocks that are not NaN: flushed
# 0 (B), 1 (A E F), 2 (C); saturated 0 (B C E), 1 (A), 3 (F, bucket 3-4)
fplab hist -f mxfp4:4 --json six.txt >six.json 2>/dev/null
checks=$((checks + 1))
grep -q '"lost_per_block": {"up_to": \[0, 1, 2, 4\], "flushed": \[1, 3, 1, 0\], "saturated": \[3, 1, 0, 1\]}' six.json ||
	fail "mxfp4:4 --json losses per block: $(grep lost_per_block six.json | head -1)"
checks=$((checks + 1))
bins=$(sed -n 's/.*"scale_bins": {"lo": -3, "hi": 127, "counts": \[\([0-9, ]*\)\]}.*/\1/p' six.json | head -1 |
	tr -d ' ' | awk -F, '{ for (i = 1; i <= NF; i++) if ($i != 0) printf "%d:%s ", i - 4, $i }')
[ "$bins" = "-3:1 0:2 127:1 " ] || fail "mxfp4:4 --json scale bins: '$bins'"
# the text view names the same counts
fplab hist -f mxfp4:4 six.txt >six.out 2>/dev/null
checks=$((checks + 1))
grep -q 'blocks 6, 6 bits per value: zero 1  nan 1  scale clamped 1  largest element saturated 2' six.out ||
	fail "text block view: $(grep blocks six.out)"

# the errors of the dequantized values: mxfp4:2 on {3, 1.25}: X = 2^(1-2);
# 3/X = 6 exact; 1.25/X = 2.5, the tie 2|3 -> 2, y = 1: |y-x| = 0.25,
# relative 0.2; means over the two: 0.125 and 0.1
expect_out "errors in x's units" "$(printf '0.2\t0.1\t0.25\t0.125')" sh -c \
	"printf '3 1.25\n' | fplab hist -f mxfp4:2 --tsv | tsvcut max_rel_error mean_rel_error max_abs_error mean_abs_error"

# ------------------------------------------- 2. shapes of a [4, 4] tensor
#   7    1    0.5  0.5
#   0.25 0    0.5  2
#   0    0    6    3
#   0    0    0.25 1
npy t44.npy '<f8' '(4, 4)' 401c000000000000 3ff0000000000000 3fe0000000000000 3fe0000000000000 \
	3fd0000000000000 0000000000000000 3fe0000000000000 4000000000000000 \
	0000000000000000 0000000000000000 4018000000000000 4008000000000000 \
	0000000000000000 0000000000000000 3fd0000000000000 3ff0000000000000
COLS="$CLASSES blocks zero_blocks blocks_flushed blocks_saturated amax_saturated min_scale max_scale"
# 2x2 tiles: {7 1 .25 0} X=1: 7 saturates, .25 flushed; {.5 .5 .5 2} X=1/2:
# 1 1 1 4 normal; {0 0 0 0} zero; {6 3 .25 1} X=1: .25 flushed.
# zeros 5, became_zero 2, normal 1+4+3 = 8, overflow 1
expect_out "2x2 tiles" "$(printf '16\t5\t0\t2\t0\t8\t1\t4\t1\t2\t1\t1\t0.5\t1')" \
	sh -c "fplab hist -f mxfp4:2x2 --tsv t44.npy | tsvcut $COLS"
# rows of 4: {7 1 .5 .5} X=1: sat, normal, two subnormal; {.25 0 .5 2}
# X=1/2: .5 subnormal, 1 4 normal; {0 0 6 3} X=1; {0 0 .25 1} X=1/4: 1 4
# normal.  zeros 5, subnormal 3, normal 1+2+2+2 = 7, overflow 1
want=$(printf '16\t5\t0\t0\t3\t7\t1\t4\t0\t0\t1\t1\t0.25\t1')
expect_out "blocks of 4 along the last axis" "$want" sh -c "fplab hist -f mxfp4:4 --tsv t44.npy | tsvcut $COLS"
expect_out "row" "$want" sh -c "fplab hist -f mxfp4:row --tsv t44.npy | tsvcut $COLS"
# columns (4@0): {7 .25 0 0} X=1: sat, flushed; {1 0 0 0} X=1/4: 4 normal;
# {.5 .5 6 .25} X=1: two subnormal, normal, flushed; {.5 2 3 1} X=1/2:
# 1 4 6 2 normal.  zeros 5, became_zero 2, subnormal 2, normal 6, overflow 1
want=$(printf '16\t5\t0\t2\t2\t6\t1\t4\t0\t2\t1\t1\t0.25\t1')
expect_out "blocks of 4 along axis 0" "$want" sh -c "fplab hist -f mxfp4:4@0 --tsv t44.npy | tsvcut $COLS"
expect_out "col" "$want" sh -c "fplab hist -f mxfp4:col --tsv t44.npy | tsvcut $COLS"
# the whole tensor: X = 1: 7 saturates, .5 .5 .5 subnormal, .25 .25
# flushed, 1 2 6 3 1 normal
expect_out "tensor" "$(printf '16\t5\t0\t2\t3\t5\t1\t1\t0\t1\t1\t1\t1\t1')" \
	sh -c "fplab hist -f mxfp4:tensor --tsv t44.npy | tsvcut $COLS"

# a .fmt file naming a block format is the same format
printf 'name = my4\nblock = mxfp4:4\n' >my4.fmt
checks=$((checks + 1))
fplab hist -f my4.fmt --tsv t44.npy >fmt.tsv 2>&1 && fplab hist -f mxfp4:4 --tsv t44.npy >spec.tsv &&
	cmp -s fmt.tsv spec.tsv || fail "-f my4.fmt differs from -f mxfp4:4: $(cat fmt.tsv)"

# ------------------------------------------------- 3. NVFP4, two levels
# 2.625 = 2688/1024 then 15 zeros; 60/1024 1/1024 13/1024 then 13 zeros.
# s = amax / (448 * 6) = 2^-10 exactly; block 1: X = 2.625 / (6 s) = 448,
# element 6; block 2: X = (60/1024) / (6 s) = 10 (an e4m3fn value):
# elements 6, 0.1 -> 0 (flushed), 1.3 -> 1.5 (y = 15/1024, error 2/1024).
# bits per value 4 + 8/16 + 32/32 = 5.5
{ echo 2.625; for i in $(seq 15); do echo 0; done
  printf '%s\n' 0.05859375 0.0009765625 0.0126953125; for i in $(seq 13); do echo 0; done; } >nv.txt
expect_out "nvfp4 by hand" "$(printf '32\t28\t0\t1\t0\t3\t0\t2\t1\t10\t448\t0.0009765625\t5.5\t0.001953125\t1')" \
	sh -c "fplab hist -f nvfp4 --tsv nv.txt | tsvcut $CLASSES blocks blocks_flushed min_scale max_scale \
	tensor_scale bits_per_value max_abs_error max_rel_error"

# ------------------------------------------ 4. --mx N is block:FMT:e8m0:N
for c in "e4m3fn 32 mxfp8" "e2m1 16 mxfp4:16" "e5m2 32 block:e5m2:e8m0:32:floor" "fp16 8 block:fp16:e8m0:8"; do
	set -- $c
	checks=$((checks + 1))
	fplab hist -f "$1" --mx "$2" --tsv "$SAMPLE" >mx.tsv 2>mx.err &&
		fplab hist -f "$3" --tsv "$SAMPLE" >spec.tsv 2>spec.err &&
		[ "$(wc -l <mx.tsv)" -gt 2 ] && cmp -s mx.tsv spec.tsv ||
		fail "--mx $2 -f $1 differs from -f $3: $(diff mx.tsv spec.tsv | head -5) $(cat mx.err spec.err)"
done
# the text chart too, but for the heading that names the format
fplab hist -f e4m3fn --mx 32 "$SAMPLE" | sed 1d >mx.out
fplab hist -f mxfp8 "$SAMPLE" | sed 1d >spec.out
checks=$((checks + 1))
cmp -s mx.out spec.out || fail "--mx 32 chart differs from mxfp8's: $(diff mx.out spec.out | head -5)"

# ------------------------------------------------- 5. in bands of rows
# blocks within rows and no tensor scale: the tensor goes in bands of
# about 2^20 values; 1x32 tiles of a 1-D tensor are the same blocks, read
# whole: the same numbers (stochastic rounding: the draws continue across
# the bands)
awk 'BEGIN { for (i = 0; i < 1100003; i++) printf "%.6g\n", sin(i) * exp(i % 41 - 20) }' >long.txt
for r in ne sp; do
	checks=$((checks + 1))
	fplab hist -f mxfp4 -r $r --seed 3 --tsv long.txt >band.tsv &&
		fplab hist -f mxfp4:1x32 -r $r --seed 3 --tsv long.txt >whole.tsv &&
		[ "$(tsvcut n <band.tsv)" = 1100003 ] && cmp -s band.tsv whole.tsv ||
		fail "-r $r: bands differ from the whole: $(diff band.tsv whole.tsv | head -4)"
done

# ------------------------------- 6. stochastic rounding, any thread count
checks=$((checks + 1))
fplab hist -f mxfp4 -r sp --seed 7 --threads 1 --tsv "$SAMPLE" >t1.tsv
fplab hist -f mxfp4 -r sp --seed 7 --threads 4 --tsv "$SAMPLE" >t4.tsv
[ -s t1.tsv ] && cmp -s t1.tsv t4.tsv || fail "-r sp: --threads 1 and 4 differ: $(diff t1.tsv t4.tsv | head -4)"
checks=$((checks + 1))
fplab hist -f mxfp4 -r sp --seed 8 --tsv "$SAMPLE" >t8.tsv
! cmp -s t1.tsv t8.tsv || fail "-r sp: seeds 7 and 8 give the same report"

# ------------------------------------------------------------- 7. the SVG
checks=$((checks + 1))
if fplab hist -f nvfp4 --svg nv.svg "$SAMPLE" >/dev/null 2>err; then
	xmllint --noout nv.svg 2>err || fail "nvfp4 SVG is not well-formed: $(head -3 err)"
	grep -q 'format nvfp4, mode ne, scaling block (elements e2m1)' nv.svg ||
		fail "the SVG does not name the block format"
	grep -q 'blocks, scales 2^' nv.svg || fail "the SVG panels lack the block summary"
	render_svgs nv.svg
else
	fail "hist -f nvfp4 --svg: $(cat err)"
fi

# ------------------------------------------------ 8. README's hist example
# the command after "$ " and the two lines it prints, from README.md itself
awk '/^    \$ printf .* fplab hist -f mxfp4/ { sub(/^    \$ /, ""); print > "readme.cmd"; n = 2; next }
	n > 0 { sub(/^    /, ""); print > "readme.want"; n-- }' "$SRCDIR/README.md"
checks=$((checks + 1))
if [ -s readme.cmd ] && [ "$(wc -l <readme.want)" = 2 ]; then
	sh readme.cmd >readme.got 2>&1
	cmp -s readme.want readme.got || fail "README's hist example: got $(cat readme.got)"
else
	fail "README.md has no 'fplab hist -f mxfp4' example"
fi

# ----------------------------------------------------------- 9. bad input
expect_fail "block size 0" 2 "block format 'mxfp4:0': block size '0' must be a positive integer" \
	fplab hist -f mxfp4:0 six.txt
expect_fail "negative block size" 2 "mxfp4:-4" fplab hist -f mxfp4:-4 six.txt
expect_fail "a bad scale format" 2 "scale format 'zz' is not a format" fplab hist -f block:e2m1:zz six.txt
expect_fail "a bad field" 2 "block format 'mxfp4:32:banana'" fplab hist -f mxfp4:32:banana six.txt
expect_fail "--mx 0" 2 "--mx: block size '0' is not a positive integer" fplab hist -f e2m1 --mx 0 six.txt
expect_fail "--mx on a block format" 2 "-f mxfp4: a block format scales each block itself" \
	fplab hist -f mxfp4 --mx 32 six.txt
expect_fail "--aps on a block format" 2 "--aps, --mx, --scale and --loss-scale apply to plain" \
	fplab hist -f nvfp4 --aps six.txt
expect_fail "--scale on a block format" 2 "apply to plain formats" fplab hist -f mxfp8 --scale 2 six.txt
expect_fail "--mx with an element that cannot be one" 2 "'e8m0' cannot be an element format" \
	fplab hist -f e8m0 --mx 4 six.txt
checks=$((checks + 1))
[ ! -s "$T/stdout" ] || fail "a usage error printed a report"
finish
