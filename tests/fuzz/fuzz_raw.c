/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_raw.c - libFuzzer target: the raw reader; the first
 * bytes choose dtype, byte order, offset and count, the rest is the file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	fpl_tensor_opts o = { .kind = FPL_TK_RAW };
	o.dtype = (fpl_dtype)(data[0] % 8);	/* includes unknown and text: errors */
	o.big_endian = data[1] & 1;
	o.offset = data[2] % 16;
	o.count = data[3] % 32;
	fz_exercise(fz_file(data + 4, size - 4, ".bin"), &o);
	return 0;
}
