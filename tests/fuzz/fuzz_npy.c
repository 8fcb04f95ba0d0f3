/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_npy.c - libFuzzer target: the .npy reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fpl_tensor_opts o = { .kind = FPL_TK_NPY };
	const char *p = fz_file(data, size, ".npy");
	fz_exercise(p, &o);
	/* and with a dtype override (bf16 for <u2/<V2, fp8 for |u1) */
	o.dtype = size ? (fpl_dtype)(1 + data[size - 1] % 6) : FPL_DT_BF16;
	fz_exercise(p, &o);
	return 0;
}
