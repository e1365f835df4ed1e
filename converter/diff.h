/* SPDX-License-Identifier: MIT */
/* `alys_converter diff OLD NEW`: allocation changes by site, for CI. */
#ifndef ALYS_CONV_DIFF_H
#define ALYS_CONV_DIFF_H

/* argv[0] is "diff". Exit status: 0, 1 (a site grew beyond --fail-above),
 * 2 (usage error or unreadable trace). */
int diff_main(int argc, char **argv);

#endif
