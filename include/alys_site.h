/* SPDX-License-Identifier: MIT */
/*
 * How an allocation site is named, the same in the daemon's --interval
 * reports (src/live_report.c) and in the converter (converter/sites.c):
 * by the first frame outwards that is not allocator plumbing.
 */
#ifndef ALYS_SITE_H
#define ALYS_SITE_H

#include <stdbool.h>
#include <string.h>

/* Frames that say how memory is obtained, not who wants it. */
static inline bool alys_frame_is_plumbing(const char *name)
{
	static const char *const prefixes[] = {
		"GC_", "*GC::", "GC::", "__crystal_malloc", "__crystal_realloc",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return strstr(name, "::malloc<") || strstr(name, "::realloc<");
}

#endif /* ALYS_SITE_H */
