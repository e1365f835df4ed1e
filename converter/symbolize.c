// SPDX-License-Identifier: MIT
#include "symbolize.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "line_index.h"
#include "u64_table.h"
#include "util.h"

enum module_state {
	MOD_UNTRIED,
	MOD_READY,
	MOD_UNAVAILABLE,	/* missing, not ELF, or build id mismatch */
};

/* One file at one load bias: several mapping records may share it. */
struct sym_module {
	const char *path;		/* owned by the trace */
	uint64_t bias;			/* runtime address - ELF vaddr, from the trace */
	uint64_t dwfl_bias;		/* the same as libdwfl placed the module */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct line_index lines;	/* fallback when libdw finds no CU */
};

struct symbolizer {
	const struct trace *t;
	bool want_lines;

	/* per trace mapping: index into modules, or -1 if unavailable */
	int *module_of_map;
	enum module_state *map_state;
	struct sym_module *modules;
	size_t nr_modules, cap_modules;

	/* paths already warned about, to warn once per file */
	const char **warned;
	size_t nr_warned, cap_warned;

	struct u64_table exact;		/* ip -> entry, frame 0 */
	struct u64_table ret;		/* ip -> entry, return addresses */
	int64_t zero_entry[2];		/* the same for ip 0; -1: not yet */
	struct sym_entry *entries;
	size_t nr_entries, cap_entries;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool warn_once(struct symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nr_warned; i++)
		if (!strcmp(s->warned[i], path))
			return false;
	s->warned = grow_array(s->warned, &s->cap_warned, s->nr_warned + 1,
			       sizeof(*s->warned));
	s->warned[s->nr_warned++] = path;
	return true;
}

static void hex_id(char *out, size_t outlen, const uint8_t *id, size_t len)
{
	size_t i;

	if (!len) {
		snprintf(out, outlen, "none");
		return;
	}
	for (i = 0; i < len && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/*
 * The load bias implied by mapping m of elf: m->start holds file offset
 * m->offset, which the PT_LOAD segment containing it places at
 * p_vaddr + (m->offset - p_offset). Works alike for PIE, shared libraries
 * and ET_EXEC (where it comes out as 0). Returns -1 if no segment fits.
 */
static int mapping_bias(Elf *elf, const struct trace_mapping *m, uint64_t *bias)
{
	size_t phnum;
	int found = -1;

	if (elf_getphdrnum(elf, &phnum))
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
		uint64_t page_off;

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		page_off = ph->p_offset & ~(uint64_t)0xfff;
		if (m->offset < page_off || m->offset >= ph->p_offset + ph->p_filesz)
			continue;
		*bias = m->start - m->offset - (ph->p_vaddr - ph->p_offset);
		found = 0;
		if (ph->p_flags & PF_X)	/* the executable segment is the one we want */
			break;
	}
	return found;
}

/* Open m's file, check it is the one traced, and work out its bias. */
static int inspect_file(struct symbolizer *s, const struct trace_mapping *m,
			uint64_t *bias)
{
	const char *path = m->path.ptr;
	const void *file_id = NULL;
	ssize_t file_id_len;
	int ret = -1, fd;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (warn_once(s, path))
			warnx_msg("cannot open %s (%s): its frames stay unresolved as [%s+0xOFFSET]; "
				  "convert on the machine that took the trace, or copy the file there",
				  path, strerror(errno), base_name(path));
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (warn_once(s, path))
			warnx_msg("%s is not an ELF file: its frames stay unresolved", path);
		goto out;
	}
	file_id_len = dwelf_elf_gnu_build_id(elf, &file_id);
	if (file_id_len < 0)
		file_id_len = 0;
	if (m->build_id_len &&
	    ((size_t)file_id_len != m->build_id_len ||
	     memcmp(file_id, m->build_id, m->build_id_len))) {
		char want[2 * 64 + 1] = "", have[2 * 64 + 1] = "";

		hex_id(want, sizeof(want), m->build_id, m->build_id_len);
		hex_id(have, sizeof(have), file_id, (size_t)file_id_len);
		if (warn_once(s, path))
			warnx_msg("%s: build id %s in the trace, %s on this machine: the file "
				  "changed since tracing, so its frames stay unresolved as [%s+0xOFFSET]",
				  path, want, have, base_name(path));
		goto out;
	}
	if (mapping_bias(elf, m, bias)) {
		/* No segment covers the offset: assume file offsets equal vaddrs,
		 * as they do for the first segment of common linkers' output. */
		*bias = m->start - m->offset;
	}
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static int open_module(struct symbolizer *s, const struct trace_mapping *m)
{
	struct sym_module mod = { .path = m->path.ptr };
	GElf_Addr dwbias = 0;

	/* "[vdso]", "[heap]", anonymous code: nothing on disk to read. A path
	 * with an embedded NUL would open some other file. */
	if (!m->path.len || m->path.ptr[0] != '/' || strlen(m->path.ptr) != m->path.len)
		return -1;
	if (inspect_file(s, m, &mod.bias))
		return -1;
	for (size_t i = 0; i < s->nr_modules; i++)
		if (s->modules[i].bias == mod.bias && !strcmp(s->modules[i].path, mod.path))
			return (int)i;

	mod.dwfl = dwfl_begin(&offline_callbacks);
	if (!mod.dwfl)
		return -1;
	dwfl_report_begin(mod.dwfl);
	mod.mod = dwfl_report_elf(mod.dwfl, base_name(mod.path), mod.path, -1,
				  mod.bias, true);
	dwfl_report_end(mod.dwfl, NULL, NULL);
	if (!mod.mod || !dwfl_module_getelf(mod.mod, &dwbias)) {
		if (warn_once(s, mod.path))
			warnx_msg("libdwfl cannot load %s (%s): its frames stay unresolved",
				  mod.path, dwfl_errmsg(-1));
		dwfl_end(mod.dwfl);
		return -1;
	}
	mod.dwfl_bias = dwbias;
	s->modules = grow_array(s->modules, &s->cap_modules, s->nr_modules + 1,
				sizeof(*s->modules));
	s->modules[s->nr_modules] = mod;
	return (int)s->nr_modules++;
}

static struct sym_module *module_for(struct symbolizer *s, const struct trace_mapping *m)
{
	size_t mi = (size_t)(m - s->t->maps);

	if (s->map_state[mi] == MOD_UNTRIED) {
		s->module_of_map[mi] = open_module(s, m);
		s->map_state[mi] = s->module_of_map[mi] < 0 ? MOD_UNAVAILABLE : MOD_READY;
	}
	return s->map_state[mi] == MOD_READY ? &s->modules[s->module_of_map[mi]] : NULL;
}

static char *format_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format_name(const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		out = xmemdup_str("?", 1);
	va_end(ap);
	return out;
}

static void lookup_line(struct sym_module *mod, uint64_t daddr, struct sym_frame *f)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod->mod, daddr);
	Dwarf_Addr lbias;
	Dwarf_Line *dl = line ? dwfl_dwarf_line(line, &lbias) : NULL;
	const char *src = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
	uint32_t lineno = 0;

	if (src) {
		int n = 0;

		if (!dwarf_lineno(dl, &n) && n > 0)
			lineno = (uint32_t)n;
	} else if (line_index_lookup(&mod->lines, mod->mod, daddr, &src, &lineno)) {
		return;
	}
	f->file = xmemdup_str(src, strlen(src));
	f->line = lineno;
}

/*
 * libdwfl names dynamic symbols with their version ("__libc_start_main@@
 * GLIBC_2.34", "GC_malloc@@Base"); show them as gdb and perf do. Crystal
 * names contain '@' too ("Iterator::Stop@Reference::new:Iterator::Stop"),
 * but never a bare identifier after it.
 */
static size_t unversioned_len(const char *name)
{
	const char *at = strrchr(name, '@');
	size_t len = strlen(name);

	if (!at || at == name || at[1] == 0)
		return len;
	for (const char *p = at + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
			return len;
	if (at > name + 1 && at[-1] == '@')
		at--;
	return (size_t)(at - name);
}

static void lookup(struct symbolizer *s, uint64_t ip, bool return_addr,
		   struct sym_frame *f)
{
	uint64_t addr = return_addr ? ip - 1 : ip;
	const struct trace_mapping *m = trace_find_mapping(s->t, addr);
	struct sym_module *mod;
	const char *name;
	uint64_t daddr;

	if (!m) {
		f->name = format_name("0x%" PRIx64, ip);
		return;
	}
	mod = module_for(s, m);
	if (!mod)
		goto unresolved;
	daddr = addr - mod->bias + mod->dwfl_bias;
	name = dwfl_module_addrname(mod->mod, daddr);
	if (!name || !*name)
		goto unresolved;
	f->name = xmemdup_str(name, unversioned_len(name));
	f->resolved = true;
	if (s->want_lines)
		lookup_line(mod, daddr, f);
	return;
unresolved:
	f->name = format_name("[%s+0x%" PRIx64 "]", base_name(m->path.ptr),
			      ip - m->start + m->offset);
}

uint32_t symbolizer_resolve(struct symbolizer *s, uint64_t ip, uint32_t depth)
{
	struct u64_table *cache = depth ? &s->ret : &s->exact;
	int64_t *zero = &s->zero_entry[depth ? 1 : 0];
	const struct u64_slot *hit;
	struct sym_entry *e;
	struct sym_frame *f;

	/* the tables reserve key 0 for empty slots */
	if (!ip && *zero >= 0)
		return (uint32_t)*zero;
	hit = ip ? u64_table_get(cache, ip) : NULL;
	if (hit)
		return hit->b;
	if (s->nr_entries >= UINT32_MAX) {
		errx_msg("more than %u distinct stack addresses; this converter stops there",
			 UINT32_MAX);
		exit(1);
	}
	f = xcalloc(1, sizeof(*f));
	lookup(s, ip, depth > 0, f);
	s->entries = grow_array(s->entries, &s->cap_entries, s->nr_entries + 1,
				sizeof(*s->entries));
	e = &s->entries[s->nr_entries];
	e->ip = ip;
	e->nr_frames = 1;
	e->frames = f;
	if (ip)
		u64_table_put(cache, ip, 0, (uint32_t)s->nr_entries);
	else
		*zero = (int64_t)s->nr_entries;
	return (uint32_t)s->nr_entries++;
}

const struct sym_entry *symbolizer_entry(const struct symbolizer *s, uint32_t index)
{
	return &s->entries[index];
}

uint32_t symbolizer_nr_entries(const struct symbolizer *s)
{
	return (uint32_t)s->nr_entries;
}

struct symbolizer *symbolizer_new(const struct trace *t, bool want_lines)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	/* libelf refuses to work until told which ELF version we speak */
	elf_version(EV_CURRENT);
	s->t = t;
	s->want_lines = want_lines;
	s->module_of_map = xcalloc(t->nr_maps, sizeof(*s->module_of_map));
	s->map_state = xcalloc(t->nr_maps, sizeof(*s->map_state));
	u64_table_init(&s->exact);
	u64_table_init(&s->ret);
	s->zero_entry[0] = s->zero_entry[1] = -1;
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_entries; i++) {
		struct sym_frame *f = (struct sym_frame *)s->entries[i].frames;

		for (uint32_t j = 0; j < s->entries[i].nr_frames; j++) {
			free((char *)f[j].name);
			free((char *)f[j].file);
		}
		free(f);
	}
	free(s->entries);
	for (size_t i = 0; i < s->nr_modules; i++) {
		line_index_free(&s->modules[i].lines);
		dwfl_end(s->modules[i].dwfl);
	}
	free(s->modules);
	free(s->module_of_map);
	free(s->map_state);
	free(s->warned);
	u64_table_free(&s->exact);
	u64_table_free(&s->ret);
	free(s);
}
