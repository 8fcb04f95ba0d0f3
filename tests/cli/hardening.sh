#!/bin/sh
# SPDX-License-Identifier: MIT
# hardening.sh - the defects an outside pass found in `fplab hist`, `round`
# and `calc` (issue 9), each a check that failed before the fix:
#   1. zero tensors, an empty tensor, all-NaN tensors in every output form
#      (chart, --tsv, --json, --svg): no crash, valid JSON and SVG;
#   2. text is read exactly, so `hist` and `round` agree on every input;
#   3. --aps (two passes) on a pipe, process substitution and named FIFO:
#      the input is spooled, never counted 0 or hung;
#   4. results stream (a tensor is printed before the next is read) and
#      --threads beyond the cores is reduced with a warning;
#   6. --dtype says what an .npy of raw codes holds, in round and calc too;
#   7. names with control characters are escaped in chart, TSV and
#      messages; messages about standard input say "stdin".
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1

# A python3 with only the standard library suffices to check JSON.
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# st_raw FILE JSON: a .safetensors file whose header is JSON and no data.
st_raw() { { le64 ${#2}; printf '%s' "$2"; } >"$1"; }

# ------------------------------------------------------------ 1. nothing to count
st_raw st-empty.safetensors '{}'
st_raw st-meta.safetensors '{"__metadata__":{}}'
printf 'PK\005\006\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >empty.npz
{ npy_header '<f4' '0,'; } >empty.npy
npy_f32 nan.npy 0x7fc00000 0xffc00000 0x7fc00001
for f in st-empty.safetensors st-meta.safetensors empty.npz empty.npy nan.npy; do
	for form in chart tsv json svg; do
		case $form in
		chart) args= ;;
		tsv) args=--tsv ;;
		json) args=--json ;;
		svg) args="--svg out.svg" ;;
		esac
		rm -f out.svg
		checks=$((checks + 1))
		# shellcheck disable=SC2086
		fplab hist $args "$f" >out 2>err
		rc=$?
		if [ $rc -ne 0 ] || grep -q 'Sanitizer\|runtime error' err; then
			fail "$f $form: exit $rc: $(cat err)"
			continue
		fi
		case $form in
		json) json_ok out || fail "$f --json: not valid JSON: $(cat out)" ;;
		svg) [ -s out.svg ] || fail "$f --svg: no SVG written"
		     if command -v xmllint >/dev/null 2>&1; then
			     xmllint --noout out.svg 2>/dev/null || fail "$f --svg: not well-formed XML"
		     fi ;;
		esac
	done
done
expect_out "no tensors: JSON total is null" '[] None' sh -c \
	"fplab hist --json st-empty.safetensors 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"tensors\"], d[\"total\"])'"
expect_out "no tensors: chart says so" '(no tensors)' sh -c \
	"fplab hist empty.npz 2>/dev/null | tail -n 1"
expect_out "no tensors: TSV is the header alone" 1 sh -c "fplab hist --tsv empty.npz 2>/dev/null | wc -l"
expect_out "all NaN" "$(printf 'nan\t3\t0\t3\t0\t0\t0\t0')" sh -c \
	"fplab hist --tsv nan.npy | tsvcut tensor $CLASSES"
fplab hist --svg both.svg nan.npy empty.npy >/dev/null 2>&1 || fail "svg of NaN and empty tensors"
grep -q 'no finite nonzero values' both.svg || fail "the SVG panel of an all-NaN tensor says nothing"
if command -v rsvg-convert >/dev/null 2>&1; then
	rsvg-convert both.svg -o both.png 2>err && [ -s both.png ] || fail "rsvg-convert: $(cat err)"
else
	echo "note: rsvg-convert (librsvg2-bin) not installed: SVG not rendered"
fi

# ------------------------------------------------------------ 2. exact text
# Each decimal below is a different number from its nearest binary64 in a
# way that changes its class in fp16 (nearest-even):
#   2.98023223876953125000000000001e-08 = 2^-25 + a little, just above
#     the midpoint of 0 and the min subnormal 2^-24: 2^-24, a subnormal
#     (via binary64: 2^-25 exactly, the tie, rounds to even 0: became zero);
#   65519.99999999999999999 < 65520 (the midpoint of 65504 and 2^16):
#     65504, normal (via binary64: 65520, a tie to even 2^16: overflow);
#   1e-400: became zero (via binary64: 0, a zero);
#   1e400: overflow (via binary64: inf, nan_inf).
# count zeros nan_inf became_zero subnormal normal overflow:
while read -r x want; do
	printf '%s\n' "$x" >one.txt
	expect_out "hist of $x" "$(echo "$want" | tr _ '\t')" sh -c \
		"fplab hist --tsv one.txt | tsvcut $CLASSES"
done <<EOF
2.98023223876953125000000000001e-08 1_0_0_0_1_0_0
65519.99999999999999999 1_0_0_0_0_1_0
1e-400 1_0_0_1_0_0_0
1e400 1_0_0_0_0_0_1
EOF
expect_out "round agrees" "$(printf '0x1p-24\n0x1.ffcp+15\n0x0p+0\ninf')" sh -c \
	"printf '2.98023223876953125000000000001e-08\n65519.99999999999999999\n1e-400\n1e400\n' | fplab round -f fp16 --out hex"
# the same through a pipe, with a non-power-of-two scale and with MX blocks
printf '65519.99999999999999999\n1e-400\n' >two.txt
expect_out "scale 1.5 exact" "$(printf '2\t0\t0\t1\t0\t0\t1')" sh -c \
	"fplab hist --scale 1.5 --tsv two.txt | tsvcut $CLASSES"
# --mx is a block format (block:fp16:e8m0:32:floor), which takes each
# number as its nearest binary64, as `round -f BLOCK` does: 65520 (the tie 65504|65536 in fp16, even is 65536: overflow,
# saturated) and 0, a zero
expect_out "mx binary64" "$(printf '2\t1\t0\t0\t0\t0\t1')" sh -c \
	"cat two.txt | fplab hist --mx 32 --tsv | tsvcut $CLASSES"

# ------------------------------------------------------------ 3. two passes on pipes
# 1 2 3e5 in fp16 with APS: 3e5 needs 2^-3 (3e5/8 = 37500 < 65504)
want=$(printf '3\t0\t0\t0\t0\t3\t0\t2^-3')
expect_out "--aps from a pipe" "$want" sh -c \
	"printf '1 2 3e5\n' | fplab hist --aps --tsv | tsvcut $CLASSES applied_scale"
expect_out "--aps from stdin named -" "$want" sh -c \
	"printf '1 2 3e5\n' | fplab hist --aps --tsv - | tsvcut $CLASSES applied_scale"
if [ -e /dev/fd/0 ]; then
	expect_out "--aps from /dev/stdin" "$want" sh -c \
		"printf '1 2 3e5\n' | fplab hist --aps --tsv /dev/stdin | tsvcut $CLASSES applied_scale"
fi
mkfifo fifo
(printf '1 2 3e5\n' >fifo) &
checks=$((checks + 1))
got=$(timeout 20 fplab hist --aps --tsv fifo 2>err | tsvcut $CLASSES applied_scale)
[ "$got" = "$want" ] || fail "--aps from a FIFO: got '$got' ($(cat err))"
wait
# a binary dump through a pipe, with APS (detected by its magic bytes)
npy_f32 k.npy 0x3f800000 0x48000000
# 1 and 2^17: APS 2^-2 (2^15 is fp16's top binade)
expect_out "--aps on a piped .npy" "$(printf '2\t0\t0\t0\t0\t2\t0\t2^-2')" sh -c \
	"cat k.npy | fplab hist --aps --tsv | tsvcut $CLASSES applied_scale"
# the spool is bounded: FPLAB never keeps more than the limit (4 GiB);
# a small input is fine, and nothing is left in TMPDIR
mkdir tmp
TMPDIR=$T/tmp fplab hist --aps --tsv <one.txt >/dev/null 2>&1 || fail "spool in TMPDIR"
[ -z "$(ls tmp)" ] || fail "the spool file was left in TMPDIR: $(ls tmp)"

# ------------------------------------------------------------ 4. streaming, threads
# The first tensor's row is out before the second file is read: the second
# "file" is a FIFO nobody writes until the row has been seen.
mkfifo late
npy_f32 first.npy 0x3f800000
checks=$((checks + 1))
fplab hist --tsv first.npy late >stream.out 2>stream.err &
pid=$!
i=0
while [ $i -lt 200 ] && ! grep -q '^first' stream.out 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
grep -q '^first' stream.out || fail "streaming: the first tensor was not printed before the second was read"
printf '2\n' >late
wait $pid || fail "streaming run failed: $(cat stream.err)"
if [ -w /dev/full ]; then
	expect_fail "hist streamed to a full disk: one message, the real errno" 1 \
		"write error on stdout: No space left on device" sh -c "fplab hist first.npy >/dev/full"
fi
expect_fail "--threads beyond the cores warns" 0 "using [0-9]+" \
	fplab hist --threads 1024 --tsv first.npy
expect_fail "--threads is an integer" 2 "--threads: 'x'" fplab hist --threads x first.npy

# ------------------------------------------------------------ 6. --dtype everywhere
# bf16 codes 0x3f80 0x4000 0xc0a0 = 1, 2, -5 stored as '<u2' (header by hand)
{ npy_header '<u2' '3,'; printf '\200\077\000\100\240\300'; } >codes.npy
expect_out "round --dtype bf16" "$(printf '1\n2\n-5')" fplab round --in npy --dtype bf16 codes.npy
expect_out "calc --dtype bf16" "$(printf '2\n4\n-10')" fplab calc add --in npy --dtype bf16 codes.npy codes.npy
expect_out "hist --dtype bf16" "$(printf 'codes\t3\t0\t0\t0\t0\t3\t0')" sh -c \
	"fplab hist --dtype bf16 --tsv codes.npy | tsvcut tensor $CLASSES"
expect_fail "raw codes without --dtype name the option" 1 "say which with --dtype bf16\|f16\|uint16" \
	fplab round --in npy codes.npy
expect_out "round --dtype bf16, the kind detected" "$(printf '1\n2\n-5')" fplab round --dtype bf16 codes.npy
expect_fail "--dtype with a raw --in kind" 2 "--dtype applies to tensor files" \
	fplab round --in f32 --dtype bf16 codes.npy
expect_fail "--dtype on text is an error, not ignored" 1 "--dtype applies to .npy/.npz files of raw codes, not to text" \
	sh -c "echo 1 | fplab round --dtype bf16"
expect_fail "--offset on an .npy" 1 "--offset applies to raw input only" \
	fplab hist --offset 8 codes.npy

# ------------------------------------------------------------ 7. escaping
st_f32 ctl.safetensors "$(printf 'a\\tb\\u001bc')" 0x3f800000
expect_out "TSV escapes a tab and ESC" "$(printf 'a\\tb\\x1bc\tf32\t1')" sh -c \
	"fplab hist --tsv ctl.safetensors | sed 1d | cut -f1-3"
checks=$((checks + 1))
fplab hist ctl.safetensors >chart 2>&1
if grep -q "$(printf '\033')" chart; then fail "chart prints a raw ESC"; fi
grep -q 'a\\tb\\x1bc' chart || fail "chart does not show the escaped name"
expect_fail "--tensor escapes the name in the message" 1 "no tensor 'x\\\\x1by'" \
	fplab hist --tensor "$(printf 'x\033y')" ctl.safetensors
printf '1\n2 \001bad\n' >bad.txt
expect_fail "a token is escaped" 1 "bad.txt: line 2: '\\\\x01bad' is not a number" fplab hist bad.txt
expect_fail "stdin is named" 1 "stdin: line 1: 'abc' is not a number" sh -c "echo abc | fplab hist"
expect_fail "round names stdin" 1 "round: stdin: line 1: 'abc' is not a number" sh -c "echo abc | fplab round"
expect_fail "calc names stdin" 1 "calc: stdin: line 1:" sh -c "echo 1 | fplab calc add"

# no message of any command carries a raw control byte: the output paths
# (cli_output.c) and every other message pass through one writer that
# shows a leftover one as \xHH
esc=$(printf '\033')
for c in "round -o /nonexist${esc}[31m/x.npy" "gemm -m 2 -n 2 -k 2 --gen normal:0,1 -o /no${esc}/c.npy" \
	"train --data generated --layers 16-4 --epochs 1 -o /no${esc}/m.safetensors" \
	"allreduce --nodes 2 --layers 4:ones -o /no${esc}/a.npy" "optim --steps 1 --init /no${esc}.npy"; do
	checks=$((checks + 1))
	# shellcheck disable=SC2086
	fplab $c </dev/null >/dev/null 2>msg
	if grep -q "$esc" msg; then fail "fplab $c: raw ESC in the message"; fi
	grep -q 'x1b' msg || { fail "fplab $c: the escaped name is not shown"; sed 's/^/  stderr: /' msg >&2; }
done

finish
