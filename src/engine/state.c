/* SPDX-License-Identifier: MIT */
/*
 * state.c - the explicit state, rounding-mode names and the counter-based
 * random generator.
 *
 * fpl_random_draw(k, s, i) is splitmix64's output function applied to a
 * Weyl sequence started at a key derived from (k, s): draw i is a pure
 * function of (k, s, i), so any element of any stream can be produced in
 * any order, by any thread, with the same result.
 */
#include <string.h>
#include <strings.h>

#include "engine/internal.h"

uint64_t fpl_random_draw(uint64_t seed, uint64_t stream, uint64_t index)
{
	return fpl__draw(fpl__draw_key(seed, stream), index);
}

void fpl_state_init(fpl_state *st, uint64_t seed)
{
	memset(st, 0, sizeof *st);
	st->seed = seed;
	st->sr_bits = 32;
	st->threads = 1;
}

/*
 * Each step below is a bijection of 64-bit words (the splitmix64
 * finaliser is one, so is xor with a constant and multiplication by an
 * odd number), so for a fixed parent position distinct ids give distinct
 * streams; the position enters through two rounds of mixing so that
 * neighbouring counters give unrelated streams.
 */
void fpl_state_fork(const fpl_state *parent, fpl_state *child, uint64_t id)
{
	uint64_t h;

	h = fpl__mix64(parent->stream + 0x6a09e667f3bcc909ull);
	h = fpl__mix64(h ^ (parent->counter * 0xbb67ae8584caa73bull + 0x3c6ef372fe94f82bull));
	fpl_state_init(child, parent->seed);
	child->sr_bits = parent->sr_bits;
	child->flip = parent->flip;
	child->flip_prob = parent->flip_prob;
	child->threads = parent->threads;
	child->untracked = parent->untracked;
	child->stream = fpl__mix64(h ^ (id * 0xa54ff53a5f1d36f1ull));
}

int fpl_state_set_sr_bits(fpl_state *st, int bits)
{
	if (!st || bits < 1 || bits > 32)
		return FPL_EINVAL;
	st->sr_bits = bits;
	return 0;
}

void fpl_state_clear_flags(fpl_state *st)
{
	st->flags = 0;
	memset(st->count, 0, sizeof st->count);
}

static const struct {
	const char *name;
	const char *code;
} rnd_names[FPL_RND_COUNT] = {
	[FPL_RND_NE] = { "ne", "1" },
	[FPL_RND_NA] = { "na", "-1" },
	[FPL_RND_NZ] = { "nz", "0" },
	[FPL_RND_TP] = { "tp", "2" },
	[FPL_RND_TN] = { "tn", "3" },
	[FPL_RND_TZ] = { "tz", "4" },
	[FPL_RND_SP] = { "sp", "5" },
	[FPL_RND_SE] = { "se", "6" },
	[FPL_RND_OD] = { "od", "7" },
};

int fpl_rnd_parse(const char *s, fpl_rnd *out)
{
	int i;

	if (!s)
		return FPL_EINVAL;
	for (i = 0; i < FPL_RND_COUNT; i++) {
		if (!strcasecmp(s, rnd_names[i].name) || !strcmp(s, rnd_names[i].code)) {
			*out = (fpl_rnd)i;
			return 0;
		}
	}
	return FPL_ENOTFOUND;
}

const char *fpl_rnd_name(fpl_rnd r)
{
	return (unsigned)r < FPL_RND_COUNT ? rnd_names[r].name : "?";
}

int fpl_rnd_is_stochastic(fpl_rnd r)
{
	return r == FPL_RND_SP || r == FPL_RND_SE;
}

const char *fpl_flag_name(int bit_index)
{
	static const char *const names[FPL_NFLAGS] = {
		"inexact", "underflow", "overflow", "divbyzero", "invalid", "saturated", "flushed"
	};
	return bit_index >= 0 && bit_index < FPL_NFLAGS ? names[bit_index] : "?";
}
