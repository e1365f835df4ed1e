// SPDX-License-Identifier: MIT
/*
 * Test helper: writes a .alys trace from a line-oriented script on stdin,
 * so tests can build valid and deliberately broken traces.
 *
 *   header MAGIC VERSION PID EXE START_NS      (a full header map)
 *   mapping START END OFFSET PATH BUILDID       (BUILDID: hex, or '-' for none)
 *   mappingf FLAGS START END OFFSET PATH BUILDID (with the optional flags field)
 *   stack ID IP...
 *   stackf FLAGS ID IP...                       (with the optional flags field)
 *   nodes FIRST PARENT FLAGS IP...              (version 2: stack nodes)
 *   event KIND TS TID SIZE ADDR OLD_ADDR OLD_SIZE STACK_ID WEIGHT GC_NO
 *   counters NAME=VALUE...
 *   end REASON EXIT_STATUS STOP_NS EVENTS
 *   death TS ADDR GC_NO SINCE CAUSE              (an inferred free)
 *   collection TS GC_NO SINCE JUDGED DEAD UNREADABLE SCAN_NS [FOLLOWED AT_END]
 *   heapblock ADDR OBJ_SIZE KIND WORD...         (a heap block: its 8-byte words)
 *   root KIND NAME ADDR WORD...                  (a root region: its 8-byte words)
 *   snapshot TS STOP_NS BLOCKS HEAP_BYTES ROOTS AIP BLOCK_SIZE
 *   future                                       (a record type 99)
 *   raw HEX                                      (bytes as they are)
 *   block                                        (what follows goes in a block...)
 *   endblock [RECORDS CODEC RAW_LEN]             (...compressed with zstd; the
 *                                                 fields as given, else true)
 *
 * Numbers take C syntax (0x...). A string written x:HEX is decoded from hex.
 * With -i FILE, the byte offset of every record is written to FILE, one
 * "OFFSET KIND" line per record, for tests that cut traces. With -s, it
 * prints each record's fields as docs/FORMAT.md must spell them.
 */
#include <msgpack.h>
#include <zstd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alys_records.h"

static msgpack_packer pk;
static msgpack_sbuffer sb;
/* Between "block" and "endblock": records gather here (cur), compressed
 * into one block record at the end. */
static msgpack_sbuffer blk;
static msgpack_sbuffer *cur = &sb;
static unsigned blk_records;

static unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s) {
		fprintf(stderr, "gen: missing number\n");
		exit(2);
	}
	v = strtoull(s, &end, 0);
	if (*end) {
		fprintf(stderr, "gen: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static size_t unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;

	while (s[0] && s[1] && n < max) {
		unsigned int b;

		sscanf(s, "%2x", &b);
		out[n++] = (unsigned char)b;
		s += 2;
	}
	return n;
}

static void str(const char *s)
{
	unsigned char buf[4096];
	size_t n;

	if (!s)
		s = "";
	if (!strncmp(s, "x:", 2)) {
		n = unhex(s + 2, buf, sizeof(buf));
		msgpack_pack_str(&pk, n);
		msgpack_pack_str_body(&pk, buf, n);
		return;
	}
	msgpack_pack_str(&pk, strlen(s));
	msgpack_pack_str_body(&pk, s, strlen(s));
}

/*
 * A record from its fields as the table (include/alys_records.h) orders
 * and types them, as many as given (fewer make an old or broken record).
 * A binary field takes hex or '-' for none; one that ends the record takes
 * the rest of the line as 8-byte words instead.
 */
static void by_table(const struct alys_record_desc *d, char **a, int n)
{
	int nf = n < d->n ? n : d->n;

	msgpack_pack_array(&pk, (size_t)nf + 1);
	msgpack_pack_uint8(&pk, d->type);
	for (int i = 0; i < nf; i++) {
		unsigned char bytes[2048];
		uint64_t words[256];
		size_t len = 0;

		switch (d->f[i].type) {
		case ALYS_F_STR:
			str(a[i]);
			break;
		case ALYS_F_BIN:
			if (i == d->n - 1) {
				for (int k = i; k < n && len < 256; k++)
					words[len++] = num(a[k]);
				msgpack_pack_bin(&pk, len * 8);
				msgpack_pack_bin_body(&pk, words, len * 8);
				return;
			}
			len = strcmp(a[i], "-") ? unhex(a[i], bytes, sizeof(bytes)) : 0;
			msgpack_pack_bin(&pk, len);
			msgpack_pack_bin_body(&pk, bytes, len);
			break;
		case ALYS_F_IPS:
		case ALYS_F_COMPOUND:
			fprintf(stderr, "gen: %s: its own line syntax\n", d->keyword);
			exit(2);
		default:
			msgpack_pack_uint64(&pk, num(a[i]));
		}
	}
}

static void header(char **a)
{
	msgpack_pack_map(&pk, 12);
	str("magic"); str(a[0]);
	str("version"); msgpack_pack_uint64(&pk, num(a[1]));
	str("pid"); msgpack_pack_uint64(&pk, num(a[2]));
	str("exe"); str(a[3]);
	str("argv"); msgpack_pack_array(&pk, 2); str(a[3]); str("--test");
	str("start_ns"); msgpack_pack_uint64(&pk, num(a[4]));
	str("start_unix_ns"); msgpack_pack_uint64(&pk, 1700000000000000000ULL);
	str("hostname"); str("testhost");
	str("unwind"); str("fp");
	str("max_frames"); msgpack_pack_uint32(&pk, 127);
	str("sample"); str("all");
	str("future_key"); msgpack_pack_array(&pk, 1); msgpack_pack_nil(&pk);
}

int main(int argc, char **argv)
{
	FILE *index = NULL;
	char line[65536];

	if (argc == 2 && !strcmp(argv[1], "-s")) {
		/* each record as docs/FORMAT.md writes it: [3, kind, ts, ...] */
		for (unsigned i = 0; alys_record_at(i); i++) {
			const struct alys_record_desc *d = alys_record_at(i);

			printf("[%u", d->type);
			for (unsigned k = 0; k < d->n; k++)
				printf(", %s", d->f[k].name);
			printf("]\n");
		}
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "-i"))
		index = fopen(argv[2], "w");
	msgpack_sbuffer_init(&sb);
	msgpack_sbuffer_init(&blk);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	while (fgets(line, sizeof(line), stdin)) {
		char *a[300] = { 0 };
		int n = 0;
		char *save, *tok;

		for (tok = strtok_r(line, " \t\n", &save); tok && n < 299;
		     tok = strtok_r(NULL, " \t\n", &save))
			a[n++] = tok;
		if (!n || a[0][0] == '#')
			continue;
		if (index && strcmp(a[0], "header"))
			fprintf(index, "%zu %s\n", sb.size, a[0]);
		if (!strcmp(a[0], "header")) {
			header(a + 1);
		} else if (!strcmp(a[0], "mapping")) {
			by_table(alys_record(ALYS_REC_MAPPING, ALYS_FORMAT_VERSION), a + 1, 5);
		} else if (!strcmp(a[0], "mappingf")) {	/* the flags first */
			char *f[6] = { a[2], a[3], a[4], a[5], a[6], a[1] };

			by_table(alys_record(ALYS_REC_MAPPING, ALYS_FORMAT_VERSION), f, 6);
		} else if (!strcmp(a[0], "stack") || !strcmp(a[0], "stackf")) {
			int f = !strcmp(a[0], "stackf");	/* a[1]: flags */

			msgpack_pack_array(&pk, 3 + (size_t)f);	/* version 1's */
			msgpack_pack_uint8(&pk, ALYS_REC_STACK);
			msgpack_pack_uint64(&pk, num(a[1 + f]));
			msgpack_pack_array(&pk, (size_t)(n - 2 - f));
			for (int i = 2 + f; i < n; i++)
				msgpack_pack_uint64(&pk, num(a[i]));
			if (f && !strcmp(a[1], "str"))
				str("1");	/* a flags field of the wrong type */
			else if (f)
				msgpack_pack_uint64(&pk, num(a[1]));
		} else if (!strcmp(a[0], "nodes")) {
			msgpack_pack_array(&pk, alys_record(ALYS_REC_STACK, 2)->n + 1u);
			msgpack_pack_uint8(&pk, ALYS_REC_STACK);
			msgpack_pack_uint64(&pk, num(a[1]));
			msgpack_pack_uint64(&pk, num(a[2]));
			msgpack_pack_array(&pk, (size_t)(n > 4 ? n - 4 : 0));
			for (int i = 4; i < n; i++)
				msgpack_pack_uint64(&pk, num(a[i]));
			msgpack_pack_uint64(&pk, num(a[3]));
		} else if (!strcmp(a[0], "counters")) {
			msgpack_pack_array(&pk, 2);
			msgpack_pack_uint8(&pk, ALYS_REC_COUNTERS);
			msgpack_pack_map(&pk, (size_t)(n - 1));
			for (int i = 1; i < n; i++) {
				char *eq = strchr(a[i], '=');

				*eq = '\0';
				str(a[i]);
				msgpack_pack_uint64(&pk, num(eq + 1));
			}
		} else if (!strcmp(a[0], "end")) {
			msgpack_pack_array(&pk, 2);
			msgpack_pack_uint8(&pk, ALYS_REC_END);
			msgpack_pack_map(&pk, 4);
			str("reason"); str(a[1]);
			str("exit_status"); msgpack_pack_int64(&pk, strtoll(a[2], NULL, 0));
			str("stop_ns"); msgpack_pack_uint64(&pk, num(a[3]));
			str("events"); msgpack_pack_uint64(&pk, num(a[4]));
		} else if (alys_record_by_keyword(a[0]) && strcmp(a[0], "block")) {
			/* event, death, collection, heapblock, root, snapshot */
			by_table(alys_record_by_keyword(a[0]), a + 1, n - 1);
		} else if (!strcmp(a[0], "future")) {
			msgpack_pack_array(&pk, 3);
			msgpack_pack_uint8(&pk, 99);
			str("from a later version");
			msgpack_pack_map(&pk, 1);
			str("k");
			msgpack_pack_double(&pk, 1.5);
		} else if (!strcmp(a[0], "raw")) {
			unsigned char buf[32768];
			size_t len = unhex(a[1], buf, sizeof(buf));

			msgpack_sbuffer_write(cur, (const char *)buf, len);
		} else if (!strcmp(a[0], "block")) {
			msgpack_sbuffer_clear(&blk);
			cur = &blk;
			blk_records = 0;
			msgpack_packer_init(&pk, cur, msgpack_sbuffer_write);
			continue;
		} else if (!strcmp(a[0], "endblock")) {
			size_t bound = ZSTD_compressBound(blk.size), z;
			char *zb = malloc(bound);

			z = ZSTD_compress(zb, bound, blk.data, blk.size, 1);
			cur = &sb;
			msgpack_packer_init(&pk, cur, msgpack_sbuffer_write);
			msgpack_pack_array(&pk, alys_record(ALYS_REC_BLOCK, 2)->n + 1u);
			msgpack_pack_uint8(&pk, ALYS_REC_BLOCK);
			msgpack_pack_uint64(&pk, a[2] ? num(a[2]) : 1);
			msgpack_pack_uint64(&pk, a[3] ? num(a[3]) : blk.size);
			msgpack_pack_uint64(&pk, a[1] ? num(a[1]) : blk_records);
			msgpack_pack_bin(&pk, z);
			msgpack_pack_bin_body(&pk, zb, z);
			free(zb);
			continue;
		} else {
			fprintf(stderr, "gen: unknown line '%s'\n", a[0]);
			return 2;
		}
		if (cur == &blk)
			blk_records++;
	}
	fwrite(sb.data, 1, sb.size, stdout);
	if (index)
		fclose(index);
	msgpack_sbuffer_destroy(&sb);
	return 0;
}
