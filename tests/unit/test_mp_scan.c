// SPDX-License-Identifier: MIT
/*
 * The reader's MessagePack front (profile/mp_scan.c): mp_decode_flat, its
 * own decoder of the common record (a short array of integers), must make
 * exactly the objects msgpack-c makes of the same bytes, stop where it
 * stops, and leave everything else to msgpack-c untouched. Compared with
 * msgpack_unpack on every integer encoding at its bounds, on random records,
 * on every truncation, and on random bytes.
 */
#include <stdio.h>
#include <string.h>

#include "profile/mp_scan.h"
#include "unit_check.h"

/* One element: an encoding chosen by e, its value v. Returns its bytes. */
static size_t put_elem(uint8_t *p, unsigned int e, uint64_t v)
{
	static const uint8_t tags[] = { 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3 };
	unsigned int bytes;

	switch (e % 12) {
	case 0: p[0] = (uint8_t)(v & 0x7f); return 1;		/* positive fixint */
	case 1: p[0] = (uint8_t)(0xe0 | (v & 0x1f)); return 1;	/* negative fixint */
	case 2: p[0] = 0xc0; return 1;
	case 3: p[0] = v & 1 ? 0xc3 : 0xc2; return 1;
	}
	p[0] = tags[e % 12 - 4];
	bytes = 1u << ((p[0] - 0xcc) & 3);
	for (unsigned int i = 0; i < bytes; i++)
		p[1 + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	return 1 + bytes;
}

/* mp_decode_flat and msgpack_unpack on buf[0, len): 1 when they agree
 * (both decode the same objects to the same end, or flat refuses). *flat
 * tells whether the flat decoder took it. */
static int agree(const uint8_t *buf, size_t len, int *flat)
{
	static msgpack_zone *z;	/* one for all: a new one a call is slow under ASan */
	struct mp_decoder d = { 0 };
	msgpack_unpack_return ret;
	msgpack_object o;
	size_t off = 0, moff = 0;
	int ok;

	if (!z)
		z = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
	else
		msgpack_zone_clear(z);
	*flat = mp_decode_flat(&d, buf, len, &off);
	if (!*flat) {
		ok = off == 0;
	} else {
		/* bytes after the object: msgpack-c's EXTRA_BYTES */
		ret = msgpack_unpack((const char *)buf, len, &moff, z, &o);
		ok = (ret == MSGPACK_UNPACK_SUCCESS || ret == MSGPACK_UNPACK_EXTRA_BYTES) &&
		     moff == off && msgpack_object_equal(o, d.obj) &&
		     o.via.array.size == d.obj.via.array.size;
		for (uint32_t i = 0; ok && i < o.via.array.size; i++)
			ok = o.via.array.ptr[i].type == d.obj.via.array.ptr[i].type;
	}
	return ok;
}

/* Every encoding at its bounds, one an array. */
static int bounds(void)
{
	static const uint64_t vals[] = { 0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000,
					 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
					 0x100000000ULL, 0x7fffffffffffffffULL,
					 0x8000000000000000ULL, ~0ULL };
	uint8_t buf[160];
	int flat, ok = 1;

	for (unsigned int e = 0; e < 12; e++)
		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			size_t n = put_elem(buf + 1, e, vals[k]);

			buf[0] = 0x91;
			ok = ok && agree(buf, 1 + n, &flat) && flat;
			if (!ok)
				fprintf(stderr, "encoding %u, value %#llx\n", e,
					(unsigned long long)vals[k]);
		}
	return ok;
}

/* Random records of 0-15 elements, whole and cut at every length. */
static int records(void)
{
	uint8_t buf[160];
	int flat, ok = 1, whole = 0;

	for (int r = 0; r < 100000 && ok; r++) {
		unsigned int n = (unsigned int)(unit_rand() % 16);
		size_t len = 1;

		buf[0] = (uint8_t)(0x90 | n);
		for (unsigned int i = 0; i < n; i++)
			len += put_elem(buf + len, (unsigned int)unit_rand(),
					unit_rand() >> (unit_rand() % 64));
		ok = agree(buf, len, &flat) && flat;
		whole += flat;
		for (size_t cut = 0; cut < len && ok; cut++) {
			ok = agree(buf, cut, &flat) && !flat;
			if (!ok)
				fprintf(stderr, "record of %u cut at %zu of %zu bytes\n", n, cut, len);
		}
	}
	return ok && whole == 100000;
}

/* Random bytes behind a fixarray header: whatever flat takes, msgpack-c
 * reads the same; strings, floats, maps, arrays inside are refused. */
static int noise(int *taken)
{
	uint8_t buf[64];
	int flat, ok = 1;

	*taken = 0;
	for (int r = 0; r < 300000 && ok; r++) {
		size_t len = 1 + unit_rand() % 40;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)unit_rand();
		buf[0] = (uint8_t)(0x90 | (unit_rand() % 4));
		ok = agree(buf, len, &flat);
		*taken += flat;
		if (!ok) {
			fprintf(stderr, "random bytes:");
			for (size_t i = 0; i < len; i++)
				fprintf(stderr, " %02x", buf[i]);
			fprintf(stderr, "\n");
		}
	}
	return ok;
}

int main(void)
{
	static const uint8_t other[][4] = {
		{ 0x92, 0xa1, 'x', 0x01 },	/* a string */
		{ 0x92, 0xca, 0, 0 },		/* a float */
		{ 0x91, 0x90, 0, 0 },		/* an array inside */
		{ 0x81, 0x01, 0x02, 0 },	/* a map */
		{ 0xdc, 0x00, 0x01, 0x01 },	/* array16 */
	};
	int flat, ok = 1, taken;

	check("every integer encoding at its bounds, nil and booleans: as msgpack-c decodes them",
	      bounds());
	check("100,000 random records: as msgpack-c; cut anywhere, refused with the offset unchanged",
	      records());
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		ok = ok && agree(other[i], sizeof(other[i]), &flat) && !flat;
	check("strings, floats, nested arrays, maps, array16: left to msgpack-c", ok);
	ok = noise(&taken);
	check("random bytes: whatever the flat decoder takes, msgpack-c reads the same", ok);
	check("random bytes: some taken (the comparison ran)", taken > 1000);
	return unit_summary();
}
