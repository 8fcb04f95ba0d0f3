#!/bin/sh
# SPDX-License-Identifier: MIT
# hist_bad.sh - `fplab hist` on bad input (issue 4 item 6): truncated
# files, lying headers, unsupported dtypes, unknown tensor names: exit 1
# with a message naming the file (and tensor) and no SVG left behind;
# empty and all-NaN tensors: a reported row, exit 0; usage errors exit 2.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1

npy_f32 good.npy 0x3f800000 0x40000000 0x40400000 0x40800000
# truncated: header says 4, 3 follow
head -c $(( $(wc -c <good.npy) - 4 )) good.npy >trunc.npy
expect_fail "truncated .npy" 1 "trunc.npy: header says 4 elements of 4 bytes but 12 bytes follow" \
	fplab hist --svg out.svg trunc.npy
checks=$((checks + 1))
[ -e out.svg ] && fail "an SVG was written for a failed run"
ls out.svg* >/dev/null 2>&1 && fail "a temporary SVG was left behind"
# lying header: says 3, 4 follow
{ npy_header '<f4' '3,'; le32 1; le32 2; le32 3; le32 4; } >lie.npy
expect_fail "lying .npy" 1 "lie.npy: header says 3 elements of 4 bytes but 16 bytes follow" fplab hist lie.npy
# truncated header
head -c 20 good.npy >hdr.npy
expect_fail "truncated header" 1 "hdr.npy: truncated header" fplab hist hdr.npy
# unsupported dtypes
{ npy_header '<c8' '1,'; le32 0; le32 0; } >cplx.npy
expect_fail "complex .npy" 1 "cplx.npy: unsupported dtype '<c8'" fplab hist cplx.npy
# an integer .npy is read (issue 23 item 8): 1 is one normal value
{ npy_header '<i4' '1,'; le32 1; } >int.npy
expect_out "int .npy" "$(printf 'int32\t1\t1')" sh -c "fplab hist --tsv int.npy | tsvcut dtype n normal"
{ npy_header '<u2' '2,'; le32 0x3f803f80; } >u2.npy
expect_fail "<u2 without --dtype" 1 "u2.npy: dtype '<u2' holds raw codes of a type numpy lacks or uint16 integers; say which with --dtype bf16\|f16\|uint16" \
	fplab hist u2.npy
expect_out "<u2 with --dtype bf16" "$(printf '2\t2')" sh -c "fplab hist --dtype bf16 --tsv u2.npy | tsvcut n normal"
expect_fail "<u2 with a 1-byte --dtype" 1 "u2.npy: --dtype e4m3fn is 1 byte but the file's '<u2' is 2" \
	fplab hist --dtype e4m3fn u2.npy
# options that do not apply to the input (issue 9 point 6)
expect_fail "--offset on .npy" 1 "good.npy: --offset applies to raw input only" fplab hist --offset 8 good.npy
expect_fail "--dtype on a float .npy" 1 "good.npy: --dtype bf16 does not apply: the file's '<f4' is f32" \
	fplab hist --dtype bf16 good.npy
# bf16 and fp8 codes as numpy writes them (np.uint16, np.uint8): 1, -2.5, 0, NaN
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	"$PYTHON" -c 'import numpy as np
np.save("np_u2.npy", np.array([0x3f80, 0xc020, 0, 0x7fc0], dtype=np.uint16))
np.save("np_u1.npy", np.array([0x38, 0xc4, 0, 0x7f], dtype=np.uint8))'
	expect_out "numpy uint16 as bf16" "$(printf '4\t1\t1\t2')" \
		sh -c "fplab hist --dtype bf16 --tsv np_u2.npy | tsvcut n zeros nan_inf normal"
	expect_out "numpy uint8 as e4m3fn" "$(printf '4\t1\t1\t2')" \
		sh -c "fplab hist --dtype e4m3fn --tsv np_u1.npy | tsvcut n zeros nan_inf normal"
	expect_fail "numpy uint16 without --dtype" 1 "np_u2.npy: dtype '<u2' holds raw codes" fplab hist np_u2.npy
else
	echo "hist_bad.sh: skipping the numpy cases: $PYTHON cannot import numpy" >&2
fi
# safetensors: unsupported dtype named with its tensor; offsets beyond the data; bad JSON
j='{"step":{"dtype":"BOOL","shape":[8],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}'
{ le64 ${#j}; printf '%s' "$j"; le32 0; le32 0; le32 0x3f800000; } >bool.safetensors
expect_fail "BOOL tensor" 1 "bool.safetensors: tensor 'step': unsupported dtype 'BOOL'" fplab hist bool.safetensors
expect_out "BOOL skipped with --tensor" "$(printf 'w\t1')" \
	sh -c "fplab hist --tensor w --tsv bool.safetensors | sed 1d | cut -f1,3"
# an I64 tensor is read: step = 0 is one zero
j='{"step":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}'
{ le64 ${#j}; printf '%s' "$j"; le32 0; le32 0; le32 0x3f800000; } >i64.safetensors
expect_out "I64 tensor" "$(printf 'step\tint64\t1\t1\nw\tf32\t1\t0')" \
	sh -c "fplab hist --tsv i64.safetensors | tsvcut tensor dtype n zeros | head -2"
j='{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
{ le64 ${#j}; printf '%s' "$j"; le32 1; le32 2; } >short.safetensors
expect_fail "safetensors offsets beyond the data" 1 "short.safetensors: tensor 'a': data_offsets \[0, 16\] beyond" \
	fplab hist short.safetensors
j='{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}'
{ le64 ${#j}; printf '%s' "$j"; le32 1; le32 2; } >lie.safetensors
expect_fail "safetensors shape x dtype != bytes" 1 "lie.safetensors: tensor 'a': header says 3 elements" \
	fplab hist lie.safetensors
# safetensors: tensors must tile the data section (issue 9 point 6)
j='{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}'
{ le64 ${#j}; printf '%s' "$j"; le32 1; le32 2; le32 3; le32 4; le32 5; le32 6; } >overlap.safetensors
expect_fail "safetensors overlap" 1 "overlap.safetensors: tensor 'b': data_offsets \[8, 24\] overlap tensor 'a' \[0, 16\]" \
	fplab hist overlap.safetensors
j='{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
{ le64 ${#j}; printf '%s' "$j"; le32 1; le32 2; le32 3; } >trail.safetensors
expect_fail "safetensors trailing bytes" 1 "trail.safetensors: 4 bytes after the last tensor" \
	fplab hist trail.safetensors
expect_fail "--dtype on safetensors" 1 "trail.safetensors: --dtype does not apply" \
	fplab hist --dtype f32 trail.safetensors
j='{"a":{"dtype":'
{ le64 ${#j}; printf '%s' "$j"; } >json.safetensors
expect_fail "safetensors bad JSON" 1 "json.safetensors: bad JSON header" fplab hist json.safetensors
# npz: not a zip, truncated
{ printf 'PK\003\004'; head -c 100 /dev/zero; } >bad.npz
expect_fail "broken .npz" 1 "bad.npz: not a readable .npz" fplab hist bad.npz
head -c 5000 "$SRCDIR/experiments/data/sample-grads.npz" >cut.npz
expect_fail "truncated .npz" 1 "cut.npz" fplab hist cut.npz
# unknown tensor name, with a suggestion
expect_fail "unknown tensor" 1 "sample-grads.npz: no tensor 'fc1.weight.gard'; did you mean 'fc1.weight.grad'" \
	fplab hist --tensor fc1.weight.gard "$SRCDIR/experiments/data/sample-grads.npz"
# raw: not a whole number of elements, offset beyond the end, missing dtype
printf 'abcde' >odd.bin
expect_fail "raw ragged" 1 "odd.bin: 5 bytes after offset 0 are not a whole number of 4-byte f32" \
	fplab hist --dtype f32 odd.bin
expect_fail "raw offset" 1 "odd.bin: offset 9 beyond the end" fplab hist --dtype f16 --offset 9 odd.bin
printf 'abc' | expect_fail "stdin ragged" 1 "stdin: 3 trailing bytes after 0 f32 elements" fplab hist --dtype f32 -
# text: a non-number names file and line
printf '1 2\n3 x4\n' >bad.txt
expect_fail "text non-number" 1 "bad.txt: line 2: 'x4' is not a number" fplab hist bad.txt
# missing file
expect_fail "missing file" 1 "cannot open 'nope.npy'" fplab hist nope.npy
# --svg to an unwritable place
expect_fail "svg into a missing directory" 1 "." fplab hist --svg no/such/dir.svg good.npy

# merely unusual data: reported rows, exit 0
{ npy_header '<f4' '0, 3'; } >empty.npy
expect_out "empty tensor" "$(printf 'empty\t0\t0\t0')" \
	sh -c "fplab hist --tsv empty.npy 2>/dev/null | tsvcut tensor n zeros overflow"
npy_f32 nan.npy 0x7fc00000 0xffc00000 0x7fc00001
expect_out "all-NaN tensor" "$(printf 'nan\t3\t3\t0\t0')" \
	sh -c "fplab hist --tsv nan.npy | tsvcut tensor n nan_inf became_zero overflow"
expect_out "all-NaN chart" "  (no finite nonzero values)" sh -c "fplab hist nan.npy | grep 'no finite'"

# usage errors: exit 2
expect_out "no file: standard input" "$(printf 'stdin\t2')" \
	sh -c "printf '1 2\n' | fplab hist --tsv | sed 1d | cut -f1,3"
expect_fail "--aps with --mx" 2 "exclude each other" fplab hist --aps --mx 32 good.npy
expect_fail "bad --scale" 2 "--scale: 'abc'" fplab hist --scale abc good.npy
expect_fail "zero --loss-scale" 2 "--loss-scale: '0'" fplab hist --loss-scale 0 good.npy
expect_fail "bad --mx" 2 "--mx: block size '0'" fplab hist --mx 0 good.npy
expect_fail "unknown dtype" 2 "unknown dtype 'f23'" fplab hist --dtype f23 good.npy
expect_fail "unknown format" 2 "format" fplab hist -f fp17 good.npy
# --aps reads twice: standard input is spooled, and reads like the file
expect_out "--aps on stdin" "$(fplab hist --aps --tsv good.npy | sed 1d | cut -f2-)" \
	sh -c "fplab hist --aps --tsv - <good.npy | sed 1d | cut -f2-"
finish
