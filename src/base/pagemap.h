/* SPDX-License-Identifier: MIT */
/*
 * Resident pages of a range of another process's memory, from
 * /proc/PID/pagemap (one 64-bit entry per page, bit 63: present in RAM):
 * what of a mapping counts in its RSS, range by range, which the kernel's
 * per-mapping totals (smaps) cannot split.
 */
#ifndef ALYS_PAGEMAP_H
#define ALYS_PAGEMAP_H

#include <stdint.h>
#include <sys/types.h>

/* /proc/PID/pagemap opened: a descriptor, or -1 (errno set). */
int pagemap_open(pid_t pid);

/* The bytes of [start, end) present in RAM (start and end rounded out to
 * pages), added to *bytes. 0, or -1 (errno set) when the entries cannot
 * be read (the process gone). */
int pagemap_resident(int fd, uint64_t start, uint64_t end, uint64_t *bytes);

#endif
