// SPDX-License-Identifier: MIT
#include "lib/elf_file.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int elf_file_open(struct elf_file *ef, const char *path, char *err, size_t errlen)
{
	memset(ef, 0, sizeof(*ef));
	ef->path = path;
	elf_version(EV_CURRENT);
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		ef->error = ELF_FILE_CANNOT_OPEN;
		ef->open_errno = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF ||
	    !gelf_getehdr(ef->elf, &ef->ehdr)) {
		ef->error = ELF_FILE_NOT_ELF;
		snprintf(err, errlen, "%s is not an ELF file%s", path,
			 ef->elf ? "" : " (unreadable)");
		elf_file_close(ef);
		return -1;
	}
	if (ef->ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ef->ehdr.e_machine != EM_X86_64) {
		ef->error = ELF_FILE_NOT_X86_64;
		snprintf(err, errlen, "%s is not an x86-64 ELF file: alys-bpf traces x86-64 programs only", path);
		elf_file_close(ef);
		return -1;
	}
	return 0;
}

void elf_file_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	ef->elf = NULL;
	ef->fd = -1;
}

/* Calls visit for every defined symbol of the symbol tables of one type,
 * until it returns true (then true). *seen: whether there was such a
 * table. */
typedef bool symbol_visit(void *arg, const GElf_Sym *sym, const char *name);

static bool walk_symbols(struct elf_file *ef, GElf_Word type, symbol_visit *visit, void *arg,
			 bool *seen)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		*seen = true;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(ef->elf, sh.sh_link, sym.st_name)))
				continue;
			if (visit(arg, &sym, name))
				return true;
		}
	}
	return false;
}

/* .symtab, else .dynsym: until visit returns true, or (all) through the
 * first table there is. */
static bool each_symbol(struct elf_file *ef, symbol_visit *visit, void *arg, bool all)
{
	static const GElf_Word order[] = { SHT_SYMTAB, SHT_DYNSYM };

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		bool seen = false;

		if (walk_symbols(ef, order[k], visit, arg, &seen))
			return true;
		if (all && seen)
			return false;
	}
	return false;
}

struct by_name {
	const char *name;
	GElf_Addr *vaddr;
	GElf_Xword *size;
};

static bool is_named(void *arg, const GElf_Sym *sym, const char *name)
{
	struct by_name *q = arg;

	if (!sym->st_value || strcmp(name, q->name))
		return false;
	*q->vaddr = sym->st_value;
	if (q->size)
		*q->size = sym->st_size;
	return true;
}

bool elf_file_find_symbol(struct elf_file *ef, const char *name,
			  GElf_Addr *vaddr, GElf_Xword *size)
{
	struct by_name q = { name, vaddr, size };

	return each_symbol(ef, is_named, &q, false);
}

struct objects {
	void (*fn)(void *arg, const char *name, GElf_Addr vaddr, GElf_Xword size);
	void *arg;
};

static bool is_object(void *arg, const GElf_Sym *sym, const char *name)
{
	struct objects *q = arg;

	if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT && sym->st_value)
		q->fn(q->arg, name, sym->st_value, sym->st_size);
	return false;
}

void elf_file_each_object(struct elf_file *ef,
			  void (*fn)(void *arg, const char *name, GElf_Addr vaddr, GElf_Xword size),
			  void *arg)
{
	struct objects q = { fn, arg };

	each_symbol(ef, is_object, &q, true);
}

static bool load_segment_of(struct elf_file *ef, GElf_Addr vaddr, GElf_Phdr *out)
{
	size_t n;

	if (elf_getphdrnum(ef->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*out = ph;
			return true;
		}
	}
	return false;
}

struct by_addr {
	GElf_Addr vaddr;
	char *out;
	size_t outlen;
	uint64_t *off;
};

static bool holds_addr(void *arg, const GElf_Sym *sym, const char *name)
{
	struct by_addr *q = arg;

	if (q->vaddr < sym->st_value || q->vaddr >= sym->st_value + sym->st_size || !*name)
		return false;
	snprintf(q->out, q->outlen, "%s", name);
	*q->off = q->vaddr - sym->st_value;
	return true;
}

bool elf_file_symbol_at(struct elf_file *ef, GElf_Addr vaddr, char *out, size_t outlen,
			uint64_t *off)
{
	struct by_addr q = { vaddr, out, outlen, off };

	return each_symbol(ef, holds_addr, &q, false);
}

bool elf_file_section(struct elf_file *ef, const char *name, GElf_Addr *addr, size_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(ef->elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(ef->elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, name)) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return true;
		}
	}
	return false;
}

bool elf_mapping_bias(Elf *elf, uint64_t start, uint64_t offset, uint64_t *bias)
{
	size_t phnum;
	bool found = false;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
		uint64_t page_off;

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		page_off = ph->p_offset & ~(uint64_t)0xfff;
		if (offset < page_off || offset >= ph->p_offset + ph->p_filesz)
			continue;
		*bias = start - offset - (ph->p_vaddr - ph->p_offset);
		found = true;
		if (ph->p_flags & PF_X)	/* the executable segment is the one we want */
			break;
	}
	return found;
}

bool elf_file_vaddr_to_offset(struct elf_file *ef, GElf_Addr vaddr, uint64_t *off)
{
	GElf_Phdr ph;

	if (!load_segment_of(ef, vaddr, &ph))
		return false;
	*off = vaddr - ph.p_vaddr + ph.p_offset;
	return true;
}

const void *elf_file_bytes_at(struct elf_file *ef, GElf_Addr vaddr, size_t size)
{
	uint64_t off;
	size_t len;
	const char *raw = elf_rawfile(ef->elf, &len);
	GElf_Phdr ph;

	if (!raw || !load_segment_of(ef, vaddr, &ph) ||
	    vaddr + size > ph.p_vaddr + ph.p_filesz)
		return NULL;
	off = vaddr - ph.p_vaddr + ph.p_offset;
	if (off + size > len)
		return NULL;
	return raw + off;
}

/* Calls visit for every dynamic or static relocation with addend, with
 * the name of its symbol ("" for none), until it returns true (then true). */
typedef bool rela_visit(void *arg, const GElf_Rela *r, const char *sym);

static bool each_rela(struct elf_file *ef, rela_visit *visit, void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *symdata = NULL;
		Elf_Scn *symscn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		symscn = elf_getscn(ef->elf, sh.sh_link);
		if (symscn && gelf_getshdr(symscn, &symsh))
			symdata = elf_getdata(symscn, NULL);
		if (!data)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *s = NULL;

			if (!gelf_getrela(data, (int)i, &r))
				continue;
			if (symdata && GELF_R_SYM(r.r_info) &&
			    gelf_getsym(symdata, (int)GELF_R_SYM(r.r_info), &sym))
				s = elf_strptr(ef->elf, symsh.sh_link, sym.st_name);
			if (visit(arg, &r, s ? s : ""))
				return true;
		}
	}
	return false;
}

struct reloc_query {
	GElf_Addr slot;
	struct elf_reloc *out;
};

static bool is_at_slot(void *arg, const GElf_Rela *r, const char *sym)
{
	struct reloc_query *q = arg;

	if (r->r_offset != q->slot)
		return false;
	q->out->type = (uint32_t)GELF_R_TYPE(r->r_info);
	q->out->addend = r->r_addend;
	snprintf(q->out->sym, sizeof(q->out->sym), "%s", sym);
	return true;
}

bool elf_file_reloc_at(struct elf_file *ef, GElf_Addr slot, struct elf_reloc *out)
{
	struct reloc_query q = { slot, out };

	return each_rela(ef, is_at_slot, &q);
}

bool elf_file_slot_value(struct elf_file *ef, GElf_Addr slot, uint64_t *value)
{
	struct elf_reloc r;
	GElf_Addr a;

	if (!elf_file_reloc_at(ef, slot, &r))
		return false;
	if (r.type == R_X86_64_RELATIVE) {
		*value = (uint64_t)r.addend;
		return true;
	}
	if ((r.type == R_X86_64_GLOB_DAT || r.type == R_X86_64_64) && r.sym[0] &&
	    elf_file_find_symbol(ef, r.sym, &a, NULL)) {
		*value = a + (uint64_t)r.addend;
		return true;
	}
	return false;
}

bool elf_file_segment(struct elf_file *ef, uint32_t type, GElf_Phdr *out)
{
	size_t n;

	if (elf_getphdrnum(ef->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(ef->elf, (int)i, out) && out->p_type == type)
			return true;
	return false;
}

static bool is_tls_named(void *arg, const GElf_Sym *sym, const char *name)
{
	struct by_name *q = arg;

	if (GELF_ST_TYPE(sym->st_info) != STT_TLS || strcmp(name, q->name))
		return false;
	*q->vaddr = sym->st_value;
	return true;
}

bool elf_file_find_tls_symbol(struct elf_file *ef, const char *name, GElf_Addr *offset)
{
	struct by_name q = { name, offset, NULL };

	return each_symbol(ef, is_tls_named, &q, false);
}

struct reloc_count {
	uint32_t type;
	size_t n;
	GElf_Addr *slot;
};

static bool count_type(void *arg, const GElf_Rela *r, const char *sym)
{
	struct reloc_count *q = arg;

	(void)sym;
	if (GELF_R_TYPE(r->r_info) == q->type && !q->n++)
		*q->slot = r->r_offset;
	return false;
}

size_t elf_file_count_relocs(struct elf_file *ef, uint32_t type, GElf_Addr *slot)
{
	struct reloc_count q = { type, 0, slot };

	each_rela(ef, count_type, &q);
	return q.n;
}

bool elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && sh->sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* libdw's reader also finds the note through the program headers, in a
 * file whose section headers were stripped. */
size_t elf_file_build_id(struct elf_file *ef, uint8_t *buf, size_t buflen)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(ef->elf, &id);

	if (n <= 0)
		return 0;
	if ((size_t)n > buflen)
		n = (ssize_t)buflen;
	memcpy(buf, id, (size_t)n);
	return (size_t)n;
}

void elf_file_each_needed(struct elf_file *ef,
			  void (*fn)(const char *name, void *arg), void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			s = elf_strptr(ef->elf, sh.sh_link, dyn.d_un.d_val);
			if (s)
				fn(s, arg);
		}
	}
}
