#!/bin/sh
# SPDX-License-Identifier: MIT
# native.sh - `--backend native|both` of gemm, dot and round: the CPU's
# kernel beside its emulated twin with 0 mismatches (on inputs with
# NaNs, infinities, -0, subnormals and overflow, from files and from
# generators), -o writing the native result, `fplab info`'s native rows,
# and every refusal with its message: no profile, a profile without a
# kernel, a changed profile, a sweep, -o with both, an input that is not a
# binary32 value, a kernel this CPU or FPLAB_KERNELS does not allow.
# The comparisons of a kernel this CPU cannot run are skipped, each
# with a line naming it.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# usable NAME: the native kernel NAME runs here (fplab info says yes)
usable() {
	fplab info --tsv | grep -q "^native_$1	yes"
}

# col FILE BACKEND COLUMN: COLUMN of BACKEND's row in a TSV report
col() {
	awk -F '\t' -v b="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		$k["backend"] == b { print $k[c] }' "$1"
}

# zero_mismatches WHAT FILE: both rows say mismatches 0
zero_mismatches() {
	checks=$((checks + 1))
	if [ "$(col "$2" native mismatches)" != 0 ] || [ "$(col "$2" emu mismatches)" != 0 ]; then
		fail "$1: mismatches are not 0"
		sed 's/^/  /' "$2" >&2
	fi
}

# --- fplab info lists every kernel of the registry
checks=$((checks + 1))
for k in f16c fma32 fma32-avx512 avx512bf16-cvt avx512bf16 amx-bf16 avx512fp16 avx512fp16-arith; do
	fplab info --tsv | grep -q "^native_$k	\(yes\|no\)" || fail "fplab info has no row native_$k"
done

# --- gemm and dot on the CPU's binary32 fma
if usable fma32; then
	fplab gemm -m 37 -n 45 -k 333 --gen normal:0,1 --seed 3 --profile fp32-fma \
		--backend both --threads 2 --tsv > g.tsv || fail "gemm --backend both failed"
	zero_mismatches "gemm fp32-fma" g.tsv
	# specials from files: NaN payloads, inf * 0, -0, a subnormal, overflow
	printf '1\n2\nnan\ninf\n-0\n3.5\n0x1p-140\n-7\n0x1p100\n' > x.txt
	printf '1\n-inf\n0.5\n2\n0x1p100\n-0\n4\n0x1p100\n0x1p100\n' > y.txt
	fplab dot -a x.txt -b y.txt --profile fp32-fma --backend both --tsv > d.tsv \
		|| fail "dot --backend both failed"
	zero_mismatches "dot fp32-fma with specials" d.tsv
	printf '0x1p-149\n1\n' > s.txt
	printf '0x1p-149\n0x1p-149\n' > t.txt
	fplab dot -a s.txt -b t.txt --profile fp32-fma --backend both --tsv > d2.tsv \
		|| fail "dot --backend both (subnormals) failed"
	zero_mismatches "dot fp32-fma subnormals" d2.tsv
	# -o writes the native result: the same bits as the emulation's -o
	fplab gemm -m 5 -n 7 -k 9 --gen uniform:-1,1 --profile fp32-fma --backend native \
		-o cn.txt > /dev/null || fail "gemm --backend native -o failed"
	fplab gemm -m 5 -n 7 -k 9 --gen uniform:-1,1 --profile fp32-fma -o ce.txt > /dev/null
	checks=$((checks + 1))
	cmp -s cn.txt ce.txt || fail "gemm -o: native and emulated results differ"
	expect_fail "a changed profile" 1 "changed the profile fp32-fma" \
		fplab gemm -m 4 -n 4 -k 4 --gen ones --profile fp32-fma --acc bf16 --backend native
	expect_fail "a decimal binary64 cannot hold" 1 \
		"-a u.txt: element 0 .*nearest 0\.1.*the native kernel takes binary32 values" \
		sh -c "printf '0.1\n1\n' > u.txt && fplab dot -a u.txt -b u.txt --profile fp32-fma --backend native"
	expect_fail "not a binary32 value" 1 "x\[0\] = 0.1.* is not a binary32 value" \
		sh -c "printf '0x1.999999999999ap-4\n1\n' > h.txt && fplab dot -a h.txt -b h.txt --profile fp32-fma --backend native"
	expect_fail "FPLAB_KERNELS=ref turns native kernels off" 1 "kernel set in use is ref" \
		env FPLAB_KERNELS=ref fplab gemm -m 4 -n 4 -k 4 --gen ones --profile fp32-fma \
		--backend native
else
	echo "native.sh: skip the fma32 comparisons: $(fplab info --tsv | grep '^native_fma32' | cut -f2)"
fi

# --- round on F16C
if usable f16c; then
	printf '1\n0.3333333432674407958984375\n65504\n65520\n0x1.8p-20\n-0\nnan\n-inf\n0x1p-149\n-0x1.ffep-15\n0x1.0001p-24\n' > r.txt
	for mode in ne tn tp tz; do
		fplab round -f fp16 -r $mode --backend both --tsv r.txt > r.tsv \
			|| fail "round -r $mode --backend both failed"
		zero_mismatches "round fp16 $mode" r.tsv
	done
	# 10^5 generated binary32 values: the emulated and native values agree
	# (binary: a text file's shortest decimals are not binary32 values
	# exactly, and round reads decimals exactly)
	fplab gemm -m 1 -n 100000 -k 1 --gen normal:0,1000 --profile fp32-fma -o v.npy > /dev/null
	fplab round -f fp16 -r tz --backend both --tsv v.npy > v.tsv || fail "round 10^5 failed"
	zero_mismatches "round fp16 tz on 10^5 values" v.tsv
	fplab round -f fp16 -r tn --backend native r.txt > rn.txt 2>/dev/null || fail "round --backend native"
	fplab round -f fp16 -r tn r.txt > re.txt
	checks=$((checks + 1))
	cmp -s rn.txt re.txt || fail "round: native and emulated values differ"
	expect_fail "a mode the conversion lacks" 1 "has the modes ne tn tp tz, not -r na" \
		fplab round -f fp16 -r na --backend both r.txt
	expect_fail "round: not a binary32 value" 1 "input 1.*is not a binary32 value" \
		sh -c "printf '0.1\n' | fplab round -f fp16 --backend native"
else
	echo "native.sh: skip the f16c comparisons: $(fplab info --tsv | grep '^native_f16c' | cut -f2)"
fi

# --- kernels this CPU cannot run: a clear error, never an emulation
for k in avx512bf16 amx-bf16; do
	if usable $k; then
		fplab gemm -m 33 -n 47 -k 1023 --gen normal:0,1 --profile $k --backend both \
			--tsv > $k.tsv || fail "gemm --profile $k --backend both failed"
		zero_mismatches "gemm $k" $k.tsv
	else
		expect_fail "$k not usable" 1 "the kernel $k \(profile $k\) cannot run here: " \
			fplab gemm -m 4 -n 4 -k 4 --gen ones --profile $k --backend native
	fi
done
# the fp16 GEMM (profile fp16-fma): its twin always runs; generated
# inputs are rounded into fp16 first (a given-load profile)
fplab gemm -m 8 -n 8 -k 64 --gen normal:0,1 --profile fp16-fma --tsv > h.tsv \
	|| fail "gemm --profile fp16-fma (emulated) failed"
checks=$((checks + 1))
grep -q "fp16:given" h.tsv || fail "gemm --profile fp16-fma: no fp16:given in the report"
if usable avx512fp16; then
	fplab gemm -m 33 -n 70 -k 515 --gen normal:0,1 --profile fp16-fma --backend both \
		--tsv > h2.tsv || fail "gemm --profile fp16-fma --backend both failed"
	zero_mismatches "gemm fp16-fma" h2.tsv
else
	for be in native both; do
		expect_fail "avx512fp16 not usable ($be)" 1 \
			"the kernel avx512fp16 \(profile fp16-fma\) cannot run here: .*avx512_fp16" \
			fplab gemm -m 8 -n 8 -k 64 --gen normal:0,1 --profile fp16-fma --backend $be
	done
fi
usable avx512bf16-cvt || expect_fail "bf16 conversion not usable" 1 \
	"the conversion avx512bf16-cvt into bf16 cannot run here" \
	fplab round -f bf16 --backend both x.txt

# --- refusals that do not depend on the CPU
expect_fail "no profile" 2 "needs --profile NAME" \
	fplab gemm -m 4 -n 4 -k 4 --gen ones --backend native
expect_fail "a profile without a kernel" 1 "profile fp32-mul-add has no native kernel" \
	fplab dot -n 4 --gen ones --profile fp32-mul-add --backend both
expect_fail "a sweep" 2 "runs one model, a profile with a native kernel, not a sweep of 2" \
	fplab gemm -m 4 -n 4 -k 4 --gen ones --profile fp32-fma -f fp16,bf16 --backend both
expect_fail "-o with both" 2 "--backend both has two results" \
	fplab dot -n 4 --gen ones --profile fp32-fma --backend both -o z.txt
expect_fail "an unknown backend" 2 "'gpu' is not emu, native, both or onednn" \
	fplab gemm -m 4 -n 4 -k 4 --gen ones --profile fp32-fma --backend gpu
expect_fail "round: no native conversion" 1 "-f e4m3fn has no native conversion" \
	fplab round -f e4m3fn --backend native x.txt
expect_fail "round: a sweep" 2 "converts into one format in one mode" \
	fplab round -f fp16,bf16 --backend both x.txt
checks=$((checks + 1))
[ ! -e z.txt ] || fail "-o with both left z.txt"
finish
