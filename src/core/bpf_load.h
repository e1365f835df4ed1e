/* SPDX-License-Identifier: MIT */
/*
 * Loading bpf/alys.bpf.c's object with its programs verified at the same
 * time. The kernel verifies one object's programs one after another: a full
 * trace's take ~1.9 s of a CPU (0.05-0.55 s each: the walk and the scan,
 * simulated through their loops), every launch and attach. Programs of
 * separate objects verify at once, a CPU each. So the object is loaded with
 * its small programs, which makes every map, then its costly ones are
 * loaded by helper objects, opened from the same ELF, that take the
 * object's maps (read-only data included, so the verifier sees the same
 * constants) and load one share of them each, on threads of their own.
 * The object's program pointers (skel->progs) then point at the helpers'
 * loaded programs: attaching is unchanged.
 */
#ifndef ALYS_BPF_LOAD_H
#define ALYS_BPF_LOAD_H

#include <stdbool.h>

struct alys_bpf;
struct bpf_helpers;

/* Loads skel (opened, configured), its costly programs by helper objects
 * when there are CPUs for them (ALYS_BPF_SERIAL_LOAD=1: never, for
 * comparison): 0 with *helpers (NULL: none were needed) to free after skel
 * is destroyed, or a negative libbpf error (*helpers NULL; skel as
 * alys_bpf__load leaves it: destroy it). */
int bpf_load(struct alys_bpf *skel, struct bpf_helpers **helpers);
/* How many helper objects loaded programs at once (0: NULL, none). */
int bpf_helpers_count(const struct bpf_helpers *h);
/* Whether the helpers loaded the program named name for their object. */
bool bpf_helpers_loaded(const struct bpf_helpers *h, const char *name);
/* The helper objects destroyed (their programs unloaded once nothing
 * attached holds them): after the object they served. NULL: nothing. */
void bpf_helpers_free(struct bpf_helpers *h);

#endif
