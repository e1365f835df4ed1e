// SPDX-License-Identifier: MIT
#include "lib/module_namer.h"

bool module_symbol_is_code(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return sym->st_shndx != SHN_UNDEF &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE);
}

struct crystal_namer *module_namer_new(Dwfl_Module *mod)
{
	struct crystal_namer *n = crystal_namer_new();
	int nr = dwfl_module_getsymtab(mod);

	for (int i = 1; i < nr; i++) {
		GElf_Sym sym;
		const char *name = dwfl_module_getsym(mod, i, &sym, NULL);

		if (name && *name && module_symbol_is_code(&sym))
			crystal_namer_add(n, name);
	}
	return n;
}
