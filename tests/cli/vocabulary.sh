#!/bin/sh
# SPDX-License-Identifier: MIT
# vocabulary.sh - one vocabulary, said plainly (issue 10, point 3, and
# --tininess of point 6): names that mean different formats in different
# tools, bf16's subnormals, saturation and infinities, --explim 0 with
# --infinity 0, messages for unknown values, -p without --flip, the
# overflow line of `fplab formats`, and --tininess.  Every expected value
# is derived in the comment above its check.
. "$(dirname "$0")/lib.inc"

# max of `fplab formats ARGS` (the decimal before the parenthesis)
fmax() { fplab formats "$@" | awk '$1 == "max" { print $2 }'; }

# --- q43 / E4M3: three formats.
# OCP e4m3fn: bias 7, top binade 15-7 = 8 holds finite values but its
# all-ones fraction is NaN: max = 1.110b * 2^8 = 1.75 * 256 = 448.
expect_out "q43 is OCP e4m3fn" "448" fmax q43
# CPFloat's E4M3 preset p = 4, emin = -6, emax = 8, inf at the top:
# max = (2 - 2^-3) * 2^8 = 1.875 * 256 = 480.
expect_out "CPFloat 4,-6,8" "480" fmax --params 4,-6,8
# chop: t = 4, emax = 7, emin = 1 - 7 = -6: max = 1.875 * 2^7 = 240, the
# IEEE-style e4m3ieee.
expect_out "chop 4,7" "240" fmax --params 4,7
expect_out "chop 4,7 emin" "-6" sh -c "fplab formats --params 4,7 | awk '\$1 == \"emin\" { print \$2 }'"
expect_out "e4m3ieee" "240" fmax e4m3ieee
# chop's half: t = 11, emax = 15 -> fp16, max 65504
expect_out "chop 11,15" "65504" fmax --params 11,15
# `fplab formats q43` shows the three side by side, each max computed.
fplab formats q43 >"$T/q43"
checks=$((checks + 1))
grep -q 'CPFloat.*--params 4,-6,8.*max 480' "$T/q43" &&
	grep -q 'chop.*--params 4,7.*max 240' "$T/q43" &&
	grep -q 'fplab.*-f e4m3fn.*max 448' "$T/q43" ||
	fail "formats q43 does not show the three meanings: $(cat "$T/q43")"
# rounding with chop's spelling: 247 lies below the tie 248 between 240
# and 256 -> 240; 250 rounds to 256 > max: overflow to inf (ne).
expect_out "round --params 4,7" "240 inf" sh -c 'echo 247 250 | fplab round --params 4,7'
expect_fail "--params with one number" 2 "P,EMIN,EMAX \\(CPFloat\\) or T,EMAX \\(chop\\)" \
	fplab formats --params 4

# --- bf16 subnormals: off by default (chop, CPFloat), said where seen.
# min_subnormal = min_normal = 2^-126 = 1.1754943508222875e-38 in both
# the catalogue row (TSV column 9) and the single view (column 19).
expect_out "catalogue bf16 min_subnormal" "1.1754943508222875e-38" \
	sh -c "fplab formats --tsv | awk -F '\t' '\$1 == \"bf16\" { print \$9 }'"
expect_out "formats bf16 min_subnormal" "1.1754943508222875e-38" \
	sh -c "fplab formats --tsv bf16 | awk -F '\t' 'NR == 2 { print \$19 }'"
# with --subnormal 1: 2^-126 * 2^-7 = 2^-133 = 9.183549615799121e-41
expect_out "bf16 --subnormal 1" "9.183549615799121e-41" \
	sh -c "fplab formats --tsv --subnormal 1 bf16 | awk -F '\t' 'NR == 2 { print \$19 }'"
checks=$((checks + 1))
fplab formats bf16 | grep -q '^note .*PyTorch and ml_dtypes' ||
	fail "formats bf16 has no note for PyTorch/ml_dtypes users"
checks=$((checks + 1))
fplab formats | grep -q '^bf16 .*\*' && fplab formats | grep -q '^\* bf16: no subnormals' ||
	fail "the catalogue does not mark bf16's missing subnormals"
checks=$((checks + 1))
fplab formats --subnormal 1 bf16 | grep -q '^note' &&
	fail "formats bf16 --subnormal 1 still has the note"

# --- saturation and infinities (SEMANTICS.md "Saturation and infinities").
# --saturation 1 (OCP OFP8 saturation, CPFloat): inf -> +-max, 1e9 -> max.
expect_out "fp16 --saturation 1" "65504 -65504 65504" \
	sh -c 'echo inf -inf 1e9 | fplab round --saturation 1'
# e5m2: max (2 - 2^-2) 2^15 = 57344
expect_out "e5m2 --saturation 1" "57344 -57344" \
	sh -c 'echo inf -inf | fplab round -f e5m2 --saturation 1'
# --saturation 2: overflow saturates, an infinity stays infinite.
expect_out "fp16 --saturation 2" "inf -inf 65504" \
	sh -c 'echo inf -inf 1e9 | fplab round --saturation 2'
# e4m3fn has no inf: both saturating rules give 448; without: NaN.
expect_out "e4m3fn saturation" "448
448
nan" \
	sh -c 'echo inf | fplab round -f e4m3fn --saturation 1; echo inf | fplab round -f e4m3fn --saturation 2; echo inf | fplab round -f e4m3fn'
# an exact infinite result: 1/0 gives max with divbyzero and saturated.
expect_out "1/0 saturating" "65504 divbyzero,saturated" \
	sh -c 'echo 1 0 | fplab calc div --flags --saturation 1'
expect_out "1/0 keep-inf" "inf divbyzero" \
	sh -c 'echo 1 0 | fplab calc div --flags --saturation 2'
expect_fail "--saturation 3" 2 "'3' is not an integer in 0..2" fplab round --saturation 3

# --- --explim 0 --infinity 0: binary64's range, fp16 precision, no inf.
# 1e300 = 0x1.7e43c8800759cp+996; 10 fraction bits: 0x1.7e4|3c8... -> down.
# inf has no code: NaN; saturating: max = (2 - 2^-10) 2^1023 = 0x1.ffcp+1023.
expect_out "explim 0 infinity 0" "0x1.7e4p+996" \
	sh -c 'echo 1e300 | fplab round --explim 0 --infinity 0 --out hex'
expect_out "explim 0 infinity 0: inf" "nan" \
	sh -c 'echo inf | fplab round --explim 0 --infinity 0'
expect_out "explim 0 infinity 0 saturating" "0x1.ffcp+1023" \
	sh -c 'echo inf | fplab round --explim 0 --infinity 0 --saturation 1 --out hex'
expect_out "formats explim 0 infinity 0" "1.796815355011309e+308" fmax --explim 0 --infinity 0

# --- unknown values: a suggestion or the list.
expect_fail "-r xx lists the modes" 2 "unknown rounding mode 'xx'; the modes.*ne nearest.*od round to odd \\(7\\)" \
	fplab round -r xx
expect_fail "-r nearest lists the modes" 2 "unknown rounding mode 'nearest'; the modes.*tz toward zero \\(4\\)" \
	fplab round -r nearest
expect_fail "-r nee suggests ne" 2 "did you mean 'ne'\\?" fplab round -r nee
expect_fail "--tininess sometimes" 2 "'sometimes' is not before or after" fplab round --tininess sometimes
# -p without --flip: an error, not ignored; with --flip 1 it runs.
expect_fail "-p without --flip" 2 "-p PROB needs --flip 1 or 2" fplab round -p 0.5
expect_out "-p with --flip" "1" sh -c 'echo 1 | fplab round -p 0 --flip 1'

# --- the overflow line of `fplab formats`.
expect_out "e4m3fn overflow" "overflow       nan (no infinity)" \
	sh -c "fplab formats e4m3fn | grep '^overflow'"
expect_out "fp16 overflow" "overflow       inf" sh -c "fplab formats fp16 | grep '^overflow'"
expect_out "fp16 saturating" "overflow       saturate" \
	sh -c "fplab formats --saturation 1 fp16 | grep '^overflow'"
expect_out "fp16 keep-inf" "overflow       saturate-keep-inf" \
	sh -c "fplab formats --saturation 2 fp16 | grep '^overflow'"
expect_out "e2m1 overflow" "overflow       saturate" sh -c "fplab formats e2m1 | grep '^overflow'"

# --- --tininess before|after.
# x = 0x1.ffep-15 = 2^-15 (2 - 2^-11) lies below 2^-14.  Rounded to
# fp16's 11 bits with unbounded exponent it is a tie (1.1111111111|1),
# and ne goes up to 2^-14: not tiny after rounding, so only inexact;
# tiny before rounding, and inexact: underflow as well.
expect_out "tininess after" "0x1p-14 inexact" \
	sh -c 'echo 0x1.ffep-15 0 | fplab calc add --flags --out hex'
expect_out "tininess before" "0x1p-14 inexact,underflow" \
	sh -c 'echo 0x1.ffep-15 0 | fplab calc add --flags --out hex --tininess before'
expect_out "formats --tininess before" "tininess       before" \
	sh -c "fplab formats --tininess before fp16 | grep '^tininess'"

# --- --subnormal ftz: x86 flush to zero (the .fmt file's subnormal = ftz).
# fp16: min normal 2^-14 = 6.103515625e-05.  1e-6 rounds to a subnormal
# (17 * 2^-24), tiny: flushed to 0.  0x1.ffep-15 is not tiny after
# rounding (the tie above goes up to 2^-14), so it stays 2^-14, and
# --tininess before flushes it.  -2^-30 flushes to -0.  With --subnormal 1
# the first is 17 * 2^-24 = 0x1.1p-20.
expect_out "ftz flushes" "0x0p+0 inexact,underflow,flushed 0x1p-14 inexact -0x0p+0 inexact,underflow,flushed" \
	sh -c 'echo 1e-6 0x1.ffep-15 -0x1p-30 | fplab round -f fp16 --subnormal ftz --flags --out hex | paste -s -d " " -'
expect_out "ftz, tininess before" "0x0p+0 inexact,underflow,flushed" \
	sh -c 'echo 0x1.ffep-15 | fplab round -f fp16 --subnormal ftz --tininess before --flags --out hex'
expect_out "subnormal 1" "0x1.1p-20 inexact,underflow" \
	sh -c 'echo 1e-6 | fplab round -f fp16 --subnormal 1 --flags --out hex'
printf 'e = 5\nm = 10\nsubnormal = ftz\n' >"$T/ftz.fmt"
expect_out "ftz as the .fmt file" "$(echo 1e-6 6.1e-5 -0x1p-30 0.5 | fplab round -f "$T/ftz.fmt" --flags)" \
	sh -c 'echo 1e-6 6.1e-5 -0x1p-30 0.5 | fplab round -f fp16 --subnormal ftz --flags'
expect_out "formats --subnormal ftz" "subnormal      ftz" \
	sh -c "fplab formats --subnormal ftz fp16 | grep '^subnormal'"
expect_fail "--subnormal maybe" 2 "--subnormal: 'maybe' is not 0, 1 or ftz" \
	fplab round --subnormal maybe
finish
