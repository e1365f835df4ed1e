// SPDX-License-Identifier: MIT
#include "link_reaper.h"

#include <bpf/libbpf.h>

static void *destroy(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

void link_reaper_start(struct link_reaper *r, struct bpf_link **links, int n)
{
	link_reaper_wait(r);
	for (int i = 0; i < n && i < LINK_REAPER_MAX; i++) {
		if (!links[i])
			continue;
		if (pthread_create(&r->threads[r->n], NULL, destroy, links[i]))
			bpf_link__destroy(links[i]);	/* no thread: here, then */
		else
			r->n++;
	}
}

bool link_reaper_busy(struct link_reaper *r)
{
	int left = 0;

	for (int i = 0; i < r->n; i++) {
		if (pthread_tryjoin_np(r->threads[i], NULL))
			r->threads[left++] = r->threads[i];
	}
	r->n = left;
	return r->n > 0;
}

void link_reaper_wait(struct link_reaper *r)
{
	for (int i = 0; i < r->n; i++)
		pthread_join(r->threads[i], NULL);
	r->n = 0;
}
