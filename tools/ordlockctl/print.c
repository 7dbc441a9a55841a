// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: tables, JSON and colour (see print.h).
 */
#define _GNU_SOURCE		/* vasprintf() */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "print.h"

static int olc_colors;

static const char *const olc_color_seq[OLC_NCOLORS] = {
	[OLC_RESET] = "\033[0m",
	[OLC_BOLD] = "\033[1m",
	[OLC_RED] = "\033[31m",
	[OLC_GREEN] = "\033[32m",
	[OLC_YELLOW] = "\033[33m",
	[OLC_BLUE] = "\033[34m",
	[OLC_MAGENTA] = "\033[35m",
	[OLC_CYAN] = "\033[36m",
	[OLC_DIM] = "\033[2m",
};

int olc_color_init(const char *when)
{
	if (!when || !strcmp(when, "auto")) {
		const char *term = getenv("TERM");

		olc_colors = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
			     !(term && !strcmp(term, "dumb"));
	} else if (!strcmp(when, "always")) {
		olc_colors = 1;
	} else if (!strcmp(when, "never")) {
		olc_colors = 0;
	} else {
		return -1;
	}
	return 0;
}

int olc_color_on(void)
{
	return olc_colors;
}

const char *olc_c(enum olc_color c)
{
	if (!olc_colors || c >= OLC_NCOLORS)
		return "";
	return olc_color_seq[c];
}

/* Tables */

struct olc_cell {
	char *text;
	enum olc_color color;
};

struct olc_table {
	unsigned int ncols;
	const char *const *headers;
	const char *align;
	struct olc_cell *cells;
	size_t n, cap;
};

struct olc_table *olc_table_new(unsigned int ncols, const char *const *headers,
				const char *align)
{
	struct olc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols;
	t->headers = headers;
	t->align = align;
	return t;
}

unsigned int olc_table_rows(const struct olc_table *t)
{
	return t ? (unsigned int)(t->n / t->ncols) : 0;
}

void olc_table_cell(struct olc_table *t, enum olc_color color,
		    const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int ret;

	if (!t)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct olc_cell *p = realloc(t->cells, cap * sizeof(*p));

		if (!p)
			return;
		t->cells = p;
		t->cap = cap;
	}
	va_start(ap, fmt);
	ret = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (ret < 0)
		s = NULL;
	t->cells[t->n].text = s;
	t->cells[t->n].color = color;
	t->n++;
}

void olc_table_print(struct olc_table *t, FILE *f)
{
	size_t *w, i, rows;
	unsigned int c;

	if (!t)
		return;
	w = calloc(t->ncols, sizeof(*w));
	if (!w)
		goto out;
	rows = t->n / t->ncols;
	for (c = 0; c < t->ncols; c++)
		w[c] = strlen(t->headers[c]);
	for (i = 0; i < rows * t->ncols; i++) {
		const char *s = t->cells[i].text ? t->cells[i].text : "";

		if (strlen(s) > w[i % t->ncols])
			w[i % t->ncols] = strlen(s);
	}
	for (i = 0; i <= rows; i++) {
		for (c = 0; c < t->ncols; c++) {
			const char *s;
			enum olc_color color = OLC_RESET;
			int right = t->align && t->align[c] == 'r';
			int last = c + 1 == t->ncols;

			if (!i) {
				s = t->headers[c];
				color = OLC_BOLD;
			} else {
				s = t->cells[(i - 1) * t->ncols + c].text;
				color = t->cells[(i - 1) * t->ncols + c].color;
				if (!s)
					s = "";
			}
			if (c)
				fputs("  ", f);
			if (color != OLC_RESET)
				fputs(olc_c(color), f);
			if (right)
				fprintf(f, "%*s", (int)w[c], s);
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", (int)w[c], s);
			if (color != OLC_RESET)
				fputs(olc_c(OLC_RESET), f);
		}
		fputc('\n', f);
	}
	free(w);
out:
	olc_table_free(t);
}

void olc_table_free(struct olc_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->cells[i].text);
	free(t->cells);
	free(t);
}

/* JSON */

void olc_json_init(struct olc_json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
	j->first[0] = 1;
}

static void olc_json_indent(struct olc_json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void olc_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			/* the kernel's text is ASCII; anything else is escaped */
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The separator and key before a value */
static void olc_json_key(struct olc_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	if (j->depth)
		olc_json_indent(j);
	if (key) {
		olc_json_string(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void olc_json_open(struct olc_json *j, const char *key, char c)
{
	olc_json_key(j, key);
	fputc(c, j->f);
	if (j->depth < 63)
		j->depth++;
	j->first[j->depth] = 1;
}

static void olc_json_close(struct olc_json *j, char c)
{
	int empty = j->first[j->depth];

	if (j->depth)
		j->depth--;
	if (!empty)
		olc_json_indent(j);
	fputc(c, j->f);
}

void olc_json_obj(struct olc_json *j, const char *key)
{
	olc_json_open(j, key, '{');
}

void olc_json_obj_end(struct olc_json *j)
{
	olc_json_close(j, '}');
}

void olc_json_arr(struct olc_json *j, const char *key)
{
	olc_json_open(j, key, '[');
}

void olc_json_arr_end(struct olc_json *j)
{
	olc_json_close(j, ']');
}

void olc_json_str(struct olc_json *j, const char *key, const char *s)
{
	olc_json_key(j, key);
	if (s)
		olc_json_string(j->f, s);
	else
		fputs("null", j->f);
}

void olc_json_u64(struct olc_json *j, const char *key, uint64_t v)
{
	olc_json_key(j, key);
	/*
	 * A double (JavaScript, jq 1.6) holds integers exactly up to 2^53 - 1:
	 * past that the number is written as a string of its decimal digits,
	 * so that no reader rounds it ("id": 5, "id": "18446744073709551615";
	 * jq's "tostring" gives the exact digits of both)
	 */
	if (v > OLC_JSON_MAX_SAFE)
		fprintf(j->f, "\"%llu\"", (unsigned long long)v);
	else
		fprintf(j->f, "%llu", (unsigned long long)v);
}

void olc_json_int(struct olc_json *j, const char *key, long long v)
{
	olc_json_key(j, key);
	fprintf(j->f, "%lld", v);
}

void olc_json_bool(struct olc_json *j, const char *key, int v)
{
	olc_json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void olc_json_null(struct olc_json *j, const char *key)
{
	olc_json_key(j, key);
	fputs("null", j->f);
}

void olc_json_end(struct olc_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}

char *olc_us_str(char *buf, size_t len, uint64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%llu us", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%llu ms", (unsigned long long)(us / 1000));
	else if (us < 600000000ULL)
		snprintf(buf, len, "%.2f s", (double)us / 1e6);
	else
		snprintf(buf, len, "%llu min", (unsigned long long)(us / 60000000ULL));
	return buf;
}

char *olc_time_str(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	char date[32], zone[8];

	if (!localtime_r(&sec, &tm)) {
		snprintf(buf, len, "%llu", (unsigned long long)ns);
		return buf;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	/* +0100 -> +01:00 (RFC 3339) */
	if (strlen(zone) == 5) {
		zone[6] = '\0';
		zone[5] = zone[4];
		zone[4] = zone[3];
		zone[3] = ':';
	}
	snprintf(buf, len, "%s.%06llu%s", date,
		 (unsigned long long)(ns % 1000000000ULL / 1000), zone);
	return buf;
}
