// SPDX-License-Identifier: MIT
#include "profile/symbolize.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/crystal_display.h"
#include "profile/crystal_source.h"
#include "lib/elf_file.h"
#include "profile/inline_index.h"
#include "profile/line_index.h"
#include "profile/symbol_index.h"
#include "lib/target_file.h"
#include "lib/u64_table.h"
#include "lib/util.h"

enum module_state {
	MOD_UNTRIED,
	MOD_READY,
	MOD_UNAVAILABLE,	/* missing, not ELF, or build id mismatch */
};

/* One file at one load bias: several mapping records may share it. */
struct sym_module {
	const char *path;		/* owned by the trace, or by found_paths */
	const char *name;		/* the traced path (owned by the trace) */
	uint64_t bias;			/* runtime address - ELF vaddr, from the trace */
	uint64_t dwfl_bias;		/* the same as libdwfl placed the module */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct line_index lines;	/* fallback when libdw finds no CU */
	struct inline_index inlines;
	struct symbol_index symbols;
};

struct symbolizer {
	const struct trace *t;
	struct symbolizer_options opt;
	struct source_cache sources;	/* for Crystal inlined-method names */

	/* files found under --debug-dir, kept for the modules' paths */
	char **found_paths;
	size_t nr_found, cap_found;

	/* per trace mapping: index into modules, or -1 if unavailable */
	int *module_of_map;
	enum module_state *map_state;
	size_t nr_maps;			/* of the trace, as the two above know */
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

/* libdwfl callbacks carry no context of ours: --debug-dir and the
 * traces' kept files, of every symbolizer (diff has two). */
static const char *debug_dirs[4];
static size_t nr_debug_dirs;

static void add_debug_dir(const char *dir)
{
	for (size_t i = 0; i < nr_debug_dirs; i++)
		if (!strcmp(debug_dirs[i], dir))
			return;
	if (nr_debug_dirs < sizeof(debug_dirs) / sizeof(debug_dirs[0]))
		debug_dirs[nr_debug_dirs++] = dir;
}

char *symbolizer_kept_dir(const char *trace_path)
{
	struct stat st;
	char *dir;

	if (!trace_path || !strcmp(trace_path, "-"))
		return NULL;
	dir = xasprintf("%s" KEPT_DIR_SUFFIX, trace_path);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		free(dir);
		return NULL;
	}
	return dir;
}

static void hex_id(char *out, size_t outlen, const uint8_t *id, size_t len);
static int open_by_build_id(const char *dir, const uint8_t *id, size_t len,
			    char **found);

/* A separate debug file under --debug-dir first, then the usual places. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name,
			  const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	if ((len = dwfl_module_build_id(mod, &bits, &vaddr)) > 0)
		for (size_t i = 0; i < nr_debug_dirs; i++) {
			fd = open_by_build_id(debug_dirs[i], bits, (size_t)len,
					      debuginfo_file_name);
			if (fd >= 0)
				return fd;
		}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

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

enum file_check {
	FILE_OK,
	FILE_MISSING,		/* cannot open; errno in *err */
	FILE_NOT_ELF,
	FILE_OTHER_BUILD_ID,	/* build id in *have */
};

/* Open path and compare its build id with the trace's; set *bias for m. */
static enum file_check check_file(const char *path, const struct trace_mapping *m,
				  uint64_t *bias, int *err, char *have, size_t havelen)
{
	uint8_t file_id[64];
	size_t file_id_len;
	struct elf_file ef;
	char msg[256];

	if (elf_file_open(&ef, path, msg, sizeof(msg))) {
		*err = ef.open_errno;
		return ef.error == ELF_FILE_CANNOT_OPEN ? FILE_MISSING : FILE_NOT_ELF;
	}
	file_id_len = elf_file_build_id(&ef, file_id, sizeof(file_id));
	if (m->build_id_len &&
	    (file_id_len != m->build_id_len || memcmp(file_id, m->build_id, m->build_id_len))) {
		hex_id(have, havelen, file_id, file_id_len);
		elf_file_close(&ef);
		return FILE_OTHER_BUILD_ID;
	}
	if (!elf_mapping_bias(ef.elf, m->start, m->offset, bias)) {
		/* No segment covers the offset: assume file offsets equal vaddrs,
		 * as they do for the first segment of common linkers' output. */
		*bias = m->start - m->offset;
	}
	elf_file_close(&ef);
	return FILE_OK;
}

/* DIR/xx/yyyy.debug or DIR/.build-id/xx/yyyy.debug (the layout alys-bpf
 * keeps files in: target_file.h); returns an fd or -1. */
static int open_by_build_id(const char *dir, const uint8_t *id, size_t len,
			    char **found)
{
	char hex[2 * 64 + 1] = "", cached[PATH_MAX];

	if (len < 2 || len > 64)
		return -1;
	hex_id(hex, sizeof(hex), id, len);
	for (int i = 0; i < 2; i++) {
		char *path = i ? xasprintf("%s", build_id_cache_path(dir, id, len, cached,
								     sizeof(cached)))
			       : xasprintf("%s/%.2s/%s.debug", dir, hex, hex + 2);
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			*found = path;
			return fd;
		}
		free(path);
	}
	return -1;
}

/* A copy of m's file under debug_dir with the traced build id, or NULL. */
static char *find_in_debug_dir(const char *debug_dir, const struct trace_mapping *m,
			       uint64_t *bias)
{
	char have[2 * 64 + 1];
	char *path = NULL;
	int err, fd;

	if (m->build_id_len) {
		fd = open_by_build_id(debug_dir, m->build_id, m->build_id_len, &path);
		if (fd >= 0) {
			close(fd);
			if (check_file(path, m, bias, &err, have, sizeof(have)) == FILE_OK)
				return path;
			free(path);
		}
	}
	if (asprintf(&path, "%s/%s", debug_dir, base_name(m->path.ptr)) < 0)
		return NULL;
	if (check_file(path, m, bias, &err, have, sizeof(have)) == FILE_OK)
		return path;
	free(path);
	return NULL;
}

/*
 * The file to symbolize m with: its traced path if that is the traced file,
 * else a copy under --debug-dir. A mismatch or a missing file is reported
 * once per path, never used.
 */
static const char *inspect_file(struct symbolizer *s, const struct trace_mapping *m,
				uint64_t *bias)
{
	const char *path = m->path.ptr;
	char have[2 * 64 + 1] = "", want[2 * 64 + 1] = "", hint[PATH_MAX + 64] = "";
	enum file_check c;
	char *found = NULL;
	int err = 0;

	if (s->opt.live_pid) {	/* as the process mapped it, while it runs */
		char file[PATH_MAX + 64];
		uint64_t b;

		target_file(s->opt.live_pid, m->start, m->end, path, file, sizeof(file));
		if (check_file(file, m, &b, &err, have, sizeof(have)) == FILE_OK) {
			found = xasprintf("%s", file);
			*bias = b;
		}
	}
	if (!found) {
		c = check_file(path, m, bias, &err, have, sizeof(have));
		if (c == FILE_OK)
			return path;
	}
	for (size_t i = 0; !found && i < nr_debug_dirs; i++)
		found = find_in_debug_dir(debug_dirs[i], m, bias);
	if (found) {
		s->found_paths = grow_array(s->found_paths, &s->cap_found, s->nr_found + 1,
					    sizeof(*s->found_paths));
		s->found_paths[s->nr_found++] = found;
		return found;
	}
	if (s->opt.kept_dir)
		snprintf(hint, sizeof(hint), "%s, nor in %s",
			 s->opt.debug_dir ? ", nor under --debug-dir" : "", s->opt.kept_dir);
	else
		snprintf(hint, sizeof(hint), "%s, and no %s.debug beside the trace",
			 s->opt.debug_dir ? ", nor under --debug-dir" : "",
			 s->t->path ? base_name(s->t->path) : "TRACE");
	if (!warn_once(s, path))
		return NULL;
	switch (c) {
	case FILE_MISSING:
		warnx_msg("cannot open %s (%s)%s: its frames stay unresolved as [%s+0xOFFSET]; "
			  "keep the TRACE.debug directory that alys-bpf writes beside a trace "
			  "with it (the files of a container, or of a binary replaced since it "
			  "started), convert on the machine that took the trace, or copy the "
			  "file into a --debug-dir", path, strerror(err), hint, base_name(path));
		break;
	case FILE_NOT_ELF:
		warnx_msg("%s is not an ELF file: its frames stay unresolved", path);
		break;
	case FILE_OTHER_BUILD_ID:
		hex_id(want, sizeof(want), m->build_id, m->build_id_len);
		warnx_msg("%s: build id %s in the trace, %s on this machine%s: the file "
			  "changed since tracing, so its frames stay unresolved as [%s+0xOFFSET]",
			  path, want, have, hint, base_name(path));
		break;
	case FILE_OK:
		break;
	}
	return NULL;
}

static bool file_has_symtab(const char *path)
{
	struct elf_file ef;
	char err[256];
	bool ret;

	if (elf_file_open(&ef, path, err, sizeof(err)))
		return false;
	ret = elf_has_symtab(ef.elf);
	elf_file_close(&ef);
	return ret;
}

/* A stripped file still names its exported functions (.dynsym): say so. */
static void warn_if_stripped(struct symbolizer *s, struct sym_module *mod, Elf *elf)
{
	const char *debugfile = NULL;
	Dwarf_Addr dwbias;

	if (elf_has_symtab(elf))
		return;
	dwfl_module_getdwarf(mod->mod, &dwbias);	/* looks for a debug file */
	dwfl_module_info(mod->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile && file_has_symtab(debugfile))
		return;
	/* Debian's libgc.so.1 is stripped: a note, once per file, not a warning.
	 * Its exported GC_* entry points, all a stack needs there, still resolve. */
	if (warn_once(s, mod->name))
		note_msg("%s is stripped: only its exported functions are named "
			 "(from .dynsym); give --debug-dir or install its debug symbols "
			 "for the others", mod->name);
}

static int open_module(struct symbolizer *s, const struct trace_mapping *m)
{
	struct sym_module mod = { 0 };
	GElf_Addr dwbias = 0;
	Elf *elf;

	/* "[vdso]", "[heap]", anonymous code: nothing on disk to read. A path
	 * with an embedded NUL would open some other file. */
	if (!m->path.len || m->path.ptr[0] != '/' || strlen(m->path.ptr) != m->path.len)
		return -1;
	mod.name = m->path.ptr;
	mod.path = inspect_file(s, m, &mod.bias);
	if (!mod.path)
		return -1;
	for (size_t i = 0; i < s->nr_modules; i++)
		if (s->modules[i].bias == mod.bias && !strcmp(s->modules[i].path, mod.path))
			return (int)i;

	mod.dwfl = dwfl_begin(&offline_callbacks);
	if (!mod.dwfl)
		return -1;
	dwfl_report_begin(mod.dwfl);
	mod.mod = dwfl_report_elf(mod.dwfl, base_name(mod.name), mod.path, -1,
				  mod.bias, true);
	dwfl_report_end(mod.dwfl, NULL, NULL);
	if (!mod.mod || !(elf = dwfl_module_getelf(mod.mod, &dwbias))) {
		if (warn_once(s, mod.name))
			warnx_msg("libdwfl cannot load %s (%s): its frames stay unresolved",
				  mod.name, dwfl_errmsg(-1));
		dwfl_end(mod.dwfl);
		return -1;
	}
	mod.dwfl_bias = dwbias;
	warn_if_stripped(s, &mod, elf);
	s->modules = grow_array(s->modules, &s->cap_modules, s->nr_modules + 1,
				sizeof(*s->modules));
	s->modules[s->nr_modules] = mod;
	return (int)s->nr_modules++;
}

static struct sym_module *module_for(struct symbolizer *s, const struct trace_mapping *m)
{
	size_t mi = (size_t)(m - s->t->maps);

	if (s->map_state[mi] == MOD_UNTRIED && s->opt.no_symbols)
		s->map_state[mi] = MOD_UNAVAILABLE;
	if (s->map_state[mi] == MOD_UNTRIED) {
		s->module_of_map[mi] = open_module(s, m);
		s->map_state[mi] = s->module_of_map[mi] < 0 ? MOD_UNAVAILABLE : MOD_READY;
	}
	return s->map_state[mi] == MOD_READY ? &s->modules[s->module_of_map[mi]] : NULL;
}

static void lookup_line(struct sym_module *mod, uint64_t daddr, const char **file,
			uint32_t *lineout)
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
	*file = src;
	*lineout = lineno;
}

static const char *dup_or_null(const char *s)
{
	return s ? xmemdup_str(s, strlen(s)) : NULL;
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

/* The name shown for symbol: the same string when the rule leaves it be. */
static const char *display_name(struct crystal_namer *namer, const char *symbol)
{
	char *shown = crystal_namer_dup(namer, symbol);

	if (!strcmp(shown, symbol)) {
		free(shown);
		return symbol;
	}
	return shown;
}

/* A proc literal named after the method it is written in, when its source
 * is readable here: "start_holders (proc at heap_graph.cr:49)"; else NULL. */
static char *proc_name(struct symbolizer *s, const char *symbol)
{
	const char *file;
	size_t file_len;
	unsigned long line;
	char *path, *def, *out = NULL, shown[512];

	if (!crystal_proc_place(symbol, &file, &file_len, &line) || line > UINT32_MAX)
		return NULL;
	path = xmemdup_str(file, file_len);
	def = crystal_enclosing_def(&s->sources, path, (uint32_t)line);
	if (def) {
		crystal_display(def, CRYSTAL_SHORT, shown, sizeof(shown));
		out = xasprintf("%s (proc at %s:%lu)", shown, base_name(path), line);
	}
	free(def);
	free(path);
	return out;
}

#define MAX_CALLEES 32

/* The symbols of the functions an inlined call's own code calls. */
static size_t callee_symbols(struct sym_module *mod, const struct inline_call *call,
			     const char *out[MAX_CALLEES])
{
	const uint64_t *targets;
	size_t n = inline_index_callees(&mod->inlines, mod->mod, call, &targets), k = 0;

	for (size_t i = 0; i < n && k < MAX_CALLEES; i++) {
		const char *name = symbol_index_at(&mod->symbols, mod->mod, targets[i]);

		if (name)
			out[k++] = name;
	}
	return k;
}

/* Where the function holding daddr starts, by the line table: the place
 * that defines it (file NULL when unknown). */
static void function_start(struct sym_module *mod, uint64_t daddr, const char **file,
			   uint32_t *line)
{
	GElf_Off off = 0;
	GElf_Sym sym;

	*file = NULL;
	*line = 0;
	if (dwfl_module_addrinfo(mod->mod, daddr, &off, &sym, NULL, NULL, NULL))
		lookup_line(mod, daddr - off, file, line);
}

/* Crystal 1.6 names a proc literal's function with its place
 * ("~procProc(Nil)@/app/src/app.cr:50"), 1.21 without: then the place is
 * where its code starts ("~procProc(Nil)@FILE:LINE" for the namers; the
 * symbol itself is kept). NULL: not such a proc, or no place known. */
static char *proc_placed(const char *symbol, const char *file, uint32_t line)
{
	if (strncmp(symbol, "~proc", 5) || strchr(symbol, '@') || !file || !line)
		return NULL;
	return xasprintf("%s@%s:%" PRIu32, symbol, file, line);
}

/*
 * Frames for ip, innermost first, into *frames (malloc'd); returns how many.
 * Inlined calls come first, the symbol's function last.
 */
static uint32_t lookup(struct symbolizer *s, uint64_t ip, bool return_addr,
		       struct sym_frame **frames)
{
	uint64_t addr = return_addr ? ip - 1 : ip;
	const struct trace_mapping *m = trace_find_mapping(s->t, addr);
	struct inline_call calls[INLINE_MAX_DEPTH];
	const char *name, *file = NULL, *start_file = NULL;
	struct sym_module *mod;
	struct sym_frame *f;
	uint32_t line = 0, start_line = 0;
	uint64_t daddr;
	int n = 0;

	if (!m) {
		f = *frames = xcalloc(1, sizeof(*f));
		f->name = f->symbol = xasprintf("0x%" PRIx64, ip);
		return 1;
	}
	if (m->flags & ALYS_MAPPING_ANON) {
		/* JIT code, memfd, ...: no file to read symbols from. */
		f = *frames = xcalloc(1, sizeof(*f));
		f->name = f->symbol = xasprintf("[anon]");
		return 1;
	}
	mod = module_for(s, m);
	if (!mod)
		goto unresolved;
	daddr = addr - mod->bias + mod->dwfl_bias;
	name = symbol_index_lookup(&mod->symbols, mod->mod, daddr);
	if (!name)
		name = dwfl_module_addrname(mod->mod, daddr);
	if (!name || !*name)
		goto unresolved;
	if (s->opt.want_dwarf) {
		lookup_line(mod, daddr, &file, &line);
		n = inline_index_lookup(&mod->inlines, mod->mod, daddr, calls,
					INLINE_MAX_DEPTH);
	}
	/* the function's own place, where needed: the file its inlined
	 * calls' caller is defined in, a 1.21 proc's name */
	if (s->opt.want_dwarf && (n || (!strncmp(name, "~proc", 5) && !strchr(name, '@'))))
		function_start(mod, daddr, &start_file, &start_line);
	f = *frames = xcalloc((size_t)n + 1, sizeof(*f));
	/* outermost first: an inlined call's owner may be its caller's */
	for (int i = n; i >= 0; i--) {
		if (i < n) {
			/* an out-of-line copy's symbol names the instantiation */
			const char *copy = calls[i].outline_addr ?
				symbol_index_lookup(&mod->symbols, mod->mod, calls[i].outline_addr) :
				NULL;
			const char *callees[MAX_CALLEES];
			size_t nr_callees = 0;

			if (!copy || copy[0] != '*')
				nr_callees = callee_symbols(mod, &calls[i], callees);
			const struct crystal_inline_site site = {
				.name = calls[i].name,
				.decl_file = calls[i].decl_file,
				.decl_line = calls[i].decl_line,
				.call_file = calls[i].call_file,
				.call_line = calls[i].call_line,
				.call_column = calls[i].call_column,
				.caller_symbol = f[i + 1].symbol,
				.caller_file = i + 1 < n ? calls[i + 1].decl_file : start_file,
				.callees = callees,
				.nr_callees = nr_callees,
				.caller_line = i + 1 < n ? calls[i + 1].decl_line : start_line,
			};

			f[i].symbol = copy && copy[0] == '*' ? xmemdup_str(copy, strlen(copy)) :
				crystal_qualify(&s->sources, &site);
			if (!f[i].symbol)
				f[i].symbol = xmemdup_str(calls[i].name, strlen(calls[i].name));
		} else {
			f[i].symbol = xmemdup_str(name, unversioned_len(name));
		}
		if (s->opt.full_names) {
			f[i].name = f[i].symbol;
		} else {
			char *placed = i == n ? proc_placed(f[i].symbol, start_file, start_line) :
					 NULL;
			const char *by = placed ? placed : f[i].symbol;

			if (!(f[i].name = proc_name(s, by)))
				f[i].name = display_name(symbol_index_namer(&mod->symbols, mod->mod),
							 by);
			if (f[i].name == placed)
				placed = NULL;
			free(placed);
		}
		f[i].resolved = true;
		/* the innermost runs at addr; each outer one at its call site */
		if (i == 0) {
			f[i].file = dup_or_null(file);
			f[i].line = line;
		} else {
			f[i].file = dup_or_null(calls[i - 1].call_file);
			f[i].line = calls[i - 1].call_line;
		}
	}
	return (uint32_t)n + 1;
unresolved:
	f = *frames = xcalloc(1, sizeof(*f));
	f->name = f->symbol = xasprintf("[%s+0x%" PRIx64 "]", base_name(m->path.ptr),
					  ip - m->start + m->offset);
	return 1;
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
	s->entries = grow_array(s->entries, &s->cap_entries, s->nr_entries + 1,
				sizeof(*s->entries));
	e = &s->entries[s->nr_entries];
	e->ip = ip;
	e->nr_frames = lookup(s, ip, depth > 0, &f);
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

bool symbolizer_mapping_resolved(struct symbolizer *s, size_t map_index)
{
	return map_index < s->t->nr_maps && module_for(s, &s->t->maps[map_index]);
}

const char *symbolizer_mapping_file(struct symbolizer *s, size_t map_index)
{
	const struct sym_module *mod;

	if (map_index >= s->t->nr_maps)
		return NULL;
	mod = module_for(s, &s->t->maps[map_index]);
	return mod ? mod->path : NULL;
}

struct symbolizer *symbolizer_new(const struct trace *t, const struct symbolizer_options *opt)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	const char *slash;

	/* libelf refuses to work until told which ELF version we speak */
	elf_version(EV_CURRENT);
	s->t = t;
	s->opt = *opt;
	if (opt->debug_dir)
		add_debug_dir(opt->debug_dir);
	if (opt->kept_dir)
		add_debug_dir(opt->kept_dir);
	s->module_of_map = xcalloc(t->nr_maps, sizeof(*s->module_of_map));
	s->map_state = xcalloc(t->nr_maps, sizeof(*s->map_state));
	s->nr_maps = t->nr_maps;
	u64_table_init(&s->exact);
	u64_table_init(&s->ret);
	s->zero_entry[0] = s->zero_entry[1] = -1;
	slash = t->hdr.exe.ptr ? strrchr(t->hdr.exe.ptr, '/') : NULL;
	if (slash) {
		/* sources given to crystal by relative paths, from where it ran */
		char *dir = xmemdup_str(t->hdr.exe.ptr, (size_t)(slash - t->hdr.exe.ptr));

		source_cache_set_base(&s->sources, dir);
		free(dir);
	}
	return s;
}

void symbolizer_maps_grew(struct symbolizer *s)
{
	size_t n = s->t->nr_maps;

	if (n <= s->nr_maps)
		return;
	s->module_of_map = xrealloc_array(s->module_of_map, n, sizeof(*s->module_of_map));
	s->map_state = xrealloc_array(s->map_state, n, sizeof(*s->map_state));
	for (size_t i = s->nr_maps; i < n; i++) {
		s->module_of_map[i] = -1;
		s->map_state[i] = MOD_UNTRIED;
	}
	s->nr_maps = n;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	nr_debug_dirs = 0;	/* the callers free them next */
	for (size_t i = 0; i < s->nr_entries; i++) {
		struct sym_frame *f = (struct sym_frame *)s->entries[i].frames;

		for (uint32_t j = 0; j < s->entries[i].nr_frames; j++) {
			if (f[j].name != f[j].symbol)
				free((char *)f[j].symbol);
			free((char *)f[j].name);
			free((char *)f[j].file);
		}
		free(f);
	}
	free(s->entries);
	for (size_t i = 0; i < s->nr_modules; i++) {
		line_index_free(&s->modules[i].lines);
		inline_index_free(&s->modules[i].inlines);
		symbol_index_free(&s->modules[i].symbols);
		dwfl_end(s->modules[i].dwfl);
	}
	for (size_t i = 0; i < s->nr_found; i++)
		free(s->found_paths[i]);
	free(s->found_paths);
	source_cache_free(&s->sources);
	free(s->modules);
	free(s->module_of_map);
	free(s->map_state);
	free(s->warned);
	u64_table_free(&s->exact);
	u64_table_free(&s->ret);
	free(s);
}
