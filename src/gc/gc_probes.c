// SPDX-License-Identifier: MIT
#include "gc/gc_probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/elf_file.h"
#include "gc/gc_vars.h"
#include "base/ldso_list.h"
#include "base/maps_file.h"
#include "lib/util.h"

static const struct {
	const char *name;
	unsigned args;
} gc_entry_points[ALYS_KIND_FREE + 1] = {
	[ALYS_KIND_MALLOC] = { "GC_malloc", ARG_RDI },
	[ALYS_KIND_MALLOC_ATOMIC] = { "GC_malloc_atomic", ARG_RDI },
	[ALYS_KIND_REALLOC] = { "GC_realloc", ARG_RDI | ARG_RSI },
	[ALYS_KIND_FREE] = { "GC_free", ARG_RDI },
};

/* f's probe in the function at vaddr (size bytes, 0: unknown). */
static int place_probe_at(struct elf_file *ef, struct gc_func *f, GElf_Addr vaddr,
			  GElf_Xword size, char *err, size_t errlen)
{
	const uint8_t *code;
	size_t len;

	len = size && size < 64 ? size : 64;
	code = elf_file_bytes_at(ef, vaddr, len);
	if (!code) {
		snprintf(err, errlen, "%s: %s at 0x%lx is outside the file's loadable segments",
			 ef->path, f->name, (unsigned long)vaddr);
		return -1;
	}
	if (probe_place_find(code, len, vaddr, f->args, &f->place)) {
		snprintf(err, errlen, "%s: cannot disassemble %s", ef->path, f->name);
		return -1;
	}
	f->vaddr = vaddr;
	f->probe_vaddr = vaddr + f->place.offset;
	if (!elf_file_vaddr_to_offset(ef, f->probe_vaddr, &f->probe_file_off)) {
		snprintf(err, errlen, "%s: no segment maps %s", ef->path, f->name);
		return -1;
	}
	f->found = true;
	return 0;
}

static int place_probe(struct elf_file *ef, struct gc_func *f, char *err, size_t errlen)
{
	GElf_Xword size = 0;
	GElf_Addr vaddr;

	if (!elf_file_find_symbol(ef, f->name, &vaddr, &size))
		return 0;
	return place_probe_at(ef, f, vaddr, size, err, errlen);
}

/* GC_stop_world and GC_start_world: the pause probes (f->name the internal
 * function's). Not found: why says so. */
static int place_world_probe(struct elf_file *ef, struct gc_func *f, const char *external,
			     char *why, size_t whylen, char *err, size_t errlen)
{
	uint64_t vaddr;

	f->args = 0;
	if (gc_world_func_derive(ef, f->name, external, &vaddr, why, whylen))
		return 0;
	return place_probe_at(ef, f, vaddr, 0, err, errlen);
}

int gc_probes_resolve(const char *path, struct gc_probes *gp, char *err, size_t errlen)
{
	struct elf_file ef;
	GElf_Addr v;
	uint64_t site;
	int ret = 0;

	memset(gp, 0, sizeof(*gp));
	snprintf(gp->path, sizeof(gp->path), "%s", path);
	snprintf(gp->name, sizeof(gp->name), "%s", path);
	if (elf_file_open(&ef, path, err, errlen))
		return -1;
	for (int k = ALYS_KIND_MALLOC; k <= ALYS_KIND_FREE; k++) {
		gp->funcs[k].name = gc_entry_points[k].name;
		gp->funcs[k].args = gc_entry_points[k].args;
		if (place_probe(&ef, &gp->funcs[k], err, errlen)) {
			ret = -1;
			goto out;
		}
	}
	if (!gp->funcs[ALYS_KIND_MALLOC].found) {
		ret = 1;
		goto out;
	}
	if (elf_file_find_symbol(&ef, "GC_gc_no", &v, NULL))
		gp->gc_no_vaddr = v;
	if (elf_file_find_symbol(&ef, "GC_all_interior_pointers", &v, NULL))
		gp->aip_vaddr = v;
	gc_thread_key_derive(&ef, &gp->thread_key, gp->thread_key_why, sizeof(gp->thread_key_why));
	gp->collect.name = "GC_gcollect";
	gp->collect.args = PLACE_IP_ONLY;
	if (place_probe(&ef, &gp->collect, err, errlen)) {
		ret = -1;
		goto out;
	}
	gp->setcb.name = "GC_set_start_callback";
	gp->setcb.args = 1;
	if (place_probe(&ef, &gp->setcb, err, errlen)) {
		ret = -1;
		goto out;
	}
	gp->kind_global.name = "GC_malloc_kind_global";
	gp->kind_global.args = ARG_RDI | ARG_RSI;
	if (place_probe(&ef, &gp->kind_global, err, errlen)) {
		ret = -1;
		goto out;
	}
	if (!gp->kind_global.found)
		snprintf(gp->refill_why, sizeof(gp->refill_why),
			 "%s does not define GC_malloc_kind_global", path);
	else if (!refill_probe_derive(&ef, &gp->refill, gp->refill_why,
				      sizeof(gp->refill_why))) {
		struct gc_func *f = &gp->refill_at;

		gp->refill_ok = true;
		gp->total_bytes_ok = !gc_total_bytes_derive(&ef, gp->total_bytes_vaddr,
							    gp->total_bytes_why,
							    sizeof(gp->total_bytes_why));
		f->name = "GC_malloc_kind";
		f->found = true;
		f->vaddr = gp->refill.func_vaddr;
		f->probe_vaddr = gp->refill.probe_vaddr;
		f->probe_file_off = gp->refill.probe_file_off;
		f->place.offset = gp->refill.probe_vaddr - gp->refill.func_vaddr;
		f->place.emulated = 1;
		snprintf(f->place.insn, sizeof(f->place.insn), "%s", gp->refill.insn);
	}
	if (!gp->gc_no_vaddr)
		snprintf(gp->layout_why, sizeof(gp->layout_why),
			 "%s does not export GC_gc_no", path);
	else if (!gc_layout_derive(&ef, &gp->layout, gp->layout_why, sizeof(gp->layout_why)))
		gp->layout_ok = true;
	gc_start_callback_derive(&ef, &gp->startcb_vaddr, gp->startcb_why, sizeof(gp->startcb_why));
	gp->stop_world.name = "GC_stop_world";
	gp->start_world.name = "GC_start_world";
	if (place_world_probe(&ef, &gp->stop_world, "GC_stop_world_external", gp->pauses_why,
			      sizeof(gp->pauses_why), err, errlen) ||
	    place_world_probe(&ef, &gp->start_world, "GC_start_world_external", gp->pauses_why,
			      sizeof(gp->pauses_why), err, errlen)) {
		ret = -1;
		goto out;
	}
	gp->collect_inner.name = "GC_try_to_collect_inner";
	if (gp->stop_world.found &&
	    !gc_collect_inner_derive(&ef, gp->stop_world.vaddr, &v, gp->collect_why,
				     sizeof(gp->collect_why)) &&
	    place_probe_at(&ef, &gp->collect_inner, v, 0, err, errlen)) {
		ret = -1;
		goto out;
	}
	/* on the call instruction itself (emulated: no single step): its
	 * arguments set, the stack as the caller's */
	gp->heap_grow.name = "GC_expand_hp_inner";
	if (!gc_heap_grow_derive(&ef, &v, &site, gp->grow_why, sizeof(gp->grow_why))) {
		struct gc_func *f = &gp->heap_grow;

		f->vaddr = v;
		f->probe_vaddr = site;
		f->place.offset = site - v;
		f->place.emulated = 1;
		snprintf(f->place.insn, sizeof(f->place.insn), "call GC_add_to_heap");
		f->found = elf_file_vaddr_to_offset(&ef, site, &f->probe_file_off);
		if (!f->found)
			snprintf(gp->grow_why, sizeof(gp->grow_why), "no segment of %s maps 0x%llx",
				 path, (unsigned long long)site);
	}
	if (gp->layout_ok)
		gp->roots_ok = !gc_static_roots_derive(&ef, gp->layout.arrays_vaddr, &gp->roots_n_off,
						       &gp->roots_off, &gp->roots_max, gp->roots_why,
						       sizeof(gp->roots_why));
out:
	elf_file_close(&ef);
	return ret;
}

int gc_probes_for_program(const char *exe, const struct lib_list *libs,
			  struct gc_probes *gp, char *err, size_t errlen)
{
	int r = gc_probes_resolve(exe, gp, err, errlen);

	if (r <= 0) {
		gp->in_executable = r == 0;
		return r;
	}
	/* libgc by name first, then any library that defines GC_malloc. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < libs->n; i++) {
			if ((pass == 0) != !strncmp(base_name(libs->paths[i]), "libgc", 5))
				continue;
			r = gc_probes_resolve(libs->paths[i], gp, err, errlen);
			if (r < 0)
				return r;
			if (r == 0) {
				gp->in_executable = false;
				return 0;
			}
		}
	}
	snprintf(err, errlen,
		 "%s has no GC_malloc and loads no library defining it: it is not a Crystal "
		 "program using the Boehm GC (programs built with -Dgc_none cannot be traced)",
		 exe);
	return 1;
}

struct resolve_lib {
	pid_t pid;
	struct gc_probes *gp;
	char *err;
	size_t errlen;
};

/* 1 (stop) once a mapped library holds the GC functions. */
static int resolve_mapped(const struct maps_line *l, void *arg)
{
	struct resolve_lib *r = arg;

	if (!maps_line_is_exec_file(l))
		return 0;
	if (gc_probes_resolve(l->file, r->gp, r->err, r->errlen))
		return 0;
	snprintf(r->gp->name, sizeof(r->gp->name), "%s", l->path);
	return 1;
}

int gc_probes_for_process(pid_t pid, struct gc_probes *gp, char *err, size_t errlen)
{
	struct resolve_lib r = { pid, gp, err, errlen };
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ret = gc_probes_resolve(path, gp, err, errlen);
	if (ret <= 0) {
		gp->in_executable = ret == 0;
		return ret;
	}
	gp->in_executable = false;
	ret = proc_maps_each(pid, resolve_mapped, &r);
	if (ret == 1)
		return 0;
	if (ret == -1)
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", pid, strerror(errno));
	else
		snprintf(err, errlen,
			 "pid %d has no GC_malloc in its executable or its libraries: "
			 "it is not a Crystal program using the Boehm GC", pid);
	return 1;
}
