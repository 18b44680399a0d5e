/*
 * inbox_erase.c - a deleted account's inbox, dropped from the user
 * service's "erase" event (evlog_sub.h; docs/architecture.md, "Deleting
 * an account"), on the shard that keeps that reader.
 *
 * This runs on the consumer's own thread, beside the applier: the row
 * goes at once, whatever the relation and content sources still have to
 * deliver.  Whatever those bring into the row afterwards (a follow of
 * the account's applied late, a post of someone it followed, the
 * account's own cell of a post of its own applied late) goes too when
 * relation's and content's "erased" events for it arrive
 * (inbox_erase_row), after which nothing more can come.  The posts of
 * the account leave its fans' inboxes with relation's "unfollow" of each
 * fan, as an unfollow's do.
 */
#include <string.h>

#include "inbox_int.h"
#include "inbox_schema.h"
#include "rt_log.h"

int
inbox_erase_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b)
{
	inbox      *in = arg;
	uint64_t    x = wb_u64(ev, WB_F_UID, 0);
	const char *type = wb_str(ev, WB_F_TYPE, "");
	uint8_t     row[8];
	int         rc = WB_OK;

	(void)s;
	hb_u64_be(row, x);
	if (strcmp(type, wb_event_name(WB_EV_ERASE)) == 0 && x != 0 && inbox_mine(in, x)) {
		rc = hb_batch_delete_row(b, in->t, INBOX_FAM_TL, row, 8);
	}
	if (rc == WB_OK) {
		rc = hb_write(in->t, b);
	}
	if (rc == WB_OK && inbox_mine(in, x)) {
		inbox_cache_drop(in->cache, x);
	}
	return rc;
}
