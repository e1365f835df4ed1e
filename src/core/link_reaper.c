// SPDX-License-Identifier: MIT
#include "core/link_reaper.h"

#include <unistd.h>

#include <bpf/libbpf.h>

static void *destroy(void *arg)
{
	struct probe_link *l = arg;

	if (l->link)
		bpf_link__destroy(l->link);
	else if (l->fd >= 0)
		close(l->fd);
	return NULL;
}

void link_reaper_start(struct link_reaper *r, struct probe_link *links, int n)
{
	link_reaper_wait(r);
	for (int i = 0; i < n && i < LINK_REAPER_MAX; i++) {
		if (!links[i].link && links[i].fd < 0)
			continue;
		r->going[r->n] = links[i];
		if (pthread_create(&r->threads[r->n], NULL, destroy, &r->going[r->n]))
			destroy(&r->going[r->n]);	/* no thread: here, then */
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
