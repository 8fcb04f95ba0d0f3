/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_common.h - shared body of the reader fuzz targets
 * (libFuzzer): the input bytes become a file, which is opened as the
 * given kind, listed, and every tensor streamed to its end both as
 * binary64 and as binary32 (in odd chunk sizes), and classified by the
 * histogram library.  Any crash, sanitizer report or leak is a bug; an
 * error status is fine.
 */
#ifndef FPLAB_FUZZ_COMMON_H
#define FPLAB_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fplab/fplab.h>

static char fz_path[256];

static const char *fz_file(const uint8_t *data, size_t size, const char *ext)
{
	if (!fz_path[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(fz_path, sizeof fz_path, "%s/fplab-fuzz-%d%s", t && *t ? t : "/tmp",
			 (int)getpid(), ext);
	}
	FILE *fp = fopen(fz_path, "wb");
	if (!fp)
		abort();
	if (size && fwrite(data, 1, size, fp) != size)
		abort();
	fclose(fp);
	return fz_path;
}

static void fz_exercise(const char *path, const fpl_tensor_opts *o)
{
	fpl_tensor_file *tf;
	char err[1024];
	static double d[37];
	static float f[53];
	if (fpl_tensor_open(&tf, path, o, err, sizeof err)) {
		if (!memchr(err, 0, sizeof err))
			abort();	/* message must be terminated */
		return;
	}
	fpl_format fmt;
	fpl_format_lookup(&fmt, "e4m3fn");
	size_t n = fpl_tensor_count(tf);
	for (size_t i = 0; i < n && i < 64; i++) {
		const fpl_tensor_info *in = fpl_tensor_get(tf, i);
		if (fpl_tensor_find(tf, in->name) < 0)
			abort();
		for (int pass = 0; pass < 2; pass++) {
			fpl_tensor_stream *s;
			if (fpl_tensor_stream_open(&s, tf, i, err, sizeof err))
				continue;
			fpl_hist_config cfg;
			fpl_hist h;
			fpl_hist_config_init(&cfg, &fmt);
			cfg.scaling = pass ? FPL_HSCALE_MX : FPL_HSCALE_FIXED;
			if (fpl_hist_init(&h, &cfg))
				abort();
			size_t got, total = 0;
			for (;;) {
				int rc = pass ? fpl_tensor_stream_read(s, d, 37, &got, err, sizeof err)
					      : fpl_tensor_stream_read_f32(s, f, 53, &got, err, sizeof err);
				if (got)
					pass ? fpl_hist_add(&h, d, got) : fpl_hist_add_f32(&h, f, got);
				total += got;
				if (rc || !got || total > (1u << 24))
					break;
			}
			fpl_hist_finish(&h);
			fpl_hist_release(&h);
			fpl_tensor_stream_close(s);
		}
	}
	fpl_tensor_close(tf);
}

#endif
