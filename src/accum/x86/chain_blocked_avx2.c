/* SPDX-License-Identifier: MIT */
/*
 * accum/x86/chain_blocked_avx2.c - chain_blocked_body.h's truncation
 * kernel, block-addition lanes and scan compiled for AVX2 (the loop over a tile's lanes vectorised by
 * the compiler, four lanes per register): the same operations on the
 * same operands as the portable instance, exact under chain_blocked.c's
 * condition, so the same bits.
 */
#include "accum/chain_blocked.h"

#define TZ_KERNEL_NAME fpl__acc_tz_kernel_avx2
#define TZ_PROMO_NAME fpl__acc_tz_promo_lanes_avx2
#define TZ_MAXBITS_NAME fpl__acc_tz_maxbits_avx2
#define TZ_KERNEL_STORAGE
#include "accum/chain_blocked_body.h"
