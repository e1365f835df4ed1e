// SPDX-License-Identifier: MIT
/*
 * JSON output (schema: docs/FORMAT.md, "JSON output"). Each distinct stack
 * is written once, in a "stacks" table that events refer to by id; with
 * --inline-stacks every event carries its frames, as the Alys shard's
 * output does. Each distinct stack address is rendered to text once and
 * copied wherever it appears, so writing costs a few memcpys per frame
 * rather than a lookup and escaping pass.
 */
#include <stdlib.h>

#include "converter/output.h"
#include "profile/progress.h"
#include "lib/util.h"

/* Nesting of a frame object: top { events [ event { stack [ frame. */
#define FRAME_LEVEL 4

struct json {
	struct outbuf *o;
	bool pretty;
	int level;
	bool need_comma;
};

static void newline(struct json *j)
{
	static const char spaces[] = "                                ";

	if (!j->pretty)
		return;
	outbuf_char(j->o, '\n');
	for (int n = 2 * j->level; n > 0; n -= (int)sizeof(spaces) - 1)
		outbuf_write(j->o, spaces, n < (int)sizeof(spaces) - 1 ?
			     (size_t)n : sizeof(spaces) - 1);
}

/* Start an array element. */
static void elem(struct json *j)
{
	if (j->need_comma)
		outbuf_char(j->o, ',');
	newline(j);
	j->need_comma = true;
}

/* Start an object member. */
static void key(struct json *j, const char *name)
{
	elem(j);
	outbuf_char(j->o, '"');
	outbuf_str(j->o, name);
	outbuf_write(j->o, j->pretty ? "\": " : "\":", j->pretty ? 3 : 2);
}

static void open_(struct json *j, char c)
{
	outbuf_char(j->o, c);
	j->level++;
	j->need_comma = false;
}

static void close_(struct json *j, char c)
{
	j->level--;
	if (j->need_comma)	/* non-empty: closing bracket on its own line */
		newline(j);
	outbuf_char(j->o, c);
	j->need_comma = true;
}

static void str_value(struct json *j, const struct bstr *s)
{
	if (s->ptr)
		outbuf_json_string(j->o, s->ptr, s->len);
	else
		outbuf_str(j->o, "null");
}

static void cstr_value(struct json *j, const char *s)
{
	outbuf_json_string(j->o, s, strlen(s));
}

static void key_u64(struct json *j, const char *name, bool present, uint64_t v)
{
	key(j, name);
	if (present)
		outbuf_u64(j->o, v);
	else
		outbuf_str(j->o, "null");
}

static void key_hex(struct json *j, const char *name, uint64_t v)
{
	key(j, name);
	outbuf_char(j->o, '"');
	outbuf_hex(j->o, v);
	outbuf_char(j->o, '"');
}

static void key_str(struct json *j, const char *name, const struct bstr *s)
{
	key(j, name);
	str_value(j, s);
}

static void write_header(struct json *j, const struct trace_header *h)
{
	key(j, "header");
	open_(j, '{');
	key(j, "magic");
	cstr_value(j, "alys-bpf");
	key_u64(j, "version", true, h->version);
	key_u64(j, "pid", h->present & HDR_PID, h->pid);
	key_str(j, "exe", &h->exe);
	key(j, "argv");
	if (h->present & HDR_ARGV) {
		open_(j, '[');
		for (uint32_t i = 0; i < h->argc; i++) {
			elem(j);
			str_value(j, &h->argv[i]);
		}
		close_(j, ']');
	} else {
		outbuf_str(j->o, "null");
	}
	key_u64(j, "start_ns", h->present & HDR_START_NS, h->start_ns);
	key_u64(j, "start_unix_ns", h->present & HDR_START_UNIX_NS, h->start_unix_ns);
	key_str(j, "hostname", &h->hostname);
	key_str(j, "unwind", &h->unwind);
	key_u64(j, "max_frames", h->present & HDR_MAX_FRAMES, h->max_frames);
	key_str(j, "sample", &h->sample);
	key_str(j, "liveness", &h->liveness);
	if (h->sample_why.ptr)
		key_str(j, "sample_why", &h->sample_why);
	if (h->liveness_why.ptr)
		key_str(j, "liveness_why", &h->liveness_why);
	if (h->container_id.ptr)
		key_str(j, "container_id", &h->container_id);
	if (h->pod_uid.ptr)
		key_str(j, "pod_uid", &h->pod_uid);
	if (h->cgroup.ptr)
		key_str(j, "cgroup", &h->cgroup);
	if (h->present & HDR_NS_PID)
		key_u64(j, "ns_pid", true, h->ns_pid);
	close_(j, '}');
}

static void write_mappings(struct json *j, const struct trace *t)
{
	static const char hex[] = "0123456789abcdef";

	key(j, "mappings");
	open_(j, '[');
	for (size_t i = 0; i < t->nr_maps; i++) {
		const struct trace_mapping *m = &t->maps[i];

		elem(j);
		open_(j, '{');
		key_hex(j, "start", m->start);
		key_hex(j, "end", m->end);
		key_hex(j, "offset", m->offset);
		key_str(j, "path", &m->path);
		key(j, "build_id");
		outbuf_char(j->o, '"');
		for (uint32_t b = 0; b < m->build_id_len; b++) {
			outbuf_char(j->o, hex[m->build_id[b] >> 4]);
			outbuf_char(j->o, hex[m->build_id[b] & 0xf]);
		}
		outbuf_char(j->o, '"');
		if (m->flags & ALYS_MAPPING_ANON) {
			key(j, "anon");
			outbuf_str(j->o, "true");
		}
		close_(j, '}');
	}
	close_(j, ']');
}

static void write_counters(struct json *j, const struct trace *t)
{
	key(j, "counters");
	open_(j, '{');
	for (size_t i = 0; i < t->nr_counters; i++) {
		elem(j);
		str_value(j, &t->counters[i].name);
		outbuf_write(j->o, ": ", j->pretty ? 2 : 1);
		outbuf_u64(j->o, t->counters[i].value);
	}
	close_(j, '}');
}

static void write_end(struct json *j, const struct trace *t)
{
	const struct trace_end *e = &t->end;

	key(j, "end");
	if (!t->has_end) {
		outbuf_str(j->o, "null");
		return;
	}
	open_(j, '{');
	key_str(j, "reason", &e->reason);
	key(j, "exit_status");
	if (e->present & END_EXIT_STATUS)
		outbuf_i64(j->o, e->exit_status);
	else
		outbuf_str(j->o, "null");
	key_u64(j, "stop_ns", e->present & END_STOP_NS, e->stop_ns);
	key_u64(j, "events", e->present & END_EVENTS, e->events);
	key_str(j, "liveness", &e->liveness);
	key_u64(j, "file_bytes", e->present & END_BYTES, e->file_bytes);
	key_u64(j, "raw_bytes", e->present & END_BYTES, e->raw_bytes);
	key_u64(j, "blocks", e->present & END_BYTES, e->blocks);
	close_(j, '}');
}

static void write_collections(struct json *j, const struct trace *t)
{
	key(j, "collections");
	open_(j, '[');
	for (size_t i = 0; i < t->nr_collections; i++) {
		const struct trace_collection *c = &t->collections[i];

		elem(j);
		open_(j, '{');
		key(j, "time_ns");
		outbuf_i64(j->o, (int64_t)(c->ts_ns - t->hdr.start_ns));
		key_u64(j, "gc_no", true, c->gc_no);
		key_u64(j, "since", true, c->since);
		key_u64(j, "judged", true, c->judged);
		key_u64(j, "dead", true, c->dead);
		key_u64(j, "unreadable", true, c->unreadable);
		key_u64(j, "scan_ns", true, c->scan_ns);
		key_u64(j, "followed", c->has_followed, c->followed);
		key(j, "at_end");
		outbuf_str(j->o, !c->has_followed ? "null" : c->at_end ? "true" : "false");
		close_(j, '}');
	}
	close_(j, ']');
}

/* The stop-the-world pauses (FORMAT.md record 13); their stacks are in
 * "stacks" with the events'. */
static void write_pauses(struct json *j, const struct trace *t)
{
	key(j, "pauses");
	open_(j, '[');
	for (size_t i = 0; i < t->nr_pauses; i++) {
		const struct trace_pause *p = &t->pauses[i];

		elem(j);
		open_(j, '{');
		key(j, "time_ns");
		outbuf_i64(j->o, (int64_t)(p->stop_ns - t->hdr.start_ns));
		key_u64(j, "duration_ns", true, p->start_ns - p->stop_ns);
		key_u64(j, "collection_ns", p->end_ns != 0, p->end_ns - p->begin_ns);
		key_u64(j, "tid", true, p->tid);
		key_u64(j, "gc_no", true, p->gc_no);
		key_u64(j, "stack_id", true, p->stack ? t->stacks[p->stack - 1].id : 0);
		close_(j, '}');
	}
	close_(j, ']');
}

/* Where the target's memory was (FORMAT.md record 14), sample by sample. */
static void write_memory(struct json *j, const struct trace *t)
{
	key(j, "memory");
	open_(j, '[');
	for (size_t i = 0; i < t->nr_memory; i++) {
		const struct trace_memory *m = &t->memory[i];

		elem(j);
		open_(j, '{');
		key(j, "time_ns");
		outbuf_i64(j->o, (int64_t)(m->ts_ns - t->hdr.start_ns));
		key_u64(j, "rss", true, m->rss);
		key_u64(j, "heap_resident", true, m->heap_resident);
		key_u64(j, "live", true, m->live);
		key_u64(j, "heap_in_use", true, m->heap_in_use);
		key_u64(j, "heap_free", true, m->heap_free);
		key_u64(j, "heap_unmapped", true, m->heap_unmapped);
		key_u64(j, "fiber_stacks", true, m->fiber_stacks);
		key_u64(j, "fibers", true, m->fibers);
		key_u64(j, "malloc", true, m->malloc);
		key_u64(j, "anon", true, m->anon);
		key_u64(j, "files", true, m->files);
		key_u64(j, "gc_no", true, m->gc_no);
		close_(j, '}');
	}
	close_(j, ']');
}

/* The heap's growths (FORMAT.md record 15); their stacks are in "stacks". */
static void write_grows(struct json *j, const struct trace *t)
{
	key(j, "heap_growths");
	open_(j, '[');
	for (size_t i = 0; i < t->nr_grows; i++) {
		const struct trace_grow *g = &t->grows[i];

		elem(j);
		open_(j, '{');
		key(j, "time_ns");
		outbuf_i64(j->o, (int64_t)(g->ts_ns - t->hdr.start_ns));
		key_u64(j, "bytes", true, g->bytes);
		key_u64(j, "tid", true, g->tid);
		key_u64(j, "gc_no", true, g->gc_no);
		key_u64(j, "stack_id", true, g->stack ? t->stacks[g->stack - 1].id : 0);
		close_(j, '}');
	}
	close_(j, ']');
}

/* Prerendered frame objects, one per symbolizer entry, made on first use. */
struct frame_cache {
	char **text;
	uint32_t *len;
	size_t cap;
	struct stack_cache *stacks;
};

static void frame_members(struct json *j, const struct sym_frame *f)
{
	key(j, "name");
	cstr_value(j, f->name);
	if (f->symbol != f->name && strcmp(f->symbol, f->name)) {
		key(j, "symbol");
		cstr_value(j, f->symbol);
	}
	if (f->file) {
		key(j, "file");
		cstr_value(j, f->file);
	}
	if (f->line)
		key_u64(j, "line", true, f->line);
}

/*
 * One recorded address: every call inlined there as a frame object of its
 * own ("inlined": true), innermost first, then the function holding the
 * code; all with the same ip.
 */
static void render_entry(const struct sym_entry *e, bool pretty, struct outbuf *mem)
{
	struct json j = { .o = mem, .pretty = pretty, .level = FRAME_LEVEL };

	for (uint32_t i = 0; i < e->nr_frames; i++) {
		if (i) {
			outbuf_char(mem, ',');
			newline(&j);
		}
		open_(&j, '{');
		key_hex(&j, "ip", e->ip);
		frame_members(&j, &e->frames[i]);
		if (i + 1 < e->nr_frames) {
			key(&j, "inlined");
			outbuf_str(mem, "true");
		}
		close_(&j, '}');
	}
}

static void frame_text(struct frame_cache *fc, struct symbolizer *sym,
		       uint32_t idx, const struct output_options *opt,
		       const char **text, uint32_t *len)
{
	if (idx >= fc->cap) {
		size_t old = fc->cap;
		size_t cap = old;

		fc->text = grow_array(fc->text, &cap, (size_t)idx + 1, sizeof(*fc->text));
		fc->len = xrealloc_array(fc->len, cap, sizeof(*fc->len));
		for (size_t i = old; i < cap; i++)
			fc->text[i] = NULL;
		fc->cap = cap;
	}
	if (!fc->text[idx]) {
		struct outbuf mem;

		outbuf_init(&mem, -1);
		render_entry(symbolizer_entry(sym, idx), opt->indent, &mem);
		fc->text[idx] = mem.buf;	/* keeps the buffer */
		fc->len[idx] = (uint32_t)mem.len;
	}
	*text = fc->text[idx];
	*len = fc->len[idx];
}

/*
 * A stack's frames as one text, made once per stack and copied into every
 * event that has it: one memcpy per event instead of a lookup per frame.
 * Past STACK_CACHE_MAX bytes of such texts, further stacks are assembled
 * per event from the frame texts (traces with millions of distinct stacks).
 */
#define STACK_CACHE_MAX (256u << 20)

struct stack_cache {
	char **text;		/* per trace stack, NULL until made */
	uint32_t *len;
	size_t bytes;
};

static void render_frames(struct json *j, const struct trace *t, const struct trace_stack *st,
			  struct symbolizer *sym, struct frame_cache *fc,
			  const struct output_options *opt)
{
	struct frame_iter it;
	uint64_t ip;

	frames_begin(&it, t, st, opt->depth);
	for (uint32_t i = 0; frames_next(&it, &ip); i++) {
		uint32_t idx = symbolizer_resolve(sym, ip, i);
		const char *text;
		uint32_t len;

		frame_text(fc, sym, idx, opt, &text, &len);
		elem(j);
		outbuf_write(j->o, text, len);
	}
}

static void write_frames(struct json *j, const struct trace *t, const struct trace_stack *st,
			 struct symbolizer *sym, struct frame_cache *fc,
			 const struct output_options *opt)
{
	struct stack_cache *sc = fc->stacks;
	size_t si = (size_t)(st - t->stacks);

	if (!sc->text[si] && sc->bytes < STACK_CACHE_MAX) {
		struct json m = { .pretty = j->pretty, .level = j->level };
		struct outbuf mem;

		outbuf_init(&mem, -1);
		m.o = &mem;
		render_frames(&m, t, st, sym, fc, opt);
		sc->text[si] = mem.buf ? mem.buf : xmemdup_str("", 0);
		sc->len[si] = (uint32_t)mem.len;
		sc->bytes += mem.len;
	}
	if (!sc->text[si]) {
		render_frames(j, t, st, sym, fc, opt);
		return;
	}
	outbuf_write(j->o, sc->text[si], sc->len[si]);
	if (sc->len[si])
		j->need_comma = true;
}

static void write_event(struct json *j, const struct trace *t, const struct trace_event *e,
			struct symbolizer *sym, struct frame_cache *fc,
			const struct output_options *opt)
{
	const struct trace_stack *st = trace_event_stack(t, e);
	uint64_t start = t->hdr.start_ns;

	elem(j);
	open_(j, '{');
	key_u64(j, "id", true, e->id);
	key(j, "time_ns");
	outbuf_i64(j->o, (int64_t)(e->ts_ns - start));
	key(j, "kind");
	cstr_value(j, trace_kind_name(e->kind));
	key_u64(j, "tid", true, e->tid);
	key_hex(j, "addr", e->addr);
	key_u64(j, "size", true, e->size);
	if (e->kind == ALYS_KIND_REALLOC || e->kind == ALYS_KIND_FREE) {
		key_hex(j, "prev_addr", e->kind == ALYS_KIND_FREE ? e->addr : e->old_addr);
		key_u64(j, "prev_size", true, e->old_size);
		key_u64(j, "prev_id", e->prev_id, e->prev_id);
	}
	if (e->kind == ALYS_KIND_FREE) {
		key(j, "cause");
		cstr_value(j, trace_cause_name(e->cause));
		if (e->cause != ALYS_CAUSE_CALL) {
			key_u64(j, "collection", true, e->gc_no);
			key_u64(j, "since_collection", true, trace_free_since(e));
		}
	}
	key_u64(j, "weight", true, e->weight);
	key_u64(j, "gc_no", true, e->gc_no);
	key_u64(j, "stack_id", true, st ? st->id : 0);
	if (opt->inline_stacks) {
		if (st && (st->flags & ALYS_STACK_FLAG_TRUNCATED)) {
			key(j, "truncated");
			outbuf_str(j->o, "true");
		}
		key(j, "stack");
		open_(j, '[');
		if (st)
			write_frames(j, t, st, sym, fc, opt);
		close_(j, ']');
	}
	close_(j, '}');
}

/* Every stack a selected event refers to, once, by its id (a damaged trace
 * that repeats an id gets the first stack of that id). */
static void write_stacks(struct json *j, struct model *m, struct frame_cache *fc,
			 const struct output_options *opt)
{
	const struct trace *t = m->t;
	struct u64_table written;

	u64_table_init(&written);
	key(j, "stacks");
	open_(j, '[');
	for (size_t si = 0; si < t->nr_stacks; si++) {
		const struct trace_stack *st = &t->stacks[si];

		if (!m->stack_shown[si] || u64_table_get(&written, st->id))
			continue;
		u64_table_put(&written, st->id, 1, 0);
		elem(j);
		open_(j, '{');
		key_u64(j, "id", true, st->id);
		if (st->flags & ALYS_STACK_FLAG_TRUNCATED) {
			key(j, "truncated");
			outbuf_str(j->o, "true");
		}
		key(j, "frames");
		open_(j, '[');
		render_frames(j, t, st, m->sym, fc, opt);
		close_(j, ']');
		close_(j, '}');
	}
	close_(j, ']');
	u64_table_free(&written);
}

struct event_writer {
	struct json *j;
	const struct trace *t;
	struct symbolizer *sym;
	struct frame_cache *fc;
	const struct output_options *opt;
};

static void write_shown(void *ctx, const struct trace_event *e)
{
	struct event_writer *w = ctx;

	write_event(w->j, w->t, e, w->sym, w->fc, w->opt);
}

void write_json(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	const struct trace *t = m->t;
	struct json j = { .o = o, .pretty = opt->indent };
	struct frame_cache fc = { 0 };
	struct stack_cache sc = { 0 };
	struct event_writer w = { .j = &j, .t = t, .sym = m->sym, .fc = &fc, .opt = opt };

	sc.text = xcalloc(t->nr_stacks ? t->nr_stacks : 1, sizeof(*sc.text));
	sc.len = xcalloc(t->nr_stacks ? t->nr_stacks : 1, sizeof(*sc.len));
	fc.stacks = &sc;

	open_(&j, '{');
	write_header(&j, &t->hdr);
	write_mappings(&j, t);
	write_counters(&j, t);
	write_end(&j, t);
	write_collections(&j, t);
	write_pauses(&j, t);
	write_memory(&j, t);
	write_grows(&j, t);
	for (size_t i = 0; i < t->nr_pauses; i++)
		if (t->pauses[i].stack)
			m->stack_shown[t->pauses[i].stack - 1] = 1;
	for (size_t i = 0; i < t->nr_grows; i++)
		if (t->grows[i].stack)
			m->stack_shown[t->grows[i].stack - 1] = 1;
	if (!opt->inline_stacks)
		write_stacks(&j, m, &fc, opt);
	key(&j, "events");
	open_(&j, '[');
	model_each_shown(m, write_shown, &w);
	close_(&j, ']');
	close_(&j, '}');
	outbuf_char(o, '\n');

	for (size_t i = 0; i < fc.cap; i++)
		free(fc.text[i]);
	free(fc.text);
	free(fc.len);
	for (size_t i = 0; i < t->nr_stacks; i++)
		free(sc.text[i]);
	free(sc.text);
	free(sc.len);
}
