/* SPDX-License-Identifier: MIT */
/*
 * Writes the .alys trace (docs/FORMAT.md) with msgpack-c, and hands each
 * record, typed as the reader types it, to a tap (profile/trace.h's
 * struct trace_tool): the daemon's live profile takes the records as they
 * are written, never decoding what was just encoded.
 */
#ifndef ALYS_TRACE_WRITER_H
#define ALYS_TRACE_WRITER_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

struct container_info;
#include <stdio.h>
#include <sys/types.h>

#include "alys_events.h"
#include "profile/trace.h"

struct trace_writer_header {
	uint32_t pid;
	const char *exe;
	char *const *argv;	/* NULL-terminated; NULL when attached */
	uint64_t start_ns;
	uint64_t start_unix_ns;
	const char *unwind;
	uint32_t max_frames;
	const char *sample;
	const char *liveness;	/* "marks", "reuse" or "off" */
	const char *sample_why;	/* why sampling is not what was asked, or NULL */
	const char *liveness_why; /* why liveness is "reuse", or NULL */
	const struct container_info *container;	/* NULL: in none */
};

struct trace_writer {
	FILE *fp;		/* NULL: no file (the tap only) */
	const char *path;
	msgpack_packer pk;
	uint64_t events;
	uint64_t stack_nodes;	/* frames written as stack nodes */
	int error;		/* errno of the first failed write */
	/* Records gather in blk and go out compressed as one block record
	 * (FORMAT.md record 12); bare ones (header, end) while bare is set. */
	bool bare, bare_once;
	char *blk, *zbuf;
	size_t blk_len, blk_cap, zbuf_cap;
	uint32_t blk_records;
	void *zctx;		/* ZSTD_CCtx */
	uint64_t raw_bytes;	/* records' bytes before compression */
	uint64_t file_bytes;	/* bytes written to the file */
	uint64_t blocks;
	const struct trace_tool *tap;	/* NULL: none */
	void *tap_ctx;
};

/*
 * Creates path with mode 0600, never through a symlink, owned by uid:gid
 * (the invoking user under sudo; -1 keeps root). An existing file is only
 * overwritten if it is a regular file with no other hard link, owned by
 * uid (or by us).
 */
int trace_writer_open(struct trace_writer *w, const char *path, uid_t uid,
		      gid_t gid, char *err, size_t errlen);
/* A NULL path writes no file: records go to the tap only. */
void trace_writer_tap(struct trace_writer *w, const struct trace_tool *tap, void *ctx);
void trace_writer_header(struct trace_writer *w, const struct trace_writer_header *h);
void trace_writer_mapping(struct trace_writer *w, uint64_t start, uint64_t end,
			  uint64_t offset, const char *path,
			  const uint8_t *build_id, size_t build_id_len, uint32_t flags);
/* Stack nodes first .. first + nr - 1 (FORMAT.md record 2): ips[] innermost
 * first, the outermost hanging from node parent (0: the root). */
void trace_writer_stack(struct trace_writer *w, uint32_t first, uint32_t parent,
			const uint64_t *ips, uint32_t nr, uint32_t flags);
void trace_writer_event(struct trace_writer *w, const struct alys_rb_event *e,
			uint32_t stack_id, uint64_t old_size, uint64_t weight);
/* A tracked block found dead (bpf/live.h). */
void trace_writer_death(struct trace_writer *w, const struct alys_rb_death *d);
void trace_writer_collection(struct trace_writer *w, const struct alys_rb_collection *c);
void trace_writer_grow(struct trace_writer *w, const struct alys_rb_grow *g, uint32_t stack_id);
void trace_writer_memory(struct trace_writer *w, const struct trace_memory *m);
void trace_writer_pause(struct trace_writer *w, const struct alys_rb_pause *p, uint32_t stack_id);
/* --census (FORMAT.md record 8): the heap walk's totals, and a row for
 * each type with live objects (bytes: block-rounded sizes, hb_sz; example:
 * the address of one such live object). */
void trace_writer_census(struct trace_writer *w, uint64_t ts_ns, uint32_t gc_no,
			 uint64_t blocks, uint64_t unreadable, uint64_t walk_ns,
			 const struct trace_census_type *rows, size_t n);
/* --heap-snapshot (FORMAT.md records 9-11). */
void trace_writer_heap_block(struct trace_writer *w, uint64_t addr, uint64_t obj_size,
			     unsigned kind, const void *bytes, size_t len);
void trace_writer_root(struct trace_writer *w, unsigned kind, const char *name, uint64_t addr,
		       const void *bytes, size_t len);
struct snapshot_record {
	uint64_t ts_ns, stop_ns;	/* when the process stopped, for how long */
	uint64_t blocks, heap_bytes, roots;
	uint64_t all_interior_pointers, block_size;
};
void trace_writer_snapshot(struct trace_writer *w, const struct snapshot_record *s);
/* names[i] for counts[i]; written as one cumulative record. */
void trace_writer_counters(struct trace_writer *w, const char *const *names,
			   const uint64_t *counts, size_t n);
void trace_writer_end(struct trace_writer *w, const char *reason, int exit_status,
		      uint64_t stop_ns, const char *liveness);
/* Pushes buffered records to the file so a kill loses at most one batch. */
int trace_writer_flush(struct trace_writer *w);
int trace_writer_close(struct trace_writer *w);

#endif
