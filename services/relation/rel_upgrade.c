/*
 * rel_upgrade.c - a store of a release before shards, brought to this
 * release's keys the first time it is opened (rt_env.upgrade).
 *
 * That release kept fans in family "fan" with the follower's uid as the
 * qualifier; this one keeps them in "fans" with the follower's slot in
 * front (rel_schema.h).  Before anything is rewritten the store is
 * checkpointed into DIR.before-shards (hard links: instant, and no space
 * until the files are compacted away); then every fan cell is copied to
 * its new key and deleted from the old family, REL_UPGRADE_BATCH cells
 * to a write, in one pass.  A crash in between is harmless: the next start (the
 * layout is recorded only after this succeeds) copies again what is
 * left, and a cell copied twice is the same cell.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "rel.h"
#include "rel_schema.h"
#include "rt_log.h"

#define REL_UPGRADE_BATCH 10000 /* fan cells moved per write */

/* rel_upgrade_fans moves every fan cell (one scan; the iterator reads the store as it was when it began), writing every REL_UPGRADE_BATCH; *moved gets how many. */
static int
rel_upgrade_fans(hb_table *t, hb_batch *b, size_t *moved)
{
	hb_scan *sc = NULL;
	hb_cell  c;
	size_t   inbatch = 0;
	int      rc = hb_scan_open(&sc, t, REL_FAM_FAN_OLD, NULL);

	*moved = 0;
	while (rc == WB_OK && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		uint8_t q[REL_FAN_QUAL];
		if (c.row_len != 8 || c.qual_len != 8) {
			rc = WB_ECORRUPT;
			break;
		}
		rel_fan_qual(q, hb_be_u64(c.qual));
		rc = hb_batch_put(b, t, REL_FAM_FANS, c.row, 8, q, sizeof(q), c.version, "", 0);
		if (rc == WB_OK) {
			rc = hb_batch_delete_column(
			    b, t, REL_FAM_FAN_OLD, c.row, 8, c.qual, 8, HB_LATEST);
		}
		if (rc == WB_OK && ++inbatch == REL_UPGRADE_BATCH) {
			rc = hb_write(t, b);
			hb_batch_clear(b);
			*moved += inbatch;
			inbatch = 0;
		}
	}
	hb_scan_close(sc);
	if (rc == WB_EEND) {
		rc = inbatch > 0 ? hb_write(t, b) : WB_OK;
		*moved += inbatch;
	}
	hb_batch_clear(b);
	return rc;
}

int
rel_upgrade(hb_table *t, const char *dir)
{
	char        copy[4200];
	hb_batch   *b;
	size_t      total = 0;
	struct stat st;
	int         rc;

	snprintf(copy, sizeof(copy), "%s.before-shards", dir);
	if (stat(copy, &st) != 0) {
		if ((rc = hb_checkpoint(t, copy)) != WB_OK) {
			RT_ERRORF("upgrade: cannot take a copy of %s into %s first: %s", dir, copy,
			    hb_last_error());
			return rc;
		}
		RT_WARNF("upgrade: a store of a release before shards; its copy as it was is in %s "
		         "(delete it once the upgrade is confirmed)",
		    copy);
	}
	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rc;
	}
	rc = rel_upgrade_fans(t, b, &total);
	hb_batch_free(b);
	if (rc != WB_OK) {
		RT_ERRORF("upgrade: moving the fans failed after %zu: %s %s", total,
		    wb_strerror(rc), hb_last_error());
		return rc;
	}
	RT_WARNF("upgrade: %zu fan edges moved to their sharded keys", total);
	return WB_OK;
}
