#!/bin/sh
# SPDX-License-Identifier: MIT
# done_when.sh - the "Done when" lines of issue 3, exactly.  Expected
# values derived by hand:
#  - 1.00048828125 = 1 + 2^-11 is the fp16 tie between 1 and 1 + 2^-10:
#    even -> 1.  65519.99 lies below the overflow threshold 65520 (the
#    midpoint of 65504 and 2^16) -> 65504 = 0x1.ffcp+15; 65520 is the tie
#    and rounds to the "even" 2^16 -> overflow -> inf.  2^-25 is the tie
#    between 0 and 2^-24 -> even -> 0; 3e-8 > 2^-25 -> 2^-24.
#  - e4m3fn: 464 is the midpoint of 448 = 1.110b * 2^8 (even fraction) and
#    480 = 1.111b * 2^8 (quantum 32 at 2^8) -> 448 = 0x1.cp+8; 465 rounds
#    up to 480 > max 448 -> overflow -> NaN (no inf); -1e300 -> NaN.
#    Saturating, 464 -> 448 = S.1111.110 = 0x7e.
#  - 0.1 = 1.1001100110011...b * 2^-4 truncated to 8 bits of precision:
#    1.1001100b * 2^-4 = 0x1.98p-4 (round toward zero, code 4).
#  - 1 + 2^-11 in fp16 ties-away -> 1 + 2^-10 = 0x1.004p+0.
#  - 1 + (-1) = exact zero, -0 in round toward -inf.
. "$(dirname "$0")/lib.inc"

expect_out "fp16 ne hex" "$(printf '0x1p+0\n0x1.ffcp+15\ninf\n0x0p+0\n0x1p-24')" \
	sh -c "printf '1.00048828125\n65519.99\n65520\n2.98023223876953125e-08\n3e-8\n' | fplab round -f fp16 -r ne --out hex"
# e4m3fn's NaN S.1111.111 printed with its sign and binary64 payload
expect_out "e4m3fn overflow" "$(printf '0x1.cp+8\nnan(0x6000000000000)\n-nan(0x6000000000000)')" \
	sh -c "printf '464\n465\n-1e300\n' | fplab round -f e4m3fn -r ne --out hex"
expect_out "e4m3fn saturation bits" "0x7e" \
	sh -c "printf '464\n' | fplab round -f e4m3fn -r ne --saturation 1 --out bits"
expect_out "bf16 rz code 4" "0x1.98p-4" \
	sh -c "printf '0.1\n' | fplab round -f b -r 4 --out hex"
expect_out "calc add na" "0x1.004p+0" \
	sh -c "printf '0x1p+0 0x1p-11\n' | fplab calc add -f fp16 -r na --out hex"
expect_out "calc add tn zero" "-0x0p+0" \
	sh -c "printf '0x1p+0 -0x1p+0\n' | fplab calc add -f fp16 -r tn --out hex"
expect_fail "abc exits 1 naming token and line" 1 "line 1: 'abc' is not a number" \
	sh -c "printf 'abc\n' | fplab round -f fp16"

finish
