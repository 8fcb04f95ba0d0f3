#!/bin/sh
# SPDX-License-Identifier: MIT
# io.sh - binary and .npy input and output, -o, streaming in bounded
# memory, and stochastic results independent of chunking and threads.
# Byte patterns are written out by hand (little-endian IEEE encodings).
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

hexdump_() { od -An -v -tx1 "$@" | tr -d ' \n'; }

# 0.1 as f64 (0x3fb999999999999a) -> fp16 -> 1638*2^-14 = 0x3fb9980000000000
printf '\232\231\231\231\231\231\271\077' >tenth.f64
fplab round --in f64 --out f64 tenth.f64 >out.f64
checks=$((checks + 1))
[ "$(hexdump_ out.f64)" = 000000000098b93f ] || fail "f64 -> f64: $(hexdump_ out.f64)"

# raw f32, f16, bf16 in
printf '\000\000\200\077\000\000\300\277' >in.f32		# 1.0f, -1.5f
expect_out "--in f32" "$(printf '1\n-1.5')" fplab round --in f32 in.f32
printf '\000\074\000\300' >in.f16				# 0x3c00 = 1, 0xc000 = -2
expect_out "--in f16" "$(printf '1\n-2')" fplab round --in f16 in.f16
printf '\200\077\311\100' >in.bf16				# 0x3f80 = 1, 0x40c9 = 6.28125
expect_out "--in bf16" "$(printf '1\n6.28125')" fplab round --in bf16 in.bf16
expect_out "--in f16 from stdin" "$(printf '1\n-2')" sh -c "fplab round --in f16 - <in.f16"

# codes of the target format: e4m3fn 0x38 = 1, 0x7e = 448, 0xff = -NaN
printf '\070\176\377' >codes.bin
expect_out "--in codes e4m3" "$(printf '0x38\n0x7e\n0xff')" fplab round -f e4m3 --in codes --out bits codes.bin
expect_out "--in codes value" "$(printf '1\n448\nnan')" fplab round -f e4m3 --in codes codes.bin

# --out f32 and bits
echo 1.5 | fplab round --out f32 >o.f32
checks=$((checks + 1))
[ "$(hexdump_ o.f32)" = 0000c03f ] || fail "--out f32: $(hexdump_ o.f32)"
expect_out "--out bits fp16" "0x3c00 0x7bff 0xfc00 0x0001" \
	sh -c "echo 1 65504 -inf 0x1p-24 | fplab round --out bits"

# --out npy: from text (count unknown: spooled) and from f64 (count known)
printf '1 2\n' | fplab round --out npy >a.npy
printf '\0\0\0\0\0\0\360\077\0\0\0\0\0\0\0\100' >two.f64
fplab round --in f64 --out npy -o b.npy two.f64
checks=$((checks + 1))
cmp -s a.npy b.npy || fail "npy from text and from f64 differ"
checks=$((checks + 1))
[ "$(head -c 6 a.npy | od -An -c | tr -d ' ')" = '223NUMPY' ] || fail "npy magic: $(head -c 6 a.npy | od -An -c)"
expect_out "npy reads back" "$(printf '1\n2')" fplab round --in npy a.npy
checks=$((checks + 1))
[ "$(tail -c 16 a.npy | hexdump_)" = 000000000000f03f0000000000000040 ] || fail "npy data"

# -o: written atomically, no temporary left
echo 0.1 | fplab round -o res.txt
expect_out "-o content" "0.0999755859375" cat res.txt
checks=$((checks + 1))
[ "$(ls | grep -c 'res.txt.tmp')" = 0 ] || fail "temporary left after -o"

# calc on parallel binary files: 1+1, 2+2 in f64
fplab calc add --in f64 --out hex two.f64 two.f64 >sum.txt
expect_out "calc on f64 files" "$(printf '0x1p+1\n0x1p+2')" cat sum.txt
fplab calc add --in f64 --out npy -o sum.npy two.f64 two.f64
expect_out "calc --out npy" "$(printf '2\n4')" fplab round --in npy sum.npy

# calc on parallel .npy files; fma on three text files read in parallel
fplab round --in f64 --out npy -o two.npy two.f64
expect_out "calc mul on npy files" "$(printf '1\n4')" fplab calc mul --in npy two.npy two.npy
printf '1\n2\n' >a.txt; printf '3 4\n' >b.txt; printf '0.5\n-8\n' >c.txt
expect_out "calc fma on parallel text files" "$(printf '3.5\n0')" fplab calc fma a.txt b.txt c.txt
expect_out "round several files in turn" "$(printf '1\n2\n3 4')" fplab round a.txt b.txt

# stochastic rounding: element j uses draw j whatever the chunking or threads
awk 'BEGIN { for (i = 0; i < 150000; i++) printf "%.17g\n", 1 + i * 1e-7 }' >many.txt
fplab round -f fp64 --out f64 many.txt >many.f64
fplab round -r sp --seed 5 --out hex many.txt >sr_text.txt
fplab round -r sp --seed 5 --out hex --in f64 many.f64 >sr_bin.txt
fplab round -r sp --seed 5 --out hex --in f64 --threads 2 many.f64 >sr_thr.txt
checks=$((checks + 1))
cmp -s sr_text.txt sr_bin.txt || fail "stochastic rounding depends on the input chunking"
checks=$((checks + 1))
cmp -s sr_bin.txt sr_thr.txt || fail "stochastic rounding depends on --threads"
checks=$((checks + 1))
[ "$(wc -l <sr_text.txt)" -eq 150000 ] || fail "stochastic output length"
checks=$((checks + 1))
[ "$(sort -u sr_text.txt | wc -l)" -gt 1 ] || fail "stochastic output constant"
# exact values never move in stochastic modes
expect_out "sp keeps exact values" "1 0.5 -3" sh -c "echo 1 0.5 -3 | fplab round -r sp --seed 9"
expect_out "se keeps exact values" "1 0.5 -3" sh -c "echo 1 0.5 -3 | fplab round -r 6 --seed 9"

# bounded memory: 8x more binary input must not need much more memory
if [ -x /usr/bin/time ]; then
	head -c 8388608 /dev/zero >small.f64
	head -c 67108864 /dev/zero >big.f64
	/usr/bin/time -f %M -o rss1 fplab round --in f64 --out f64 small.f64 >/dev/null
	/usr/bin/time -f %M -o rss2 fplab round --in f64 --out f64 big.f64 >/dev/null
	checks=$((checks + 1))
	r1=$(tail -n 1 rss1) r2=$(tail -n 1 rss2)
	[ $((r2 - r1)) -lt 16384 ] || fail "memory grows with input: ${r1} KiB -> ${r2} KiB"
	/usr/bin/time -f %M -o rss3 fplab round --in f64 --out npy big.f64 >/dev/null
	checks=$((checks + 1))
	r3=$(tail -n 1 rss3)
	[ $((r3 - r1)) -lt 16384 ] || fail "npy output memory grows: ${r1} KiB -> ${r3} KiB"
	rm -f small.f64 big.f64
fi
finish
