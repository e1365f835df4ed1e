// SPDX-License-Identifier: MIT
/*
 * pprof output: a gzip-compressed perftools.profiles.Profile message
 * (github.com/google/pprof, proto/profile.proto), as read by `go tool
 * pprof`, `pprof -http`, Parca and Pyroscope.
 *
 * The protobuf encoding is written here directly: the message is a handful
 * of varints and length-delimited fields, not worth a code generator and a
 * runtime library. Submessages are encoded into a scratch buffer first so
 * that their length can precede them.
 *
 * Tables: one Location per distinct (address, frame-0-or-return) pair the
 * symbolizer resolved, carrying its inlined calls as extra Lines (innermost
 * first, as profile.proto wants); one Function per distinct (name, file);
 * one Mapping per trace mapping that a location uses. Each table's ids run
 * 1..n in the order its entries are written: Parca refuses any other
 * ("... id is not sequential", its normalizer), pprof takes any.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/crystal_names.h"
#include "profile/pprof.h"
#include "lib/util.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void put_varint(struct outbuf *o, uint64_t v)
{
	char b[10];
	size_t n = 0;

	do {
		b[n] = (char)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= (char)0x80;
		n++;
	} while (v);
	outbuf_write(o, b, n);
}

static void put_tag(struct outbuf *o, unsigned int field, unsigned int wire)
{
	put_varint(o, (uint64_t)field << 3 | wire);
}

/* A varint field; proto3 leaves zero values out. */
static void put_uint(struct outbuf *o, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	put_tag(o, field, WIRE_VARINT);
	put_varint(o, v);
}

static void put_bytes(struct outbuf *o, unsigned int field, const void *p, size_t n)
{
	put_tag(o, field, WIRE_LEN);
	put_varint(o, n);
	outbuf_write(o, p, n);
}

/* Emit the submessage built in sub as field of o, and empty sub. */
static void put_sub(struct outbuf *o, unsigned int field, struct outbuf *sub)
{
	put_bytes(o, field, sub->buf, sub->len);
	sub->len = 0;
}

/* Functions keyed by (name, file) string indexes, in a u64 table. The
 * name shown is the display name, the system name the symbol: go tool
 * pprof then prints the name as it is (it shortens a name like a C++ one,
 * "Array(T)" to "Array", only when the two are equal). */
struct functions {
	struct u64_table ids;	/* name << 32 | file -> id */
	struct outbuf *msg;	/* where Function messages go */
	uint64_t next_id;
};

/*
 * The name pprof is given. Its graph (-dot, -svg, the graph page of -http;
 * google/pprof internal/graph, measured with Debian's go tool pprof) cuts a
 * name before drawing it: as C++ at its `::`s (JSON::Lexer::StringBased
 * #initialize is drawn as "Lexer::StringBased", four functions alike), as
 * Java at `Owner.method(` (Item.new(String, Int32) loses the argument types
 * the namer added to tell it apart), then breaks the label at every `::`
 * and `.` ("Array(JSON" over "Any)"). Its flame graph shortens at the same
 * places. So `::` is written with a word joiner (U+2060, invisible) between
 * the colons and `.` as U+2024 ONE DOT LEADER: the name reads as in every
 * other output, whole and on one line, and a -focus regexp still matches
 * it when it writes the separators as `.` (README).
 */
static char *pprof_name(const char *name)
{
	char *out = xmalloc(3 * strlen(name) + 1), *o = out;

	for (const char *p = name; *p; p++) {
		if (p[0] == ':' && p[1] == ':') {
			memcpy(o, ":\xe2\x81\xa0:", 5);
			o += 5;
			p++;
		} else if (*p == '.') {
			memcpy(o, "\xe2\x80\xa4", 3);
			o += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

static uint64_t function_id(struct functions *fn, struct str_table *st, const struct sym_frame *f)
{
	char *shown = pprof_name(f->name);
	uint64_t name = str_table_intern(st, shown), file = str_table_intern(st, f->file);
	uint64_t symbol = str_table_intern(st, f->symbol);
	uint64_t key = (name << 32 | file) + 1;	/* the table reserves key 0 */
	const struct u64_slot *hit = u64_table_get(&fn->ids, key);
	struct outbuf sub;

	free(shown);
	if (hit)
		return hit->a;
	u64_table_put(&fn->ids, key, ++fn->next_id, 0);
	outbuf_init(&sub, -1);
	put_uint(&sub, FUNCTION_ID, fn->next_id);
	put_uint(&sub, FUNCTION_NAME, name);
	put_uint(&sub, FUNCTION_SYSTEM_NAME, symbol);
	put_uint(&sub, FUNCTION_FILENAME, file);
	put_sub(fn->msg, PROFILE_FUNCTION, &sub);
	outbuf_release(&sub);
	return fn->next_id;
}

static size_t mapping_index(const struct trace *t, const struct trace_mapping *m)
{
	return (size_t)(m - t->maps);
}

static void hex(char *out, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/* The used mappings, in the order of their ids (given on first use). */
static void write_mappings(struct model *m, struct outbuf *msg, struct str_table *st,
			   const uint32_t *map_id, uint32_t nr_used)
{
	const struct trace *t = m->t;
	uint32_t *by_id = xcalloc(nr_used + 1, sizeof(*by_id));
	struct outbuf sub;

	for (size_t i = 0; i < t->nr_maps; i++)
		if (map_id[i])
			by_id[map_id[i]] = (uint32_t)i;
	outbuf_init(&sub, -1);
	for (uint32_t id = 1; id <= nr_used; id++) {
		size_t i = by_id[id];
		const struct trace_mapping *map = &t->maps[i];
		char bid[2 * 64 + 1] = "";
		bool named;

		if (map->build_id_len <= 64)
			hex(bid, map->build_id, map->build_id_len);
		named = symbolizer_mapping_resolved(m->sym, i);
		put_uint(&sub, MAPPING_ID, id);
		put_uint(&sub, MAPPING_MEMORY_START, map->start);
		put_uint(&sub, MAPPING_MEMORY_LIMIT, map->end);
		put_uint(&sub, MAPPING_FILE_OFFSET, map->offset);
		put_uint(&sub, MAPPING_FILENAME, str_table_intern(st, map->path.ptr));
		put_uint(&sub, MAPPING_BUILD_ID, str_table_intern(st, bid));
		put_uint(&sub, MAPPING_HAS_FUNCTIONS, named);
		put_uint(&sub, MAPPING_HAS_FILENAMES, named);
		put_uint(&sub, MAPPING_HAS_LINE_NUMBERS, named);
		put_uint(&sub, MAPPING_HAS_INLINE_FRAMES, named);
		put_sub(msg, PROFILE_MAPPING, &sub);
	}
	outbuf_release(&sub);
	free(by_id);
}

#define SYNTH_TRUNCATED (ALYS_KIND_REALLOC + 1)
#define SYNTH_OTHER (ALYS_KIND_REALLOC + 2)

/*
 * Location ids, given on first use from one counter: symbolizer entry idx
 * (id[idx]), the same address with its innermost `skip` (plumbing) inlined
 * frames left out (id_trimmed[idx]), the synthetic ones (synth[kind]).
 */
struct locations {
	uint64_t *id, *id_trimmed;
	uint64_t synth[SYNTH_OTHER + 1];
	uint64_t next;
	uint32_t *map_id;	/* trace mapping index -> its id, 0: unused */
	uint32_t nr_maps_used;
};

static uint64_t location_id(struct model *m, uint32_t idx, bool return_addr, uint32_t skip,
			    struct locations *loc, struct functions *fn, struct str_table *st,
			    struct outbuf *msg)
{
	const struct sym_entry *e = symbolizer_entry(m->sym, idx);
	uint64_t *id = skip ? &loc->id_trimmed[idx] : &loc->id[idx];
	const struct trace_mapping *map;
	struct outbuf sub, line;

	if (*id)
		return *id;
	*id = ++loc->next;
	/* pprof symbolizes a location's address as is: give it the call
	 * instruction, not the return address */
	map = trace_find_mapping(m->t, return_addr ? e->ip - 1 : e->ip);
	outbuf_init(&sub, -1);
	outbuf_init(&line, -1);
	put_uint(&sub, LOCATION_ID, *id);
	if (map) {
		uint32_t *mid = &loc->map_id[mapping_index(m->t, map)];

		if (!*mid)
			*mid = ++loc->nr_maps_used;
		put_uint(&sub, LOCATION_MAPPING_ID, *mid);
	}
	put_uint(&sub, LOCATION_ADDRESS, return_addr && e->ip ? e->ip - 1 : e->ip);
	for (uint32_t k = skip; k < e->nr_frames; k++) {
		put_uint(&line, LINE_FUNCTION_ID, function_id(fn, st, &e->frames[k]));
		put_uint(&line, LINE_LINE, e->frames[k].line);
		put_sub(&sub, LOCATION_LINE, &line);
	}
	put_sub(msg, PROFILE_LOCATION, &sub);
	outbuf_release(&line);
	outbuf_release(&sub);
	return *id;
}

static void put_value_type(struct outbuf *o, unsigned int field, struct str_table *st,
			   const char *type, const char *unit)
{
	struct outbuf sub;

	outbuf_init(&sub, -1);
	put_uint(&sub, VALUE_TYPE_TYPE, str_table_intern(st, type));
	put_uint(&sub, VALUE_TYPE_UNIT, str_table_intern(st, unit));
	put_sub(o, field, &sub);
	outbuf_release(&sub);
}

/* Append the whole of src to o through a gzip stream. */
static void gzip_into(struct outbuf *o, const struct outbuf *src)
{
	z_stream zs = { 0 };
	char out[1 << 16];
	int rc;

	/* windowBits 15 + 16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		errx_msg("zlib cannot start a gzip stream: %s", zs.msg ? zs.msg : "?");
		exit(1);
	}
	zs.next_in = (Bytef *)src->buf;
	zs.avail_in = (uInt)src->len;
	if ((size_t)zs.avail_in != src->len) {
		errx_msg("profile of %zu bytes is too large to compress in one go", src->len);
		exit(1);
	}
	do {
		zs.next_out = (Bytef *)out;
		zs.avail_out = sizeof(out);
		rc = deflate(&zs, Z_FINISH);
		outbuf_write(o, out, sizeof(out) - zs.avail_out);
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	deflateEnd(&zs);
	if (rc != Z_STREAM_END) {
		errx_msg("zlib failed to compress the profile (%d)", rc);
		exit(1);
	}
}

/* Synthetic locations: a lost stack's GC function (by kind), "[stack
 * lost]" (0), the "[truncated]" root of a stack cut at max_frames, and
 * the stacks left out by max_samples. */
static uint64_t synthetic_location(struct locations *loc, unsigned int kind,
				   struct functions *fn, struct str_table *st, struct outbuf *msg)
{
	const char *name = kind == SYNTH_OTHER ? "[other stacks]" :
			   kind == SYNTH_TRUNCATED ? "[truncated]" : kind ? kind_function(kind) :
			   "[stack lost]";
	struct sym_frame f = { .name = name, .symbol = name };
	struct outbuf sub, line;

	if (loc->synth[kind])
		return loc->synth[kind];
	loc->synth[kind] = ++loc->next;
	outbuf_init(&sub, -1);
	outbuf_init(&line, -1);
	put_uint(&sub, LOCATION_ID, loc->synth[kind]);
	put_uint(&line, LINE_FUNCTION_ID, function_id(fn, st, &f));
	put_sub(&sub, LOCATION_LINE, &line);
	put_sub(msg, PROFILE_LOCATION, &sub);
	outbuf_release(&line);
	outbuf_release(&sub);
	return loc->synth[kind];
}

static bool bucket_shown(const struct model *m, size_t b, const struct output_options *opt)
{
	const struct alloc_stats *s = &m->buckets[b].s;

	/* no sample whose values are all zero (Pyroscope drops it, Parca
	 * each zero); a delta (the daemon's ?seconds=) may have frees and no
	 * allocation */
	switch (opt->pprof_values) {
	case PPROF_PAUSES:
		return s->alloc_objects != 0;
	case PPROF_ALLOC:
		return s->alloc_objects && s->alloc_space >= opt->min_bytes;
	case PPROF_INUSE:
		return s->inuse_objects && s->inuse_space >= opt->min_bytes;
	default:
		return (s->alloc_objects || s->inuse_objects) && s->alloc_space >= opt->min_bytes;
	}
}

/* What ranks a bucket for max_samples: the bytes the profile shows. */
static uint64_t bucket_weight(const struct model *m, size_t b, const struct output_options *opt)
{
	const struct alloc_stats *s = &m->buckets[b].s;

	return opt->pprof_values == PPROF_ALLOC || opt->pprof_values == PPROF_PAUSES ?
	       s->alloc_space :
	       opt->pprof_values == PPROF_INUSE ? s->inuse_space : s->alloc_space + s->inuse_space;
}

struct ranked {
	uint64_t weight;
	size_t b;
};

static int by_weight_desc(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->weight != b->weight)
		return a->weight < b->weight ? 1 : -1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* The buckets shown as samples of their own (1) and those added up as
 * "[other stacks]" (2), 0 for not shown: the max_samples - 1 heaviest keep
 * their stacks. NULL: every shown bucket its own sample. */
static uint8_t *rank_buckets(const struct model *m, const struct output_options *opt,
			     size_t *merged)
{
	struct ranked *r;
	uint8_t *keep;
	size_t n = 0;

	*merged = 0;
	if (!opt->max_samples)
		return NULL;
	r = xcalloc(m->nr_buckets, sizeof(*r));
	for (size_t b = 1; b < m->nr_buckets; b++)
		if (bucket_shown(m, b, opt))
			r[n++] = (struct ranked){ bucket_weight(m, b, opt), b };
	if (n <= opt->max_samples) {
		free(r);
		return NULL;
	}
	qsort(r, n, sizeof(*r), by_weight_desc);
	keep = xcalloc(m->nr_buckets, 1);
	for (size_t i = 0; i < n; i++)
		keep[r[i].b] = i + 1 < opt->max_samples ? 1 : 2;
	*merged = n - (opt->max_samples - 1);
	free(r);
	return keep;
}

static void put_sample_values(struct outbuf *sub, struct outbuf *scratch,
			      const struct alloc_stats *s, const struct output_options *opt)
{
	if (opt->pprof_values != PPROF_INUSE) {
		put_varint(scratch, s->alloc_objects);
		put_varint(scratch, s->alloc_space);
	}
	if (opt->pprof_values != PPROF_ALLOC && opt->pprof_values != PPROF_PAUSES) {
		put_varint(scratch, s->inuse_objects);
		put_varint(scratch, s->inuse_space);
	}
	put_bytes(sub, SAMPLE_VALUE, scratch->buf, scratch->len);
	scratch->len = 0;
}

static uint32_t bucket_depth(const struct model *m, size_t b)
{
	uint32_t n = m->t->stacks[b - 1].nr;

	return m->depth && n > m->depth ? m->depth : n;
}

void write_pprof(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	struct pprof_counts counts;

	pprof_encode(m, o, opt, &counts);
}

void pprof_encode(struct model *m, struct outbuf *o, const struct output_options *opt,
		  struct pprof_counts *out)
{
	const struct trace *t = m->t;
	struct outbuf msg, sub, ids;
	struct alloc_stats other = { 0 };
	struct functions fn;
	uint8_t *keep;
	struct locations loc = { .next = 0 };
	size_t nr_entries;
	struct str_table st;
	char comment[256];

	str_table_init(&st);
	u64_table_init(&fn.ids);
	fn.next_id = 0;
	outbuf_init(&msg, -1);
	outbuf_init(&sub, -1);
	outbuf_init(&ids, -1);
	fn.msg = &msg;

	if (opt->pprof_values == PPROF_PAUSES) {
		/* as Go's pprof names its own: a count, then the time */
		put_value_type(&msg, PROFILE_SAMPLE_TYPE, &st, "gc_pauses", "count");
		put_value_type(&msg, PROFILE_SAMPLE_TYPE, &st, "gc_pause", "nanoseconds");
	} else if (opt->pprof_values != PPROF_INUSE) {
		put_value_type(&msg, PROFILE_SAMPLE_TYPE, &st, "alloc_objects", "count");
		put_value_type(&msg, PROFILE_SAMPLE_TYPE, &st, "alloc_space", "bytes");
	}
	if (opt->pprof_values != PPROF_ALLOC && opt->pprof_values != PPROF_PAUSES) {
		put_value_type(&msg, PROFILE_SAMPLE_TYPE, &st, "inuse_objects", "count");
		put_value_type(&msg, PROFILE_SAMPLE_TYPE, &st, "inuse_space", "bytes");
	}
	*out = (struct pprof_counts){ .bytes = 0 };
	keep = rank_buckets(m, opt, &out->merged);

	/* resolve every address first: the entry count sizes the tables */
	for (size_t b = 1; b <= t->nr_stacks; b++) {
		struct frame_iter it;
		uint64_t ip;

		if (keep ? keep[b] != 1 : !bucket_shown(m, b, opt))
			continue;
		frames_begin(&it, t, &t->stacks[b - 1], bucket_depth(m, b));
		for (uint32_t i = 0; frames_next(&it, &ip); i++)
			symbolizer_resolve(m->sym, ip, i);
	}
	nr_entries = symbolizer_nr_entries(m->sym) + 1;
	loc.id = xcalloc(nr_entries, sizeof(*loc.id));
	loc.id_trimmed = xcalloc(nr_entries, sizeof(*loc.id_trimmed));
	loc.map_id = xcalloc(t->nr_maps ? t->nr_maps : 1, sizeof(*loc.map_id));

	/* Profile fields may come in any order: samples, locations and
	 * functions are interleaved, each written when first needed. */
	for (size_t b = 1; b < m->nr_buckets; b++) {
		const struct alloc_stats *s = &m->buckets[b].s;

		if (keep && keep[b] == 2)
			alloc_stats_add(&other, s);
		if (keep ? keep[b] != 1 : !bucket_shown(m, b, opt))
			continue;
		if (b <= t->nr_stacks) {
			const struct trace_stack *stk = &t->stacks[b - 1];
			uint32_t skip, depth = bucket_depth(m, b);
			uint32_t first = model_first_kept(m, stk, depth, &skip);
			struct frame_iter it;
			uint64_t ip;

			frames_begin(&it, t, stk, depth);
			for (uint32_t i = 0; frames_next(&it, &ip); i++) {
				uint32_t idx;

				if (i < first)
					continue;
				idx = symbolizer_resolve(m->sym, ip, i);

				put_varint(&ids, location_id(m, idx, i > 0, skip, &loc,
							     &fn, &st, &msg));
				skip = 0;
			}
			if (model_truncated(m, b))
				put_varint(&ids, synthetic_location(&loc, SYNTH_TRUNCATED, &fn, &st,
								    &msg));
		} else {
			unsigned int kind = (unsigned int)(b - t->nr_stacks);

			put_varint(&ids, synthetic_location(&loc, kind, &fn, &st, &msg));
			put_varint(&ids, synthetic_location(&loc, 0, &fn, &st, &msg));
		}
		put_bytes(&sub, SAMPLE_LOCATION_ID, ids.buf, ids.len);	/* packed */
		ids.len = 0;
		put_sample_values(&sub, &ids, s, opt);
		put_sub(&msg, PROFILE_SAMPLE, &sub);
		out->samples++;
	}
	if (keep) {
		put_varint(&ids, synthetic_location(&loc, SYNTH_OTHER, &fn, &st, &msg));
		put_bytes(&sub, SAMPLE_LOCATION_ID, ids.buf, ids.len);
		ids.len = 0;
		put_sample_values(&sub, &ids, &other, opt);
		put_sub(&msg, PROFILE_SAMPLE, &sub);
		out->samples++;
	}
	write_mappings(m, &msg, &st, loc.map_id, loc.nr_maps_used);

	if (opt->time_unix_ns)
		put_uint(&msg, PROFILE_TIME_NANOS, opt->time_unix_ns);
	else if (t->hdr.present & HDR_START_UNIX_NS)
		put_uint(&msg, PROFILE_TIME_NANOS, t->hdr.start_unix_ns);
	if (opt->duration_ns)
		put_uint(&msg, PROFILE_DURATION_NANOS, opt->duration_ns);
	else if (!opt->instant && t->has_end && (t->end.present & END_STOP_NS) && t->end.stop_ns > t->hdr.start_ns)
		put_uint(&msg, PROFILE_DURATION_NANOS, t->end.stop_ns - t->hdr.start_ns);
	if (opt->pprof_values == PPROF_PAUSES)
		put_value_type(&msg, PROFILE_PERIOD_TYPE, &st, "gc_pause", "nanoseconds");
	else
		put_value_type(&msg, PROFILE_PERIOD_TYPE, &st, "space", "bytes");
	/* values are already scaled by each event's weight */
	put_uint(&msg, PROFILE_PERIOD, 1);
	snprintf(comment, sizeof(comment), "alys-bpf trace of %s, sample %s",
		 t->hdr.exe.ptr ? t->hdr.exe.ptr : "?",
		 t->hdr.sample.ptr ? t->hdr.sample.ptr : "all");
	put_uint(&msg, PROFILE_COMMENT, str_table_intern(&st, comment));
	put_uint(&msg, PROFILE_COMMENT, str_table_intern(&st,
		 opt->pprof_values == PPROF_PAUSES ?
		 "gc_pause: the collector's stop-the-world pauses, by the stack that triggered "
		 "each (an allocation's slow path, or GC.collect)" : inuse_meaning(t)));
	put_uint(&msg, PROFILE_COMMENT, str_table_intern(&st,
		 "names: :: and . are look-alikes so that pprof draws names whole; "
		 "in -focus, -list and search regexps write them as . (String:.:Builder)"));
	/* what viewers open first: allocations, or what is live at --at */
	put_uint(&msg, PROFILE_DEFAULT_SAMPLE_TYPE,
		 str_table_intern(&st, opt->pprof_values == PPROF_PAUSES ? "gc_pause" :
					opt->pprof_values == PPROF_INUSE ||
					(opt->live_view && opt->pprof_values == PPROF_ALL) ?
				       "inuse_space" : "alloc_space"));
	for (size_t i = 0; i < st.nr; i++)
		put_bytes(&msg, PROFILE_STRING_TABLE, st.str[i], strlen(st.str[i]));

	gzip_into(o, &msg);
	out->bytes = msg.len;
	free(keep);
	free(loc.id);
	free(loc.id_trimmed);
	free(loc.map_id);
	outbuf_release(&ids);
	outbuf_release(&sub);
	outbuf_release(&msg);
	u64_table_free(&fn.ids);
	str_table_free(&st);
}
