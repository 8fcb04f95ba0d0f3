/* SPDX-License-Identifier: MIT */
/*
 * cli_progress.c - a progress bar on stderr for long runs, drawn by a thread
 * only when stderr is a terminal and the run has taken about a second.
 *
 * Invariant: nothing is ever written when stderr is not a terminal (pipes,
 * files, the tests).
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
	const char *what;
	double t0;
} prog = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void draw(void)
{
	int w = 30, k = prog.total ? (int)((size_t)w * prog.done / prog.total) : 0;

	fprintf(stderr, "\rfplab %s: [%.*s%*s] %zu/%zu  %.1f s", prog.what, k,
		"##############################", w - k, "", prog.done, prog.total,
		cli_now() - prog.t0);
	fflush(stderr);
	prog.shown = 1;
}

static void *progress_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&prog.mu);
	while (!prog.stop) {
		struct timespec ts;
		double now = cli_now();

		if (now - prog.t0 >= 1.0)
			draw();
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
	prog.total = total;
	prog.what = what;
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
		fprintf(stderr, "\r%*s\r", 60 + (int)strlen(prog.what), "");
	prog.on = 0;
}
