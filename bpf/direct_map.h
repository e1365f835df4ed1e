/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The thread's stack read where the kernel maps all memory (x86-64's
 * direct map), not copied out of its user addresses.
 *
 * The check of a walk's shared frames reads ~16 bytes a frame spread over
 * the whole span (the compiler's ~22 KB an event): copied with
 * bpf_probe_read_user, that span was ~40% of the programs' time. Read in
 * place, it is the slots' cache lines alone. A user page is found by its
 * page-table entries (4-level paging), read like the page itself through
 * the direct map: loads an exception handler makes 0 should the entry go
 * stale, never a fault. A value read so is only ever compared with one the
 * last walk read: a page gone or changed underneath is a frame that does
 * not match, walked again the usual way.
 *
 * Where the direct map starts (randomized at boot) is not exported without
 * CONFIG_KALLSYMS_ALL: find_direct_map finds it from the one direct-map
 * address at hand, the page table's own (mm->pgd), as the candidate base
 * (1 GiB aligned) through which the table translates that address to
 * itself. No base found (5-level paging, a paravirtualized table, an
 * encrypted-memory bit outside the mask): the span is copied.
 */
#ifndef ALYS_BPF_DIRECT_MAP_H
#define ALYS_BPF_DIRECT_MAP_H

/* Set by the loader: the physical address bits of an entry (0: off). */
const volatile __u64 direct_map_pfn_mask;
/* Found by find_direct_map (0: none). */
__u64 direct_map_base;
/* The task find_direct_map serves: the loader's, its tgid as its own pid
 * namespace (device and inode of /proc/self/ns/pid) numbers it, so that a
 * loader in a container is found too. */
const volatile __u32 direct_map_finder;
const volatile __u64 direct_map_finder_ns_dev, direct_map_finder_ns_ino;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

#define DM_PRESENT	(1ull << 0)
#define DM_USER		(1ull << 2)
#define DM_PWT		(1ull << 3)
#define DM_PCD		(1ull << 4)
#define DM_HUGE		(1ull << 7)	/* a PUD's or PMD's: it maps the page itself */
#define DM_PAT		(1ull << 7)	/* a PTE's */
#define DM_SPECIAL	(1ull << 9)	/* a PFN mapping: no struct page */
#define DM_GIB		(1ull << 30)
#define DM_2MIB		(1ull << 21)

/* The entry at index idx of the table at physical address table. */
static __always_inline __u64 dm_entry(const __u8 *dm, __u64 table, __u64 idx)
{
	return *(const volatile __u64 *)(dm + table + (idx & 511) * 8);
}

/*
 * The physical address of the page at va as the tables from the PUD table
 * at pud map it, or 0: not present; for a user page (user), also one not
 * user-accessible, not plain cached memory (a device's: read through a
 * pointer, a load could have an effect) or in a page of 1 GiB.
 */
static __always_inline __u64 dm_page(const __u8 *dm, __u64 pud, __u64 va, bool user)
{
	__u64 mask = direct_map_pfn_mask, e;

	e = dm_entry(dm, pud, va >> 30);
	if (!(e & DM_PRESENT))
		return 0;
	if (e & DM_HUGE)
		return user ? 0 : (e & mask & ~(DM_GIB - 1)) | (va & (DM_GIB - 1) & ~4095ull);
	e = dm_entry(dm, e & mask, va >> 21);
	if (!(e & DM_PRESENT) || (user && (!(e & DM_USER) || (e & (DM_PWT | DM_PCD)))))
		return 0;
	if (e & DM_HUGE)
		return (e & mask & ~(DM_2MIB - 1)) | (va & (DM_2MIB - 1) & ~4095ull);
	e = dm_entry(dm, e & mask, va >> 12);
	if (!(e & DM_PRESENT) ||
	    (user && (!(e & DM_USER) || (e & (DM_PWT | DM_PCD | DM_PAT | DM_SPECIAL)))))
		return 0;
	return e & mask;
}

/* The physical address of the user page at va in the address space whose
 * PGD table is at pgd, or 0 (dm_page). */
static __always_inline __u64 dm_user_page(const __u8 *dm, __u64 pgd, __u64 va)
{
	__u64 e = dm_entry(dm, pgd, va >> 39);

	return e & DM_PRESENT ? dm_page(dm, e & direct_map_pfn_mask, va, true) : 0;
}

struct dm_find {
	__u64 pgd, pgd_phys_entry, found;
};

/* Candidate k: the base k GiB below the table's own GiB, if through it
 * the table maps its own address to itself. */
static long dm_try_base(__u32 k, struct dm_find *f)
{
	__u64 v = f->pgd, base = (v & ~(DM_GIB - 1)) - ((__u64)k << 30), phys;

	if (base < (1ull << 63))
		return 1;
	phys = dm_page(bpf_rdonly_cast((void *)base, 0),
		       f->pgd_phys_entry & direct_map_pfn_mask, v, false);
	if (!phys || base + phys != (v & ~4095ull))
		return 0;
	f->found = base;
	return 1;
}

/* Run once, by the loader's own getppid(): direct_map_base, or 0. */
SEC("tp/syscalls/sys_enter_getppid")
int find_direct_map(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bpf_pidns_info ns = {};
	struct dm_find f = {};
	const __u8 *self;

	(void)ctx;
	if (!direct_map_pfn_mask ||
	    bpf_get_ns_current_pid_tgid(direct_map_finder_ns_dev, direct_map_finder_ns_ino,
					&ns, sizeof(ns)) ||
	    ns.tgid != direct_map_finder)
		return 0;
	if (bpf_probe_read_kernel(&f.pgd, sizeof(f.pgd), &t->mm->pgd) || !f.pgd)
		return 0;
	/* the table's entry for its own address, read at that address */
	self = bpf_rdonly_cast((void *)(f.pgd & ~4095ull), 0);
	f.pgd_phys_entry = dm_entry(self, f.pgd & 4095, f.pgd >> 39);
	if (!(f.pgd_phys_entry & DM_PRESENT))
		return 0;
	/* up to 64 TiB of memory below the table */
	bpf_loop(1 << 16, dm_try_base, &f, 0);
	direct_map_base = f.found;
	return 0;
}

#endif
