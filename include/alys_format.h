/* SPDX-License-Identifier: MIT */
/*
 * The .alys trace format, shared by the writer (src/) and the reader
 * (converter/). Specified in docs/FORMAT.md; bump ALYS_FORMAT_VERSION on any
 * incompatible change.
 */
#ifndef ALYS_FORMAT_H
#define ALYS_FORMAT_H

#define ALYS_MAGIC "alys-bpf"
#define ALYS_FORMAT_VERSION 2
/* The oldest version the converter reads: 1 wrote each stack whole. */
#define ALYS_FORMAT_VERSION_MIN 1

/* First element of every record array after the header map; the fields
 * that follow are in one table, include/alys_records.h. */
enum alys_record {
	ALYS_REC_MAPPING = 1,
	ALYS_REC_STACK = 2,	/* stack nodes (version 1: one whole stack) */
	ALYS_REC_EVENT = 3,
	ALYS_REC_COUNTERS = 4,	/* cumulative */
	ALYS_REC_END = 5,
	ALYS_REC_DEATH = 6,	/* a free the tracer inferred */
	ALYS_REC_COLLECTION = 7,
	ALYS_REC_CENSUS = 8,
	ALYS_REC_HEAP_BLOCK = 9,
	ALYS_REC_ROOT = 10,
	ALYS_REC_SNAPSHOT = 11,
	ALYS_REC_BLOCK = 12,	/* records compressed together (version 2) */
	ALYS_REC_PAUSE = 13,	/* a stop-the-world pause */
	ALYS_REC_MEMORY = 14,	/* where the target's resident memory is */
	ALYS_REC_GROW = 15,	/* the collector's heap grew */
};

/* Blocks (record 12): independent compressed runs of records, so that a
 * file cut short still yields every complete block. */
#define ALYS_CODEC_ZSTD 1
#define ALYS_BLOCK_TARGET (1u << 20)	/* raw bytes the writer gathers */
/* The most a reader inflates: the writer closes a block at the first record
 * that starts past the target, and writes any record bigger than the
 * target bare, so its blocks stay under twice the target. */
#define ALYS_BLOCK_RAW_MAX (4u << 20)

/* A heap block's kind (record 9): the collector's object kinds. */
enum alys_block_kind {
	ALYS_BLOCK_ATOMIC = 0,	/* PTRFREE: GC_malloc_atomic, holds no pointers */
	ALYS_BLOCK_NORMAL = 1,	/* GC_malloc: scanned for pointers */
};

/* What a root record (10) holds. */
enum alys_root_kind {
	ALYS_ROOT_DATA = 1,	/* .data or .bss of the executable or a library */
	ALYS_ROOT_STACK = 2,	/* a thread's stack, from its stack pointer up */
	ALYS_ROOT_REGISTERS = 3,	/* a thread's general registers */
	ALYS_ROOT_FIBER = 4,	/* a suspended Crystal fiber's stack */
	ALYS_ROOT_REGISTERED = 5,	/* a range given to GC_add_roots, not data or bss */
};

/* An event's kind (record 3), as the probes report it. */
enum alys_kind {
	ALYS_KIND_MALLOC = 1,
	ALYS_KIND_MALLOC_ATOMIC = 2,
	ALYS_KIND_REALLOC = 3,
	ALYS_KIND_FREE = 4,
};

/* How a free was seen: a GC_free call (an event, record 3), or inferred by
 * the tracer (record 6's cause, also ALYS_RB_DEATH's). */
enum alys_free_cause {
	ALYS_CAUSE_CALL = 0,
	ALYS_CAUSE_MARKS = 1,	/* unmarked after a collection's marking */
	ALYS_CAUSE_REUSE = 2,	/* its address was handed out again */
};

/* A mapping record's flags. */
enum alys_mapping_flags {
	ALYS_MAPPING_ANON = 1,	/* no file behind it (JIT code, //anon, memfd): no symbols */
};

/* A stack's flags, set by the BPF walk and kept in its trace record. */
#define ALYS_STACK_FLAG_TRUNCATED 1	/* cut at max_frames: the last frame is no root */

/* A census record's entries: [type_id, objects, bytes, example]. */
#define ALYS_CENSUS_TYPE_FIELDS 4

#endif /* ALYS_FORMAT_H */
