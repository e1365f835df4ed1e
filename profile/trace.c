// SPDX-License-Identifier: MIT
/*
 * .alys reader. The input is hostile: every object's extent is bounds-checked
 * by mp_scan before msgpack-c decodes it, every type and field count is
 * checked before use, and no allocation is sized by a number from the file
 * beyond what the remaining bytes could hold.
 */
#include "profile/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "alys_records.h"
#include "profile/mp_scan.h"
#include "profile/progress.h"
#include "lib/util.h"

/* Where blocks are inflated (one at a time). */
struct inflater {
	ZSTD_DCtx *ctx;
	char *buf;
	size_t cap;
	struct mp_decoder dec;	/* a block's records */
};

static void inflater_free(struct inflater *inf)
{
	ZSTD_freeDCtx(inf->ctx);
	free(inf->buf);
	mp_decoder_free(&inf->dec);
}

/* trace_each_event's state: the events are read a second time. */
struct event_stream {
	trace_event_fn *fn;
	void *ctx;
	struct u64_table live;		/* addr -> size (a) and id (b) of its allocation */
	struct u32_table v1_ids;	/* version 1: stack id -> index, so far */
	uint32_t v1_stacks;		/* version 1 stack records so far */
	uint32_t next_id;
};

/* What a reading does: the tables (trace_load's first reading, which
 * also counts the events), the events (trace_each_event's second), or both
 * at once (a trace built as written: trace_put_*). */
enum read_mode { READ_TABLES, READ_EVENTS, READ_LIVE };

struct reader {
	struct trace *t;
	enum read_mode mode;
	uint64_t rec_off;		/* in the file; a block's when in_block */
	bool in_block;
	size_t blk_off;			/* the record's offset in the inflated block */
	struct inflater *inf;
	struct event_stream *es;	/* READ_EVENTS, READ_LIVE: where events go */
};

static bool keeps_tables(const struct reader *r)
{
	return r->mode != READ_EVENTS;
}

/* A trace built as it is written (trace_build_begin). */
struct trace_live {
	struct event_stream es;
	bool header_read;
	uint64_t records;		/* put so far, for messages */
};

/* How a trace is read: nothing of it is for the trace's users. */
struct trace_reader {
	const uint8_t *data;		/* the mapped file */
	size_t size;
	size_t read_end;		/* byte after the last record read */

	/* the tables' capacities (struct trace holds their lengths) */
	size_t cap_maps, cap_stacks, cap_nodes, cap_collections, cap_censuses, cap_pauses, cap_memory, cap_grows;
	size_t cap_census_types, cap_heap_blocks, cap_roots;
	struct u32_table stack_by_id;	/* id -> index into stacks */
	/* blocks live at once by the first reading, blocks added less those
	 * freed (link_event's count without its table): now, and the most */
	int64_t live_now;
	uint64_t live_most;
	struct u64_table v1_child;	/* version 1, while reading: (parent, ip) -> node */
	size_t snapshot_mark_block, snapshot_mark_root;
	uint8_t **owned;		/* byte copies the trace owns */
	size_t nr_owned, cap_owned;

	/* events whose stack record came later (written by two CPUs at once):
	 * resolved once the whole file is read */
	struct trace_late_ref { uint64_t at; uint32_t id; } *late;
	size_t nr_late, cap_late;

	struct trace_live *live;	/* trace_build_begin: built as written */
	uint64_t *ips;			/* a stack record's frames, innermost first */
	size_t cap_ips;

	/* The record table's description of each record type as this trace's
	 * version has it, and the fields it requires (with the type): looked
	 * up once, not for every record (include/alys_records.h). */
	const struct alys_record_desc *rec_desc[16];
	uint8_t rec_need[16];

	/* diagnostics collected while reading, reported once */
	uint64_t undefined_stack_refs;
	uint32_t first_undefined_stack;
	uint64_t first_undefined_stack_at;
	uint64_t gc_no_saturated;
	uint64_t early_deaths;		/* inferred frees whose since was past gc_no */
	uint64_t first_early_death_at;
	uint32_t first_early_death_gc, first_early_death_since;
};

static int bad(const struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->mode == READ_LIVE)
		errx_msg("%s: record %" PRIu64 ": %s", r->t->path, r->t->rd->live->records, msg);
	else if (r->in_block)
		errx_msg("%s: byte %" PRIu64 " (the block there, at its inflated byte %zu): %s",
			 r->t->path, r->rec_off, r->blk_off, msg);
	else
		errx_msg("%s: byte %" PRIu64 ": %s", r->t->path, r->rec_off, msg);
	return -1;
}

static const char *type_name(const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL: return "nil";
	case MSGPACK_OBJECT_BOOLEAN: return "a boolean";
	case MSGPACK_OBJECT_POSITIVE_INTEGER: return "an unsigned integer";
	case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "a negative integer";
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64: return "a float";
	case MSGPACK_OBJECT_STR: return "a string";
	case MSGPACK_OBJECT_ARRAY: return "an array";
	case MSGPACK_OBJECT_MAP: return "a map";
	case MSGPACK_OBJECT_BIN: return "binary data";
	case MSGPACK_OBJECT_EXT: return "an extension object";
	}
	return "an unknown object";
}

static int want_u64(const struct reader *r, const msgpack_object *o,
		    const char *what, uint64_t *v)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(r, "%s is %s, expected an unsigned integer",
			   what, type_name(o));
	*v = o->via.u64;
	return 0;
}

static int want_u32(const struct reader *r, const msgpack_object *o,
		    const char *what, uint32_t *v)
{
	uint64_t u = 0;

	if (want_u64(r, o, what, &u))
		return -1;
	if (u > UINT32_MAX)
		return bad(r, "%s %" PRIu64 " does not fit in 32 bits", what, u);
	*v = (uint32_t)u;
	return 0;
}

_Static_assert(ALYS_REC_BLOCK < 16, "struct trace's rec_desc[] holds every record type");

/* A record of TYPE, f[0..n): at least the fields the trace's version
 * requires, and each field the table (include/alys_records.h) says is a
 * number an unsigned integer in its type's range, into v[i] for f[i]
 * (v[0] and the fields absent stay 0). */
static int want_fields(const struct reader *r, unsigned type, const msgpack_object *f,
		       uint32_t n, uint64_t v[ALYS_RECORD_MAX_FIELDS + 1])
{
	struct trace *t = r->t;
	const struct alys_record_desc *d = t->rd->rec_desc[type & 15];
	unsigned need;

	if (!d) {
		d = t->rd->rec_desc[type & 15] = alys_record(type, (unsigned)t->hdr.version);
		t->rd->rec_need[type & 15] = (uint8_t)(alys_record_required(d, (unsigned)t->hdr.version) + 1);
	}
	need = t->rd->rec_need[type & 15];
	if (n < need)
		return bad(r, "%s record has %u fields, expected %u", d->what, n, need);
	v[0] = 0;
	for (unsigned i = n; i <= d->n; i++)	/* optional fields not written */
		v[i] = 0;
	for (unsigned i = 1; i < n && i <= d->n; i++) {
		const struct alys_field *fd = &d->f[i - 1];
		unsigned bits = fd->type == ALYS_F_U8 ? 8 : fd->type == ALYS_F_U32 ? 32 :
				fd->type == ALYS_F_U64 ? 64 : 0;

		if (!bits) {
			v[i] = 0;
			continue;
		}
		/* the field's name is spelled out for a message only: this runs
		 * for every field of every event */
		if (f[i].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return bad(r, "%s %s is %s, expected an unsigned integer", d->what,
				   fd->name, type_name(&f[i]));
		v[i] = f[i].via.u64;
		if (bits < 64 && v[i] >> bits)
			return bad(r, "%s %s %" PRIu64 " does not fit in %u bits", d->what,
				   fd->name, v[i], bits);
	}
	return 0;
}

static int want_int(const struct reader *r, const msgpack_object *o,
		    const char *what, int64_t *v)
{
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*v = o->via.i64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX) {
		*v = (int64_t)o->via.u64;
		return 0;
	}
	return bad(r, "%s is %s, expected an integer", what, type_name(o));
}

static int want_str(const struct reader *r, const msgpack_object *o,
		    const char *what, struct bstr *s)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return bad(r, "%s is %s, expected a string", what, type_name(o));
	free(s->ptr);		/* a repeated key: the last one holds */
	s->ptr = xmemdup_str(o->via.str.ptr, o->via.str.size);
	s->len = o->via.str.size;
	return 0;
}

static bool key_is(const msgpack_object *k, const char *name)
{
	size_t n = strlen(name);

	return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
	       !memcmp(k->via.str.ptr, name, n);
}

/* ---- header ---------------------------------------------------------- */

static int check_identity(const struct reader *r, const msgpack_object *o)
{
	const msgpack_object *magic = NULL, *version = NULL;

	if (o->type != MSGPACK_OBJECT_MAP)
		return bad(r, "not an alys-bpf trace: the file starts with %s, "
			   "not a header map with magic \"%s\"", type_name(o), ALYS_MAGIC);
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		if (key_is(&kv->key, "magic"))
			magic = &kv->val;
		else if (key_is(&kv->key, "version"))
			version = &kv->val;
	}
	if (!magic || magic->type != MSGPACK_OBJECT_STR ||
	    magic->via.str.size != strlen(ALYS_MAGIC) ||
	    memcmp(magic->via.str.ptr, ALYS_MAGIC, strlen(ALYS_MAGIC)))
		return bad(r, "not an alys-bpf trace: the header has no magic \"%s\"",
			   ALYS_MAGIC);
	if (!version)
		return bad(r, "the header has no format version; this converter reads version %d",
			   ALYS_FORMAT_VERSION);
	if (version->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(r, "header version is %s, expected an unsigned integer",
			   type_name(version));
	if (version->via.u64 < ALYS_FORMAT_VERSION_MIN || version->via.u64 > ALYS_FORMAT_VERSION)
		return bad(r, "trace format version %" PRIu64 ", this converter reads versions "
			   "%d to %d; use an alys_converter built for version %" PRIu64,
			   version->via.u64, ALYS_FORMAT_VERSION_MIN, ALYS_FORMAT_VERSION,
			   version->via.u64);
	r->t->hdr.version = version->via.u64;
	return 0;
}

static int parse_argv(const struct reader *r, const msgpack_object *o,
		      struct trace_header *h)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return bad(r, "header argv is %s, expected an array of strings",
			   type_name(o));
	for (uint32_t i = 0; i < h->argc; i++)
		free(h->argv[i].ptr);
	free(h->argv);
	h->argc = o->via.array.size;
	h->argv = xcalloc(h->argc, sizeof(*h->argv));
	for (uint32_t i = 0; i < h->argc; i++)
		if (want_str(r, &o->via.array.ptr[i], "header argv element", &h->argv[i]))
			return -1;
	return 0;
}

static int parse_header(const struct reader *r, const msgpack_object *o)
{
	struct trace_header *h = &r->t->hdr;

	if (check_identity(r, o))
		return -1;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		const msgpack_object *v = &o->via.map.ptr[i].val;
		int err = 0;

		if (k->type != MSGPACK_OBJECT_STR)
			return bad(r, "header key is %s, expected a string", type_name(k));
		if (key_is(k, "pid")) {
			err = want_u64(r, v, "header pid", &h->pid);
			h->present |= HDR_PID;
		} else if (key_is(k, "exe")) {
			err = want_str(r, v, "header exe", &h->exe);
			h->present |= HDR_EXE;
		} else if (key_is(k, "argv")) {
			err = parse_argv(r, v, h);
			h->present |= HDR_ARGV;
		} else if (key_is(k, "start_ns")) {
			err = want_u64(r, v, "header start_ns", &h->start_ns);
			h->present |= HDR_START_NS;
		} else if (key_is(k, "start_unix_ns")) {
			err = want_u64(r, v, "header start_unix_ns", &h->start_unix_ns);
			h->present |= HDR_START_UNIX_NS;
		} else if (key_is(k, "hostname")) {
			err = want_str(r, v, "header hostname", &h->hostname);
			h->present |= HDR_HOSTNAME;
		} else if (key_is(k, "unwind")) {
			err = want_str(r, v, "header unwind", &h->unwind);
			h->present |= HDR_UNWIND;
		} else if (key_is(k, "max_frames")) {
			err = want_u64(r, v, "header max_frames", &h->max_frames);
			h->present |= HDR_MAX_FRAMES;
		} else if (key_is(k, "sample")) {
			err = want_str(r, v, "header sample", &h->sample);
			h->present |= HDR_SAMPLE;
		} else if (key_is(k, "liveness")) {
			err = want_str(r, v, "header liveness", &h->liveness);
			h->present |= HDR_LIVENESS;
		} else if (key_is(k, "sample_why")) {
			err = want_str(r, v, "header sample_why", &h->sample_why);
		} else if (key_is(k, "liveness_why")) {
			err = want_str(r, v, "header liveness_why", &h->liveness_why);
		} else if (key_is(k, "container_id")) {
			err = want_str(r, v, "header container_id", &h->container_id);
		} else if (key_is(k, "pod_uid")) {
			err = want_str(r, v, "header pod_uid", &h->pod_uid);
		} else if (key_is(k, "cgroup")) {
			err = want_str(r, v, "header cgroup", &h->cgroup);
		} else if (key_is(k, "ns_pid")) {
			err = want_u64(r, v, "header ns_pid", &h->ns_pid);
			h->present |= HDR_NS_PID;
		}
		/* other keys: later additions, ignored (FORMAT.md) */
		if (err)
			return -1;
	}
	return 0;
}

/* ---- records --------------------------------------------------------- */

/* Each record's building (put_*) is the same for a file's records, decoded
 * by parse_*, and a live trace's, given typed (trace_put_*). */

static int check_mapping(const struct reader *r, uint64_t start, uint64_t end)
{
	if (end <= start)
		return bad(r, "mapping [0x%" PRIx64 ", 0x%" PRIx64 ") is empty or reversed",
			   start, end);
	return 0;
}

/* m's path and build id are the trace's from here. */
static void put_mapping(const struct reader *r, const struct trace_mapping *m)
{
	struct trace *t = r->t;

	t->maps = grow_array(t->maps, &t->rd->cap_maps, t->nr_maps + 1, sizeof(*t->maps));
	t->maps[t->nr_maps++] = *m;
}

static int parse_mapping(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_mapping m = { 0 };
	const msgpack_object *bid;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_MAPPING, f, n, v))
		return -1;
	m.start = v[1];
	m.end = v[2];
	m.offset = v[3];
	m.flags = (uint32_t)v[6];
	if (check_mapping(r, m.start, m.end))
		return -1;
	bid = &f[5];
	if (bid->type != MSGPACK_OBJECT_BIN && bid->type != MSGPACK_OBJECT_NIL)
		return bad(r, "mapping build id is %s, expected binary data",
			   type_name(bid));
	if (want_str(r, &f[4], "mapping path", &m.path))
		return -1;
	if (bid->type == MSGPACK_OBJECT_BIN && bid->via.bin.size) {
		m.build_id_len = bid->via.bin.size;
		m.build_id = xmalloc(m.build_id_len);
		memcpy(m.build_id, bid->via.bin.ptr, m.build_id_len);
	}
	put_mapping(r, &m);
	return 0;
}

/* Version 2: stack nodes first.. (FORMAT.md record 2), each frame the child
 * of the one outside it. Ids come in order, so the node table is an array. */
static int put_nodes(const struct reader *r, uint32_t first, uint32_t parent,
		     const uint64_t *ips, uint32_t nr, uint32_t flags)
{
	struct trace *t = r->t;
	uint32_t depth;

	if (first != t->nr_nodes + 1)
		return bad(r, "stack node id %u out of order: %zu nodes so far, so the next "
			   "is %zu", first, t->nr_nodes, t->nr_nodes + 1);
	if (parent >= first)
		return bad(r, "stack node %u hangs from node %u, not defined before it",
			   first, parent);
	depth = parent ? t->nodes[parent - 1].depth : 0;
	if (depth + nr > TRACE_MAX_FRAMES)
		return bad(r, "stack node %u makes a stack of %u frames; this converter "
			   "reads at most %d", first, depth + nr, TRACE_MAX_FRAMES);
	if (nr > UINT32_MAX - 1 - t->nr_nodes)
		return bad(r, "more than %u stack nodes; this converter stops there",
			   UINT32_MAX - 1);
	t->nodes = grow_array(t->nodes, &t->rd->cap_nodes, t->nr_nodes + nr, sizeof(*t->nodes));
	for (uint32_t i = 0; i < nr; i++) {
		struct trace_node *nd = &t->nodes[t->nr_nodes];

		nd->ip = ips[nr - 1 - i];
		nd->parent = i ? (uint32_t)t->nr_nodes : parent;
		nd->depth = (uint16_t)(depth + i + 1);
		nd->flags = (uint16_t)flags;
		t->nr_nodes++;
	}
	return 0;
}

static int parse_stack_nodes(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_reader *rd = r->t->rd;
	const msgpack_object *ips = &f[3];
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];
	uint32_t nr;

	if (want_fields(r, ALYS_REC_STACK, f, n, v))
		return -1;
	if (ips->type != MSGPACK_OBJECT_ARRAY)
		return bad(r, "stack node %u frames are %s, expected an array", (uint32_t)v[1],
			   type_name(ips));
	nr = ips->via.array.size;
	if (nr > TRACE_MAX_FRAMES)	/* put_nodes says so; the copy stays small */
		return put_nodes(r, (uint32_t)v[1], (uint32_t)v[2], NULL, nr, (uint32_t)v[4]);
	rd->ips = grow_array(rd->ips, &rd->cap_ips, nr ? nr : 1, sizeof(*rd->ips));
	/* the file's order is outermost first */
	for (uint32_t i = 0; i < nr; i++)
		if (want_u64(r, &ips->via.array.ptr[i], "stack frame", &rd->ips[nr - 1 - i]))
			return -1;
	return put_nodes(r, (uint32_t)v[1], (uint32_t)v[2], rd->ips, nr, (uint32_t)v[4]);
}

/* The index of the stack an event's stack_id names: a version 1 stack
 * record's, or (version 2) the stack ending at that node, made once, when
 * an event first names it. -1 when no such record or node (yet). */
static int64_t stack_of_id(struct trace *t, uint32_t id)
{
	struct trace_stack s;
	uint32_t known;

	if (u32_table_get(&t->rd->stack_by_id, id, &known))
		return known;
	if (!id || id > t->nr_nodes || t->hdr.version < 2)
		return -1;
	s.id = id;
	s.nr = t->nodes[id - 1].depth;
	s.flags = t->nodes[id - 1].flags;
	s.leaf = id;
	t->stacks = grow_array(t->stacks, &t->rd->cap_stacks, t->nr_stacks + 1,
			       sizeof(*t->stacks));
	t->stacks[t->nr_stacks] = s;
	u32_table_put(&t->rd->stack_by_id, id, (uint32_t)t->nr_stacks);
	return (int64_t)t->nr_stacks++;
}

/* Version 1: the node of frame ip called from parent, shared with every
 * stack that has the same outer frames. */
static uint32_t v1_node(struct trace *t, uint32_t parent, uint64_t ip)
{
	uint64_t key = hash_u64(ip ^ hash_u64(parent)) | 1;
	struct u64_slot *sl = u64_table_get(&t->rd->v1_child, key);
	struct trace_node *nd;

	if (sl && t->nodes[sl->b - 1].ip == ip && t->nodes[sl->b - 1].parent == parent)
		return sl->b;
	t->nodes = grow_array(t->nodes, &t->rd->cap_nodes, t->nr_nodes + 1, sizeof(*t->nodes));
	nd = &t->nodes[t->nr_nodes++];
	nd->ip = ip;
	nd->parent = parent;
	nd->depth = (uint16_t)(parent ? t->nodes[parent - 1].depth + 1 : 1);
	nd->flags = 0;
	if (!sl)	/* a 64-bit key collision keeps the first: the other is unshared */
		u64_table_put(&t->rd->v1_child, key, 0, (uint32_t)t->nr_nodes);
	return (uint32_t)t->nr_nodes;
}

static int parse_stack(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace *t = r->t;
	const msgpack_object *ips;
	struct trace_stack s;
	uint32_t leaf = 0;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_STACK, f, n, v))
		return -1;
	s.id = (uint32_t)v[1];
	if (!s.id)
		return bad(r, "stack id is 0; ids of stack records are non-zero");
	if (r->mode == READ_EVENTS) {	/* which stack the id names from here */
		u32_table_put(&r->es->v1_ids, s.id, r->es->v1_stacks++);
		return 0;
	}
	s.flags = (uint32_t)v[3];
	ips = &f[2];
	if (ips->type != MSGPACK_OBJECT_ARRAY)
		return bad(r, "stack %u frames are %s, expected an array", s.id,
			   type_name(ips));
	if (t->nr_stacks >= UINT32_MAX - 1)
		return bad(r, "more than %u stacks; this converter stops there",
			   UINT32_MAX - 2);
	s.nr = ips->via.array.size;
	if (s.nr > TRACE_MAX_FRAMES)
		return bad(r, "stack %u has %u frames; this converter reads at most %d", s.id,
			   s.nr, TRACE_MAX_FRAMES);
	if (s.nr > UINT32_MAX - 1 - t->nr_nodes)
		return bad(r, "more than %u stack nodes; this converter stops there",
			   UINT32_MAX - 1);
	for (uint32_t i = s.nr; i-- > 0;) {
		uint64_t ip = 0;

		if (want_u64(r, &ips->via.array.ptr[i], "stack frame", &ip))
			return -1;
		leaf = v1_node(t, leaf, ip);
	}
	s.leaf = leaf;
	t->stacks = grow_array(t->stacks, &t->rd->cap_stacks, t->nr_stacks + 1,
			       sizeof(*t->stacks));
	t->stacks[t->nr_stacks] = s;
	/* ids are unique per FORMAT.md; should one repeat, later events use
	 * the later stack and earlier ones keep theirs. */
	u32_table_put(&t->rd->stack_by_id, s.id, (uint32_t)t->nr_stacks);
	t->nr_stacks++;
	return 0;
}

/* The address whose block e gives back (0: none), and the one it adds. */
static uint64_t replaced_addr(const struct trace_event *e)
{
	return e->kind == ALYS_KIND_REALLOC ? e->old_addr : e->kind == ALYS_KIND_FREE ? e->addr : 0;
}

static uint64_t added_addr(const struct trace_event *e)
{
	return e->kind != ALYS_KIND_FREE ? e->addr : 0;
}

/* Fill in prev_id from the allocations seen so far; keep the live-address
 * table current. old_size is the writer's (FORMAT.md) for called frees and
 * reallocs; an inferred free's record has none: the size of the block it
 * ends. */
static void link_event(struct u64_table *live, struct trace_event *e)
{
	uint64_t replaced = replaced_addr(e);
	struct u64_slot *s;

	if (replaced && (s = u64_table_get(live, replaced))) {
		e->prev_id = s->b;
		if (e->kind == ALYS_KIND_FREE && e->cause != ALYS_CAUSE_CALL)
			e->old_size = s->a;
		/* A failed GC_realloc (NULL for a non-zero size) leaves the old
		 * block allocated; realloc to 0 frees it. */
		if (!(e->kind == ALYS_KIND_REALLOC && !e->addr && e->size))
			u64_table_remove(live, replaced);
	}
	/* The collector reuses blocks without a GC_free: an allocation at a
	 * known address simply replaces the older entry. */
	if (added_addr(e))
		u64_table_put(live, e->addr, e->size, e->id);
}

/* The weight of an event of a --duty trace, as an estimate of the whole
 * run (apply_duty_share). */
static uint64_t duty_weight(const struct trace *t, const struct trace_event *e)
{
	double share = e->kind == ALYS_KIND_REALLOC ? t->duty_share_realloc : t->duty_share;
	double w;

	if (!t->duty_share || !e->weight)
		return e->weight;
	w = (double)e->weight / share;
	/* A hostile share cannot overflow the sums. */
	return w < 1e15 ? (uint64_t)llround(w) : (uint64_t)1e15;
}

/* The tables' count of events, and the stack an event names (trace_load's
 * first reading, a live trace). */
static int count_event(const struct reader *r, const struct trace_event *e, uint32_t stack_id)
{
	struct trace *t = r->t;
	struct trace_reader *rd = t->rd;

	if (t->nr_events >= UINT32_MAX - 1)
		return bad(r, "more than %u events; this converter stops there", UINT32_MAX - 2);
	t->nr_events++;
	if (replaced_addr(e))
		rd->live_now -= rd->live_now > 0;
	if (added_addr(e) && (uint64_t)++rd->live_now > rd->live_most)
		rd->live_most = (uint64_t)rd->live_now;
	if (!stack_id || stack_of_id(t, stack_id) >= 0)
		return 0;
	if (r->mode == READ_TABLES) {
		t->rd->late = grow_array(t->rd->late, &t->rd->cap_late, t->rd->nr_late + 1,
					 sizeof(*t->rd->late));
		t->rd->late[t->rd->nr_late++] = (struct trace_late_ref){ .at = r->rec_off,
									 .id = stack_id };
	} else if (!t->rd->undefined_stack_refs++) {
		/* no second reading to wait for: shown without a stack */
		t->rd->first_undefined_stack = stack_id;
		t->rd->first_undefined_stack_at = t->rd->live->records;
	}
	return 0;
}

/* An event counted (the first reading), linked to what came before it (the
 * second, which hands it out), or both (a live trace). */
static int put_event(const struct reader *r, struct trace_event *e, uint32_t stack_id)
{
	struct trace *t = r->t;
	struct event_stream *es = r->es;

	if (keeps_tables(r) && count_event(r, e, stack_id))
		return -1;
	if (r->mode == READ_TABLES)
		return 0;
	e->id = ++es->next_id;
	e->stack = 0;
	if (stack_id) {
		uint32_t at;

		if ((t->hdr.version < 2 && u32_table_get(&es->v1_ids, stack_id, &at)) ||
		    /* version 2, or a stack record that came later */
		    u32_table_get(&t->rd->stack_by_id, stack_id, &at))
			e->stack = at + 1;
	}
	link_event(&es->live, e);
	e->weight = duty_weight(t, e);
	return 0;
}

static int parse_event(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace *t = r->t;
	struct trace_event e = { 0 };
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1], kind, tid, gc_no;
	uint32_t stack_id;

	if (want_fields(r, ALYS_REC_EVENT, f, n, v))
		return -1;
	kind = v[1];
	e.ts_ns = v[2];
	tid = v[3];
	e.size = v[4];
	e.addr = v[5];
	e.old_addr = v[6];
	e.old_size = v[7];
	stack_id = (uint32_t)v[8];
	e.weight = v[9];
	gc_no = v[10];
	if (kind < ALYS_KIND_MALLOC || kind > ALYS_KIND_FREE)
		return bad(r, "event kind %" PRIu64 " is not one of 1 (GC_malloc), "
			   "2 (GC_malloc_atomic), 3 (GC_realloc), 4 (GC_free)", kind);
	if (tid >> TRACE_TID_BITS)
		return bad(r, "event tid %" PRIu64 " is not a Linux thread id", tid);
	e.kind = (uint32_t)kind;
	e.tid = (uint32_t)tid;
	if (gc_no > UINT32_MAX) {
		t->rd->gc_no_saturated += keeps_tables(r);
		gc_no = UINT32_MAX;
	}
	e.gc_no = (uint32_t)gc_no;
	if (put_event(r, &e, stack_id))
		return -1;
	if (r->mode == READ_EVENTS)
		r->es->fn(r->es->ctx, &e);
	return 0;
}

/* A free the tracer inferred: gc_no the collection that found it dead,
 * old_addr (since) the first it may have died in. */
static int put_death(const struct reader *r, struct trace_event *e)
{
	struct trace *t = r->t;

	/* A collection found it dead before the first one it could die at:
	 * its allocation's stamp raced the collection on another thread (seen
	 * one ahead with several allocating threads). Counted, said once, and
	 * taken as dead at the collection that found it: the rest converts. */
	if (e->old_addr > e->gc_no) {
		if (keeps_tables(r) && !t->rd->early_deaths++) {
			t->rd->first_early_death_at =
				r->mode == READ_LIVE ? t->rd->live->records : r->rec_off;
			t->rd->first_early_death_gc = e->gc_no;
			t->rd->first_early_death_since = (uint32_t)e->old_addr;
		}
		e->old_addr = e->gc_no;
	}
	return put_event(r, e, 0);
}

/* [6, ts, addr, gc_no, since, cause]. */
static int parse_death(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_event e = { .kind = ALYS_KIND_FREE };
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1], cause;

	if (want_fields(r, ALYS_REC_DEATH, f, n, v))
		return -1;
	e.ts_ns = v[1];
	e.addr = v[2];
	e.gc_no = (uint32_t)v[3];
	e.old_addr = (uint32_t)v[4];
	cause = v[5];
	if (cause != ALYS_CAUSE_MARKS && cause != ALYS_CAUSE_REUSE)
		return bad(r, "inferred free cause %" PRIu64 " is not 1 (collected) or 2 (reused)",
			   cause);
	e.cause = (uint32_t)cause;
	if (put_death(r, &e))
		return -1;
	if (r->mode == READ_EVENTS)
		r->es->fn(r->es->ctx, &e);
	return 0;
}

static int put_collection(const struct reader *r, const struct trace_collection *c)
{
	struct trace *t = r->t;

	/* A live trace keeps the last one only: a day's collections would
	 * grow without bound, and nothing live reads them all. */
	if (r->mode == READ_LIVE)
		t->nr_collections = 0;
	t->collections = grow_array(t->collections, &t->rd->cap_collections,
				    t->nr_collections + 1, sizeof(*t->collections));
	t->collections[t->nr_collections] = *c;
	t->collections[t->nr_collections++].first_event = t->nr_events;
	return 0;
}

/* [7, ts, gc_no, since, judged, dead, unreadable, scan_ns, followed, at_end];
 * version 1 stops at scan_ns. */
static int parse_collection(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_collection c = { 0 };
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_COLLECTION, f, n, v))
		return -1;
	c.ts_ns = v[1];
	c.gc_no = (uint32_t)v[2];
	c.since = (uint32_t)v[3];
	c.judged = v[4];
	c.dead = v[5];
	c.unreadable = v[6];
	c.scan_ns = v[7];
	if (r->t->hdr.version >= 2) {	/* the table requires them there */
		c.followed = v[8];
		if (c.followed < c.judged || v[9] > 1)
			return bad(r, "collection record: followed %llu below judged %llu, or "
				   "at_end %llu not 0 or 1", (unsigned long long)c.followed,
				   (unsigned long long)c.judged, (unsigned long long)v[9]);
		c.has_followed = true;
		c.at_end = (uint32_t)v[9];
	}
	return put_collection(r, &c);
}

static int put_pause(const struct reader *r, struct trace_pause *p, uint32_t stack_id)
{
	struct trace *t = r->t;
	int64_t st = stack_id ? stack_of_id(t, stack_id) : -1;

	if (p->start_ns < p->stop_ns)
		return bad(r, "pause restarted at %" PRIu64 ", before it stopped at %" PRIu64,
			   p->start_ns, p->stop_ns);
	if ((p->begin_ns || p->end_ns) &&
	    (p->begin_ns > p->stop_ns || p->end_ns < p->start_ns))
		return bad(r, "pause's collection [%" PRIu64 ", %" PRIu64 "] does not hold the "
			   "pause [%" PRIu64 ", %" PRIu64 "]", p->begin_ns, p->end_ns,
			   p->stop_ns, p->start_ns);
	p->stack = st >= 0 ? (uint32_t)st + 1 : 0;
	if (r->mode == READ_LIVE)	/* the last one only, as collections */
		t->nr_pauses = 0;
	t->pauses = grow_array(t->pauses, &t->rd->cap_pauses, t->nr_pauses + 1,
			       sizeof(*t->pauses));
	t->pauses[t->nr_pauses++] = *p;
	return 0;
}

/* [13, stop_ns, start_ns, tid, gc_no, stack_id, begin_ns, end_ns] */
static int parse_pause(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_pause p = { 0 };
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_PAUSE, f, n, v))
		return -1;
	p.stop_ns = v[1];
	p.start_ns = v[2];
	if (v[3] >> TRACE_TID_BITS)
		return bad(r, "pause tid %" PRIu64 " is not a Linux thread id", v[3]);
	p.tid = (uint32_t)v[3];
	p.gc_no = (uint32_t)v[4];
	p.begin_ns = v[6];
	p.end_ns = v[7];
	return put_pause(r, &p, (uint32_t)v[5]);
}

static int put_grow(const struct reader *r, struct trace_grow *g, uint32_t stack_id)
{
	struct trace *t = r->t;
	int64_t st = stack_id ? stack_of_id(t, stack_id) : -1;

	if (!g->bytes)
		return bad(r, "heap growth of 0 bytes");
	g->stack = st >= 0 ? (uint32_t)st + 1 : 0;
	if (r->mode == READ_LIVE)	/* the last one only */
		t->nr_grows = 0;
	t->grows = grow_array(t->grows, &t->rd->cap_grows, t->nr_grows + 1, sizeof(*t->grows));
	t->grows[t->nr_grows++] = *g;
	return 0;
}

/* [15, ts, tid, bytes, gc_no, stack_id] */
static int parse_grow(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_GROW, f, n, v))
		return -1;
	if (v[2] >> TRACE_TID_BITS)
		return bad(r, "heap growth tid %" PRIu64 " is not a Linux thread id", v[2]);
	return put_grow(r, &(struct trace_grow){ .ts_ns = v[1], .tid = (uint32_t)v[2],
						  .bytes = v[3], .gc_no = (uint32_t)v[4] },
			(uint32_t)v[5]);
}

static int put_memory(const struct reader *r, const struct trace_memory *m)
{
	struct trace *t = r->t;

	if (t->nr_memory && m->ts_ns < t->memory[t->nr_memory - 1].ts_ns)
		return bad(r, "memory sample at %" PRIu64 ", before the one at %" PRIu64,
			   m->ts_ns, t->memory[t->nr_memory - 1].ts_ns);
	if (r->mode == READ_LIVE)	/* the last one only */
		t->nr_memory = 0;
	t->memory = grow_array(t->memory, &t->rd->cap_memory, t->nr_memory + 1,
			       sizeof(*t->memory));
	t->memory[t->nr_memory++] = *m;
	return 0;
}

/* [14, ts, rss, heap_resident, live, heap_in_use, heap_free, heap_unmapped,
 *  fiber_stacks, fibers, malloc, anon, files, gc_no] */
static int parse_memory(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_MEMORY, f, n, v))
		return -1;
	return put_memory(r, &(struct trace_memory){
		.ts_ns = v[1], .rss = v[2], .heap_resident = v[3], .live = v[4],
		.heap_in_use = v[5], .heap_free = v[6], .heap_unmapped = v[7],
		.fiber_stacks = v[8], .fibers = (uint32_t)v[9], .malloc = v[10],
		.anon = v[11], .files = v[12], .gc_no = (uint32_t)v[13] });
}

/* c's types are types[0..c->nr_types). */
static int put_census(const struct reader *r, const struct trace_census *c,
		      const struct trace_census_type *types)
{
	struct trace *t = r->t;
	struct trace_census *nc;

	if (r->mode == READ_LIVE)	/* the last one only, as collections */
		t->nr_censuses = t->nr_census_types = 0;
	t->census_types = grow_array(t->census_types, &t->rd->cap_census_types,
				     t->nr_census_types + c->nr_types + 1, sizeof(*t->census_types));
	t->censuses = grow_array(t->censuses, &t->rd->cap_censuses, t->nr_censuses + 1,
				 sizeof(*t->censuses));
	nc = &t->censuses[t->nr_censuses++];
	*nc = *c;
	nc->first_event = t->nr_events;
	nc->first_type = t->nr_census_types;
	if (c->nr_types)
		memcpy(&t->census_types[t->nr_census_types], types,
		       c->nr_types * sizeof(*types));
	t->nr_census_types += c->nr_types;
	return 0;
}

static int parse_census(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_census c = { 0 };
	struct trace_census_type *types;
	const msgpack_object *arr;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];
	int ret;

	if (want_fields(r, ALYS_REC_CENSUS, f, n, v))
		return -1;
	c.ts_ns = v[1];
	c.gc_no = (uint32_t)v[2];
	c.blocks = v[3];
	c.unreadable = v[4];
	c.walk_ns = v[5];
	arr = &f[6];
	if (arr->type != MSGPACK_OBJECT_ARRAY)
		return bad(r, "census types are %s, expected an array", type_name(arr));
	/* an array's size is bounded by the bytes that hold it */
	types = xcalloc(arr->via.array.size + 1, sizeof(*types));
	for (uint32_t i = 0; i < arr->via.array.size; i++) {
		const msgpack_object *e = &arr->via.array.ptr[i];
		struct trace_census_type *ct = &types[i];

		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size < ALYS_CENSUS_TYPE_FIELDS) {
			free(types);
			return bad(r, "census entry %u is not [type_id, objects, bytes, example]", i);
		}
		if (want_u32(r, &e->via.array.ptr[0], "census type_id", &ct->type_id) ||
		    want_u64(r, &e->via.array.ptr[1], "census objects", &ct->objects) ||
		    want_u64(r, &e->via.array.ptr[2], "census bytes", &ct->bytes) ||
		    want_u64(r, &e->via.array.ptr[3], "census example", &ct->example)) {
			free(types);
			return -1;
		}
	}
	c.nr_types = arr->via.array.size;
	ret = put_census(r, &c, types);
	free(types);
	return ret;
}

static void free_bstr(struct bstr *s);

/* Bytes of a bin object: where they lie in the mapped file, else a copy
 * the trace keeps. */
static int want_bytes(const struct reader *r, const msgpack_object *o, const char *what,
		      const uint8_t **bytes, size_t *len)
{
	struct trace *t = r->t;
	const uint8_t *p;

	if (o->type != MSGPACK_OBJECT_BIN)
		return bad(r, "%s is %s, expected binary data", what, type_name(o));
	p = (const uint8_t *)o->via.bin.ptr;
	*len = o->via.bin.size;
	if (p >= t->rd->data && p + *len <= t->rd->data + t->rd->size) {
		*bytes = p;
		return 0;
	}
	t->rd->owned = grow_array(t->rd->owned, &t->rd->cap_owned, t->rd->nr_owned + 1, sizeof(*t->rd->owned));
	t->rd->owned[t->rd->nr_owned] = xmalloc(*len ? *len : 1);
	memcpy(t->rd->owned[t->rd->nr_owned], p, *len);
	*bytes = t->rd->owned[t->rd->nr_owned++];
	return 0;
}

static int parse_heap_block(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace *t = r->t;
	struct trace_heap_block b;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_HEAP_BLOCK, f, n, v) ||
	    want_bytes(r, &f[4], "heap block bytes", &b.bytes, &b.len))
		return -1;
	b.addr = v[1];
	b.obj_size = v[2];
	b.kind = (uint32_t)v[3];
	if (!b.obj_size)
		return bad(r, "heap block at 0x%" PRIx64 " has object size 0", b.addr);
	t->heap_blocks = grow_array(t->heap_blocks, &t->rd->cap_heap_blocks, t->nr_heap_blocks + 1,
				    sizeof(*t->heap_blocks));
	t->heap_blocks[t->nr_heap_blocks++] = b;
	return 0;
}

static int parse_root(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace *t = r->t;
	struct trace_root root = { 0 };
	struct bstr name = { 0 };
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_ROOT, f, n, v) ||
	    want_bytes(r, &f[4], "root bytes", &root.bytes, &root.len) ||
	    want_str(r, &f[2], "root name", &name))
		return -1;
	root.kind = (uint32_t)v[1];
	root.addr = v[3];
	root.name = name.ptr ? name.ptr : xmemdup_str("", 0);
	t->roots = grow_array(t->roots, &t->rd->cap_roots, t->nr_roots + 1, sizeof(*t->roots));
	t->roots[t->nr_roots++] = root;
	return 0;
}

static int parse_snapshot(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_snapshot *s = &r->t->snapshot;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1], aip;

	if (want_fields(r, ALYS_REC_SNAPSHOT, f, n, v))
		return -1;
	s->ts_ns = v[1];
	s->stop_ns = v[2];
	s->blocks = v[3];
	s->heap_bytes = v[4];
	s->roots = v[5];
	aip = v[6];
	s->block_size = v[7];
	if (s->block_size < 256 || s->block_size > (1u << 24) ||
	    (s->block_size & (s->block_size - 1)))
		return bad(r, "snapshot block size %" PRIu64 " is not a power of two in 256..16M",
			   s->block_size);
	s->all_interior_pointers = aip != 0;
	s->first_block = r->t->rd->snapshot_mark_block;
	s->nr_blocks = r->t->nr_heap_blocks - s->first_block;
	s->first_root = r->t->rd->snapshot_mark_root;
	s->nr_roots = r->t->nr_roots - s->first_root;
	r->t->rd->snapshot_mark_block = r->t->nr_heap_blocks;
	r->t->rd->snapshot_mark_root = r->t->nr_roots;
	r->t->has_snapshot = true;
	return 0;
}

static void free_counters(struct trace *t)
{
	for (size_t i = 0; i < t->nr_counters; i++)
		free(t->counters[i].name.ptr);
	free(t->counters);
	t->counters = NULL;
	t->nr_counters = 0;
}

/* Cumulative: the last record replaces all earlier ones; counters (and
 * their names) are the trace's from here. */
static void put_counters(struct trace *t, struct trace_counter *counters, size_t n)
{
	free_counters(t);
	t->counters = counters;
	t->nr_counters = n;
}

static int parse_counters(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	const msgpack_object *m;
	struct trace_counter *c;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_COUNTERS, f, n, v))
		return -1;
	m = &f[1];
	if (m->type != MSGPACK_OBJECT_MAP)
		return bad(r, "counters are %s, expected a map", type_name(m));
	c = xcalloc(m->via.map.size + 1, sizeof(*c));
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		if (want_str(r, &m->via.map.ptr[i].key, "counter name", &c[i].name) ||
		    want_u64(r, &m->via.map.ptr[i].val, "counter value", &c[i].value)) {
			for (uint32_t k = 0; k <= i; k++)
				free(c[k].name.ptr);
			free(c);
			return -1;
		}
	}
	put_counters(r->t, c, m->via.map.size);
	return 0;
}

static int parse_end(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct trace_end *end = &r->t->end;
	const msgpack_object *m;
	uint64_t nums[ALYS_RECORD_MAX_FIELDS + 1];

	if (want_fields(r, ALYS_REC_END, f, n, nums))
		return -1;
	m = &f[1];
	if (m->type != MSGPACK_OBJECT_MAP)
		return bad(r, "end record holds %s, expected a map", type_name(m));
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key;
		const msgpack_object *v = &m->via.map.ptr[i].val;
		int err = 0;

		if (key_is(k, "reason")) {
			err = want_str(r, v, "end reason", &end->reason);
			end->present |= END_REASON;
		} else if (key_is(k, "exit_status")) {
			err = want_int(r, v, "end exit_status", &end->exit_status);
			end->present |= END_EXIT_STATUS;
		} else if (key_is(k, "stop_ns")) {
			err = want_u64(r, v, "end stop_ns", &end->stop_ns);
			end->present |= END_STOP_NS;
		} else if (key_is(k, "events")) {
			err = want_u64(r, v, "end events", &end->events);
			end->present |= END_EVENTS;
		} else if (key_is(k, "liveness")) {
			err = want_str(r, v, "end liveness", &end->liveness);
			end->present |= END_LIVENESS;
		} else if (key_is(k, "file_bytes")) {
			err = want_u64(r, v, "end file_bytes", &end->file_bytes);
			end->present |= END_BYTES;
		} else if (key_is(k, "raw_bytes")) {
			err = want_u64(r, v, "end raw_bytes", &end->raw_bytes);
		} else if (key_is(k, "blocks")) {
			err = want_u64(r, v, "end blocks", &end->blocks);
		}
		if (err)
			return -1;
	}
	r->t->has_end = true;
	return 0;
}

static int parse_record(const struct reader *r, const msgpack_object *o);

/* [12, codec, raw_len, records, bin]: inflated whole (the writer keeps
 * blocks small), then its records read as if they stood in the file. */
static int parse_block(const struct reader *r, const msgpack_object *f, uint32_t n)
{
	struct reader in = *r;
	struct inflater *inf = r->inf;
	uint64_t v[ALYS_RECORD_MAX_FIELDS + 1], codec, raw_len, records, nrec = 0;
	unsigned long long frame;
	const msgpack_object *bin;
	size_t got, off = 0;

	if (r->in_block)
		return bad(r, "a block inside a block");
	if (want_fields(r, ALYS_REC_BLOCK, f, n, v))
		return -1;
	codec = v[1];
	raw_len = v[2];
	records = v[3];
	bin = &f[4];
	if (bin->type != MSGPACK_OBJECT_BIN)
		return bad(r, "block data is %s, expected binary data", type_name(bin));
	if (codec != ALYS_CODEC_ZSTD)
		return bad(r, "block codec %" PRIu64 " unknown (this converter reads 1, zstd); "
			   "use a newer alys_converter", codec);
	if (raw_len > ALYS_BLOCK_RAW_MAX)
		return bad(r, "block of %" PRIu64 " bytes, more than the %u a writer makes",
			   raw_len, ALYS_BLOCK_RAW_MAX);
	frame = ZSTD_getFrameContentSize(bin->via.bin.ptr, bin->via.bin.size);
	if (frame != raw_len)
		return bad(r, "block says %" PRIu64 " bytes, its zstd frame %s", raw_len,
			   frame == ZSTD_CONTENTSIZE_ERROR ? "is not one" :
			   frame == ZSTD_CONTENTSIZE_UNKNOWN ? "does not say" : "another size");
	if (!inf->ctx)
		inf->ctx = ZSTD_createDCtx();
	if (raw_len > inf->cap) {
		inf->buf = xrealloc_array(inf->buf, raw_len, 1);
		inf->cap = raw_len;
	}
	got = inf->ctx ? ZSTD_decompressDCtx(inf->ctx, inf->buf, inf->cap, bin->via.bin.ptr,
					     bin->via.bin.size) : (size_t)-1;
	if (!inf->ctx || ZSTD_isError(got) || got != raw_len)
		return bad(r, "block does not inflate: %s",
			   !inf->ctx ? "out of memory" : ZSTD_isError(got) ?
			   ZSTD_getErrorName(got) : "fewer bytes than it says");
	in.in_block = true;
	while (off < raw_len) {
		const char *why;

		in.blk_off = off;
		switch (mp_decode_next(&inf->dec, (const uint8_t *)inf->buf, raw_len, &off, &why)) {
		case MP_NEXT_SHORT:
		case MP_NEXT_BAD:
			return bad(&in, "the block's records end inside one, or are no MessagePack");
		case MP_NEXT_NOMEM:
			return bad(&in, "msgpack-c cannot decode this object (out of memory?)");
		case MP_NEXT_OK:
			break;
		}
		if (parse_record(&in, &inf->dec.obj))
			return -1;
		nrec++;
	}
	if (nrec != records)
		return bad(r, "block says %" PRIu64 " records, holds %" PRIu64, records, nrec);
	return 0;
}

static int parse_record(const struct reader *r, const msgpack_object *o)
{
	const msgpack_object *f;
	uint32_t n;
	uint64_t type;

	if (o->type != MSGPACK_OBJECT_ARRAY)
		return bad(r, "record is %s, expected an array", type_name(o));
	n = o->via.array.size;
	f = o->via.array.ptr;
	if (!n)
		return bad(r, "record is an empty array, expected [type, ...]");
	if (f[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return bad(r, "record type is %s, expected an unsigned integer",
			   type_name(&f[0]));
	type = f[0].via.u64;
	if (r->mode == READ_EVENTS) {	/* events only */
		switch (type) {
		case ALYS_REC_STACK:
			return r->t->hdr.version >= 2 ? 0 : parse_stack(r, f, n);
		case ALYS_REC_EVENT: return parse_event(r, f, n);
		case ALYS_REC_DEATH: return parse_death(r, f, n);
		case ALYS_REC_BLOCK: return parse_block(r, f, n);
		}
		return 0;
	}
	switch (type) {
	case ALYS_REC_MAPPING: return parse_mapping(r, f, n);
	case ALYS_REC_STACK:
		return r->t->hdr.version >= 2 ? parse_stack_nodes(r, f, n) : parse_stack(r, f, n);
	case ALYS_REC_EVENT: return parse_event(r, f, n);
	case ALYS_REC_COUNTERS: return parse_counters(r, f, n);
	case ALYS_REC_END: return parse_end(r, f, n);
	case ALYS_REC_DEATH: return parse_death(r, f, n);
	case ALYS_REC_COLLECTION: return parse_collection(r, f, n);
	case ALYS_REC_CENSUS: return parse_census(r, f, n);
	case ALYS_REC_PAUSE: return parse_pause(r, f, n);
	case ALYS_REC_MEMORY: return parse_memory(r, f, n);
	case ALYS_REC_GROW: return parse_grow(r, f, n);
	case ALYS_REC_HEAP_BLOCK: return parse_heap_block(r, f, n);
	case ALYS_REC_ROOT: return parse_root(r, f, n);
	case ALYS_REC_SNAPSHOT: return parse_snapshot(r, f, n);
	case ALYS_REC_BLOCK: return parse_block(r, f, n);
	}
	return 0;	/* a record type from a later minor version: skip */
}

/* ---- file ------------------------------------------------------------ */

static int map_file(struct trace *t)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			errx_msg("%s: no such file; give the path of a trace written by alys-bpf",
				 t->path);
		else
			errx_msg("cannot open %s: %s", t->path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		errx_msg("cannot stat %s: %s", t->path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errx_msg("%s is not a regular file; give the path of a .alys trace",
			 t->path);
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		errx_msg("%s is empty: not an alys-bpf trace (was the tracer killed "
			 "before it wrote the header?)", t->path);
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		errx_msg("cannot map %s: %s", t->path, strerror(errno));
		return -1;
	}
	madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	t->rd->data = p;
	t->rd->size = (size_t)st.st_size;
	return 0;
}

enum next_result { NEXT_OK, NEXT_EOF, NEXT_SHORT, NEXT_ERROR };

/* Decode the object at *off into up, advancing *off past it. */
static enum next_result next_object(struct reader *r, struct mp_decoder *dec,
				    size_t *off)
{
	const struct trace *t = r->t;
	const char *why;

	r->rec_off = *off;
	if (*off >= t->rd->size)
		return NEXT_EOF;
	switch (mp_decode_next(dec, t->rd->data, t->rd->size, off, &why)) {
	case MP_NEXT_SHORT:
		return NEXT_SHORT;
	case MP_NEXT_BAD:
		bad(r, "not a MessagePack object: %s", why);
		return NEXT_ERROR;
	case MP_NEXT_NOMEM:
		bad(r, "msgpack-c cannot decode this object (out of memory?)");
		return NEXT_ERROR;
	case MP_NEXT_OK:
		break;
	}
	return NEXT_OK;
}

/* The tracer's count of events it lost (docs/FORMAT.md, counters). */
uint64_t trace_counter_value(const struct trace *t, const char *name)
{
	for (size_t i = 0; i < t->nr_counters; i++)
		if (!strcmp(t->counters[i].name.ptr, name))
			return t->counters[i].value;
	return 0;
}

/*
 * A --duty trace recorded events only while its windows were open; the
 * daemon counted the collector's bytes allocated in all (gc_bytes) and
 * inside the windows (gc_bytes_sampled). Dividing each weight by that
 * share makes totals estimates of the whole run, by the program's own
 * count rather than by time (tracing slows the program inside windows).
 * GC_realloc was probed in some windows only: the reallocs that kept
 * their block (the only realloc events of a refill trace) stand for those
 * windows' share.
 */
bool trace_duty_shares(const struct trace_duty_bytes *b, double *share, double *share_realloc)
{
	if (!b->all || !b->in || b->in > b->all)
		return false;
	*share = (double)b->in / (double)b->all;
	*share_realloc = b->in_realloc && b->in_realloc <= b->all ?
			 (double)b->in_realloc / (double)b->all : *share;
	return true;
}

bool trace_is_duty_cycled(const struct trace *t)
{
	return t->hdr.sample.ptr && !strncmp(t->hdr.sample.ptr, "refill duty:", 12);
}

void trace_duty_bytes(const struct trace *t, struct trace_duty_bytes *b)
{
	b->all = trace_counter_value(t, "gc_bytes");
	b->in = trace_counter_value(t, "gc_bytes_sampled");
	b->in_realloc = trace_counter_value(t, "gc_bytes_sampled_realloc");
}

/* trace_each_event weights events with the shares found here. */
static void apply_duty_share(struct trace *t)
{
	struct trace_duty_bytes b;

	if (!trace_is_duty_cycled(t))
		return;
	trace_duty_bytes(t, &b);
	if (!trace_duty_shares(&b, &t->duty_share, &t->duty_share_realloc))
		warnx_msg("%s: the windows' share of the collector's bytes is not recorded "
			  "(gc_bytes %" PRIu64 ", gc_bytes_sampled %" PRIu64 "): weights are "
			  "what the windows saw, not estimates of the whole run",
			  t->path, b.all, b.in);
}

/* The end record's mode when there is one: the tracer may have fallen
 * back to address reuse after writing the header. */
static enum trace_liveness liveness_mode(const struct trace *t)
{
	const struct bstr *m = t->has_end && t->end.liveness.ptr ? &t->end.liveness
								  : &t->hdr.liveness;

	if (m->ptr && m->len == 5 && !memcmp(m->ptr, "marks", 5))
		return TRACE_LIVENESS_MARKS;
	if (m->ptr && m->len == 5 && !memcmp(m->ptr, "reuse", 5))
		return TRACE_LIVENESS_REUSE;
	return TRACE_LIVENESS_OFF;
}

/* The daemon writes a stack record when its probe first sees the stack;
 * another CPU can submit an event with the same stack just before that
 * record: look such stacks up once all are known. */
static void resolve_late_stacks(struct trace *t)
{
	for (size_t i = 0; i < t->rd->nr_late; i++) {
		const struct trace_late_ref *l = &t->rd->late[i];

		if (stack_of_id(t, l->id) < 0 && !t->rd->undefined_stack_refs++) {
			t->rd->first_undefined_stack = l->id;
			t->rd->first_undefined_stack_at = l->at;
		}
	}
	free(t->rd->late);
	t->rd->late = NULL;
	t->rd->nr_late = t->rd->cap_late = 0;
}

static void report_read_warnings(const struct trace *t)
{
	uint64_t lost = trace_counter_value(t, "ringbuf_drop_event");

	if (lost)
		warnx_msg("%s: the tracer lost %" PRIu64 " events (ring buffer full): counts "
			  "and totals are low by that many; trace again with a larger "
			  "alys-bpf --ringbuf-size, or with --sample bytes:N",
			  t->path, lost);
	if (t->rd->undefined_stack_refs)
		warnx_msg("%s: %" PRIu64 " events refer to stacks not defined before them "
			  "(first: stack id %u at byte %" PRIu64 "); they are shown without a stack",
			  t->path, t->rd->undefined_stack_refs, t->rd->first_undefined_stack,
			  t->rd->first_undefined_stack_at);
	if (t->rd->gc_no_saturated)
		warnx_msg("%s: %" PRIu64 " events have a gc_no above %u; shown as %u",
			  t->path, t->rd->gc_no_saturated, UINT32_MAX, UINT32_MAX);
	if (t->rd->early_deaths)
		warnx_msg("%s: %" PRIu64 " inferred frees were found dead at a collection before "
			  "the first one they could die at (first: byte %" PRIu64 ", found at "
			  "collection %u, first possible %u): their allocation raced a collection "
			  "on another thread; they are counted as freed at the collection that "
			  "found them", t->path, t->rd->early_deaths, t->rd->first_early_death_at,
			  t->rd->first_early_death_gc, t->rd->first_early_death_since);
}

static int read_records(struct trace *t)
{
	struct inflater inf = { 0 };
	struct reader r = { .t = t, .mode = READ_TABLES, .inf = &inf };
	struct progress bar;
	struct mp_decoder dec = { 0 };
	size_t off = 0;
	int ret = -1;

	progress_begin(&bar, "reading", t->rd->size);
	switch (next_object(&r, &dec, &off)) {
	case NEXT_OK:
		break;
	case NEXT_SHORT:
		bad(&r, "the file ends inside its header (%zu bytes): not a complete "
		    "alys-bpf trace", t->rd->size);
		goto out;
	default:
		goto out;
	}
	if (parse_header(&r, &dec.obj))
		goto out;
	for (;;) {
		enum next_result nr = next_object(&r, &dec, &off);

		if (nr == NEXT_ERROR)
			goto out;
		if (nr == NEXT_EOF || nr == NEXT_SHORT) {
			t->cut_short = true;
			t->cut_at = r.rec_off;
			t->rd->read_end = r.rec_off;
			warnx_msg("%s: cut short at byte %" PRIu64 " (%s): using the %zu events before it",
				  t->path, t->cut_at,
				  nr == NEXT_EOF ? "no end record"
						 : "the file ends inside a record, no end record",
				  t->nr_events);
			break;
		}
		if (parse_record(&r, &dec.obj))
			goto out;
		progress_tick(&bar, off);
		t->rd->read_end = off;
		if (t->has_end) {
			if (off < t->rd->size)
				warnx_msg("%s: ignoring %zu bytes after the end record at byte %" PRIu64,
					  t->path, t->rd->size - off, r.rec_off);
			break;
		}
	}
	resolve_late_stacks(t);
	u64_table_free(&t->rd->v1_child);
	apply_duty_share(t);
	t->liveness = liveness_mode(t);
	ret = 0;
out:
	progress_end(&bar);
	if (!ret)
		report_read_warnings(t);
	mp_decoder_free(&dec);
	inflater_free(&inf);
	return ret;
}

static void trace_init(struct trace *t, const char *path)
{
	memset(t, 0, sizeof(*t));
	t->path = path;
	t->rd = xcalloc(1, sizeof(*t->rd));
	u32_table_init(&t->rd->stack_by_id);
	u64_table_init(&t->rd->v1_child);
}

int trace_load(struct trace *t, const char *path)
{
	trace_init(t, path);
	if (map_file(t))
		return -1;
	return read_records(t);
}

int trace_each_event(const struct trace *t, trace_event_fn *fn, void *ctx)
{
	struct event_stream es = { .fn = fn, .ctx = ctx };
	struct inflater inf = { 0 };
	/* the records trace_load read, which were all good: nothing here
	 * changes t (parse_record's second reading writes nowhere else) */
	struct reader r = { .t = (struct trace *)t, .mode = READ_EVENTS, .inf = &inf, .es = &es };
	struct mp_decoder dec = { 0 };
	size_t off = 0;
	int ret = 0;

	u64_table_init_addresses(&es.live);
	/* Its size at once, not by doublings (each rehashes every entry, and
	 * the kernel zeroes each new table). */
	u64_table_reserve(&es.live, trace_live_most(t));
	u32_table_init(&es.v1_ids);
	if (next_object(&r, &dec, &off) != NEXT_OK)	/* the header */
		ret = -1;
	while (!ret && off < t->rd->read_end)
		if (next_object(&r, &dec, &off) != NEXT_OK || parse_record(&r, &dec.obj))
			ret = -1;
	mp_decoder_free(&dec);
	inflater_free(&inf);
	u64_table_free(&es.live);
	u32_table_free(&es.v1_ids);
	if (ret)
		errx_msg("%s: cannot read the events again (the file changed, or out of memory)",
			 t->path);
	return ret;
}

/* The first reading's count, right where every block's end is recorded.
 * At most 16M (768 MiB of address table, mapped and touched as used): a
 * hostile count must not ask for more than a machine has; more grows. */
size_t trace_live_most(const struct trace *t)
{
	if (t->liveness != TRACE_LIVENESS_MARKS || !t->rd)
		return 0;
	return t->rd->live_most < (16u << 20) ? (size_t)t->rd->live_most : 16u << 20;
}

/* ---- a trace built as it is written -------------------------------- */

void trace_build_begin(struct trace *t, const char *name)
{
	trace_init(t, name);
	t->rd->live = xcalloc(1, sizeof(*t->rd->live));
	u64_table_init_addresses(&t->rd->live->es.live);
	u32_table_init(&t->rd->live->es.v1_ids);
}

/* A record put: the reader trace_put_* read it with, the header first. */
static int live_reader(struct trace *t, struct reader *r)
{
	*r = (struct reader){ .t = t, .mode = READ_LIVE, .es = &t->rd->live->es };
	t->rd->live->records++;
	if (!t->rd->live->header_read)
		return bad(r, "a live trace starts with its header");
	return 0;
}

static void copy_bstr(struct bstr *to, const struct bstr *from)
{
	free(to->ptr);
	to->ptr = from->ptr ? xmemdup_str(from->ptr, from->len) : NULL;
	to->len = from->ptr ? from->len : 0;
}

int trace_put_header(struct trace *t, const struct trace_header *h)
{
	struct trace_header *to = &t->hdr;
	struct reader r = { .t = t, .mode = READ_LIVE, .es = &t->rd->live->es };

	t->rd->live->records++;
	if (t->rd->live->header_read)
		return bad(&r, "a second header");
	if (h->version < 2 || h->version > ALYS_FORMAT_VERSION)
		return bad(&r, "a live trace is of version 2 to %d, not %" PRIu64,
			   ALYS_FORMAT_VERSION, h->version);
	to->present = h->present;
	to->version = h->version;
	to->pid = h->pid;
	to->start_ns = h->start_ns;
	to->start_unix_ns = h->start_unix_ns;
	to->max_frames = h->max_frames;
	to->ns_pid = h->ns_pid;
	copy_bstr(&to->exe, &h->exe);
	copy_bstr(&to->hostname, &h->hostname);
	copy_bstr(&to->unwind, &h->unwind);
	copy_bstr(&to->sample, &h->sample);
	copy_bstr(&to->liveness, &h->liveness);
	copy_bstr(&to->sample_why, &h->sample_why);
	copy_bstr(&to->liveness_why, &h->liveness_why);
	copy_bstr(&to->container_id, &h->container_id);
	copy_bstr(&to->pod_uid, &h->pod_uid);
	copy_bstr(&to->cgroup, &h->cgroup);
	to->argc = h->argc;
	to->argv = xcalloc(h->argc + 1, sizeof(*to->argv));
	for (uint32_t i = 0; i < h->argc; i++)
		copy_bstr(&to->argv[i], &h->argv[i]);
	t->rd->live->header_read = true;
	t->liveness = liveness_mode(t);
	return 0;
}

int trace_put_mapping(struct trace *t, const struct trace_mapping *m)
{
	struct trace_mapping c = *m;
	struct reader r;

	if (live_reader(t, &r) || check_mapping(&r, m->start, m->end))
		return -1;
	c.path = (struct bstr){ 0 };
	copy_bstr(&c.path, &m->path);
	if (m->build_id_len) {
		c.build_id = xmalloc(m->build_id_len);
		memcpy(c.build_id, m->build_id, m->build_id_len);
	}
	put_mapping(&r, &c);
	return 0;
}

int trace_put_nodes(struct trace *t, uint32_t first, uint32_t parent, const uint64_t *ips,
		    uint32_t nr, uint32_t flags)
{
	struct reader r;

	return live_reader(t, &r) || put_nodes(&r, first, parent, ips, nr, flags) ? -1 : 0;
}

int trace_put_event(struct trace *t, struct trace_event *e, uint32_t stack_id)
{
	struct reader r;

	return live_reader(t, &r) || put_event(&r, e, stack_id) ? -1 : 0;
}

int trace_put_death(struct trace *t, struct trace_event *e)
{
	struct reader r;

	return live_reader(t, &r) || put_death(&r, e) ? -1 : 0;
}

int trace_put_grow(struct trace *t, struct trace_grow *g, uint32_t stack_id)
{
	struct reader r;

	return live_reader(t, &r) || put_grow(&r, g, stack_id) ? -1 : 0;
}

int trace_put_memory(struct trace *t, const struct trace_memory *m)
{
	struct reader r;

	return live_reader(t, &r) || put_memory(&r, m) ? -1 : 0;
}

int trace_put_collection(struct trace *t, const struct trace_collection *c)
{
	struct reader r;

	return live_reader(t, &r) || put_collection(&r, c) ? -1 : 0;
}

int trace_put_pause(struct trace *t, struct trace_pause *p, uint32_t stack_id)
{
	struct reader r;

	return live_reader(t, &r) || put_pause(&r, p, stack_id) ? -1 : 0;
}

int trace_put_census(struct trace *t, const struct trace_census *c,
		     const struct trace_census_type *types)
{
	struct reader r;

	return live_reader(t, &r) || put_census(&r, c, types) ? -1 : 0;
}

int trace_put_counters(struct trace *t, const struct trace_counter *c, size_t n)
{
	struct trace_counter *own;
	struct reader r;

	if (live_reader(t, &r))
		return -1;
	own = xcalloc(n + 1, sizeof(*own));
	for (size_t i = 0; i < n; i++) {
		copy_bstr(&own[i].name, &c[i].name);
		if (!own[i].name.ptr)
			own[i].name.ptr = xmemdup_str("", 0);
		own[i].value = c[i].value;
	}
	put_counters(t, own, n);
	return 0;
}

int trace_put_end(struct trace *t, const struct trace_end *e)
{
	struct reader r;

	if (live_reader(t, &r))
		return -1;
	t->end.present = e->present;
	t->end.exit_status = e->exit_status;
	t->end.stop_ns = e->stop_ns;
	t->end.events = e->events;
	t->end.file_bytes = e->file_bytes;
	t->end.raw_bytes = e->raw_bytes;
	t->end.blocks = e->blocks;
	copy_bstr(&t->end.reason, &e->reason);
	copy_bstr(&t->end.liveness, &e->liveness);
	t->has_end = true;
	t->liveness = liveness_mode(t);
	return 0;
}

static void trace_live_free(struct trace *t)
{
	struct trace_live *lv = t->rd ? t->rd->live : NULL;

	if (!lv)
		return;
	u64_table_free(&lv->es.live);
	u32_table_free(&lv->es.v1_ids);
	free(lv);
	t->rd->live = NULL;
}

static void free_bstr(struct bstr *s)
{
	free(s->ptr);
	s->ptr = NULL;
}

void trace_free(struct trace *t)
{
	trace_live_free(t);
	struct trace_header *h = &t->hdr;

	free_bstr(&h->exe);
	free_bstr(&h->hostname);
	free_bstr(&h->unwind);
	free_bstr(&h->sample);
	free_bstr(&h->sample_why);
	free_bstr(&h->container_id);
	free_bstr(&h->pod_uid);
	free_bstr(&h->cgroup);
	free_bstr(&h->liveness_why);
	free_bstr(&h->liveness);
	for (uint32_t i = 0; i < h->argc; i++)
		free_bstr(&h->argv[i]);
	free(h->argv);
	for (size_t i = 0; i < t->nr_maps; i++) {
		free_bstr(&t->maps[i].path);
		free(t->maps[i].build_id);
	}
	free(t->maps);
	free(t->stacks);
	free(t->nodes);
	free_counters(t);
	free_bstr(&t->end.reason);
	free_bstr(&t->end.liveness);
	free(t->collections);
	free(t->pauses);
	free(t->memory);
	free(t->grows);
	free(t->censuses);
	free(t->census_types);
	free(t->heap_blocks);
	for (size_t i = 0; i < t->nr_roots; i++)
		free(t->roots[i].name);
	free(t->roots);
	if (t->rd) {
		u32_table_free(&t->rd->stack_by_id);
		u64_table_free(&t->rd->v1_child);
		free(t->rd->late);
		free(t->rd->ips);
		for (size_t i = 0; i < t->rd->nr_owned; i++)
			free(t->rd->owned[i]);
		free(t->rd->owned);
		if (t->rd->data)
			munmap((void *)t->rd->data, t->rd->size);
		free(t->rd);
	}
	memset(t, 0, sizeof(*t));
}

const struct trace_mapping *trace_find_mapping(const struct trace *t, uint64_t addr)
{
	/* Newest first: a later mapping wins where ranges overlap. Callers
	 * cache per address, so a linear scan over a few hundred is fine. */
	for (size_t i = t->nr_maps; i-- > 0;)
		if (addr >= t->maps[i].start && addr < t->maps[i].end)
			return &t->maps[i];
	return NULL;
}

const char *trace_liveness_name(enum trace_liveness mode)
{
	switch (mode) {
	case TRACE_LIVENESS_MARKS: return "marks";
	case TRACE_LIVENESS_REUSE: return "reuse";
	default: return "off";
	}
}

const char *trace_cause_name(unsigned int cause)
{
	switch (cause) {
	case ALYS_CAUSE_CALL: return "GC_free";
	case ALYS_CAUSE_MARKS: return "collected";
	case ALYS_CAUSE_REUSE: return "reused";
	}
	return "unknown";
}

const char *trace_kind_name(unsigned int kind)
{
	switch (kind) {
	case ALYS_KIND_MALLOC: return "malloc";
	case ALYS_KIND_MALLOC_ATOMIC: return "malloc_atomic";
	case ALYS_KIND_REALLOC: return "realloc";
	case ALYS_KIND_FREE: return "free";
	}
	return "unknown";
}
