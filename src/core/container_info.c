// SPDX-License-Identifier: MIT
#include "core/container_info.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last run of exactly n hex digits in s[0, len) bounded by non-hex
 * characters (or the ends), or NULL. */
static const char *last_hex_run(const char *s, size_t len, size_t n)
{
	const char *found = NULL;

	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && isxdigit((unsigned char)s[j]))
			j++;
		if (j - i == n)
			found = s + i;
		i = j > i ? j : i + 1;
	}
	return found;
}

/* kubepods: ".../pod<uid>/..." (cgroupfs driver) or
 * "...-pod<uid with _>.slice" (systemd driver). */
static void pod_uid_of(const char *path, char *out, size_t outlen)
{
	const char *p = path, *q;

	if (!strstr(path, "kubepods"))
		return;
	while ((q = strstr(p, "pod"))) {
		size_t n = 0;

		q += 3;
		while (q[n] && (isxdigit((unsigned char)q[n]) || q[n] == '-' || q[n] == '_'))
			n++;
		if (n == 36 && n < outlen) {
			for (size_t i = 0; i < n; i++)
				out[i] = q[i] == '_' ? '-' : (char)tolower((unsigned char)q[i]);
			out[n] = 0;
			return;
		}
		p = q;
	}
}

bool container_info_parse(const char *cgroup, const char *nspid, struct container_info *ci)
{
	const char *line = cgroup, *unified = NULL;
	size_t unified_len = 0;

	memset(ci, 0, sizeof(*ci));
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		/* "ID:CONTROLLERS:PATH" */
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			const char *path = c2 + 1;
			size_t plen = len - (size_t)(path - line);
			const char *id = last_hex_run(path, plen, 64);

			if (c2 == c1 + 1 && line[0] == '0') {
				unified = path;
				unified_len = plen;
			}
			if (id && !ci->id[0]) {
				memcpy(ci->id, id, 64);
				ci->id[64] = 0;
				snprintf(ci->cgroup, sizeof(ci->cgroup), "%.*s", (int)plen, path);
				pod_uid_of(ci->cgroup, ci->pod_uid, sizeof(ci->pod_uid));
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (nspid) {	/* outermost first: more than one is another namespace */
		const char *last = strrchr(nspid, ' ');
		const char *tab = strrchr(nspid, '\t');

		if (tab > last)
			last = tab;
		if (last && strspn(last + 1, "0123456789") && atoi(last + 1) > 0 &&
		    strspn(nspid, " \t") < (size_t)(last - nspid))
			ci->ns_pid = atoi(last + 1);
	}
	if (!ci->cgroup[0] && ci->ns_pid && unified && unified_len > 1)	/* not "/" */
		snprintf(ci->cgroup, sizeof(ci->cgroup), "%.*s", (int)unified_len, unified);
	return ci->id[0] || ci->ns_pid;
}

bool container_info_read(pid_t pid, struct container_info *ci)
{
	char path[64], cg[16384], line[256], nspid[256] = "";
	size_t n = 0;
	FILE *f;

	memset(ci, 0, sizeof(*ci));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(cg, 1, sizeof(cg) - 1, f);
		fclose(f);
	}
	cg[n] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "NSpid:", 6)) {
				line[strcspn(line, "\n")] = 0;
				snprintf(nspid, sizeof(nspid), "%s", line + 6);
				break;
			}
		fclose(f);
	}
	return container_info_parse(cg, nspid, ci);
}
