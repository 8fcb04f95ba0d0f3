/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_text.c - libFuzzer target: the text reader. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fpl_tensor_opts o = { .kind = FPL_TK_TEXT };
	fz_exercise(fz_file(data, size, ".txt"), &o);
	return 0;
}
