/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_fused_avx512.c - chain_fused_body.h's group sums
 * compiled for AVX-512 (the loop over a tile's lanes vectorised by the
 * compiler, eight lanes per register): the same operations on the same
 * operands, so the same bits as the portable instance (binary64 mode ne
 * either way; -ffp-contract=off keeps TwoSum's additions apart).
 */
#include "accum/accum_internal.h"

#define FUSED_SUMS_NAME fpl__acc_fused_sums_avx512
#define FUSED_SUMS_STORAGE
#include "accum/chain_fused_body.h"
