// SPDX-License-Identifier: MIT
#include "agent/crystal_detect.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/elf_file.h"

#define VERDICTS 512	/* files remembered, replaced round robin */

struct verdict {
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
	bool crystal;
	char why[96];
};

struct crystal_detect {
	struct verdict v[VERDICTS];
	size_t n, next;
};

struct crystal_detect *crystal_detect_new(void)
{
	return calloc(1, sizeof(struct crystal_detect));
}

void crystal_detect_free(struct crystal_detect *cd)
{
	free(cd);
}

static void needs_libgc(const char *name, void *arg)
{
	if (!strncmp(name, "libgc.so", 8))
		*(bool *)arg = true;
}

static bool examine(const char *path, char *why, size_t whylen)
{
	struct elf_file ef;
	char err[512];
	bool gc = false, crystal;
	GElf_Addr vaddr;
	GElf_Xword size;

	if (elf_file_open(&ef, path, err, sizeof(err))) {
		snprintf(why, whylen, "not an x86-64 ELF program");
		return false;
	}
	crystal = elf_file_find_symbol(&ef, "__crystal_main", &vaddr, &size);
	if (crystal) {
		gc = elf_file_find_symbol(&ef, "GC_malloc", &vaddr, &size);
		if (!gc)
			elf_file_each_needed(&ef, needs_libgc, &gc);
	}
	elf_file_close(&ef);
	if (!crystal)
		snprintf(why, whylen, "no __crystal_main: not Crystal (or stripped)");
	else if (!gc)
		snprintf(why, whylen, "Crystal without libgc (-Dgc_none?)");
	return crystal && gc;
}

bool crystal_detect(struct crystal_detect *cd, const char *path, char *why, size_t whylen)
{
	struct verdict *v;
	struct stat st;
	char scratch[96];

	if (!why) {
		why = scratch;
		whylen = sizeof(scratch);
	}
	if (stat(path, &st)) {
		snprintf(why, whylen, "gone");
		return false;
	}
	for (size_t i = 0; i < cd->n; i++) {
		v = &cd->v[i];
		if (v->dev == st.st_dev && v->ino == st.st_ino &&
		    v->ctime.tv_sec == st.st_ctim.tv_sec && v->ctime.tv_nsec == st.st_ctim.tv_nsec) {
			snprintf(why, whylen, "%s", v->why);
			return v->crystal;
		}
	}
	v = &cd->v[cd->n < VERDICTS ? cd->n++ : cd->next++ % VERDICTS];
	*v = (struct verdict){ .dev = st.st_dev, .ino = st.st_ino, .ctime = st.st_ctim };
	v->crystal = examine(path, v->why, sizeof(v->why));
	snprintf(why, whylen, "%s", v->why);
	return v->crystal;
}
