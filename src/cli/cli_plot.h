/* SPDX-License-Identifier: MIT */
/*
 * cli_plot.h - a small SVG line-chart renderer for the commands that plot
 * a quantity against a step (`fplab optim --svg`: drift and vanished
 * updates; `fplab train --svg`: losses and accuracy against the epoch).
 *
 * A plot is a title and panels stacked vertically that share one x axis;
 * each panel has its own y axis and label, and one polyline per series.
 * Axes are fitted to the data with a small margin and ticks at 1, 2 or 5
 * times a power of ten; a panel that allows it goes to a log10 axis only
 * when its positive data span more than 1.5 decades.  Tick labels of one
 * axis share one style: the same number of decimals, or (for very small
 * or large values) the same decimals times one power of ten written once
 * at the axis ("x10^-4").
 *
 * Series are told apart by name: the same name gets the same colour, dash
 * pattern and hollow marker shape in every panel, and one legend above
 * the panels shows them all.  Series of a panel whose points are exactly
 * equal get a note above the panel ("a and b are identical"), since no
 * drawing keeps coinciding lines apart.  Points whose x or y is NaN or
 * infinite (and, on a log axis, y <= 0) are not drawn: the line breaks
 * there, and a note says from where.  The caller keeps the number of
 * points reasonable (a few thousand per series); nothing is downsampled.
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
	int logy;		/* 1: log10 axis when the positive data span more
				 * than 1.5 decades, else linear */
	double ymin, ymax;	/* NaN: from the data; else a value the linear
				 * axis always shows (0 for a fraction) */
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
	int markers;		/* 1: a marker at every point (few points per
				 * series); 0: a few markers per line, staggered */
};

/*
 * The plot as one self-contained SVG document (no external references,
 * text escaped) on fp.  Panels with no drawable point say so in their
 * plot area.  Writes only; the caller checks fp for errors.
 */
void cli_plot_svg(FILE *fp, const struct cli_plot *pl);

/*
 * Whether `path` may take an SVG picture: "-" (stdout), a name ending in
 * ".svg" (any case), or an existing file that is not a regular file (a
 * device such as /dev/null, a FIFO).  Commands refuse others as a usage
 * error, so that `--svg out.png` does not write SVG into a .png name.
 */
int cli_plot_svg_name_ok(const char *path);

#endif
