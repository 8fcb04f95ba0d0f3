#!/bin/sh
# SPDX-License-Identifier: MIT
# nan_text.sh - NaNs written with their bits (issue 10, point 6): text
# input reads nan(P), snan(P), snan with a sign; --out hex prints a NaN's
# sign and payload so it reads back; a signalling NaN operand raises
# invalid in calc.  Expected bits by hand: binary64 quiet NaN = 0x7ff8...
# | P, signalling = 0x7ff0... | P, sign at bit 63.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

expect_out "round trip through --out hex (fp64 keeps payloads; rounding quiets)" \
	"$(printf 'nan(0x5)\n-nan\nnan(0x4000000000)\n-nan(0x7)')" sh -c \
	"printf 'nan(0x5)\n-nan\nsnan(0x4000000000)\n-snan(7)\n' | fplab round -f fp64 --out hex"
expect_out "fp64 bits" "$(printf '0x7ff8000000000005\n0xfff8000000000007\n0xffffffffffffffff')" sh -c \
	"printf 'nan(5)\n-snan(0x7)\n-nan(0x7ffffffffffff)\n' | fplab round -f fp64 --out bits"
expect_out "snan is invalid in calc" "nan invalid" sh -c \
	"printf 'snan 1\n' | fplab calc add -f fp16 --flags"
expect_out "a quiet NaN is not" "nan -" sh -c \
	"printf 'nan(0x5) 1\n' | fplab calc add -f fp16 --flags"
# Every binary input path carries a value's bits: a signalling NaN read
# from f32 (0x7fa00000), bf16 (0x7fa0), f16 (0x7d00) and an .npy of f4 stays
# signalling, so using it raises invalid (a C float-to-double conversion
# quietened it, and the flag was lost).
printf '\000\000\240\177' >snan.f32
printf '\240\177' >snan.bf16
printf '\000\175' >snan.f16
printf '\000\000\200\077' >one.f32
printf '\200\077' >one.bf16
printf '\000\074' >one.f16
for k in f32 bf16 f16; do
	expect_out "--in $k keeps a signalling NaN" "nan invalid" \
		fplab calc add -f fp16 --flags --in $k snan.$k one.$k
done
{ printf '\223NUMPY\001\000\166\000'
  printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
  printf '\000\000\240\177'; } >snan.npy
# rounding is an operation: it quietens, keeping the payload
expect_out "an .npy of f4: payload kept" "nan(0x4000000000000)" fplab round -f fp64 --out hex snan.npy
expect_out "and using it raises invalid" "invalid" sh -c \
	"fplab calc add -f fp32 --flags --in npy snan.npy snan.npy | cut -d' ' -f2"
expect_fail "snan(0) would be an infinity" 1 "'snan\\(0\\)' is not a number" \
	sh -c "echo 'snan(0)' | fplab round"
expect_fail "a payload wider than 51 bits" 1 "is not a number" \
	sh -c "echo 'nan(0x8000000000000)' | fplab round"
finish
