/* SPDX-License-Identifier: MIT */
/*
 * The display names of one loaded module (lib/crystal_display.h): a
 * crystal_namer fed every function symbol of the module's table, so that
 * the converter's symbolizer and the daemon's --interval report tell the
 * same functions apart the same way.
 */
#ifndef ALYS_MODULE_NAMER_H
#define ALYS_MODULE_NAMER_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>

#include "lib/crystal_display.h"

/* A defined function symbol (or a label: Crystal's code has sizeless
 * ones), as both programs name code by. */
bool module_symbol_is_code(const GElf_Sym *sym);

/* A new namer of mod's symbols; crystal_namer_free() it. */
struct crystal_namer *module_namer_new(Dwfl_Module *mod);

#endif /* ALYS_MODULE_NAMER_H */
