// SPDX-License-Identifier: MIT
#include "core/trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "alys_records.h"
#include "core/container_info.h"

/* zstd's fastest level: the daemon shares the CPUs with its target, and
 * stronger levels gain little on these records (bench/RESULTS.md). */
#define ALYS_ZSTD_LEVEL 1

static int write_file(struct trace_writer *w, const void *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, w->fp) != len) {
		if (!w->error)
			w->error = errno ? errno : EIO;
		return -1;
	}
	w->file_bytes += len;
	return 0;
}

static void *grow(void *p, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 1 << 16;

	while (n < need)
		n *= 2;
	if (n != *cap) {
		void *q = realloc(p, n);

		if (!q)
			return NULL;
		p = q;
		*cap = n;
	}
	return p;
}

static int write_cb(void *data, const char *buf, size_t len)
{
	struct trace_writer *w = data;
	char *b;

	if (!len)
		return 0;
	w->raw_bytes += len;
	if (w->bare)
		return write_file(w, buf, len);
	b = grow(w->blk, &w->blk_cap, w->blk_len + len);
	if (!b) {
		if (!w->error)
			w->error = ENOMEM;
		return -1;
	}
	w->blk = b;
	memcpy(w->blk + w->blk_len, buf, len);
	w->blk_len += len;
	return 0;
}

/* The array header and type of a record of TYPE, its field count the
 * table's (include/alys_records.h); that count. */
static unsigned pack_head(msgpack_packer *pk, unsigned type)
{
	unsigned n = alys_record(type, ALYS_FORMAT_VERSION)->n;

	msgpack_pack_array(pk, n + 1);
	msgpack_pack_uint8(pk, (uint8_t)type);
	return n;
}

/* The records gathered so far, compressed, as one block record. */
static void emit_block(struct trace_writer *w)
{
	msgpack_packer *pk = &w->pk;
	size_t bound, z;
	uint64_t raw;
	char *zb;

	if (!w->blk_len)
		return;
	bound = ZSTD_compressBound(w->blk_len);
	zb = grow(w->zbuf, &w->zbuf_cap, bound);
	if (!zb) {
		if (!w->error)
			w->error = ENOMEM;
		return;
	}
	w->zbuf = zb;
	z = ZSTD_compressCCtx(w->zctx, w->zbuf, bound, w->blk, w->blk_len, ALYS_ZSTD_LEVEL);
	if (ZSTD_isError(z)) {
		if (!w->error)
			w->error = EIO;
		return;
	}
	raw = w->raw_bytes;	/* the records were counted as they were gathered */
	w->bare = true;
	pack_head(pk, ALYS_REC_BLOCK);
	msgpack_pack_uint8(pk, ALYS_CODEC_ZSTD);
	msgpack_pack_uint64(pk, w->blk_len);
	msgpack_pack_uint32(pk, w->blk_records);
	msgpack_pack_bin(pk, z);
	msgpack_pack_bin_body(pk, w->zbuf, z);
	w->raw_bytes = raw;
	w->bare = false;
	w->blk_len = 0;
	w->blk_records = 0;
	w->blocks++;
}

/* Every record starts here: a full block goes out first, so that blocks
 * hold whole records. A record of size bytes or more beyond a block's
 * target (a heap block's contents) goes out bare, uncompressed. */
static msgpack_packer *record(struct trace_writer *w, size_t size)
{
	if (w->bare_once)
		w->bare = w->bare_once = false;
	if (w->bare)
		return &w->pk;
	if (w->blk_len >= ALYS_BLOCK_TARGET || size > ALYS_BLOCK_TARGET)
		emit_block(w);
	if (size > ALYS_BLOCK_TARGET)
		w->bare = w->bare_once = true;
	else
		w->blk_records++;
	return &w->pk;
}

static msgpack_packer *record_head(struct trace_writer *w, unsigned type, size_t size)
{
	msgpack_packer *pk = record(w, size);

	pack_head(pk, type);
	return pk;
}

/* A record whose fields are all numbers, given in the table's order
 * (msgpack packs each in its smallest form, whatever its type). */
static void record_numbers(struct trace_writer *w, unsigned type, const uint64_t *v)
{
	msgpack_packer *pk = record(w, 0);
	unsigned n = pack_head(pk, type);

	for (unsigned i = 0; i < n; i++)
		msgpack_pack_uint64(pk, v[i]);
}

/*
 * Open path for writing without following a symlink at its end and without
 * ever truncating a file that is not ours: root writing through a link or
 * into another user's file is how a tracer gets abused (e.g. -o into a
 * world-writable directory where someone planted /tmp/x.alys -> /etc/...).
 * owner: who may already own an existing file (the invoking user or us).
 */
static int open_private(const char *path, uid_t owner, char *err, size_t errlen)
{
	const int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;
	int fd;

	fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	if (fd < 0 && errno == EEXIST)
		fd = open(path, flags);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, errlen, "%s is a symbolic link: refusing to write a trace through it; "
				 "remove it or choose another -o FILE", path);
		else
			snprintf(err, errlen, "cannot create trace file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file: choose another -o FILE", path);
		goto refuse;
	}
	if (st.st_nlink > 1) {
		snprintf(err, errlen, "%s has %lu hard links: refusing to overwrite a file that is "
			 "also elsewhere; remove it or choose another -o FILE", path,
			 (unsigned long)st.st_nlink);
		goto refuse;
	}
	if (st.st_uid != owner && st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s exists and belongs to uid %u: refusing to overwrite "
			 "another user's file; remove it or choose another -o FILE", path,
			 (unsigned)st.st_uid);
		goto refuse;
	}
	if (ftruncate(fd, 0)) {
		snprintf(err, errlen, "cannot truncate %s: %s", path, strerror(errno));
		goto refuse;
	}
	return fd;
refuse:
	close(fd);
	return -1;
}

int trace_writer_open(struct trace_writer *w, const char *path, uid_t uid,
		      gid_t gid, char *err, size_t errlen)
{
	int fd;

	memset(w, 0, sizeof(*w));
	w->path = path;
	if (!path)	/* the tap only: nothing is encoded */
		return 0;
	fd = open_private(path, uid != (uid_t)-1 ? uid : geteuid(), err, errlen);
	if (fd < 0)
		return -1;
	/* An existing file keeps its mode: a trace holds addresses and
	 * command lines: make it private. */
	if (fchmod(fd, 0600) || (uid != (uid_t)-1 && fchown(fd, uid, gid))) {
		snprintf(err, errlen, "cannot set owner/mode of %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	w->fp = fdopen(fd, "w");
	if (!w->fp) {
		close(fd);
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	setvbuf(w->fp, NULL, _IOFBF, 1 << 20);
	w->zctx = ZSTD_createCCtx();
	if (!w->zctx) {
		fclose(w->fp);
		w->fp = NULL;
		snprintf(err, errlen, "cannot set up zstd compression: out of memory");
		return -1;
	}
	msgpack_packer_init(&w->pk, w, write_cb);
	w->bare = true;		/* the header: readable without inflating */
	return 0;
}

static void pack_str(msgpack_packer *pk, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s ? s : "", n);
}

static void pack_key(msgpack_packer *pk, const char *k)
{
	pack_str(pk, k);
}

/* A string as the reader holds it: NULL stays absent. */
static struct bstr as_bstr(const char *s)
{
	return (struct bstr){ (char *)s, s ? (uint32_t)strlen(s) : 0 };
}

/* The header as the reader types it (the one the file gets). */
static void tap_header(struct trace_writer *w, const struct trace_writer_header *h,
		       const char *host, size_t argc)
{
	const struct container_info *ci = h->container;
	struct trace_header th = {
		.present = HDR_PID | HDR_EXE | HDR_ARGV | HDR_START_NS | HDR_START_UNIX_NS |
			   HDR_HOSTNAME | HDR_UNWIND | HDR_MAX_FRAMES | HDR_SAMPLE |
			   HDR_LIVENESS | (ci && ci->ns_pid ? HDR_NS_PID : 0),
		.version = ALYS_FORMAT_VERSION, .pid = h->pid, .start_ns = h->start_ns,
		.start_unix_ns = h->start_unix_ns, .max_frames = h->max_frames,
		/* absent strings are written empty */
		.exe = as_bstr(h->exe ? h->exe : ""), .hostname = as_bstr(host),
		.unwind = as_bstr(h->unwind ? h->unwind : ""),
		.sample = as_bstr(h->sample ? h->sample : ""),
		.liveness = as_bstr(h->liveness ? h->liveness : ""),
		.sample_why = as_bstr(h->sample_why), .liveness_why = as_bstr(h->liveness_why),
		.container_id = as_bstr(ci && ci->id[0] ? ci->id : NULL),
		.pod_uid = as_bstr(ci && ci->pod_uid[0] ? ci->pod_uid : NULL),
		.cgroup = as_bstr(ci && ci->cgroup[0] ? ci->cgroup : NULL),
		.ns_pid = ci ? (uint32_t)ci->ns_pid : 0,
		.argc = (uint32_t)argc,
	};
	/* on the heap: a command line may hold a million arguments */
	struct bstr *argv = calloc(argc + 1, sizeof(*argv));

	if (!argv) {
		if (!w->error)
			w->error = ENOMEM;
		return;
	}
	for (size_t i = 0; i < argc; i++)
		argv[i] = as_bstr(h->argv[i]);
	th.argv = argv;
	w->tap->header(w->tap_ctx, &th);
	free(argv);
}

void trace_writer_header(struct trace_writer *w, const struct trace_writer_header *h)
{
	msgpack_packer *pk;
	char host[256] = "";
	size_t argc = 0;

	gethostname(host, sizeof(host) - 1);
	while (h->argv && h->argv[argc])
		argc++;
	if (w->tap && w->tap->header)
		tap_header(w, h, host, argc);
	if (!w->fp)
		return;
	pk = record(w, 0);
	const struct container_info *ci = h->container;
	unsigned nci = ci ? !!ci->id[0] + !!ci->pod_uid[0] + !!ci->cgroup[0] + !!ci->ns_pid : 0;

	msgpack_pack_map(pk, 12 + !!h->sample_why + !!h->liveness_why + nci);
	pack_key(pk, "magic");
	pack_str(pk, ALYS_MAGIC);
	pack_key(pk, "version");
	msgpack_pack_uint32(pk, ALYS_FORMAT_VERSION);
	pack_key(pk, "pid");
	msgpack_pack_uint32(pk, h->pid);
	pack_key(pk, "exe");
	pack_str(pk, h->exe);
	pack_key(pk, "argv");
	msgpack_pack_array(pk, argc);
	for (size_t i = 0; i < argc; i++)
		pack_str(pk, h->argv[i]);
	pack_key(pk, "start_ns");
	msgpack_pack_uint64(pk, h->start_ns);
	pack_key(pk, "start_unix_ns");
	msgpack_pack_uint64(pk, h->start_unix_ns);
	pack_key(pk, "hostname");
	pack_str(pk, host);
	pack_key(pk, "unwind");
	pack_str(pk, h->unwind);
	pack_key(pk, "max_frames");
	msgpack_pack_uint32(pk, h->max_frames);
	pack_key(pk, "sample");
	pack_str(pk, h->sample);
	pack_key(pk, "liveness");
	pack_str(pk, h->liveness);
	if (h->sample_why) {
		pack_key(pk, "sample_why");
		pack_str(pk, h->sample_why);
	}
	if (h->liveness_why) {
		pack_key(pk, "liveness_why");
		pack_str(pk, h->liveness_why);
	}
	if (ci && ci->id[0]) {
		pack_key(pk, "container_id");
		pack_str(pk, ci->id);
	}
	if (ci && ci->pod_uid[0]) {
		pack_key(pk, "pod_uid");
		pack_str(pk, ci->pod_uid);
	}
	if (ci && ci->cgroup[0]) {
		pack_key(pk, "cgroup");
		pack_str(pk, ci->cgroup);
	}
	if (ci && ci->ns_pid) {
		pack_key(pk, "ns_pid");
		msgpack_pack_uint32(pk, (uint32_t)ci->ns_pid);
	}
	w->bare = false;
}

void trace_writer_mapping(struct trace_writer *w, uint64_t start, uint64_t end,
			  uint64_t offset, const char *path,
			  const uint8_t *build_id, size_t build_id_len, uint32_t flags)
{
	msgpack_packer *pk;

	if (w->tap && w->tap->mapping)
		w->tap->mapping(w->tap_ctx, &(struct trace_mapping){
			.start = start, .end = end, .offset = offset,
			.path = as_bstr(path ? path : ""), .build_id = (uint8_t *)build_id,
			.build_id_len = (uint32_t)build_id_len, .flags = flags });
	if (!w->fp)
		return;
	pk = record_head(w, ALYS_REC_MAPPING, 0);
	msgpack_pack_uint64(pk, start);
	msgpack_pack_uint64(pk, end);
	msgpack_pack_uint64(pk, offset);
	pack_str(pk, path);
	msgpack_pack_bin(pk, build_id_len);
	msgpack_pack_bin_body(pk, build_id, build_id_len);
	msgpack_pack_uint32(pk, flags);
}

void trace_writer_stack(struct trace_writer *w, uint32_t first, uint32_t parent,
			const uint64_t *ips, uint32_t nr, uint32_t flags)
{
	msgpack_packer *pk;

	w->stack_nodes += nr;
	if (w->tap && w->tap->stack_nodes)
		w->tap->stack_nodes(w->tap_ctx, first, parent, ips, nr, flags);
	if (!w->fp)
		return;
	pk = record_head(w, ALYS_REC_STACK, 0);
	msgpack_pack_uint32(pk, first);
	msgpack_pack_uint32(pk, parent);
	msgpack_pack_array(pk, nr);
	for (uint32_t i = nr; i > 0; i--)
		msgpack_pack_uint64(pk, ips[i - 1]);
	msgpack_pack_uint32(pk, flags);
}

void trace_writer_event(struct trace_writer *w, const struct alys_rb_event *e,
			uint32_t stack_id, uint64_t old_size, uint64_t weight)
{
	w->events++;
	if (w->tap && w->tap->event)
		w->tap->event(w->tap_ctx, &(struct trace_event){
			.ts_ns = e->ts_ns, .addr = e->addr, .size = e->size,
			.old_addr = e->old_addr, .old_size = old_size, .weight = weight,
			.gc_no = e->gc_no, .tid = e->tid & ((1u << TRACE_TID_BITS) - 1),
			.kind = e->kind }, stack_id);
	if (w->fp)
		record_numbers(w, ALYS_REC_EVENT, (const uint64_t[]){
			e->kind, e->ts_ns, e->tid, e->size, e->addr, e->old_addr, old_size,
			stack_id, weight, e->gc_no });
}

void trace_writer_death(struct trace_writer *w, const struct alys_rb_death *d)
{
	if (w->tap && w->tap->death)
		w->tap->death(w->tap_ctx, &(struct trace_event){
			.ts_ns = d->ts_ns, .addr = d->addr, .gc_no = d->gc_no,
			.old_addr = d->since, .kind = ALYS_KIND_FREE, .cause = d->cause });
	if (w->fp)
		record_numbers(w, ALYS_REC_DEATH, (const uint64_t[]){
			d->ts_ns, d->addr, d->gc_no, d->since, d->cause });
}

void trace_writer_collection(struct trace_writer *w, const struct alys_rb_collection *c)
{
	if (w->tap && w->tap->collection)
		w->tap->collection(w->tap_ctx, &(struct trace_collection){
			.ts_ns = c->ts_ns, .gc_no = c->gc_no, .since = c->since,
			.judged = c->judged, .dead = c->dead, .unreadable = c->unreadable,
			.scan_ns = c->scan_ns, .followed = c->followed, .has_followed = true,
			.at_end = c->at_end });
	if (w->fp)
		record_numbers(w, ALYS_REC_COLLECTION, (const uint64_t[]){
			c->ts_ns, c->gc_no, c->since, c->judged, c->dead, c->unreadable,
			c->scan_ns, c->followed, c->at_end });
}

void trace_writer_pause(struct trace_writer *w, const struct alys_rb_pause *p, uint32_t stack_id)
{
	if (w->tap && w->tap->pause)
		w->tap->pause(w->tap_ctx, &(struct trace_pause){
			.stop_ns = p->stop_ns, .start_ns = p->start_ns,
			.begin_ns = p->begin_ns, .end_ns = p->end_ns,
			.tid = p->tid & ((1u << TRACE_TID_BITS) - 1), .gc_no = p->gc_no },
			stack_id);
	if (w->fp)
		record_numbers(w, ALYS_REC_PAUSE, (const uint64_t[]){
			p->stop_ns, p->start_ns, p->tid, p->gc_no, stack_id, p->begin_ns,
			p->end_ns });
}

void trace_writer_grow(struct trace_writer *w, const struct alys_rb_grow *g, uint32_t stack_id)
{
	if (w->tap && w->tap->grow)
		w->tap->grow(w->tap_ctx, &(struct trace_grow){
			.ts_ns = g->ts_ns, .bytes = g->bytes,
			.tid = g->tid & ((1u << TRACE_TID_BITS) - 1), .gc_no = g->gc_no },
			stack_id);
	if (w->fp)
		record_numbers(w, ALYS_REC_GROW, (const uint64_t[]){
			g->ts_ns, g->tid, g->bytes, g->gc_no, stack_id });
}

void trace_writer_memory(struct trace_writer *w, const struct trace_memory *m)
{
	if (w->tap && w->tap->memory)
		w->tap->memory(w->tap_ctx, m);
	if (w->fp)
		record_numbers(w, ALYS_REC_MEMORY, (const uint64_t[]){
			m->ts_ns, m->rss, m->heap_resident, m->live, m->heap_in_use,
			m->heap_free, m->heap_unmapped, m->fiber_stacks, m->fibers,
			m->malloc, m->anon, m->files, m->gc_no });
}

void trace_writer_census(struct trace_writer *w, uint64_t ts_ns, uint32_t gc_no,
			 uint64_t blocks, uint64_t unreadable, uint64_t walk_ns,
			 const struct trace_census_type *rows, size_t n)
{
	msgpack_packer *pk;

	if (w->tap && w->tap->census)
		w->tap->census(w->tap_ctx, &(struct trace_census){
			.ts_ns = ts_ns, .gc_no = gc_no, .blocks = blocks,
			.unreadable = unreadable, .walk_ns = walk_ns, .nr_types = n }, rows);
	if (!w->fp)
		return;
	pk = record_head(w, ALYS_REC_CENSUS, 0);
	msgpack_pack_uint64(pk, ts_ns);
	msgpack_pack_uint32(pk, gc_no);
	msgpack_pack_uint64(pk, blocks);
	msgpack_pack_uint64(pk, unreadable);
	msgpack_pack_uint64(pk, walk_ns);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		msgpack_pack_array(pk, ALYS_CENSUS_TYPE_FIELDS);
		msgpack_pack_uint32(pk, rows[i].type_id);
		msgpack_pack_uint64(pk, rows[i].objects);
		msgpack_pack_uint64(pk, rows[i].bytes);
		msgpack_pack_uint64(pk, rows[i].example);
	}
}

void trace_writer_heap_block(struct trace_writer *w, uint64_t addr, uint64_t obj_size,
			     unsigned kind, const void *bytes, size_t len)
{
	msgpack_packer *pk;

	if (!w->fp)	/* snapshots are the file's only */
		return;
	pk = record_head(w, ALYS_REC_HEAP_BLOCK, len);
	msgpack_pack_uint64(pk, addr);
	msgpack_pack_uint64(pk, obj_size);
	msgpack_pack_uint8(pk, (uint8_t)kind);
	msgpack_pack_bin(pk, len);
	msgpack_pack_bin_body(pk, bytes, len);
}

void trace_writer_root(struct trace_writer *w, unsigned kind, const char *name, uint64_t addr,
		       const void *bytes, size_t len)
{
	msgpack_packer *pk;

	if (!w->fp)
		return;
	pk = record_head(w, ALYS_REC_ROOT, len);
	msgpack_pack_uint8(pk, (uint8_t)kind);
	msgpack_pack_str(pk, strlen(name));
	msgpack_pack_str_body(pk, name, strlen(name));
	msgpack_pack_uint64(pk, addr);
	msgpack_pack_bin(pk, len);
	msgpack_pack_bin_body(pk, bytes, len);
}

void trace_writer_snapshot(struct trace_writer *w, const struct snapshot_record *s)
{
	if (!w->fp)
		return;
	record_numbers(w, ALYS_REC_SNAPSHOT, (const uint64_t[]){
		s->ts_ns, s->stop_ns, s->blocks, s->heap_bytes, s->roots,
		s->all_interior_pointers, s->block_size });
}

void trace_writer_counters(struct trace_writer *w, const char *const *names,
			   const uint64_t *counts, size_t n)
{
	msgpack_packer *pk;

	if (w->tap && w->tap->counters) {
		struct trace_counter c[n + 1];

		for (size_t i = 0; i < n; i++)
			c[i] = (struct trace_counter){ as_bstr(names[i]), counts[i] };
		w->tap->counters(w->tap_ctx, c, n);
	}
	if (!w->fp)
		return;
	pk = record_head(w, ALYS_REC_COUNTERS, 0);
	msgpack_pack_map(pk, n);
	for (size_t i = 0; i < n; i++) {
		pack_str(pk, names[i]);
		msgpack_pack_uint64(pk, counts[i]);
	}
}

void trace_writer_end(struct trace_writer *w, const char *reason, int exit_status,
		      uint64_t stop_ns, const char *liveness)
{
	msgpack_packer *pk = &w->pk;
	uint64_t file_bytes, raw_bytes;

	if (w->fp)
		emit_block(w);
	/* before this record, whose own bytes are neither */
	file_bytes = w->file_bytes;
	raw_bytes = w->raw_bytes;
	if (w->tap && w->tap->end)
		w->tap->end(w->tap_ctx, &(struct trace_end){
			.present = END_REASON | END_EXIT_STATUS | END_STOP_NS | END_EVENTS |
				   END_LIVENESS | END_BYTES,
			.reason = as_bstr(reason ? reason : ""),
			.liveness = as_bstr(liveness ? liveness : ""),
			.exit_status = exit_status, .stop_ns = stop_ns, .events = w->events,
			.file_bytes = file_bytes, .raw_bytes = raw_bytes,
			.blocks = w->blocks });
	if (!w->fp)
		return;
	w->bare = true;
	pack_head(pk, ALYS_REC_END);
	msgpack_pack_map(pk, 8);
	pack_key(pk, "liveness");
	pack_str(pk, liveness);
	pack_key(pk, "reason");
	pack_str(pk, reason);
	pack_key(pk, "exit_status");
	msgpack_pack_int(pk, exit_status);
	pack_key(pk, "stop_ns");
	msgpack_pack_uint64(pk, stop_ns);
	pack_key(pk, "events");
	msgpack_pack_uint64(pk, w->events);
	/* What the trace cost, stacks included: the file before this record,
	 * and its records before compression. */
	pack_key(pk, "file_bytes");
	msgpack_pack_uint64(pk, file_bytes);
	pack_key(pk, "raw_bytes");
	msgpack_pack_uint64(pk, raw_bytes);
	pack_key(pk, "blocks");
	msgpack_pack_uint64(pk, w->blocks);
}

void trace_writer_tap(struct trace_writer *w, const struct trace_tool *tap, void *ctx)
{
	w->tap = tap;
	w->tap_ctx = ctx;
}

int trace_writer_flush(struct trace_writer *w)
{
	if (!w->fp)
		return w->error ? -1 : 0;
	emit_block(w);
	if (fflush(w->fp) && !w->error)
		w->error = errno;
	return w->error ? -1 : 0;
}

int trace_writer_close(struct trace_writer *w)
{
	int ret = trace_writer_flush(w);

	if (w->fp && fclose(w->fp) && !w->error) {
		w->error = errno;
		ret = -1;
	}
	w->fp = NULL;
	ZSTD_freeCCtx(w->zctx);
	free(w->blk);
	free(w->zbuf);
	w->zctx = NULL;
	w->blk = w->zbuf = NULL;
	return ret;
}
