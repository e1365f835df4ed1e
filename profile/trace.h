/* SPDX-License-Identifier: MIT */
/*
 * One .alys trace (docs/FORMAT.md) and its reader, in memory that grows
 * with distinct stacks and blocks live at a time, not with events:
 * trace_load keeps everything but the events (stacks as nodes of a prefix
 * tree, whatever the version), and trace_each_event reads the events again,
 * in order, each linked to the allocation it frees through a table of the
 * blocks live at that point only.
 */
#ifndef ALYS_CONV_TRACE_H
#define ALYS_CONV_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alys_format.h"
#include "lib/u64_table.h"

struct alys_record_desc;

/* Linux thread ids stay below PID_MAX_LIMIT (2^22): 24 bits hold any. */
#define TRACE_TID_BITS 24

/* A byte string copied from the trace, NUL-terminated for convenience; the
 * bytes may themselves hold NULs or invalid UTF-8. ptr is NULL if absent. */
struct bstr {
	char *ptr;
	uint32_t len;
};

enum header_field {
	HDR_PID = 1 << 0,
	HDR_EXE = 1 << 1,
	HDR_ARGV = 1 << 2,
	HDR_START_NS = 1 << 3,
	HDR_START_UNIX_NS = 1 << 4,
	HDR_HOSTNAME = 1 << 5,
	HDR_UNWIND = 1 << 6,
	HDR_MAX_FRAMES = 1 << 7,
	HDR_SAMPLE = 1 << 8,
	HDR_LIVENESS = 1 << 9,
	HDR_NS_PID = 1 << 10,
};

struct trace_header {
	unsigned int present;		/* enum header_field bits */
	uint64_t version;
	uint64_t pid;
	uint64_t start_ns;
	uint64_t start_unix_ns;
	uint64_t max_frames;
	struct bstr exe, hostname, unwind, sample, liveness;
	struct bstr sample_why, liveness_why;	/* optional: why the tracer fell back */
	/* optional: the target's container (src/core/container_info.h) */
	struct bstr container_id, pod_uid, cgroup;
	uint64_t ns_pid;			/* 0: the tracer's pid namespace */
	struct bstr *argv;
	uint32_t argc;
};

struct trace_mapping {
	uint64_t start, end, offset;
	struct bstr path;
	uint8_t *build_id;
	uint32_t build_id_len;
	uint32_t flags;			/* enum alys_mapping_flags */
};

/* Stacks deeper than this are refused (FORMAT.md allows 128 frames). */
#define TRACE_MAX_FRAMES 4096

/* A version 2 stack node: a frame and the node of the frames outside it. */
struct trace_node {
	uint64_t ip;
	uint32_t parent;		/* node id; 0: the root */
	uint16_t depth;			/* frames from the root to this one */
	uint16_t flags;			/* ALYS_STACK_FLAG_* */
};

/* A stack events refer to: its frames are the nodes from leaf to the root
 * (version 1 stacks are made nodes too, sharing their common outer frames).
 * Version 2: the stack ending at node id. */
struct trace_stack {
	uint32_t id;
	uint32_t nr;			/* frames */
	uint32_t flags;			/* ALYS_STACK_FLAG_* */
	uint32_t leaf;			/* node id of the innermost frame; 0: none */
};

/* An event as trace_each_event hands it out; id is its place in the file
 * (1, 2, ...). An inferred free (cause not ALYS_CAUSE_CALL) has tid 0, no
 * stack, gc_no the collection after which the block was found dead and
 * old_addr the first collection it may have died in (trace_free_since). */
struct trace_event {
	uint64_t ts_ns;
	uint64_t addr;
	uint64_t size;
	uint64_t old_addr;
	uint64_t old_size;		/* as written (0: unknown); inferred frees: the block's size */
	uint64_t weight;
	uint32_t gc_no;			/* saturated at UINT32_MAX, with a warning */
	uint32_t tid : TRACE_TID_BITS;
	uint32_t kind : 4;
	uint32_t cause : 4;		/* enum alys_free_cause, frees only */
	uint32_t stack;			/* index into trace.stacks + 1; 0: no stack */
	uint32_t prev_id;		/* event whose block this one replaces; 0: unknown */
	uint32_t id;
};

/* A collection whose marks the tracer read (FORMAT.md record 7). */
struct trace_collection {
	uint64_t ts_ns;
	uint32_t gc_no, since;
	uint64_t judged, dead, unreadable, scan_ns;
	uint64_t followed;		/* blocks followed, judged or not */
	bool has_followed;		/* followed and at_end were in the record */
	bool at_end;			/* read at the target's exit or the detach */
	size_t first_event;		/* events with id > first_event come after it */
};

/* A stop-the-world pause (FORMAT.md record 13). */
struct trace_pause {
	uint64_t stop_ns, start_ns;
	uint64_t begin_ns, end_ns;	/* the collection around it; 0: not measured */
	uint32_t tid, gc_no;
	uint32_t stack;			/* index into trace.stacks + 1; 0: no stack */
};

/* Where the target's resident memory was (FORMAT.md record 14): RSS and
 * its parts, each resident bytes but for the collector's own counts. */
struct trace_memory {
	uint64_t ts_ns;
	uint64_t rss;			/* VmRSS */
	uint64_t heap_resident;		/* the collector's mapped blocks */
	uint64_t live;			/* marked by collection gc_no */
	uint64_t heap_in_use, heap_free, heap_unmapped;	/* its heap's blocks, not RSS */
	uint64_t fiber_stacks;		/* the listed fibers' stacks */
	uint32_t fibers, gc_no;
	uint64_t malloc;		/* C malloc's brk heap, less the collector's */
	uint64_t anon;			/* other anonymous memory */
	uint64_t files;			/* file-backed: code and data */
};

/* The collector's heap grew (FORMAT.md record 15). */
struct trace_grow {
	uint64_t ts_ns, bytes;
	uint32_t tid, gc_no;
	uint32_t stack;			/* index into trace.stacks + 1; 0: no stack */
};

/* A heap census (FORMAT.md record 8); its types are
 * census_types[first_type..first_type + nr_types). */
struct trace_census {
	uint64_t ts_ns;
	uint32_t gc_no;
	uint64_t blocks, unreadable, walk_ns;
	size_t first_type, nr_types;
	size_t first_event;		/* events with id > first_event come after it */
};

struct trace_census_type {
	uint32_t type_id;
	uint64_t objects, bytes, example;
};

/* A heap snapshot (FORMAT.md records 9-11): bytes point into the mapped
 * file (or a copy the trace owns). */
struct trace_heap_block {
	uint64_t addr, obj_size;
	uint32_t kind;			/* enum alys_block_kind */
	const uint8_t *bytes;
	size_t len;
};

struct trace_root {
	uint32_t kind;			/* enum alys_root_kind */
	char *name;
	uint64_t addr;
	const uint8_t *bytes;
	size_t len;
};

struct trace_snapshot {
	uint64_t ts_ns, stop_ns, blocks, heap_bytes, roots, block_size;
	bool all_interior_pointers;
	/* its records: the block and root records written before it, since
	 * the snapshot before (a trace may hold several: this is the last) */
	size_t first_block, nr_blocks, first_root, nr_roots;
};

struct trace_counter {
	struct bstr name;
	uint64_t value;
};

enum end_field {
	END_REASON = 1 << 0,
	END_EXIT_STATUS = 1 << 1,
	END_STOP_NS = 1 << 2,
	END_EVENTS = 1 << 3,
	END_LIVENESS = 1 << 4,
	END_BYTES = 1 << 5,		/* file_bytes, raw_bytes and blocks */
};

struct trace_end {
	unsigned int present;		/* enum end_field bits */
	struct bstr reason, liveness;
	int64_t exit_status;
	uint64_t stop_ns;
	uint64_t events;
	uint64_t file_bytes, raw_bytes, blocks;	/* END_BYTES: what the trace cost */
};

/* Which frees the tracer inferred (FORMAT.md header and end "liveness"). */
enum trace_liveness {
	TRACE_LIVENESS_OFF,		/* none: only called frees */
	TRACE_LIVENESS_MARKS,		/* from the collector's marks */
	TRACE_LIVENESS_REUSE,		/* from address reuse only */
};

/* What a trace holds, read-only for its users; how it is read (the
 * mapped file, table capacities, the live feed, diagnostics) is the
 * reader's own (trace.c). */
struct trace_reader;

struct trace {
	const char *path;
	struct trace_header hdr;

	struct trace_mapping *maps;
	size_t nr_maps;

	struct trace_stack *stacks;
	size_t nr_stacks;
	struct trace_node *nodes;	/* node id - 1 -> node */
	size_t nr_nodes;

	size_t nr_events;		/* counted; trace_each_event reads them */

	struct trace_collection *collections;
	size_t nr_collections;

	struct trace_pause *pauses;	/* a live trace: the last one */
	size_t nr_pauses;
	struct trace_memory *memory;	/* a live trace: the last one */
	size_t nr_memory;
	struct trace_grow *grows;	/* a live trace: the last one */
	size_t nr_grows;

	struct trace_census *censuses;
	size_t nr_censuses;
	struct trace_census_type *census_types;
	size_t nr_census_types;

	struct trace_heap_block *heap_blocks;
	size_t nr_heap_blocks;
	struct trace_root *roots;
	size_t nr_roots;
	bool has_snapshot;
	struct trace_snapshot snapshot;	/* the last one */

	struct trace_counter *counters;	/* the last counters record */
	size_t nr_counters;

	bool has_end;
	struct trace_end end;

	/* --duty: windows saw this share of the collector's bytes; event
	 * weights were divided by it on loading (0: not a duty-cycled trace). */
	double duty_share;
	double duty_share_realloc;	/* the same for realloc events */

	/* The end record's liveness mode, else the header's: read once. */
	enum trace_liveness liveness;

	bool cut_short;			/* no end record */
	uint64_t cut_at;		/* byte offset where usable data stops */

	struct trace_reader *rd;
};

/* Read path into t. Prints one error line and returns -1 on failure. */
int trace_load(struct trace *t, const char *path);
void trace_free(struct trace *t);

/* How many blocks were live at once at most, where the trace records every
 * block's end (liveness by marks), capped at 16M; 0 when it cannot tell:
 * what a table of live blocks should make room for at once. */
size_t trace_live_most(const struct trace *t);

/* Calls fn for each event of the trace (and inferred free), in file order,
 * with its stack, prev_id and the weight of a --duty trace scaled (the
 * records trace_load read: the same ones every time). Returns -1, with a
 * message, if the file cannot be read again. */
typedef void trace_event_fn(void *ctx, const struct trace_event *e);
int trace_each_event(const struct trace *t, trace_event_fn *fn, void *ctx);

/*
 * One record stream (docs/DESIGN.md "One allocation's way"): a trace's
 * records as typed values, one handler a record type, as perf's struct
 * perf_tool. The daemon's trace writer hands each record it writes to such
 * a table (its tap), with no encoding in between; the file reader decodes
 * each record of a file into the same values and builds its tables with
 * trace_put_* below, which the daemon's live profile calls too. A NULL
 * handler skips its records. Heap snapshots' records are the file's only.
 */
struct trace_tool {
	void (*header)(void *ctx, const struct trace_header *h);
	void (*mapping)(void *ctx, const struct trace_mapping *m);
	/* nodes first .. first + nr - 1: ips innermost first, the outermost
	 * hanging from node parent (0: the root) */
	void (*stack_nodes)(void *ctx, uint32_t first, uint32_t parent, const uint64_t *ips,
			    uint32_t nr, uint32_t flags);
	/* e->stack, prev_id and id unset: stack_id names the stack's node */
	void (*event)(void *ctx, const struct trace_event *e, uint32_t stack_id);
	/* a free the tracer inferred: kind, cause, gc_no and since (old_addr) */
	void (*death)(void *ctx, const struct trace_event *e);
	void (*collection)(void *ctx, const struct trace_collection *c);
	/* p->stack unset: stack_id names the stack's node */
	void (*pause)(void *ctx, const struct trace_pause *p, uint32_t stack_id);
	void (*memory)(void *ctx, const struct trace_memory *m);
	/* g->stack unset: stack_id names the stack's node */
	void (*grow)(void *ctx, const struct trace_grow *g, uint32_t stack_id);
	void (*census)(void *ctx, const struct trace_census *c,
		       const struct trace_census_type *types);
	/* cumulative: the last record replaces the ones before */
	void (*counters)(void *ctx, const struct trace_counter *c, size_t n);
	void (*end)(void *ctx, const struct trace_end *e);
};

/*
 * A trace built as it is written (the daemon's live profile), from the
 * records of a trace_tool: what trace_load keeps (of collections and
 * censuses, the last one), every value copied. trace_put_event and
 * trace_put_death link the event as trace_each_event does (id, stack,
 * prev_id; an inferred free's old_size), except that --duty weights stay
 * as recorded: a live reader divides its counts by the windows' share of
 * the period it shows (trace_duty_shares). Each returns -1, with a
 * message, on a record it cannot take (the header first, of version 2 or
 * later). Free with trace_free.
 */
void trace_build_begin(struct trace *t, const char *name);
int trace_put_header(struct trace *t, const struct trace_header *h);
int trace_put_mapping(struct trace *t, const struct trace_mapping *m);
int trace_put_nodes(struct trace *t, uint32_t first, uint32_t parent, const uint64_t *ips,
		    uint32_t nr, uint32_t flags);
int trace_put_event(struct trace *t, struct trace_event *e, uint32_t stack_id);
int trace_put_death(struct trace *t, struct trace_event *e);
int trace_put_collection(struct trace *t, const struct trace_collection *c);
/* p->stack set from stack_id */
int trace_put_pause(struct trace *t, struct trace_pause *p, uint32_t stack_id);
int trace_put_memory(struct trace *t, const struct trace_memory *m);
/* g->stack set from stack_id */
int trace_put_grow(struct trace *t, struct trace_grow *g, uint32_t stack_id);
int trace_put_census(struct trace *t, const struct trace_census *c,
		     const struct trace_census_type *types);
int trace_put_counters(struct trace *t, const struct trace_counter *c, size_t n);
/* The last counters record's count of name; 0 when it has none. */
uint64_t trace_counter_value(const struct trace *t, const char *name);
int trace_put_end(struct trace *t, const struct trace_end *e);

static inline const struct trace_stack *
trace_event_stack(const struct trace *t, const struct trace_event *e)
{
	return e->stack ? &t->stacks[e->stack - 1] : NULL;
}

/* A stack's frames, innermost first, up to max (0: all):
 *	for (frames_begin(&it, t, st, 0); frames_next(&it, &ip);) ... */
struct frame_iter {
	const struct trace_node *nodes;
	uint32_t node, left;
};

static inline void frames_begin(struct frame_iter *it, const struct trace *t,
				const struct trace_stack *st, uint32_t max)
{
	it->nodes = t->nodes;
	it->node = st->leaf;
	it->left = max && max < st->nr ? max : st->nr;
}

static inline bool frames_next(struct frame_iter *it, uint64_t *ip)
{
	if (!it->left || !it->node)
		return false;
	*ip = it->nodes[it->node - 1].ip;
	it->node = it->nodes[it->node - 1].parent;
	it->left--;
	return true;
}

static inline uint32_t trace_free_since(const struct trace_event *e)
{
	return e->cause != ALYS_CAUSE_CALL ? (uint32_t)e->old_addr : e->gc_no;
}

/* --duty traces (FORMAT.md counters gc_bytes*): the collector's bytes in
 * all and inside the windows, and the share of them the windows saw. */
struct trace_duty_bytes {
	uint64_t all, in, in_realloc;
};
bool trace_is_duty_cycled(const struct trace *t);
void trace_duty_bytes(const struct trace *t, struct trace_duty_bytes *b);
/* false (shares unchanged) when b does not give them. */
bool trace_duty_shares(const struct trace_duty_bytes *b, double *share, double *share_realloc);

/* The mapping covering addr, the latest written winning; NULL if none. */
const struct trace_mapping *trace_find_mapping(const struct trace *t,
					       uint64_t addr);

const char *trace_kind_name(unsigned int kind);
const char *trace_cause_name(unsigned int cause);
/* "off", "marks" or "reuse", as FORMAT.md writes the mode. */
const char *trace_liveness_name(enum trace_liveness mode);

#endif /* ALYS_CONV_TRACE_H */
