/* SPDX-License-Identifier: MIT */
/*
 * cli_plot.h - a small SVG line-chart renderer for the commands that plot
 * a quantity against a step (`fplab optim --svg`, and any later command
 * plotting loss or accuracy against the epoch for several policies).
 *
 * A plot is a title and panels stacked vertically that share one x axis;
 * each panel has its own y axis (linear or log10) and label, and one
 * polyline per series.  Series are coloured by name: the same name gets
 * the same colour in every panel, and one legend above the panels names
 * them all.  Points whose x or y is NaN or infinite (and, on a log axis,
 * y <= 0) are not drawn: the line breaks there.  The caller keeps the
 * number of points reasonable (a few thousand per series); nothing is
 * downsampled here.
 */
#ifndef FPLAB_CLI_PLOT_H
#define FPLAB_CLI_PLOT_H

#include <stddef.h>
#include <stdio.h>

struct cli_plot_series {
	const char *name;	/* legend text (escaped for XML here) */
	const double *x;	/* NULL: the plot's x */
	const double *y;
	size_t n;		/* points; with x NULL at most the plot's n */
};

struct cli_plot_panel {
	const char *ylabel;
	int logy;		/* 1: log10 axis, ticks at powers of ten */
	double ymin, ymax;	/* NaN: from the data (linear axes start at 0
				 * when the data are all >= 0) */
	const struct cli_plot_series *s;
	size_t ns;
};

struct cli_plot {
	const char *title;
	const char *subtitle;	/* NULL or a second, smaller line */
	const char *xlabel;
	const double *x;	/* the shared x values */
	size_t n;
	const struct cli_plot_panel *p;
	size_t np;
	int x_whole;		/* 1: x counts something (epochs): ticks at whole numbers */
	int markers;		/* 1: a dot at every point (few points per series) */
};

/*
 * The plot as one self-contained SVG document (no external references,
 * text escaped) on fp.  Panels with no drawable point say so in their
 * plot area.  Writes only; the caller checks fp for errors.
 */
void cli_plot_svg(FILE *fp, const struct cli_plot *pl);

#endif
