/* SPDX-License-Identifier: MIT */
/*
 * Where a Crystal Fiber object keeps the bounds of its stack. Before each
 * collection Crystal's runtime pushes the stack of every suspended fiber to
 * the collector: GC.push_stack(fiber.@context.stack_top,
 * fiber.@stack_bottom), which loads both fields from the Fiber object right
 * before the call. Their offsets are read from that code (the executable's
 * DWARF names no fields). A heap snapshot copies each fiber's stack with
 * them.
 */
#ifndef ALYS_FIBER_LAYOUT_H
#define ALYS_FIBER_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

struct fiber_layout {
	bool ok;
	uint32_t stack_top_off;		/* @context.stack_top: the saved stack pointer */
	uint32_t stack_bottom_off;	/* @stack_bottom: the stack's end (it grows down) */
	uint64_t list_vaddr;	/* the class variable Fiber::fibers (fiber_list.h); 0: none */
};

/* 0, or -1 with the cause in why. */
int fiber_layout_derive(struct elf_file *exe, struct fiber_layout *fl, char *why, size_t whylen);

#endif
