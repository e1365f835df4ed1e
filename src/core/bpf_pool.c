// SPDX-License-Identifier: MIT
#include "core/bpf_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"
#include "core/bpf_load.h"
#include "unwind/unwind_maps.h"

/* The kernel lays an array's elements 8-byte aligned: mapped, it is a C
 * array of them only if their size is a multiple of 8. */
_Static_assert(sizeof(struct alys_sess) % 8 == 0, "struct alys_sess: 8-byte multiple");

struct bpf_group {
	struct alys_bpf *skel;
	struct bpf_helpers *helpers;	/* the objects that loaded its costly programs */
	unsigned char *key;		/* what it was configured with (config_key) */
	size_t key_len;
	bool uprobe_sessions;
	bool used[ALYS_MAX_SESSIONS];
	struct alys_sess *states;	/* the sessions map, mapped */
	size_t states_len;
	struct bpf_link *exit_link;	/* exit_group_enter, once a slot wants it */
	struct bpf_group *next;
};

struct bpf_pool {
	pthread_mutex_t lock;
	struct bpf_group *groups;
	struct unwind_maps um;
};

struct bpf_pool *bpf_pool_new(void)
{
	struct bpf_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	unwind_maps_init(&p->um);
	return p;
}

void bpf_pool_free(struct bpf_pool *p)
{
	if (!p)
		return;
	while (p->groups) {
		struct bpf_group *g = p->groups;

		p->groups = g->next;
		bpf_link__destroy(g->exit_link);
		if (g->states)
			munmap(g->states, g->states_len);
		alys_bpf__destroy(g->skel);
		bpf_helpers_free(g->helpers);
		free(g->key);
		free(g);
	}
	unwind_maps_free(&p->um);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

struct unwind_maps *bpf_pool_unwind_maps(struct bpf_pool *p)
{
	return &p->um;
}

/* The read-only data, then each program's autoload flag and attach type:
 * what the kernel verifies a program against. Two skeletons with equal keys
 * load the same programs. A loaded skeleton's costly programs were loaded
 * by its helpers (bpf_load.h). */
static unsigned char *config_key(const struct alys_bpf *skel, const struct bpf_helpers *h,
				 size_t *len)
{
	size_t ro_len = 0, n = 0, progs = 0;
	const void *ro = bpf_map__initial_value(skel->maps.rodata, &ro_len);
	struct bpf_program *prog;
	unsigned char *key;

	bpf_object__for_each_program(prog, skel->obj)
		progs++;
	key = malloc(ro_len + progs * (1 + sizeof(uint32_t)));
	if (!key || !ro)
		goto fail;
	memcpy(key, ro, ro_len);
	n = ro_len;
	bpf_object__for_each_program(prog, skel->obj) {
		uint32_t type = bpf_program__expected_attach_type(prog);

		key[n++] = bpf_program__autoload(prog) ||
			   bpf_helpers_loaded(h, bpf_program__name(prog));
		memcpy(key + n, &type, sizeof(type));
		n += sizeof(type);
	}
	*len = n;
	return key;
fail:
	free(key);
	return NULL;
}

static bool has_free_slot(const struct bpf_group *g)
{
	for (size_t i = 0; i < ALYS_MAX_SESSIONS; i++)
		if (!g->used[i])
			return true;
	return false;
}

struct bpf_group *bpf_pool_find(struct bpf_pool *p, const struct alys_bpf *configured)
{
	size_t len;
	unsigned char *key = config_key(configured, NULL, &len);
	struct bpf_group *g;

	if (!key)
		return NULL;
	pthread_mutex_lock(&p->lock);
	for (g = p->groups; g; g = g->next)
		if (g->key_len == len && !memcmp(g->key, key, len) && has_free_slot(g))
			break;
	pthread_mutex_unlock(&p->lock);
	free(key);
	return g;
}

struct bpf_group *bpf_pool_add(struct bpf_pool *p, struct alys_bpf *skel,
			       struct bpf_helpers *helpers, bool uprobe_sessions)
{
	struct bpf_group *g = calloc(1, sizeof(*g));
	long page = sysconf(_SC_PAGESIZE);

	if (!g)
		goto fail;
	g->skel = skel;
	g->helpers = helpers;
	g->uprobe_sessions = uprobe_sessions;
	g->key = config_key(skel, helpers, &g->key_len);
	g->states_len = (ALYS_MAX_SESSIONS * sizeof(struct alys_sess) + page - 1) / page * page;
	g->states = mmap(NULL, g->states_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(skel->maps.sessions), 0);
	if (!g->key || g->states == MAP_FAILED) {
		if (g->states != MAP_FAILED)
			munmap(g->states, g->states_len);
		free(g->key);
		free(g);
		goto fail;
	}
	pthread_mutex_lock(&p->lock);
	g->next = p->groups;
	p->groups = g;
	pthread_mutex_unlock(&p->lock);
	return g;
fail:
	alys_bpf__destroy(skel);
	bpf_helpers_free(helpers);
	return NULL;
}

/* Every CPU's value of one per-CPU counter set to 0. */
static void zero_counters(int fd, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *zeros;

	if (ncpu <= 0 || !(zeros = calloc(ncpu, sizeof(*zeros))))
		return;
	for (uint32_t k = 0; k < ALYS_CNT_NR; k++) {
		uint32_t key = slot * ALYS_CNT_NR + k;

		bpf_map_update_elem(fd, &key, zeros, BPF_ANY);
	}
	free(zeros);
}

void bpf_slot_counters(const struct bpf_slot *s, uint64_t out[ALYS_CNT_NR])
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(s->skel->maps.counters);
	uint64_t *vals;

	memset(out, 0, ALYS_CNT_NR * sizeof(out[0]));
	if (ncpu <= 0 || !(vals = calloc(ncpu, sizeof(*vals))))
		return;
	for (uint32_t k = 0; k < ALYS_CNT_NR; k++) {
		uint32_t key = s->slot * ALYS_CNT_NR + k;

		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
}

/* A slot's maps, each the inner map of one array-of-maps (bpf/alys.bpf.c,
 * bpf/live.h): made by bpf_slot_take, dropped by bpf_slot_give_back,
 * side by side. The ring buffer's fd is the slot's. */
enum { SLOT_STACK_CACHE, SLOT_TRACKED_SMALL, SLOT_TRACKED_MID, SLOT_TRACKED_BIG,
       SLOT_EVENTS, SLOT_MAPS };

struct slot_map_def {
	const char *what;		/* for a message */
	const char *smaller;		/* how to do with less of it */
	enum bpf_map_type type;
	uint32_t key_size, value_size, flags;	/* as the template's */
};

#define TRACKED_DEF(w) { w, "trace without them: --no-liveness", BPF_MAP_TYPE_HASH, 8, 40, \
			 BPF_F_NO_PREALLOC }
static const struct slot_map_def slot_map_defs[SLOT_MAPS] = {
	[SLOT_STACK_CACHE] = { "stack cache", "make it smaller with --stack-cache N",
			       BPF_MAP_TYPE_ARRAY, 4, 8, BPF_F_INNER_MAP },
	[SLOT_TRACKED_SMALL] = TRACKED_DEF("tracked-block maps"),
	[SLOT_TRACKED_MID] = TRACKED_DEF("tracked-block maps"),
	[SLOT_TRACKED_BIG] = TRACKED_DEF("tracked-block maps"),
	[SLOT_EVENTS] = { "ring buffer", "make it smaller with --ringbuf-size N",
			  BPF_MAP_TYPE_RINGBUF, 0, 0, 0 },
};
#undef TRACKED_DEF

static void slot_outer_maps(struct alys_bpf *skel, struct bpf_map *outer[SLOT_MAPS])
{
	outer[SLOT_STACK_CACHE] = skel->maps.stack_cache_of;
	outer[SLOT_TRACKED_SMALL] = skel->maps.tracked_small_of;
	outer[SLOT_TRACKED_MID] = skel->maps.tracked_mid_of;
	outer[SLOT_TRACKED_BIG] = skel->maps.tracked_big_of;
	outer[SLOT_EVENTS] = skel->maps.events_of;
}

/* One of the slot's maps, made and put in its outer map: its fd, or -errno. */
static int slot_map(struct bpf_map *outer, uint32_t slot, const struct slot_map_def *d,
		    uint32_t entries)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = d->flags);
	int fd = bpf_map_create(d->type, NULL, d->key_size, d->value_size, entries, &opts);
	int outer_fd = bpf_map__fd(outer);

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(outer_fd, &slot, &fd, BPF_ANY)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* One of the slot's maps made, or taken out of its outer map. */
struct slot_job {
	struct bpf_map *outer;
	uint32_t slot, entries;
	const struct slot_map_def *def;	/* NULL: taken out */
	int fd;				/* made: its fd, or -errno */
};

static void *slot_job_run(void *arg)
{
	struct slot_job *j = arg;

	if (j->def)
		j->fd = slot_map(j->outer, j->slot, j->def, j->entries);
	else
		bpf_map_delete_elem(bpf_map__fd(j->outer), &j->slot);
	return NULL;
}

/* Each change of a map of maps waits for an RCU grace period (~10 ms):
 * the slot's five made side by side wait for about one together, and the
 * ring buffer's pages (64 MiB by default, ~50 ms) are cleared meanwhile. */
static void slot_jobs_run(struct slot_job j[SLOT_MAPS])
{
	pthread_t thr[SLOT_MAPS];
	bool started[SLOT_MAPS];

	for (size_t i = 1; i < SLOT_MAPS; i++)
		started[i] = !pthread_create(&thr[i], NULL, slot_job_run, &j[i]);
	slot_job_run(&j[0]);
	for (size_t i = 1; i < SLOT_MAPS; i++) {
		if (started[i])
			pthread_join(thr[i], NULL);
		else
			slot_job_run(&j[i]);
	}
}

static void drop_slot_maps(struct alys_bpf *skel, uint32_t slot)
{
	struct bpf_map *outer[SLOT_MAPS];
	struct slot_job j[SLOT_MAPS];

	slot_outer_maps(skel, outer);
	for (size_t i = 0; i < SLOT_MAPS; i++)
		j[i] = (struct slot_job){ .outer = outer[i], .slot = slot };
	slot_jobs_run(j);
}

int bpf_slot_take(struct bpf_pool *p, struct bpf_group *g, const struct bpf_slot_sizes *sz,
		  struct bpf_slot *s, char *err, size_t errlen)
{
	struct alys_bpf *skel = g->skel;
	struct bpf_map *outer[SLOT_MAPS];
	struct slot_job j[SLOT_MAPS];
	uint32_t entries[SLOT_MAPS] = {
		[SLOT_STACK_CACHE] = sz->stack_cache, [SLOT_TRACKED_SMALL] = sz->tracked_small,
		[SLOT_TRACKED_MID] = sz->tracked_mid, [SLOT_TRACKED_BIG] = sz->tracked_big,
		[SLOT_EVENTS] = sz->ringbuf_bytes,
	};
	int slot = -1, fd;
	size_t i, failed = SLOT_MAPS;	/* the first map not made */

	pthread_mutex_lock(&p->lock);
	for (int k = 0; k < ALYS_MAX_SESSIONS && slot < 0; k++)
		if (!g->used[k])
			slot = k;
	if (slot >= 0)
		g->used[slot] = true;
	pthread_mutex_unlock(&p->lock);
	if (slot < 0) {
		snprintf(err, errlen, "no free session slot in the BPF object (%d in use)",
			 ALYS_MAX_SESSIONS);
		return -1;
	}
	*s = (struct bpf_slot){ .g = g, .skel = skel, .st = &g->states[slot],
				.slot = (uint32_t)slot, .uprobe_sessions = g->uprobe_sessions,
				.events_fd = -1 };
	memset(s->st, 0, sizeof(*s->st));
	s->st->slot = (uint32_t)slot;
	zero_counters(bpf_map__fd(skel->maps.counters), s->slot);
	slot_outer_maps(skel, outer);
	for (i = 0; i < SLOT_MAPS; i++)
		j[i] = (struct slot_job){ .outer = outer[i], .slot = s->slot,
					  .entries = entries[i], .def = &slot_map_defs[i] };
	slot_jobs_run(j);
	/* the outer maps hold the others: only the ring buffer's fd is kept */
	for (i = 0; i < SLOT_MAPS; i++) {
		if (j[i].fd < 0)
			failed = failed < SLOT_MAPS ? failed : i;
		else if (i == SLOT_EVENTS)
			s->events_fd = j[i].fd;
		else
			close(j[i].fd);
	}
	if (failed == SLOT_MAPS)
		return 0;
	fd = j[failed].fd;
	/* Since Linux 5.11 a map's memory is charged to the memory cgroup of
	 * who makes it; before, to RLIMIT_MEMLOCK (EPERM). */
	snprintf(err, errlen, "cannot make the session's %s in the kernel (%u %s): %s%s%s",
		 slot_map_defs[failed].what, entries[failed],
		 failed == SLOT_EVENTS ? "bytes" : "entries", strerror(-fd),
		 -fd == ENOMEM ? ": the kernel charges BPF maps to the memory cgroup alys-bpf "
				 "runs in: raise its limit (memory.max; cgroup v1: "
				 "memory.limit_in_bytes; a unit's MemoryMax=), or " :
		 -fd == EPERM ? ": a memlock limit (kernels before 5.11): raise it (ulimit -l "
				"unlimited), or " : "",
		 -fd == ENOMEM || -fd == EPERM ? slot_map_defs[failed].smaller : "");
	bpf_slot_give_back(p, s);
	return -1;
}

int bpf_slot_watch_exit(struct bpf_slot *s, pid_t pid)
{
	uint32_t tgid = (uint32_t)pid;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.slot_of_tgid), &tgid, &s->slot,
				BPF_ANY))
		return -errno;
	s->exit_pid = pid;
	if (!s->g->exit_link) {
		s->g->exit_link = bpf_program__attach(s->skel->progs.exit_group_enter);
		if (!s->g->exit_link)
			return -errno;
	}
	return 0;
}

static void give_back(struct bpf_pool *p, struct bpf_slot *s, bool drop_maps)
{
	if (!s->g)
		return;
	if (s->exit_pid) {
		uint32_t tgid = (uint32_t)s->exit_pid;

		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.slot_of_tgid), &tgid);
	}
	if (drop_maps)
		drop_slot_maps(s->skel, s->slot);
	if (s->events_fd >= 0)
		close(s->events_fd);
	pthread_mutex_lock(&p->lock);
	s->g->used[s->slot] = false;
	pthread_mutex_unlock(&p->lock);
	*s = (struct bpf_slot){ .events_fd = -1 };
}

void bpf_slot_give_back(struct bpf_pool *p, struct bpf_slot *s)
{
	give_back(p, s, true);
}

void bpf_slot_give_back_last(struct bpf_pool *p, struct bpf_slot *s)
{
	give_back(p, s, false);
}
