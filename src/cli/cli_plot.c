/* SPDX-License-Identifier: MIT */
/*
 * cli_plot.c - SVG line charts (cli_plot.h): a title, a legend of every
 * series name, then panels stacked over one shared x axis, each with its
 * own linear or log10 y axis, grid lines at "nice" ticks (1, 2, 5 times a
 * power of ten; powers of ten on log axes) and one polyline per series.
 *
 * Invariant: the document is self-contained, well-formed XML; every
 * coordinate written is finite (points that are not finite, or not
 * positive on a log axis, break the line instead of being drawn).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_plot.h"

#define W 760		/* picture width */
#define ML 84		/* plot margins: left (ticks, y label), right */
#define MR 24
#define PH 210		/* plot height of one panel */
#define GAP 22		/* between panels */
#define MB 52		/* below the last panel: tick labels, x label */
#define TW 0.6		/* estimated glyph width, em per byte */
#define MAXSER 64	/* distinct series names with their own colour */

static const char *const palette[10] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"
};

/* s with XML's special characters as entities, control characters as '?' */
static void xml(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&apos;", fp); break;
		default: fputc(c < 0x20 || c == 0x7f ? '?' : c, fp);
		}
	}
}

/* An axis: the data range [lo, hi] mapped to pixels [p0, p1]. */
struct axis {
	int log;
	double lo, hi;		/* in data units (log: log10 of them) */
	double p0, p1;
	double step;		/* between ticks (log: decades) */
};

static double ax_pos(const struct axis *a, double v)
{
	double t = a->log ? log10(v) : v;

	return a->p0 + (t - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

/* 1, 2 or 5 times a power of ten, the first >= x (x > 0). */
static double nice_step(double x)
{
	double p = pow(10, floor(log10(x))), f = x / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* Fit axis a to the data range [lo, hi] (finite; positive for log). */
static void ax_fit(struct axis *a, double lo, double hi, int from_zero)
{
	if (a->log) {
		lo = floor(log10(lo));
		hi = ceil(log10(hi));
		if (hi <= lo)
			hi = lo + 1;
		a->step = ceil((hi - lo) / 8);
		a->lo = lo;
		a->hi = hi;
		return;
	}
	if (from_zero && lo > 0)
		lo = 0;
	if (hi <= lo) {
		double d = lo ? fabs(lo) / 10 : 1;

		lo -= d;
		hi += d;
		if (from_zero && lo < 0 && hi > 0)
			lo = 0;
	}
	a->step = nice_step((hi - lo) / 5);
	a->lo = floor(lo / a->step + 1e-9) * a->step;
	a->hi = ceil(hi / a->step - 1e-9) * a->step;
}

/* A linear tick label with as many decimals as the step needs. */
static void tick_label(char *buf, size_t cap, double v, double step)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	if (fabs(v) < step / 2)
		v = 0;
	if (step < 1e-4 || fabs(v) >= 1e7)
		snprintf(buf, cap, "%.3g", v);
	else
		snprintf(buf, cap, "%.*f", dec, v);
}

/* The data range of panel p's y (x when which is 0) over drawable points. */
static int range(const struct cli_plot *pl, const struct cli_plot_panel *p, int which,
		 int logy, double *lo, double *hi)
{
	size_t s, i;
	int any = 0;

	*lo = INFINITY;
	*hi = -INFINITY;
	for (s = 0; s < p->ns; s++) {
		const double *x = p->s[s].x ? p->s[s].x : pl->x, *y = p->s[s].y;

		for (i = 0; i < p->s[s].n; i++) {
			double v = which ? y[i] : x[i];

			if (!isfinite(x[i]) || !isfinite(y[i]) || (logy && !(y[i] > 0)))
				continue;
			any = 1;
			*lo = v < *lo ? v : *lo;
			*hi = v > *hi ? v : *hi;
		}
	}
	return any;
}

/* The colour index of series name `name` among the names seen so far. */
static int colour_of(const char **names, int *nnames, const char *name)
{
	int i;

	for (i = 0; i < *nnames; i++)
		if (!strcmp(names[i], name))
			return i;
	if (*nnames == MAXSER)
		return MAXSER - 1;
	names[*nnames] = name;
	return (*nnames)++;
}

static void stroke(FILE *fp, int c)
{
	fprintf(fp, "stroke=\"%s\"", palette[c % 10]);
	if (c >= 10)
		fprintf(fp, " stroke-dasharray=\"%d %d\"", 6 + 2 * (c / 10), 3);
}

/* The legend: a swatch and the name per series, wrapping at the width;
 * draws when fp is not NULL; returns the number of rows. */
static int legend(FILE *fp, const char **names, int n, double y0)
{
	double x = ML, y = y0;
	int i, rows = n ? 1 : 0;

	for (i = 0; i < n; i++) {
		double w = 28 + TW * 12 * (double)strlen(names[i]) + 18;

		if (x > ML && x + w > W - MR) {
			x = ML;
			y += 18;
			rows++;
		}
		if (fp) {
			fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke-width=\"3\" ", x, y - 4, x + 22, y - 4);
			stroke(fp, i);
			fprintf(fp, "/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", x + 28, y);
			xml(fp, names[i]);
			fputs("</text>\n", fp);
		}
		x += w;
	}
	return rows;
}

/* Grid lines and tick labels of the y axis a over [x0, x1]. */
static void y_ticks(FILE *fp, const struct axis *a, double x0, double x1)
{
	double v, first = ceil(a->lo / a->step - 1e-9) * a->step;
	char buf[48];

	for (v = first; v <= a->hi + a->step * 1e-9; v += a->step) {
		double py = a->p0 + (v - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);

		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#e4e4e4\"/>\n", x0, py, x1, py);
		if (a->log) {
			fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">"
				"10<tspan dy=\"-5\" font-size=\"8\">%d</tspan></text>\n", x0 - 6,
				py + 4, (int)lround(v));
		} else {
			tick_label(buf, sizeof buf, v, a->step);
			fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
				"text-anchor=\"end\">%s</text>\n", x0 - 6, py + 4, buf);
		}
	}
}

/* Grid lines of the x axis over [y0, y1], with labels below y1 if asked. */
static void x_ticks(FILE *fp, const struct axis *a, double y0, double y1, int labels)
{
	double v, first = ceil(a->lo / a->step - 1e-9) * a->step;
	char buf[48];

	for (v = first; v <= a->hi + a->step * 1e-9; v += a->step) {
		double px = ax_pos(a, v);

		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#e4e4e4\"/>\n", px, y0, px, y1);
		if (labels) {
			tick_label(buf, sizeof buf, v, a->step);
			fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
				"text-anchor=\"middle\">%s</text>\n", px, y1 + 16, buf);
		}
	}
}

/* One series: polylines between breaks; a lone point is a dot. */
static void series(FILE *fp, const struct cli_plot *pl, const struct cli_plot_series *s,
		   const struct axis *ax, const struct axis *ay, int c, double width)
{
	const double *x = s->x ? s->x : pl->x;
	size_t i, run = 0;
	double lx = 0, ly = 0;

	if (pl->markers) {
		for (i = 0; i < s->n; i++)
			if (isfinite(x[i]) && isfinite(s->y[i]) && (!ay->log || s->y[i] > 0))
				fprintf(fp, "<circle class=\"marker\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
					"fill=\"%s\"/>\n", ax_pos(ax, x[i]), ax_pos(ay, s->y[i]),
					width + 1.0, palette[c % 10]);
	}

	fprintf(fp, "<g class=\"series\" data-name=\"");
	xml(fp, s->name);
	fprintf(fp, "\" fill=\"none\" stroke-width=\"%.2f\" stroke-linejoin=\"round\" ", width);
	stroke(fp, c);
	fputs(">\n", fp);
	for (i = 0; i <= s->n; i++) {
		int ok = i < s->n && isfinite(x[i]) && isfinite(s->y[i]) && (!ay->log || s->y[i] > 0);

		if (ok) {
			double px = ax_pos(ax, x[i]), py = ax_pos(ay, s->y[i]);

			fprintf(fp, run ? " %.1f,%.1f" : "<polyline points=\"%.1f,%.1f", px, py);
			lx = px;
			ly = py;
			run++;
			continue;
		}
		if (run)
			fputs("\"/>\n", fp);
		if (run == 1)
			fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", lx, ly,
				width, palette[c % 10]);
		run = 0;
	}
	fputs("</g>\n", fp);
}

/* Notes inside the top left of a panel for the series with points that
 * are not drawn: the first x where y is not finite (or <= 0 on a log
 * axis), in the series' colour; at most 4. */
static void notes(FILE *fp, const struct cli_plot *pl, const struct cli_plot_panel *p,
		  const char **names, int *nnames, double top)
{
	size_t s, i;
	int k = 0;

	for (s = 0; s < p->ns && k < 4; s++) {
		const double *x = p->s[s].x ? p->s[s].x : pl->x, *y = p->s[s].y;
		int c = colour_of(names, nnames, p->s[s].name ? p->s[s].name : "");

		for (i = 0; i < p->s[s].n; i++)
			if (isfinite(x[i]) && (!isfinite(y[i]) || (p->logy && !(y[i] > 0))))
				break;
		if (i == p->s[s].n)
			continue;
		fprintf(fp, "<text class=\"note\" x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">",
			ML + 8, top + 16 + 14.0 * k++, palette[c % 10]);
		xml(fp, p->s[s].name);
		fprintf(fp, ": %s from %s %g on%s</text>\n", isfinite(y[i]) ? "0" : "nan or inf",
			pl->xlabel ? pl->xlabel : "x", x[i], isfinite(y[i]) ? " (not on a log axis)"
			: ", not drawn");
	}
}

void cli_plot_svg(FILE *fp, const struct cli_plot *pl)
{
	const char *names[MAXSER];
	int nnames = 0, rows, have_x;
	double head, height, xlo, xhi;
	struct axis ax = { 0, 0, 1, ML, W - MR, 1 };
	size_t k, s;

	for (k = 0; k < pl->np; k++)
		for (s = 0; s < pl->p[k].ns; s++)
			colour_of(names, &nnames, pl->p[k].s[s].name ? pl->p[k].s[s].name : "");
	rows = legend(NULL, names, nnames, 0);
	head = (pl->subtitle ? 54 : 38) + 18.0 * rows + 8;
	height = head + (double)pl->np * (PH + GAP) - GAP + MB;
	/* the shared x axis over every panel's drawable points */
	xlo = INFINITY;
	xhi = -INFINITY;
	have_x = 0;
	for (k = 0; k < pl->np; k++) {
		double lo, hi;

		if (range(pl, &pl->p[k], 0, pl->p[k].logy, &lo, &hi)) {
			have_x = 1;
			xlo = lo < xlo ? lo : xlo;
			xhi = hi > xhi ? hi : xhi;
		}
	}
	if (have_x) {
		ax_fit(&ax, xlo, xhi, 0);
		if (pl->x_whole && ax.step < 1)
			ax.step = 1;
	}
	ax.lo = have_x ? xlo : 0;
	ax.hi = have_x ? (xhi > xlo ? xhi : xlo + 1) : 1;
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, height, W, height);
	fputs("<text class=\"title\" x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", fp);
	xml(fp, pl->title);
	fputs("</text>\n", fp);
	if (pl->subtitle) {
		fputs("<text class=\"subtitle\" x=\"16\" y=\"42\" font-size=\"11\" fill=\"#444\">", fp);
		xml(fp, pl->subtitle);
		fputs("</text>\n", fp);
	}
	fputs("<g class=\"legend\">\n", fp);
	legend(fp, names, nnames, head - 18.0 * rows + 6);
	fputs("</g>\n", fp);
	for (k = 0; k < pl->np; k++) {
		const struct cli_plot_panel *p = &pl->p[k];
		double top = head + (double)k * (PH + GAP), bot = top + PH, lo, hi;
		struct axis ay = { p->logy, 0, 1, bot - 6, top + 6, 1 };	/* lines clear of the frame */
		int any = range(pl, p, 1, p->logy, &lo, &hi);
		int last = k + 1 == pl->np;

		if (!isnan(p->ymin) && (!p->logy || p->ymin > 0))
			lo = p->ymin, any |= 2;
		if (!isnan(p->ymax) && (!p->logy || p->ymax > 0))
			hi = p->ymax, any |= 2;
		if (any && lo > hi) {
			double t = lo;

			lo = hi;
			hi = t;
		}
		if (any)
			ax_fit(&ay, lo, hi, isnan(p->ymin));
		fprintf(fp, "<g class=\"panel\" data-panel=\"%zu\">\n<clipPath id=\"clip%zu\">"
			"<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/></clipPath>\n", k, k, ML,
			top - 2, W - ML - MR, PH + 4);
		fputs("<g class=\"axes\">\n", fp);
		if (any)
			y_ticks(fp, &ay, ML, W - MR);
		x_ticks(fp, &ax, top, bot, last);
		fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" "
			"stroke=\"#333\"/>\n", ML, top, W - ML - MR, PH);
		fprintf(fp, "<text class=\"ylabel\" transform=\"translate(18,%.1f) rotate(-90)\" "
			"font-size=\"12\" text-anchor=\"middle\">", top + PH / 2.0);
		xml(fp, p->ylabel);
		fputs("</text>\n</g>\n", fp);
		if (!(any & 1))
			fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#888\" "
				"text-anchor=\"middle\">no finite points%s</text>\n", (ML + W - MR) / 2.0,
				top + PH / 2.0, p->logy ? " above 0" : "");
		fprintf(fp, "<g clip-path=\"url(#clip%zu)\">\n", k);
		for (s = 0; (any & 1) && s < p->ns; s++) {
			int c = colour_of(names, &nnames, p->s[s].name ? p->s[s].name : "");
			double w = 3.4 - 0.6 * (double)c;	/* coinciding lines stay visible */

			series(fp, pl, &p->s[s], &ax, &ay, c, w < 1.2 ? 1.2 : w);
		}
		fputs("</g>\n", fp);
		notes(fp, pl, p, names, &nnames, top);
		fputs("</g>\n", fp);
	}
	fprintf(fp, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
		"text-anchor=\"middle\">", (ML + W - MR) / 2.0, height - 12);
	xml(fp, pl->xlabel);
	fputs("</text>\n</svg>\n", fp);
}
