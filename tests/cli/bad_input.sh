#!/bin/sh
# SPDX-License-Identifier: MIT
# bad_input.sh - issue 3 item 9: bad input never crashes.  Each case must
# exit with the documented status (1 runtime, 2 usage) and a message that
# names the problem (file, line, token; the closest valid name).
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# --- files
expect_fail "missing file" 1 "cannot open 'nosuch.txt'" fplab round nosuch.txt
expect_fail "missing binary file" 1 "cannot open 'nosuch.bin'" fplab round --in f64 nosuch.bin
mkdir adir
expect_fail "directory as input" 1 "read error on 'adir'" fplab round adir
if [ "$(id -u)" != 0 ]; then
	echo 1 >unreadable && chmod 000 unreadable
	expect_fail "unreadable file" 1 "cannot open 'unreadable'" fplab round unreadable
fi
: >empty.txt
expect_out "empty text file: no values, no output" "" fplab round empty.txt
expect_out "empty binary file: no values" "" fplab round --in f32 empty.txt
printf '1\n2 3\n4 abc 5\n' >words.txt
expect_fail "non-number names file, line, token" 1 "words.txt: line 3: 'abc' is not a number" \
	fplab round words.txt
expect_out "comma separates (CSV from np.savetxt)" "1 2" sh -c "echo 1,2 | fplab round"
expect_fail "an empty field is an error" 1 "line 1:" sh -c "echo 1,,2 | fplab round"
expect_fail "non-number in calc" 1 "line 2: '0x' is not a number" \
	sh -c "printf '1 2\n0x 1\n' | fplab calc add"
expect_fail "calc row with the wrong count" 1 "line 1: add needs 2 operands, found 3" \
	sh -c "echo 1 2 3 | fplab calc add"
printf 'a\0b\n' >nul.txt
expect_fail "NUL byte in text" 1 "nul.txt: line 1: NUL byte" fplab round nul.txt
printf '\001\002\003\004\005\006\007\010\011' >nine.bin
expect_fail "raw f64 cut inside an element" 1 "'nine.bin': truncated: 1 trailing bytes after 1 elements" \
	fplab round --in f64 nine.bin
printf '\377\377' >code.bin
expect_fail "code wider than the format" 1 "code 0xffff has more than 9 bits" \
	fplab round --in codes -f e5m3 code.bin
printf '\0\0\0\0\0\0\360\077\0\0\0\0\0\0\0\100\0\0\0\0\0\0\010\100' >three.f64
printf '\0\0\0\0\0\0\360\077' >one.f64
expect_fail "parallel operand files of different lengths" 1 \
	"'three.f64' and 'one.f64' hold different numbers of values" \
	fplab calc add --in f64 three.f64 one.f64

# --- formats
for f in e0m3 e12m3 e5m60; do
	expect_fail "impossible format $f" 2 "impossible format '$f'" fplab round -f $f
done
expect_fail "--params 0,..." 2 "impossible format --params 0,-6,8" fplab round --params 0,-6,8
expect_fail "--params emin > emax" 2 "impossible format --params 4,8,-6" fplab round --params 4,8,-6
expect_fail "--params not three integers" 2 "--params: '4,x' is not P,EMIN,EMAX" fplab round --params 4,x
expect_fail "--params with a named format" 2 "--params needs -f custom" fplab round -f fp16 --params 4,-6,8
expect_fail "custom without --params" 2 "-f custom needs --params" fplab round -f custom
expect_fail "--infinity 1 on e4m3fn" 2 "has no infinity code" fplab round -f e4m3fn --infinity 1
expect_fail "missing .fmt file" 1 "nosuch.fmt" fplab round -f nosuch.fmt
printf 'e = 4\nm = 3\nspecials = weird\n' >bad.fmt
expect_fail "bad .fmt names file and line" 1 "bad.fmt: line 3" fplab round -f ./bad.fmt

# --- unknown names, with suggestions
expect_fail "unknown format" 2 "unknown format 'fp61'; did you mean 'fp16'\\?" fplab round -f fp61
expect_fail "unknown alias-like format" 2 "unknown format 'bfloat61'; did you mean 'bfloat16'\\?" \
	fplab formats bfloat61
expect_fail "unknown mode" 2 "unknown rounding mode 'nx'; did you mean 'n[eaz]'\\?" fplab round -r nx
expect_fail "unknown mode code" 2 "unknown rounding mode '8'" fplab round -r 8
expect_fail "unknown command" 2 "unknown command 'rund'; did you mean 'round'\\?" fplab rund
expect_fail "unknown operation" 2 "unknown operation 'ad'; did you mean 'add'\\?" fplab calc ad
expect_fail "unknown input kind" 2 "unknown input kind 'f46'; did you mean 'f64'\\?" fplab round --in f46
expect_fail "unknown output kind" 2 "unknown output kind 'hx'; did you mean 'hex'\\?" fplab round --out hx
expect_fail "unknown option" 2 "usage: fplab round" fplab round --bogus
expect_fail "bad switch value" 2 "--subnormal: '2' is not 0, 1 or ftz" fplab round --subnormal 2
expect_fail "bad --sr-bits" 2 "--sr-bits: '33'" fplab round --sr-bits 33
expect_fail "bad -p" 2 "-p: '1.5' is not a probability" fplab round -p 1.5
expect_fail "help for an unknown command" 2 "unknown command 'frmats'; did you mean 'formats'\\?" \
	fplab help frmats
expect_fail "--table on a wide format" 2 "format 'fp32' has 32 bits" fplab formats --table fp32
expect_fail "calc without OP" 2 "missing OP" fplab calc

# --- .npy: a v1.0 header, padded so that the data start at 64
npy() {	# npy FILE DESCR SHAPE: the header; data appended by the caller
	_h="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
	while [ $(( (10 + ${#_h} + 1) % 64 )) != 0 ]; do _h="$_h "; done
	_n=$(( ${#_h} + 1 ))
	printf '\223NUMPY\001\000' >"$1"
	printf "\\$(printf %03o $((_n % 256)))\\$(printf %03o $((_n / 256)))" >>"$1"
	printf '%s\n' "$_h" >>"$1"
}
one_le='\0\0\0\0\0\0\360\077' two_le='\0\0\0\0\0\0\0\100'
npy good.npy '<f8' '(2,)'; printf "$one_le$two_le" >>good.npy
expect_out "a good .npy" "$(printf '1\n2')" fplab round --in npy good.npy
npy lying.npy '<f8' '(3,)'; printf "$one_le$two_le" >>lying.npy
expect_fail "npy header says more than the data" 1 "lying.npy" fplab round --in npy lying.npy
npy long.npy '<f8' '(1,)'; printf "$one_le$two_le" >>long.npy
expect_fail "npy with bytes after the data" 1 "long.npy" fplab round --in npy long.npy
head -c 20 good.npy >cut.npy
expect_fail "truncated npy header" 1 "cut.npy" fplab round --in npy cut.npy
npy cplx.npy '<c16' '(1,)'; printf "$one_le$one_le" >>cplx.npy
expect_fail "unsupported npy dtype" 1 "cplx.npy" fplab round --in npy cplx.npy
npy int.npy '<i4' '(1,)'; printf '\001\0\0\0' >>int.npy
# an integer .npy is read (issue 23 item 8); a bool one is not
expect_out "integer npy dtype" "1" fplab round --in npy int.npy
npy bool.npy '|b1' '(1,)'; printf '\001' >>bool.npy
expect_fail "bool npy dtype" 1 "bool.npy: unsupported dtype '\|b1'" fplab round --in npy bool.npy
expect_fail "text file as npy" 1 "words.txt" fplab round --in npy words.txt
expect_fail "empty file as npy" 1 "empty.txt" fplab round --in npy empty.txt
expect_fail "npy from stdin" 1 "needs a file name" sh -c "fplab round --in npy <good.npy"
# big-endian: supported (same values) or refused with a clear message
npy big.npy '>f8' '(2,)'; printf '\077\360\0\0\0\0\0\0\100\0\0\0\0\0\0\0' >>big.npy
checks=$((checks + 1))
if out=$(fplab round --in npy big.npy 2>"$T/err"); then
	[ "$out" = "$(printf '1\n2')" ] || fail "big-endian npy read wrongly: $out"
else
	grep -qi 'big.npy.*\(big-endian\|byte order\|>f8\)' "$T/err" ||
		fail "big-endian npy refused without saying why: $(cat "$T/err")"
fi

# --- output errors
if [ -w /dev/full ]; then
	expect_fail "round to /dev/full" 1 "write error on stdout" sh -c "echo 1 | fplab round >/dev/full"
	expect_fail "formats to /dev/full" 1 "write error on stdout" sh -c "fplab formats >/dev/full"
	expect_fail "info to /dev/full" 1 "write error on stdout" sh -c "fplab info >/dev/full"
	expect_fail "-h to /dev/full" 1 "write error on stdout" sh -c "fplab round -h >/dev/full"
	expect_fail "--version to /dev/full" 1 "write error on stdout" sh -c "fplab --version >/dev/full"
	expect_fail "calc to /dev/full" 1 "write error on stdout" sh -c "echo 1 2 | fplab calc add >/dev/full"
	expect_fail "binary out to /dev/full" 1 "write error on stdout" \
		sh -c "fplab round --in f64 --out f64 three.f64 >/dev/full"
	expect_fail "-o /dev/full" 1 "write error on '/dev/full'" \
		sh -c "echo 1 | fplab round -o /dev/full"
	checks=$((checks + 1))
	[ -c /dev/full ] || fail "-o /dev/full replaced the device"
fi
expect_out "-o /dev/null" "" sh -c "echo 1 | fplab round -o /dev/null"
checks=$((checks + 1))
[ -c /dev/null ] || fail "-o /dev/null replaced the device"
expect_fail "-o a directory" 1 "cannot open 'adir': Is a directory" sh -c "echo 1 | fplab round -o adir"
expect_fail "-o in a missing directory" 1 "cannot create 'nodir/x'" sh -c "echo 1 | fplab round -o nodir/x"
echo old >keep.txt
expect_fail "failed run leaves -o FILE untouched" 1 "'x' is not a number" \
	sh -c "printf '1\nx\n' | fplab round -o keep.txt"
checks=$((checks + 1))
[ "$(cat keep.txt)" = old ] || fail "-o FILE changed by a failed run"
checks=$((checks + 1))
[ -z "$(ls | grep 'keep.txt.tmp')" ] || fail "temporary file left behind"
finish
