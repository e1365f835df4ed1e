// SPDX-License-Identifier: MIT
/* The .alys records' fields: see include/alys_records.h. */
#include <string.h>

#include "alys_records.h"

#define U8(n)  { n, ALYS_F_U8, 1 }
#define U32(n) { n, ALYS_F_U32, 1 }
#define U64(n) { n, ALYS_F_U64, 1 }
#define STR(n) { n, ALYS_F_STR, 1 }
#define BIN(n) { n, ALYS_F_BIN, 1 }

static const struct alys_record_desc records[] = {
	{ ALYS_REC_MAPPING, 0, "mapping", "mapping", 6,
	  { U64("start"), U64("end"), U64("offset"), STR("path"), BIN("build_id"),
	    { "flags", ALYS_F_U32, 0 } } },
	{ ALYS_REC_STACK, 0, "nodes", "stack", 4,
	  { U32("first"), U32("parent"), { "[ip_outer, ..., ip_inner]", ALYS_F_IPS, 1 },
	    U32("flags") } },
	/* version 1: each stack whole */
	{ ALYS_REC_STACK, 1, "stack", "stack", 3,
	  { U32("id"), { "[ip0, ip1, ...]", ALYS_F_IPS, 1 }, { "flags", ALYS_F_U32, 0 } } },
	{ ALYS_REC_EVENT, 0, "event", "event", 10,
	  { U8("kind"), U64("ts"), U32("tid"), U64("size"), U64("addr"), U64("old_addr"),
	    U64("old_size"), U32("stack_id"), U64("weight"), U64("gc_no") } },
	{ ALYS_REC_COUNTERS, 0, "counters", "counters", 1,
	  { { "{name: count, ...}", ALYS_F_COMPOUND, 1 } } },
	{ ALYS_REC_END, 0, "end", "end", 1,
	  { { "{reason, exit_status, stop_ns, events, liveness, file_bytes, raw_bytes, blocks}",
	      ALYS_F_COMPOUND, 1 } } },
	{ ALYS_REC_DEATH, 0, "death", "inferred free", 5,
	  { U64("ts"), U64("addr"), U32("gc_no"), U32("since"), U8("cause") } },
	{ ALYS_REC_COLLECTION, 0, "collection", "collection", 9,
	  { U64("ts"), U32("gc_no"), U32("since"), U64("judged"), U64("dead"),
	    U64("unreadable"), U64("scan_ns"), { "followed", ALYS_F_U64, 2 },
	    { "at_end", ALYS_F_U8, 2 } } },
	{ ALYS_REC_CENSUS, 0, "census", "census", 6,
	  { U64("ts"), U32("gc_no"), U64("blocks"), U64("unreadable"), U64("walk_ns"),
	    { "[[type_id, objects, bytes, example], ...]", ALYS_F_COMPOUND, 1 } } },
	{ ALYS_REC_HEAP_BLOCK, 0, "heapblock", "heap block", 4,
	  { U64("addr"), U64("obj_size"), U8("kind"), BIN("bytes") } },
	{ ALYS_REC_ROOT, 0, "root", "root", 4,
	  { U8("kind"), STR("name"), U64("addr"), BIN("bytes") } },
	{ ALYS_REC_SNAPSHOT, 0, "snapshot", "snapshot", 7,
	  { U64("ts"), U64("stop_ns"), U64("blocks"), U64("heap_bytes"), U64("roots"),
	    U8("all_interior_pointers"), U64("block_size") } },
	{ ALYS_REC_PAUSE, 0, "pause", "pause", 7,
	  { U64("stop_ns"), U64("start_ns"), U32("tid"), U32("gc_no"), U32("stack_id"),
	    { "begin_ns", ALYS_F_U64, 0 }, { "end_ns", ALYS_F_U64, 0 } } },
	{ ALYS_REC_MEMORY, 0, "memory", "memory sample", 13,
	  { U64("ts"), U64("rss"), U64("heap_resident"), U64("live"), U64("heap_in_use"),
	    U64("heap_free"), U64("heap_unmapped"), U64("fiber_stacks"), U32("fibers"),
	    U64("malloc"), U64("anon"), U64("files"), U32("gc_no") } },
	{ ALYS_REC_GROW, 0, "grow", "heap growth", 5,
	  { U64("ts"), U32("tid"), U64("bytes"), U32("gc_no"), U32("stack_id") } },
	{ ALYS_REC_BLOCK, 0, "block", "block", 4,
	  { U8("codec"), U64("raw_len"), U64("records"), BIN("data") } },
};

#define NRECORDS (sizeof(records) / sizeof(records[0]))

const struct alys_record_desc *alys_record(unsigned type, unsigned version)
{
	const struct alys_record_desc *best = NULL;

	/* The description for the oldest version_max at or after VERSION. */
	for (size_t i = 0; i < NRECORDS; i++) {
		const struct alys_record_desc *d = &records[i];
		unsigned last = d->version_max ? d->version_max : ~0u;

		if (d->type != type || last < version)
			continue;
		if (!best || last < (best->version_max ? best->version_max : ~0u))
			best = d;
	}
	return best;
}

const struct alys_record_desc *alys_record_by_keyword(const char *keyword)
{
	for (size_t i = 0; i < NRECORDS; i++)
		if (!strcmp(records[i].keyword, keyword))
			return &records[i];
	return NULL;
}

const struct alys_record_desc *alys_record_at(unsigned i)
{
	return i < NRECORDS ? &records[i] : NULL;
}

unsigned alys_record_required(const struct alys_record_desc *d, unsigned version)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->n; i++)
		if (d->f[i].required_from && d->f[i].required_from <= version)
			n = i + 1;
	return n;
}
