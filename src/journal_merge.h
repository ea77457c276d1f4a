/* journal_merge.h: merging the journals of a sharded run into one (ka merge,
 * docs/scaleout.md). Kept apart from journal.h, which other work owns; the
 * function lives at the end of journal.c because it needs the journal's
 * connection. */
#ifndef KA_JOURNAL_MERGE_H
#define KA_JOURNAL_MERGE_H

#include "journal.h"

/* Copy every start, request, reply, source and grade of the journal at
 * other_path into j, in one transaction: start ids are renumbered after j's
 * own, and each grade keeps pointing at the start that made it. The run
 * identity is not copied (the caller records the merged run's). A sample
 * that j already holds fails the merge, which then changes nothing. 0, or
 * -1 with e. */
int journal_merge_from(struct journal *j, const char *other_path, struct ka_err *e);

#endif
