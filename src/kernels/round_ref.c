/* SPDX-License-Identifier: MIT */
/* round_ref.c - the reference kernel set: kernel_body.h for baseline
 * x86-64 (or any CPU), with Dekker's product in place of an fma. */
#define KERNEL_SET fpl__kernels_ref
#define KERNEL_NAME "ref"
#include "kernels/kernel_body.h"
