/* SPDX-License-Identifier: MIT */
/*
 * The .alys records and their fields, one table (lib/alys_records.c) that
 * the writer (src/core/trace_writer.c), the reader (profile/trace.c), the
 * test generator (tests/unit/test_converter_gen.c, whose -s prints the
 * signatures that tests/unit/test_converter.sh finds in docs/FORMAT.md)
 * all use: a field added or moved here is added or moved for all of them.
 */
#ifndef ALYS_RECORDS_H
#define ALYS_RECORDS_H

#include <stdint.h>

#include "alys_format.h"

enum alys_field_type {
	ALYS_F_U8,		/* unsigned integers: the reader checks the range */
	ALYS_F_U32,
	ALYS_F_U64,
	ALYS_F_STR,
	ALYS_F_BIN,
	ALYS_F_IPS,		/* an array of unsigned 64-bit addresses */
	ALYS_F_COMPOUND,	/* an array or map read by the record's own code */
};

struct alys_field {
	const char *name;	/* as docs/FORMAT.md spells it */
	enum alys_field_type type;
	/* A reader requires the field in traces of this version on (0: never,
	 * an optional trailing field). */
	uint8_t required_from;
};

#define ALYS_RECORD_MAX_FIELDS 13	/* after the type */

struct alys_record_desc {
	uint8_t type;		/* the record's first element */
	uint8_t version_max;	/* its last format version (0: current) */
	const char *keyword;	/* the generator's word for it */
	const char *what;	/* how messages name it: "inferred free" */
	uint8_t n;		/* fields after the type that a writer writes */
	struct alys_field f[ALYS_RECORD_MAX_FIELDS];
};

/* The description of record TYPE as a trace of format VERSION has it, or
 * NULL for a type the format does not have (a later version's record). */
const struct alys_record_desc *alys_record(unsigned type, unsigned version);
/* By the generator's keyword; NULL when none has it. */
const struct alys_record_desc *alys_record_by_keyword(const char *keyword);
/* Each description in turn, from i = 0, then NULL. */
const struct alys_record_desc *alys_record_at(unsigned i);
/* The fields a reader of VERSION requires after the type. */
unsigned alys_record_required(const struct alys_record_desc *d, unsigned version);

#endif /* ALYS_RECORDS_H */
