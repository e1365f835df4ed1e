/* SPDX-License-Identifier: MIT */
/*
 * Read-only view of an ELF file: symbols, segments, build id. The one ELF
 * opener of both programs: the daemon's probe placement, unwind tables and
 * mappings, and the converter's check of a traced file against its build id.
 */
#ifndef ALYS_ELF_FILE_H
#define ALYS_ELF_FILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum elf_file_error {
	ELF_FILE_OK,
	ELF_FILE_CANNOT_OPEN,		/* errno in open_errno */
	ELF_FILE_NOT_ELF,
	ELF_FILE_NOT_X86_64,
};

struct elf_file {
	int fd;
	Elf *elf;
	const char *path;
	GElf_Ehdr ehdr;
	enum elf_file_error error;	/* why elf_file_open failed */
	int open_errno;
};

/* 0, or -1 with ef->error set and a sentence naming path and the cause in
 * err. An x86-64 ELF file only: alys-bpf traces nothing else. */
int elf_file_open(struct elf_file *ef, const char *path, char *err, size_t errlen);
void elf_file_close(struct elf_file *ef);

/* A defined function or object symbol from .symtab, else .dynsym. */
bool elf_file_find_symbol(struct elf_file *ef, const char *name,
			  GElf_Addr *vaddr, GElf_Xword *size);
/* Calls fn for every defined data object of .symtab (else .dynsym). */
void elf_file_each_object(struct elf_file *ef,
			  void (*fn)(void *arg, const char *name, GElf_Addr vaddr, GElf_Xword size),
			  void *arg);
/* The defined symbol of .symtab (else .dynsym) whose extent holds vaddr:
 * its name into out and vaddr's offset in it. */
bool elf_file_symbol_at(struct elf_file *ef, GElf_Addr vaddr, char *out, size_t outlen,
			uint64_t *off);
/* Address and size of the section called name (".text"). */
bool elf_file_section(struct elf_file *ef, const char *name, GElf_Addr *addr, size_t *size);
/*
 * The load bias of a mapping of this file that puts file offset `offset`
 * at address `start` (runtime address = vaddr + bias): through the PT_LOAD
 * segment holding that offset, the executable one where several do. Works
 * alike for PIE, shared libraries and ET_EXEC (where it comes out as 0).
 */
bool elf_mapping_bias(Elf *elf, uint64_t start, uint64_t offset, uint64_t *bias);
/* File offset of vaddr through the PT_LOAD segment that maps it. */
bool elf_file_vaddr_to_offset(struct elf_file *ef, GElf_Addr vaddr, uint64_t *off);
/* Pointer to size bytes of file contents at vaddr (text of a function). */
const void *elf_file_bytes_at(struct elf_file *ef, GElf_Addr vaddr, size_t size);
/* The dynamic relocation that fills the 8-byte slot at vaddr (a GOT or PLT
 * slot): its type, addend and symbol name ("" for none). */
struct elf_reloc {
	uint32_t type;
	int64_t addend;
	char sym[128];
};
bool elf_file_reloc_at(struct elf_file *ef, GElf_Addr slot, struct elf_reloc *out);
/* What that slot holds once relocated, as an address in this file (a
 * RELATIVE addend, or a symbol defined here plus the addend). */
bool elf_file_slot_value(struct elf_file *ef, GElf_Addr slot, uint64_t *value);
/* The first program header of a type (PT_TLS, PT_INTERP). */
bool elf_file_segment(struct elf_file *ef, uint32_t type, GElf_Phdr *out);
/* A defined STT_TLS symbol: its offset in the TLS segment (may be 0). */
bool elf_file_find_tls_symbol(struct elf_file *ef, const char *name, GElf_Addr *offset);
/* How many dynamic relocations have type; *slot: the first one's. */
size_t elf_file_count_relocs(struct elf_file *ef, uint32_t type, GElf_Addr *slot);
/* Whether an ELF file (opened here or by libdwfl) has a .symtab, not only
 * .dynsym. */
bool elf_has_symtab(Elf *elf);
/* GNU build id; returns its length (0: none). */
size_t elf_file_build_id(struct elf_file *ef, uint8_t *buf, size_t buflen);
/* DT_NEEDED entries, called once each. */
void elf_file_each_needed(struct elf_file *ef,
			  void (*fn)(const char *name, void *arg), void *arg);

#endif
