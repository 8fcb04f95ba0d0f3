/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_npz.c - libFuzzer target: the .npz reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fpl_tensor_opts o = { .kind = FPL_TK_NPZ };
	const char *p = fz_file(data, size, ".npz");
	fz_exercise(p, &o);

	return 0;
}
