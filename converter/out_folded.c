// SPDX-License-Identifier: MIT
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope: one line
 * per distinct stack, frames from the root to the GC function joined by ';',
 * then a space and the value. Stacks that differ only in return addresses
 * inside the same functions fold into one line. Inlined calls are frames of
 * their own, as in a debugger's backtrace.
 */
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "util.h"

struct folded_line {
	char *text;
	uint64_t value;
};

/* ';' separates frames and a newline ends the line: neither may appear
 * inside a name. */
static void append_name(struct outbuf *mem, const char *name)
{
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (c == ';')
			c = ':';
		else if ((unsigned char)c < 0x20 || c == 0x7f)
			c = '?';
		outbuf_char(mem, c);
	}
}

static char *stack_text(struct model *m, size_t b)
{
	const struct sym_frame **f;
	size_t n = model_frames(m, b, &f);
	struct outbuf mem;

	outbuf_init(&mem, -1);
	for (size_t i = n; i-- > 0;) {
		append_name(&mem, f[i]->name);
		if (i)
			outbuf_char(&mem, ';');
	}
	outbuf_char(&mem, '\0');
	return mem.buf;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text,
		      ((const struct folded_line *)b)->text);
}

void write_folded(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	struct folded_line *lines = xcalloc(m->nr_buckets, sizeof(*lines));
	bool bytes = opt->value == VALUE_BYTES;
	size_t nr = 0;

	for (size_t b = 1; b < m->nr_buckets; b++) {
		const struct alloc_stats *st = &m->buckets[b].s;

		if (!st->alloc_objects || st->alloc_space < opt->min_bytes)
			continue;
		lines[nr].text = stack_text(m, b);
		lines[nr++].value = bytes ? st->alloc_space : st->alloc_objects;
	}

	/* sorted output is reproducible, and equal texts become neighbours */
	qsort(lines, nr, sizeof(*lines), by_text);
	for (size_t i = 0; i < nr;) {
		uint64_t sum = 0;
		size_t j = i;

		for (; j < nr && !strcmp(lines[j].text, lines[i].text); j++)
			sum += lines[j].value;
		if (sum) {
			outbuf_str(o, lines[i].text);
			outbuf_char(o, ' ');
			outbuf_u64(o, sum);
			outbuf_char(o, '\n');
		}
		i = j;
	}

	for (size_t i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
}
