/*
 * inbox_upgrade.c - an inbox store of a release before shards, brought to
 * this release's names the first time it is opened (rt_env.upgrade).
 *
 * That release had one content and one relation log and kept the applied
 * position of each in meta under "content" and "relation"; this one names
 * a source by its shard, "content/0", "relation/1" (inbox_schema.h).  A
 * store of that release was fed by shard 0 of 1 of each, whose logs keep
 * their seqs across the upgrade, so the two rows are renamed, their
 * values (seq and mark) as they were, in one batch: no event is applied
 * twice, none is skipped.  A crash before the layout is recorded runs
 * this again on the next start; it then finds nothing left to rename.
 */
#include <string.h>

#include "inbox.h"
#include "inbox_schema.h"
#include "rt_log.h"

/* The rows renamed: the name before shards, and the source it is now. */
static const struct {
	const char *old, *now;
} inbox_upgrade_rows[] = {
	{ "content", "content/0" },
	{ "relation", "relation/0" },
};

/* inbox_upgrade_row adds the rename of row i to b; *seq gets its applied seq (0: no row). */
static int
inbox_upgrade_row(hb_table *t, hb_batch *b, size_t i, uint64_t *seq)
{
	const char *old = inbox_upgrade_rows[i].old, *now = inbox_upgrade_rows[i].now;
	hb_cell    *c = NULL, *have = NULL;
	int         rc = hb_get(t, INBOX_FAM_META, old, strlen(old), NULL, 0, &c);

	*seq = 0;
	if (rc == WB_ENOTFOUND) {
		return WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len < 8) {
		hb_cell_free(c);
		return WB_ECORRUPT;
	}
	*seq = hb_be_u64(c->value);
	rc = hb_get(t, INBOX_FAM_META, now, strlen(now), NULL, 0, &have);
	if (rc == WB_OK) {
		hb_cell_free(have); /* written by this release already: it is the newer */
		*seq = 0;
	} else if (rc == WB_ENOTFOUND) {
		rc = hb_batch_put(b, t, INBOX_FAM_META, now, strlen(now), NULL, 0, c->version,
		    c->value, c->value_len);
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_row(b, t, INBOX_FAM_META, old, strlen(old));
	}
	hb_cell_free(c);
	return rc;
}

int
inbox_upgrade(hb_table *t)
{
	enum { N = sizeof(inbox_upgrade_rows) / sizeof(inbox_upgrade_rows[0]) };
	uint64_t  seq[N];
	hb_batch *b = NULL;
	int       rc = hb_batch_new(&b);

	for (size_t i = 0; rc == WB_OK && i < N; i++) {
		rc = inbox_upgrade_row(t, b, i, &seq[i]);
	}
	if (rc == WB_OK) {
		rc = hb_write(t, b);
	}
	hb_batch_free(b);
	if (rc != WB_OK) {
		RT_ERRORF("upgrade: cannot rename the applied positions: %s %s", wb_strerror(rc),
		    hb_last_error());
		return rc;
	}
	for (size_t i = 0; i < N; i++) {
		if (seq[i] > 0) {
			RT_WARNF(
			    "upgrade: a store of a release before shards: the applied position "
			    "of %s (seq %llu) is now that of %s",
			    inbox_upgrade_rows[i].old, (unsigned long long)seq[i],
			    inbox_upgrade_rows[i].now);
		}
	}
	return WB_OK;
}
