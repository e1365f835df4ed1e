// SPDX-License-Identifier: MIT
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope: one line
 * per distinct stack, frames from the root to the GC function joined by ';',
 * then a space and the value. Stacks that differ only in return addresses
 * inside the same functions fold into one line.
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

static char *stack_text(const struct trace *t, struct symbolizer *sym,
			const struct trace_stack *st, uint32_t max_depth)
{
	struct outbuf mem;
	uint32_t n = st->nr;
	bool first = true;

	if (max_depth && n > max_depth)
		n = max_depth;
	outbuf_init(&mem, -1);
	for (uint32_t i = n; i-- > 0;) {
		const struct sym_entry *e =
			symbolizer_entry(sym, symbolizer_resolve(sym, t->ips[st->first + i], i));

		/* entry frames are innermost first: reverse them too */
		for (uint32_t k = e->nr_frames; k-- > 0;) {
			if (!first)
				outbuf_char(&mem, ';');
			append_name(&mem, e->frames[k].name);
			first = false;
		}
	}
	outbuf_char(&mem, '\0');
	return mem.buf;
}

static const char *lost_stack_text(unsigned int kind)
{
	switch (kind) {
	case KIND_MALLOC: return "[stack lost];GC_malloc";
	case KIND_MALLOC_ATOMIC: return "[stack lost];GC_malloc_atomic";
	case KIND_REALLOC: return "[stack lost];GC_realloc";
	}
	return "[stack lost]";
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text,
		      ((const struct folded_line *)b)->text);
}

void write_folded(const struct trace *t, struct symbolizer *sym,
		  struct outbuf *o, const struct output_options *opt)
{
	/* per stack index (0: no stack, split by kind) */
	uint64_t *value = xcalloc(t->nr_stacks + 1, sizeof(*value));
	uint64_t lost[KIND_REALLOC + 1] = { 0 };
	struct folded_line *lines;
	size_t nr = 0;

	for (size_t i = 0; i < t->nr_events; i++) {
		const struct trace_event *e = &t->events[i];
		uint64_t v = opt->value == VALUE_BYTES ? e->weight : 1;

		if (e->kind == KIND_FREE)
			continue;
		if (e->stack && t->stacks[e->stack - 1].nr)
			value[e->stack] += v;
		else
			lost[e->kind] += v;
	}

	lines = xcalloc(t->nr_stacks + KIND_REALLOC + 1, sizeof(*lines));
	for (size_t s = 1; s <= t->nr_stacks; s++)
		if (value[s]) {
			lines[nr].text = stack_text(t, sym, &t->stacks[s - 1], opt->depth);
			lines[nr++].value = value[s];
		}
	for (unsigned int k = KIND_MALLOC; k <= KIND_REALLOC; k++)
		if (lost[k]) {
			lines[nr].text = xmemdup_str(lost_stack_text(k),
						     strlen(lost_stack_text(k)));
			lines[nr++].value = lost[k];
		}

	/* sorted output is reproducible, and equal texts become neighbours */
	qsort(lines, nr, sizeof(*lines), by_text);
	for (size_t i = 0; i < nr;) {
		uint64_t sum = 0;
		size_t j = i;

		for (; j < nr && !strcmp(lines[j].text, lines[i].text); j++)
			sum += lines[j].value;
		outbuf_str(o, lines[i].text);
		outbuf_char(o, ' ');
		outbuf_u64(o, sum);
		outbuf_char(o, '\n');
		i = j;
	}

	for (size_t i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
	free(value);
}
