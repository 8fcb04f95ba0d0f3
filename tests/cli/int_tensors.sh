#!/bin/sh
# SPDX-License-Identifier: MIT
# int_tensors.sh - integer tensors in round, hist and calc (issue 23 item
# 8): every integer converted exactly and rounded once into the target
# format (an int64 beyond 2^53 is not rounded to binary64 first); round -o
# writes binary64 for them; and the one rule for '|u1' and '<u2' (uint8
# and uint16, or raw codes of a type numpy lacks): refused without --dtype
# in every command, with the hint.  Files from numpy; expected values by
# hand (each derivation beside its check).
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1

need_numpy
"$PYTHON" -c 'import numpy as np
np.save("i4.npy", np.arange(-5, 7, dtype="<i4"))
np.save("i4be.npy", np.arange(-5, 7, dtype=">i4"))
np.save("big.npy", np.array([2**53 + 1, -(2**53 + 1)], dtype="<i8"))
np.save("huge.npy", np.array([2**60 + 1], dtype="<i8"))
np.save("tie32.npy", np.array([2**53 + 2**29 + 1], dtype=">i8"))
np.save("u8max.npy", np.array([2**64 - 1], dtype="<u8"))
np.save("h.npy", np.array([0, 1, -3, 70000, 2**20], dtype="<i4"))
np.save("u1.npy", np.array([0x38, 255], dtype=np.uint8))
np.save("u2.npy", np.array([0x3f80, 65535], dtype=np.uint16))
np.savez("z.npz", a=np.arange(-2, 2, dtype="<i2"), b=np.array([7, 4294967295], dtype=">u4"))
np.save("f.npy", np.ones(2))'

# -5..6 in fp16: the same as the numbers given as text, either byte order
seq -5 6 >i.txt
want=$(fplab round -f fp16 i.txt)
expect_out "int32 .npy = the same text" "$want" fplab round -f fp16 i4.npy
expect_out "big-endian int32 .npy" "$want" fplab round -f fp16 i4be.npy
expect_out "calc add of int32 tensors" "$(seq -10 2 12)" fplab calc add -f fp16 i4.npy i4.npy

# 2^53+1 = 9007199254740993 lies halfway between the binary64 neighbours
# 2^53 and 2^53+2: toward +inf gives 2^53+2, nearest-even 2^53 (the even
# significand); -(2^53+1) toward -inf gives -(2^53+2).  Rounded to
# binary64 first, tp would see 2^53 and keep it.
expect_out "int64 2^53+1 in fp64 tp" "$(printf '9007199254740994\n-9007199254740992')" \
	fplab round -f fp64 -r tp big.npy
expect_out "int64 2^53+1 in fp64 ne" "$(printf '9007199254740992\n-9007199254740992')" \
	fplab round -f fp64 -r ne big.npy
expect_out "int64 -(2^53+1) in fp64 tn" "$(printf '9007199254740992\n-9007199254740994')" \
	fplab round -f fp64 -r tn big.npy
# 2^53 + 2^29 + 1 in fp32 (ulp 2^30 there): above the halfway point
# 2^53 + 2^29, so up to 2^53 + 2^30 = 9007200328482816.  Through binary64
# first it becomes the tie 2^53 + 2^29 (nearest-even), which fp32's ne
# sends down to 2^53: the double rounding this test rules out.
expect_out "int64 rounded once into fp32" "9007200328482816" fplab round -f fp32 tie32.npy
# 2^64-1 toward zero into binary64: 2^64 - 2^11, 53 ones: 0x1.fffffffffffffp+63
expect_out "uint64 max in fp64 tz" "0x1.fffffffffffffp+63" fplab round -f fp64 -r tz --out hex u8max.npy
# 2^60+1 overflows fp16 (max 65504): +inf, one overflow counted
expect_out "int64 2^60+1 overflows fp16" "$(printf 'inf\n1\t1\t1')" sh -c \
	"fplab round -f fp16 huge.npy && fplab round -f fp16 --stats --no-values --tsv huge.npy | tsvcut n overflow inexact"

# .npz members: int16 -2..1, big-endian uint32 7 and 2^32-1 (bf16: 2^32)
expect_out ".npz integer members in bf16" "$(printf -- '-2\n-1\n0\n1\n7\n4294967296')" \
	fplab round -f bf16 z.npz

# round -o: an integer tensor comes back as binary64 (its dtype cannot
# hold rounded values), with its name and shape
fplab round -f fp16 -o o.npy i4.npy 2>err || fail "round -o: $(cat err)"
checks=$((checks + 1))
"$PYTHON" -c 'import numpy as np, sys
a = np.load("o.npy")
sys.exit(0 if a.dtype == np.float64 and a.shape == (12,) and list(a) == list(range(-5, 7)) else 1)' ||
	fail "round -o of an int32 .npy: not binary64 -5..6"
expect_out "round --out-dtype f32 of int32" "float32" sh -c \
	"fplab round -f fp16 --out-dtype f32 -o o32.npy i4.npy && $PYTHON -c 'import numpy as np; print(np.load(\"o32.npy\").dtype)'"

# hist in fp16 of {0, 1, -3, 70000, 2^20}: zero 1; normal 1 and -3;
# 70000 and 2^20 above 65504 overflow
expect_out "hist of an int32 tensor" "$(printf 'int32\t5\t1\t2\t0\t2')" sh -c \
	"fplab hist -f fp16 --tsv h.npy | tsvcut dtype n zeros normal subnormal overflow"
# hist rounds 2^53+1 once: inexact in fp64 (it is not a binary64 value)
expect_out "hist of int64 2^53+1 in fp64" "$(printf '2\t2\t0')" sh -c \
	"fplab hist -f fp64 --tsv big.npy | tsvcut n inexact overflow"

# '|u1' and '<u2': integers or raw codes, said with --dtype
expect_out "|u1 --dtype uint8" "$(printf '56\n255')" fplab round -f fp32 --dtype uint8 u1.npy
expect_out "|u1 --dtype e4m3fn (0x38 = 1, 0xff = NaN)" "$(printf '1\n-nan')" sh -c \
	"fplab round -f fp32 --dtype e4m3fn u1.npy | sed 's/^nan$/-nan/'"
expect_out "<u2 --dtype uint16" "$(printf '16256\n65535')" fplab round -f fp32 --dtype uint16 u2.npy
expect_out "<u2 --dtype uint16 in hist" "$(printf 'uint16\t2')" sh -c \
	"fplab hist -f fp32 --dtype uint16 --tsv u2.npy | tsvcut dtype normal"
expect_fail "--dtype int8 on |u1" 1 "--dtype int8 does not apply" fplab round --dtype int8 u1.npy
expect_fail "--out-dtype int32" 2 "unknown dtype 'int32'" fplab round -o x.npy --out-dtype int32 i4.npy
hint='holds raw codes of a type numpy lacks .*uint8'
expect_fail "round |u1" 1 "u1.npy: dtype '\|u1' $hint integers; say which with --dtype e4m3fn\|e5m2\|uint8" \
	fplab round u1.npy
expect_fail "hist |u1" 1 "u1.npy: dtype '\|u1' $hint" fplab hist u1.npy
expect_fail "calc |u1" 1 "u1.npy: dtype '\|u1' $hint" fplab calc add u1.npy u1.npy
expect_fail "dot |u1" 1 "u1.npy.*'\|u1' $hint" fplab dot -a u1.npy -b u1.npy
expect_fail "gemm <u2" 1 "u2.npy.*'<u2' holds raw codes of a type numpy lacks .*uint16" \
	fplab gemm -a u2.npy -b u2.npy
expect_fail "reduce |u1" 1 "u1.npy.*'\|u1' $hint" fplab reduce sum -x u1.npy
expect_fail "allreduce |u1" 1 "u1.npy.*'\|u1' $hint" fplab allreduce --inputs u1.npy,u1.npy
expect_fail "optim |u1" 1 "u1.npy.*'\|u1' $hint" fplab optim --init f.npy -g u1.npy

finish
