// SPDX-License-Identifier: MIT
#include "agent/pusher.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/clock_ns.h"
#include "core/live_profile.h"
#include "profile/outbuf.h"
#include "agent/push_api.h"
#include "lib/util.h"

#define REQUEST_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_MS 5000
#define BACKOFF_MAX_S 30
#define ANSWER_KEEP 300		/* bytes of a server's answer kept for messages */
/* Pyroscope's defaults (pkg/validation/limits.go, pkg/distributor): at
 * most 16000 samples a profile; its ingestion rate limit's 2 MiB burst
 * refuses any one profile bigger than that before compression, labels
 * included, with a 429 that no retry passes. */
#define MAX_SAMPLES 16000
#define MAX_PROFILE_BYTES (2000u * 1000u)
#define MAX_LABEL_VALUE 2048

struct push_source {
	struct push_source *next;
	struct live_profile *lp;
	struct live_totals *before;	/* the last window's end */
	pid_t pid;
	char service[256];
	struct push_label extra[PUSH_MAX_EXTRA_LABELS];	/* owned */
	size_t nr_extra;
	bool ended;			/* the session ended: one last window */
};

static void free_source(struct push_source *src)
{
	for (size_t i = 0; i < PUSH_MAX_EXTRA_LABELS; i++) {
		free((char *)src->extra[i].name);
		free((char *)src->extra[i].value);
	}
	free(src);
}

struct request {
	struct request *next;
	struct outbuf body;
	uint64_t stamp_unix_ns;	/* its oldest profile's time */
};

struct pusher {
	struct push_opts o;
	const struct push_api *api;
	char url[2048];
	char hostname[256];
	struct curl_slist *headers;
	pthread_t renderer, sender;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* stop asked, a request queued */
	struct push_source *sources;
	struct request *head, *tail, *in_flight;
	bool stopping, rendered_last;
	uint64_t stop_wait_ns;		/* stopping: how long the sender may go on */
	uint64_t deadline_ns;		/* from the last windows: when it gives up */
	bool failing;			/* since the last success */
	uint64_t dropped_said, expired_said, cut_said;
	uint64_t max_age_ns;		/* PUSH_MAX_AGE_S */
	struct window_limits lim;	/* MAX_SAMPLES, MAX_PROFILE_BYTES */
	struct push_stats st;
};

#define say(p, ...) do { if (!(p)->o.quiet) fail("push: " __VA_ARGS__); } while (0)

static struct timespec abs_in(uint64_t ns)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ull),
				  .tv_nsec = (long)(t % 1000000000ull) };
}

static void free_request(struct request *r)
{
	outbuf_release(&r->body);
	free(r);
}

/* Whether a count said on stderr is due again: at 1, then each time it
 * has doubled since it was last said (a failing server is not a flood). */
static bool say_due(uint64_t count, uint64_t *said)
{
	if (count < *said * 2 + 1)
		return false;
	*said = count;
	return true;
}

/* Under p->lock. */
static void unlink_request(struct pusher *p, struct request *r)
{
	struct request **pp = &p->head, *prev = NULL;

	while (*pp && *pp != r) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = r->next;
	if (p->tail == r)
		p->tail = prev;
	p->st.queued--;
	p->st.queued_bytes -= r->body.len;
}

/* Under p->lock: a full queue loses its oldest request not being sent. */
static void enqueue(struct pusher *p, struct request *r)
{
	if (p->st.queued >= p->o.queue) {
		struct request *old = p->head == p->in_flight ? p->head->next : p->head;

		if (old) {
			unlink_request(p, old);
			free_request(old);
			p->st.dropped++;
		}
		if (say_due(p->st.dropped, &p->dropped_said))
			say(p, "the queue is full (--push-queue %u): %llu profiles dropped so far\n",
			    p->o.queue, (unsigned long long)p->st.dropped);
	}
	r->next = NULL;
	if (p->tail)
		p->tail->next = r;
	else
		p->head = r;
	p->tail = r;
	p->st.queued++;
	p->st.queued_bytes += r->body.len;
	p->st.windows++;
	pthread_cond_broadcast(&p->wake);
}

/* The labels as the servers take them: none with an empty value (Pyroscope
 * drops it, and an empty service_name refuses the profile), values cut to
 * MAX_LABEL_VALUE bytes at a character's start (it refuses longer ones). */
static size_t usable_labels(struct push_label *l, size_t n, char cut[][MAX_LABEL_VALUE + 1])
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(l[i].value);

		if (!len)
			continue;
		l[kept] = l[i];
		if (len > MAX_LABEL_VALUE) {
			len = MAX_LABEL_VALUE;
			while (len && ((unsigned char)l[i].value[len] & 0xc0) == 0x80)
				len--;
			memcpy(cut[kept], l[i].value, len);
			cut[kept][len] = 0;
			l[kept].value = cut[kept];
		}
		kept++;
	}
	return kept;
}

/* One request of a window's profiles, queued. */
static void push_profile(struct pusher *p, const struct push_label *labels, size_t nr_labels,
			 const struct push_raw *raw, size_t nr_raw, uint64_t stamp_unix_ns)
{
	struct request *r = calloc(1, sizeof(*r));

	if (!r)
		return;
	r->stamp_unix_ns = stamp_unix_ns;
	outbuf_init(&r->body, -1);
	p->api->body(&r->body, labels, nr_labels, raw, nr_raw);
	pthread_mutex_lock(&p->lock);
	enqueue(p, r);
	pthread_mutex_unlock(&p->lock);
}

static void render_window(struct pusher *p, struct push_source *src, bool last)
{
	struct window_profiles w = { .samples_cut = 0 };
	char pid[16];
	struct push_label labels[5 + PUSH_MAX_EXTRA_LABELS] = {
		{ "__name__", "memory" },
		{ "service_name", src->service[0] ? src->service : "unknown_service" },
		{ "hostname", p->hostname },
		{ "pid", pid },
	};
	static char cut[5 + PUSH_MAX_EXTRA_LABELS][MAX_LABEL_VALUE + 1];	/* the renderer's */
	size_t nr_labels = 4;
	struct live_totals *now;

	if (p->api->delta_label)
		labels[nr_labels++] = (struct push_label){ "__delta__", "false" };
	for (size_t i = 0; i < src->nr_extra; i++)
		labels[nr_labels++] = src->extra[i];
	snprintf(pid, sizeof(pid), "%d", src->pid);
	nr_labels = usable_labels(labels, nr_labels, cut);
	outbuf_init(&w.alloc, -1);
	outbuf_init(&w.inuse, -1);
	outbuf_init(&w.pauses, -1);
	now = live_profile_window(src->lp, src->before, last, &p->lim, &w);
	if (!now) {		/* the duty windows missed it: the next one's */
		outbuf_release(&w.alloc);
		outbuf_release(&w.inuse);
		outbuf_release(&w.pauses);
		return;
	}
	live_totals_free(src->before);
	src->before = now;
	/* a profile without samples stores nothing: not sent */
	if (w.alloc_samples || w.inuse_samples) {
		struct push_raw raw[2];
		size_t nr_raw = 0;

		if (w.alloc_samples)
			raw[nr_raw++] = (struct push_raw){ w.alloc.buf, w.alloc.len };
		if (w.inuse_samples)
			raw[nr_raw++] = (struct push_raw){ w.inuse.buf, w.inuse.len };
		push_profile(p, labels, nr_labels, raw, nr_raw,
			     w.alloc_samples && w.start_unix_ns ? w.start_unix_ns : w.end_unix_ns);
	}
	/* the collector's pauses: a profile type of their own, which
	 * Pyroscope and Parca tell apart by __name__ */
	if (w.pause_samples) {
		labels[0].value = "gc_pauses";
		push_profile(p, labels, nr_labels,
			     &(struct push_raw){ w.pauses.buf, w.pauses.len }, 1,
			     w.start_unix_ns ? w.start_unix_ns : w.end_unix_ns);
	}
	if (w.samples_cut) {
		pthread_mutex_lock(&p->lock);
		p->st.windows_cut++;
		if (say_due(p->st.windows_cut, &p->cut_said))
			say(p, "pid %d: a window held more stacks than a server takes in one "
			    "profile (%u samples, %zu bytes): the smallest %u went as one "
			    "\"[other stacks]\" sample (%llu windows so far)\n", src->pid,
			    p->lim.max_samples, p->lim.max_bytes, w.samples_cut,
			    (unsigned long long)p->st.windows_cut);
		pthread_mutex_unlock(&p->lock);
	}
	outbuf_release(&w.alloc);
	outbuf_release(&w.inuse);
	outbuf_release(&w.pauses);
}

/* Each window, every source's profile; a source that ended has its last
 * window made, then goes. */
static void *renderer_main(void *arg)
{
	struct pusher *p = arg;
	uint64_t next = clock_ns(CLOCK_MONOTONIC) + p->o.every_s * 1000000000ull;
	bool last;

	do {
		struct push_source **pp = &p->sources, *src;

		pthread_mutex_lock(&p->lock);
		while (!p->stopping && clock_ns(CLOCK_MONOTONIC) < next) {
			struct timespec ts = abs_in(next - clock_ns(CLOCK_MONOTONIC));

			pthread_cond_timedwait(&p->wake, &p->lock, &ts);
		}
		last = p->stopping;
		pthread_mutex_unlock(&p->lock);
		next += p->o.every_s * 1000000000ull;
		/* Sources are added at the head and marked ended under the
		 * lock, and removed only here: each link is read under it,
		 * the profiles rendered without it. */
		for (;;) {
			bool ended;

			pthread_mutex_lock(&p->lock);
			src = *pp;
			ended = src && src->ended;
			pthread_mutex_unlock(&p->lock);
			if (!src)
				break;
			render_window(p, src, ended || last);
			if (!ended && !last) {
				pp = &src->next;
				continue;
			}
			pthread_mutex_lock(&p->lock);
			*pp = src->next;
			pthread_mutex_unlock(&p->lock);
			live_totals_free(src->before);
			if (ended)
				live_profile_free(src->lp);
			free_source(src);
		}
	} while (!last);
	pthread_mutex_lock(&p->lock);
	p->rendered_last = true;
	p->deadline_ns = clock_ns(CLOCK_MONOTONIC) + p->stop_wait_ns;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct answer {
	char text[ANSWER_KEEP + 1];
	size_t len;
};

static size_t keep_answer(char *data, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n, room = ANSWER_KEEP - a->len;

	if (len < room)
		room = len;
	memcpy(a->text + a->len, data, room);
	a->len += room;
	a->text[a->len] = 0;
	return size * n;
}

enum outcome { SENT, REJECTED, FAILED };

/* A 2xx is the push API's only with its answer: a JSON object (Connect's
 * and the gateway's `{}`). An HTML page or an empty 200 is something else
 * at that URL (a web UI, a proxy's page): nothing was stored. */
static enum outcome api_answer(const struct answer *a, long status, char *why, size_t whylen)
{
	const char *t = a->text;

	while (*t == ' ')
		t++;
	if (*t == '{')
		return SENT;
	if (*t == '<')
		snprintf(why, whylen, "HTTP %ld with an HTML page, not the push API's answer: the "
			 "URL reaches a web UI or another server (check --push's address, path "
			 "prefix and --push-api)", status);
	else
		snprintf(why, whylen, "HTTP %ld with %s, not the push API's JSON answer: the URL "
			 "reaches another server (check --push's address and --push-api)", status,
			 a->len ? "another answer" : "an empty answer");
	return REJECTED;
}

/* One try: what the server (or the network) said, in why. */
static enum outcome post(CURL *c, const struct request *r, char *why,
			 size_t whylen)
{
	struct answer a = { .len = 0 };
	long status = 0;
	CURLcode rc;

	curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body.buf);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body.len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		return FAILED;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	/* the server's words on our stderr: no control characters */
	for (char *q = a.text; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = ' ';
	if (status >= 200 && status < 300)
		return api_answer(&a, status, why, whylen);
	if (status >= 300 && status < 400) {
		char *to = NULL;

		curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &to);
		snprintf(why, whylen, "HTTP %ld: redirected to %s: not the push API; give --push "
			 "the server's own URL", status, to ? to : "another URL");
		return REJECTED;
	}
	snprintf(why, whylen, "HTTP %ld%s%s%s", status, a.len ? ": " : "", a.text,
		 strstr(a.text, "ingestion window") ? " (the server's clock and this host's "
		 "differ by more than it allows: check both are set, e.g. by NTP)" : "");
	return status >= 400 && status < 500 && status != 408 && status != 429 ? REJECTED
										 : FAILED;
}

static CURL *new_handle(struct pusher *p)
{
	CURL *c = curl_easy_init();

	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "alys-bpf");
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	return c;
}

/* Under p->lock: backoff_s, or until the stop's deadline. New requests
 * queueing meanwhile do not cut it short. */
static void wait_backoff(struct pusher *p, unsigned backoff_s)
{
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + backoff_s * 1000000000ull;

	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC), end = until;
		struct timespec ts;

		if (p->rendered_last && p->deadline_ns < end)
			end = p->deadline_ns;
		if (now >= end)
			return;
		ts = abs_in(end - now);
		pthread_cond_timedwait(&p->wake, &p->lock, &ts);
	}
}

static void *sender_main(void *arg)
{
	struct pusher *p = arg;
	CURL *c = new_handle(p);
	unsigned backoff_s = 0;
	char why[ANSWER_KEEP + 256];

	if (!c) {
		say(p, "cannot start libcurl: nothing will be sent\n");
		return NULL;
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct request *r;
		enum outcome out;

		while (!p->head && !p->rendered_last)
			pthread_cond_wait(&p->wake, &p->lock);
		if (!p->head)
			break;
		if (p->rendered_last && clock_ns(CLOCK_MONOTONIC) >= p->deadline_ns)
			break;
		r = p->head;
		if (clock_ns(CLOCK_REALTIME) > r->stamp_unix_ns + p->max_age_ns) {
			unlink_request(p, r);
			free_request(r);
			p->st.expired++;
			if (say_due(p->st.expired, &p->expired_said))
				say(p, "%llu profiles older than %llu s dropped unsent: servers refuse "
				    "them (Pyroscope: outside of the ingestion window); %s has not "
				    "taken any for that long\n", (unsigned long long)p->st.expired,
				    (unsigned long long)(p->max_age_ns / 1000000000ull), p->url);
			continue;
		}
		p->in_flight = r;
		pthread_mutex_unlock(&p->lock);
		out = post(c, r, why, sizeof(why));
		pthread_mutex_lock(&p->lock);
		p->in_flight = NULL;
		if (out == FAILED) {
			p->st.attempts_failed++;
			if (!p->failing)
				say(p, "%s: %s; retrying with backoff, keeping up to %u profiles\n",
				    p->url, why, p->o.queue);
			p->failing = true;
			backoff_s = backoff_s ? backoff_s * 2 : 1;
			if (backoff_s > BACKOFF_MAX_S)
				backoff_s = BACKOFF_MAX_S;
			wait_backoff(p, backoff_s);
			continue;
		}
		unlink_request(p, r);
		if (out == SENT) {
			p->st.sent++;
			p->st.bytes_sent += r->body.len;
			if (p->failing)
				say(p, "%s answers again (%llu tries had failed, %llu profiles "
				    "dropped)\n", p->url, (unsigned long long)p->st.attempts_failed,
				    (unsigned long long)p->st.dropped);
			p->failing = false;
			backoff_s = 0;
		} else {
			p->st.attempts_failed++;
			p->st.rejected++;
			say(p, "%s refused a profile: %s (dropped, not retried)\n", p->url, why);
		}
		free_request(r);
	}
	/* Stopping with requests the server never took. */
	while (p->head) {
		struct request *r = p->head;

		unlink_request(p, r);
		free_request(r);
		p->st.dropped++;
	}
	pthread_mutex_unlock(&p->lock);
	curl_easy_cleanup(c);
	return NULL;
}

/* The first line of the token file, without surrounding blanks. */
static int read_token(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *s = out;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "--push-token-file %s: %s", path, strerror(errno));
		return -1;
	}
	if (!fgets(out, (int)outlen, f))
		out[0] = 0;
	fclose(f);
	while (*s == ' ' || *s == '\t')
		s++;
	n = strcspn(s, "\r\n");
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	memmove(out, s, n);
	out[n] = 0;
	if (!n) {
		snprintf(err, errlen, "--push-token-file %s: the file is empty; put the token on "
			 "its first line", path);
		return -1;
	}
	return 0;
}

static bool header_ok(const char *h)
{
	const char *colon = strchr(h, ':');

	return colon && colon != h && !strpbrk(h, "\r\n");
}

struct pusher *pusher_start(const struct push_opts *o, char *err, size_t errlen)
{
	struct pusher *p = calloc(1, sizeof(*p));
	char token[4096], auth[4200];
	size_t ulen;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->o = *o;
	p->max_age_ns = PUSH_MAX_AGE_S * 1000000000ull;
	p->lim = (struct window_limits){ MAX_SAMPLES, MAX_PROFILE_BYTES };
	/* tests: an hour's wait in seconds, a big program's stacks in a few */
	if (getenv("ALYS_PUSH_MAX_AGE_S"))
		p->max_age_ns = strtoull(getenv("ALYS_PUSH_MAX_AGE_S"), NULL, 10) * 1000000000ull;
	if (getenv("ALYS_PUSH_MAX_SAMPLES"))
		p->lim.max_samples = (uint32_t)strtoul(getenv("ALYS_PUSH_MAX_SAMPLES"), NULL, 10);
	p->api = push_api_find(o->api);
	if (!p->api) {
		snprintf(err, errlen, "--push-api takes %s, not '%s'", push_api_names(), o->api);
		goto fail;
	}
	if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)) {
		snprintf(err, errlen, "--push takes the server's http:// or https:// URL (e.g. "
			 "http://pyroscope:4040), not '%s'", o->url);
		goto fail;
	}
	if (strpbrk(o->url, "?#")) {
		snprintf(err, errlen, "--push takes the server's URL without a query or fragment "
			 "(the API's path is appended to it: e.g. http://parca:7070 or "
			 "https://proxy/parca), not '%s'", o->url);
		goto fail;
	}
	ulen = strlen(o->url);
	while (ulen && o->url[ulen - 1] == '/')
		ulen--;
	if (ulen + strlen(p->api->path) >= sizeof(p->url)) {
		snprintf(err, errlen, "--push: the URL is too long");
		goto fail;
	}
	memcpy(p->url, o->url, ulen);
	strcpy(p->url + ulen, p->api->path);	/* fits: checked above */
	if (o->hostname)
		snprintf(p->hostname, sizeof(p->hostname), "%s", o->hostname);
	else if (gethostname(p->hostname, sizeof(p->hostname) - 1))
		snprintf(p->hostname, sizeof(p->hostname), "unknown");
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "cannot start libcurl");
		goto fail;
	}
	p->headers = curl_slist_append(NULL, "Content-Type: application/json");
	for (unsigned i = 0; i < o->nheaders; i++) {
		if (!header_ok(o->headers[i])) {
			snprintf(err, errlen, "--push-header takes 'Name: value' on one line, not "
				 "'%s'", o->headers[i]);
			goto fail;
		}
		p->headers = curl_slist_append(p->headers, o->headers[i]);
	}
	if (o->token_file) {
		if (read_token(o->token_file, token, sizeof(token), err, errlen))
			goto fail;
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		p->headers = curl_slist_append(p->headers, auth);
		memset(token, 0, sizeof(token));
		memset(auth, 0, sizeof(auth));
	}
	pthread_mutex_init(&p->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&p->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (pthread_create(&p->renderer, NULL, renderer_main, p)) {
		snprintf(err, errlen, "cannot start the push thread");
		goto fail;
	}
	if (pthread_create(&p->sender, NULL, sender_main, p)) {
		pthread_mutex_lock(&p->lock);
		p->stopping = true;
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->renderer, NULL);
		snprintf(err, errlen, "cannot start the push thread");
		goto fail;
	}
	if (o->verbose)
		say(p, "every %u s to %s (%s)\n", o->every_s, p->url, p->api->name);
	return p;
fail:
	curl_slist_free_all(p->headers);
	free(p);
	return NULL;
}

struct push_source *pusher_add(struct pusher *p, struct live_profile *lp, pid_t pid,
			       const char *service, const struct push_label *extra, size_t n)
{
	struct push_source *src = calloc(1, sizeof(*src));

	if (!src)
		return NULL;
	src->lp = lp;
	src->pid = pid;
	snprintf(src->service, sizeof(src->service), "%s", service);
	for (size_t i = 0; i < n && i < PUSH_MAX_EXTRA_LABELS; i++) {
		src->extra[i].name = strdup(extra[i].name);
		src->extra[i].value = strdup(extra[i].value);
		if (!src->extra[i].name || !src->extra[i].value) {
			free_source(src);
			return NULL;
		}
		src->nr_extra++;
	}
	pthread_mutex_lock(&p->lock);
	src->next = p->sources;
	p->sources = src;
	pthread_mutex_unlock(&p->lock);
	return src;
}

void pusher_remove(struct pusher *p, struct push_source *src, struct live_profile *lp)
{
	pthread_mutex_lock(&p->lock);
	src->lp = lp;
	src->ended = true;
	pthread_mutex_unlock(&p->lock);
}

void pusher_stats(struct pusher *p, struct push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

void pusher_stop(struct pusher *p, unsigned wait_s)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->stop_wait_ns = wait_s * 1000000000ull;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->renderer, NULL);
	pthread_join(p->sender, NULL);
	if (p->st.dropped || p->st.rejected || p->st.expired)
		say(p, "%llu profiles sent, %llu dropped (queue full or left at exit), %llu "
		    "refused, %llu too old to send\n", (unsigned long long)p->st.sent,
		    (unsigned long long)p->st.dropped, (unsigned long long)p->st.rejected,
		    (unsigned long long)p->st.expired);
	else if (p->o.verbose)
		say(p, "%llu profiles sent\n", (unsigned long long)p->st.sent);
	curl_slist_free_all(p->headers);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	curl_global_cleanup();
	free(p);
}
