/* SPDX-License-Identifier: MIT */
/*
 * Where the ring buffer's records go: one handler a record type (as perf's
 * struct perf_tool), each decoding its record once. The sink owns what
 * turns records into the trace: the trace writer, the stack table, and the
 * blocks the trace holds (address -> size and the allocation's collection,
 * which dates the deaths liveness reports). What is not its own it hands
 * to its tool: a new stack's frames (the session makes sure their mappings
 * are written first) and the records of modes (--census's stops).
 */
#ifndef ALYS_RECORD_SINK_H
#define ALYS_RECORD_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alys_events.h"
#include "core/trace_writer.h"
#include "lib/u64_table.h"
#include "unwind/stack_table.h"

struct record_sink_tool {
	void *ctx;
	/* frames of nodes the trace did not have yet, innermost first */
	void (*new_frames)(void *ctx, const uint64_t *ips, uint32_t n);
	/* --census: the target stopped for a heap walk (NULL: none asked) */
	void (*census_stop)(void *ctx, const struct alys_rb_census *c);
};

struct record_sink {
	struct trace_writer w;
	struct stack_table stacks;
	struct u64_table blocks;	/* address -> size (a), collection (b) */
	uint64_t sample_bytes;		/* bytes:N sampling in effect, for weights */
	struct record_sink_tool tool;
	uint64_t deaths, collections, pauses;
	uint64_t scan_deaths;		/* deaths kept since the last collection record */
	bool end_scanned;		/* the last collection was read at exit or detach */
	/* Liveness by marks: the BPF side's state (enum alys_live_state), to
	 * count the deaths still found by reuse once marks are read; NULL
	 * in the other modes. */
	const volatile __u32 *live_state;
	uint64_t live_reused;
};

/* The ring buffer's callback (ctx: the sink): always 0. */
int record_sink_on_record(void *ctx, void *data, size_t len);

/* Whether the trace holds addr's allocation (of some bytes) and nothing
 * ended it. */
bool record_sink_holds(const struct record_sink *rs, uint64_t addr);

/* The stack table and the blocks (the writer is closed by its owner). */
void record_sink_free(struct record_sink *rs);

#endif
