/* SPDX-License-Identifier: MIT */
/*
 * The shared libraries a program will load, as its own dynamic loader
 * resolves them (`ld.so --list`: the loader maps them without running any
 * of the program's code). Known before the program starts, so that probes
 * and unwind tables are ready at its first instruction.
 */
#ifndef ALYS_LDSO_LIST_H
#define ALYS_LDSO_LIST_H

#include <stddef.h>

struct lib_list {
	char **paths;		/* the loader itself first, when dynamic */
	size_t n;
};

/* 0: listed (n may be 0 for a static executable); -1: could not run the loader. */
int ldso_list(const char *exe, struct lib_list *out);
void lib_list_free(struct lib_list *l);

#endif
