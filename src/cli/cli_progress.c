/* SPDX-License-Identifier: MIT */
/*
 * cli_progress.c - a progress bar on stderr for long runs, drawn by a thread
 * only when stderr is a terminal and the run has taken about a second.
 *
 * The bar counts units of work, not jobs: a command that runs one long
 * job (a 2048^3 gemm and its exact reference) still sees it move.  While
 * a counter is watched (cli_progress_watch) the thread reads it itself,
 * with an atomic load, as the library adds to it.
 *
 * Invariant: nothing is ever written when stderr is not a terminal (pipes,
 * files, the tests).  FPLAB_PROGRESS_DELAY (seconds, default 1) is how
 * long a run goes before the bar appears; 0 draws it at once and at
 * least once, which is how the tests see it without a slow run.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

/* -------------------------------------------------------- progress bar */
static struct {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int on, stop, shown;
	size_t done, total;
	const uint64_t *ctr;	/* watched: done = base + *ctr */
	size_t base;
	const char *what;
	double t0, delay;
} prog = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void draw(void)
{
	size_t done = prog.ctr ? prog.base + (size_t)__atomic_load_n(prog.ctr, __ATOMIC_RELAXED)
			       : prog.done;
	double f = prog.total ? (double)(done < prog.total ? done : prog.total) /
				(double)prog.total : 0;
	int w = 30, k = (int)(w * f);
	char n[64];

	/* counts people can read; a percentage for flops and terms */
	if (prog.total <= 100000)
		snprintf(n, sizeof n, "%zu/%zu", done, prog.total);
	else
		snprintf(n, sizeof n, "%5.1f%%", 100 * f);
	fprintf(stderr, "\rfplab %s: [%.*s%*s] %s  %.1f s ", prog.what, k,
		"##############################", w - k, "", n, cli_now() - prog.t0);
	fflush(stderr);
	prog.shown = 1;
}

static void *progress_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&prog.mu);
	for (;;) {
		struct timespec ts;
		double now = cli_now();

		if (now - prog.t0 >= prog.delay)
			draw();
		if (prog.stop)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&prog.cv, &prog.mu, &ts);
	}
	pthread_mutex_unlock(&prog.mu);
	return NULL;
}

void cli_progress_start(const char *what, size_t total)
{
	if (prog.on || !isatty(STDERR_FILENO))
		return;
	prog.stop = prog.shown = 0;
	prog.done = 0;
	prog.ctr = NULL;
	prog.total = total;
	prog.what = what;
	prog.delay = 1.0;
	if (getenv("FPLAB_PROGRESS_DELAY")) {
		char *end;
		double d = strtod(getenv("FPLAB_PROGRESS_DELAY"), &end);

		if (*end == 0 && d >= 0 && d <= 3600)
			prog.delay = d;
	}
	prog.t0 = cli_now();
	prog.on = !pthread_create(&prog.tid, NULL, progress_thread, NULL);
}

void cli_progress_step(size_t done)
{
	if (!prog.on)
		return;
	pthread_mutex_lock(&prog.mu);
	prog.done = done;
	pthread_mutex_unlock(&prog.mu);
}

void cli_progress_add(size_t units)
{
	if (!prog.on)
		return;
	pthread_mutex_lock(&prog.mu);
	prog.done += units;
	pthread_mutex_unlock(&prog.mu);
}

void cli_progress_watch(const uint64_t *ctr)
{
	if (!prog.on)
		return;
	pthread_mutex_lock(&prog.mu);
	if (ctr) {
		prog.base = prog.done;
	} else if (prog.ctr) {
		prog.done = prog.base + (size_t)__atomic_load_n(prog.ctr, __ATOMIC_RELAXED);
	}
	prog.ctr = ctr;
	pthread_mutex_unlock(&prog.mu);
}

void cli_progress_end(void)
{
	if (!prog.on)
		return;
	pthread_mutex_lock(&prog.mu);
	prog.stop = 1;
	pthread_cond_signal(&prog.cv);
	pthread_mutex_unlock(&prog.mu);
	pthread_join(prog.tid, NULL);
	if (prog.shown)
		fprintf(stderr, "\r%*s\r", 72 + (int)strlen(prog.what), "");
	prog.on = 0;
}
