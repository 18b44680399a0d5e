/* wbc_stores.c - a stopped shard's store, read-only, checked against the shard's slots (see
 * wbc_stores.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "content_schema.h"
#include "hb.h"
#include "inbox_schema.h"
#include "rel_schema.h"
#include "wb_id.h"
#include "wbc_stores.h"

#define WBC_FAMS_MAX 16

/* Whose a family's cells are. */
typedef enum wbc_owner {
	WBC_OWNER_ROW,        /* the row is the owner's uid */
	WBC_OWNER_FAN,        /* qualifier slot | follower: the follower */
	WBC_OWNER_FOLLOWING,  /* a count row: its "following" cell is the row's */
	WBC_OWNER_POST_INDEX, /* row post id -> author: the author, whose group the id names */
	WBC_OWNER_NONE,       /* must be empty */
} wbc_owner;

/* One family to scan. */
typedef struct wbc_fam_check {
	int       fam;
	wbc_owner owner;
} wbc_fam_check;

/* wbc_stores_foreign counts a cell of another shard, describing the first. */
static void __attribute__((format(printf, 2, 3)))
wbc_stores_foreign(wbc_store_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->foreign++ == 0) {
		va_start(ap, fmt);
		vsnprintf(r->first, sizeof(r->first), fmt, ap);
		va_end(ap);
	}
}

/* wbc_stores_owner checks one cell of family name against shard s. */
static void
wbc_stores_owner(
    wbc_store_report *r, wb_shard s, const char *name, wbc_owner owner, const hb_cell *c)
{
	const uint8_t *q = c->qual;
	uint64_t       uid;

	if (c->row_len != 8) {
		wbc_stores_foreign(r, "%s: a row of %zu bytes, not a uid", name, c->row_len);
		return;
	}
	uid = hb_be_u64(c->row);
	switch (owner) {
	case WBC_OWNER_NONE:
		wbc_stores_foreign(r, "%s: a cell of row %llu in a family that must be empty", name,
		    (unsigned long long)uid);
		return;
	case WBC_OWNER_FOLLOWING:
		if (c->qual_len != strlen(REL_Q_FOLLOWING) ||
		    memcmp(q, REL_Q_FOLLOWING, c->qual_len) != 0) {
			return; /* a followers part: any uid's */
		}
		break;
	case WBC_OWNER_FAN: {
		if (c->qual_len != REL_FAN_QUAL) {
			wbc_stores_foreign(r, "%s: a qualifier of %zu bytes", name, c->qual_len);
			return;
		}
		uint8_t  want[REL_FAN_QUAL];
		unsigned slot = (unsigned)q[0] << 8 | q[1];
		uid = hb_be_u64(q + 2);
		rel_fan_qual(want, uid); /* the qualifier relation writes for this fan */
		if (memcmp(want, q, REL_FAN_QUAL) != 0) {
			wbc_stores_foreign(r, "%s: fan %llu filed under slot %u, its slot is %u",
			    name, (unsigned long long)uid, slot, wb_slot(uid));
			return;
		}
		break;
	}
	case WBC_OWNER_POST_INDEX: {
		uint64_t id = uid;
		if (c->value_len != 8) {
			wbc_stores_foreign(r, "%s: post %llu's author is %zu bytes", name,
			    (unsigned long long)id, c->value_len);
			return;
		}
		uid = hb_be_u64(c->value);
		if (wb_id_node(id) != wb_slot_group(wb_slot(uid))) {
			wbc_stores_foreign(r,
			    "%s: post %llu names group %u, its author %llu's is %u", name,
			    (unsigned long long)id, wb_id_node(id), (unsigned long long)uid,
			    wb_slot_group(wb_slot(uid)));
			return;
		}
		break;
	}
	case WBC_OWNER_ROW:
		break;
	}
	r->cells++;
	if (!wb_shard_owns(s, wb_slot(uid))) {
		wbc_stores_foreign(r,
		    "%s: a cell of uid %llu (slot %u, shard %u of %u) on shard %u", name,
		    (unsigned long long)uid, wb_slot(uid), wb_uid_shard(uid, s.count), s.count,
		    s.index);
	}
}

/* wbc_stores_scan scans family f whole, every version, checking each cell; WB_OK or the error. */
static int
wbc_stores_scan(
    hb_table *t, const hb_family_opts *fams, wbc_fam_check f, wb_shard s, wbc_store_report *r)
{
	hb_scan_opts o = { .all_versions = true };
	hb_scan     *sc;
	hb_cell      c;
	uint8_t      last[8];
	bool         any = false;
	int          rc;

	if ((rc = hb_scan_open(&sc, t, f.fam, &o)) != WB_OK) {
		return rc;
	}
	while ((rc = hb_scan_next(sc, &c)) == WB_OK) {
		wbc_stores_owner(r, s, fams[f.fam].name, f.owner, &c);
		if (c.row_len == 8 && (!any || memcmp(last, c.row, 8) != 0)) {
			memcpy(last, c.row, 8);
			any = true;
			r->rows++;
		}
	}
	hb_scan_close(sc);
	return rc == WB_EEND ? WB_OK : rc;
}

int
wbc_stores_check(
    const char *path, const char *svc, wb_shard s, wbc_store_report *r, char *why, size_t why_len)
{
	static const wbc_fam_check rel[] = { { REL_FAM_FOLLOW, WBC_OWNER_ROW },
		{ REL_FAM_FANS, WBC_OWNER_FAN }, { REL_FAM_COUNT, WBC_OWNER_FOLLOWING },
		{ REL_FAM_FAN_OLD, WBC_OWNER_NONE } };
	static const wbc_fam_check content[] = { { CONTENT_FAM_POST, WBC_OWNER_ROW },
		{ CONTENT_FAM_PCAT, WBC_OWNER_ROW }, { CONTENT_FAM_UPLOAD, WBC_OWNER_ROW },
		{ CONTENT_FAM_MEDIA, WBC_OWNER_ROW }, { CONTENT_FAM_UPLOAD_PREVIEW, WBC_OWNER_ROW },
		{ CONTENT_FAM_MEDIA_PREVIEW, WBC_OWNER_ROW },
		{ CONTENT_FAM_PIDX, WBC_OWNER_POST_INDEX } };
	static const wbc_fam_check inbox[] = { { INBOX_FAM_TL, WBC_OWNER_ROW } };
	const hb_table_opts        ro = { .read_only = true };
	hb_family_opts             fams[WBC_FAMS_MAX];
	const wbc_fam_check       *checks;
	size_t                     nfams, nchecks;
	hb_table                  *t;
	int                        rc = WB_OK;

	memset(r, 0, sizeof(*r));
	memset(fams, 0, sizeof(fams));
	if (strcmp(svc, "relation") == 0) {
		rel_schema(fams);
		nfams = REL_FAM_NFAMS;
		checks = rel;
		nchecks = sizeof(rel) / sizeof(rel[0]);
	} else if (strcmp(svc, "content") == 0) {
		content_schema_families(fams);
		nfams = CONTENT_FAM_COUNT;
		checks = content;
		nchecks = sizeof(content) / sizeof(content[0]);
	} else if (strcmp(svc, "inbox") == 0) {
		inbox_schema_families(fams, 0, 0); /* every version, no TTL: all that is on disk */
		nfams = INBOX_FAM_COUNT;
		checks = inbox;
		nchecks = sizeof(inbox) / sizeof(inbox[0]);
	} else {
		snprintf(why, why_len, "no sharded service %s", svc);
		return -1;
	}
	if ((rc = hb_open(&t, path, fams, nfams, &ro)) != WB_OK) {
		snprintf(why, why_len, "cannot open %s read-only: %s %s", path, wb_strerror(rc),
		    hb_last_error());
		return -1;
	}
	for (size_t i = 0; rc == WB_OK && i < nchecks; i++) {
		if ((rc = wbc_stores_scan(t, fams, checks[i], s, r)) != WB_OK) {
			snprintf(why, why_len, "scan of %s in %s: %s %s", fams[checks[i].fam].name,
			    path, wb_strerror(rc), hb_last_error());
		}
	}
	hb_close(t);
	return rc == WB_OK ? 0 : -1;
}
