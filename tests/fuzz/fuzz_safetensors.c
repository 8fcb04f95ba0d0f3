/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_safetensors.c - libFuzzer target: the .safetensors reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fpl_tensor_opts o = { .kind = FPL_TK_SAFETENSORS };
	const char *p = fz_file(data, size, ".safetensors");
	fz_exercise(p, &o);

	return 0;
}
