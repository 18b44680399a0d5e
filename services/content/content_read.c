/*
 * content_read.c - post.get, post.timeline, post.log and post.authors.
 */
#include <stdlib.h>
#include <string.h>

#include "content_int.h"
#include "content_schema.h"
#include "rt_log.h"
#include "wb_slot.h"

int
content_cell(content *c, int fam, uint64_t author, uint64_t id,
    int (*fill)(void *arg, uint64_t id, uint64_t author, const void *val, size_t len), void *arg)
{
	uint8_t      row[8];
	hb_scan     *s = NULL;
	hb_cell      cell;
	hb_scan_opts opts;
	hb_scan_opts_id_row(&opts, row, author);
	opts.min_version = id;
	opts.max_version = id;
	opts.limit = 1;
	int rc = hb_scan_open(&s, c->t, fam, &opts);
	if (rc != WB_OK) {
		return rc;
	}
	rc = hb_scan_next(s, &cell);
	if (rc == WB_OK && cell.version == id) {
		rc = fill(arg, id, author, cell.value, cell.value_len);
	} else if (rc == WB_OK || rc == WB_EEND) {
		rc = WB_ENOTFOUND;
	}
	hb_scan_close(s);
	return rc;
}

/* content_post_record is content_cell's fill for a post record. */
static int
content_post_record(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	return content_post_fill(arg, id, author, val, len);
}

/* A copy of a stored value: content_cell's fill for content_cell_copy. */
typedef struct content_value {
	uint8_t *p;
	size_t   len;
} content_value;

static int
content_value_copy(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_value *v = arg;

	(void)id;
	(void)author;
	if ((v->p = malloc(len + 1)) == NULL) {
		return WB_ENOMEM;
	}
	memcpy(v->p, val, len);
	v->len = len;
	return WB_OK;
}

int
content_cell_copy(content *c, int fam, uint64_t author, uint64_t id, uint8_t **val, size_t *len)
{
	content_value v = { 0 };
	int           rc = content_cell(c, fam, author, id, content_value_copy, &v);

	*val = v.p;
	*len = v.len;
	return rc;
}

/* content_post_read reads post id of author into o (WB_ENOPOST if gone). */
static int
content_post_read(content *c, uint64_t author, uint64_t id, wb_obj *o)
{
	int rc = content_cell(c, CONTENT_FAM_POST, author, id, content_post_record, o);
	return rc == WB_ENOTFOUND ? WB_ENOPOST : rc;
}

/*
 * content_get: post.get {ids, uids?} -> {posts, missing}.  uids, when
 * given with one entry per id, are the authors the caller believes wrote
 * them (the inbox stores each post's author): the post row is read
 * straight away, and only when that finds nothing is the author looked
 * up in the id index, so a wrong hint costs a lookup, never a wrong post.
 */
int
content_get(void *arg, const wb_obj *req, wb_obj *rep)
{
	content        *c = arg;
	const uint64_t *ids = NULL, *hints = NULL;
	size_t          n = 0, nh = 0;
	uint64_t        missing[CONTENT_GET_MAX];
	(void)wb_get_u64s(req, WB_F_IDS, &ids, &n);
	if (n > CONTENT_GET_MAX) {
		wb_reply_error(rep, WB_ETOOBIG, "at most %d ids per post.get", CONTENT_GET_MAX);
		return WB_ETOOBIG;
	}
	if (!wb_get_u64s(req, WB_F_UIDS, &hints, &nh) || nh != n) {
		hints = NULL;
	}
	wb_reply_ok(rep);
	wb_obj *posts = n ? wb_add_objs(rep, WB_F_POSTS, n) : NULL;
	int     rc = (n && posts == NULL) ? WB_ENOMEM : WB_OK;
	size_t  found = 0, nmiss = 0;
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		uint64_t author = 0;
		rc = WB_ENOPOST;
		if (hints != NULL && hints[i] != 0) {
			rc = content_post_read(c, hints[i], ids[i], &posts[found]);
		}
		if (rc == WB_ENOPOST) {
			rc = content_author(c, ids[i], &author);
			if (rc == WB_OK && hints != NULL && author == hints[i]) {
				rc = WB_ENOPOST; /* the row was just read: gone */
			} else if (rc == WB_OK) {
				rc = content_post_read(c, author, ids[i], &posts[found]);
			}
		}
		if (rc == WB_OK) {
			found++;
		} else if (rc == WB_ENOPOST) {
			missing[nmiss++] = ids[i];
			rc = WB_OK;
		}
	}
	if (rc == WB_OK && n) {
		wb_shrink(rep, WB_F_POSTS, found);
	}
	if (rc == WB_OK) {
		rc = wb_set_u64s(rep, WB_F_MISSING, missing, nmiss);
	}
	return rc;
}

int
content_timeline(void *arg, const wb_obj *req, wb_obj *rep)
{
	content    *c = arg;
	uint64_t    uid = wb_u64(req, WB_F_UID, 0);
	uint64_t    limit;
	uint64_t    minv = 0, maxv = UINT64_MAX, v;
	bool        empty = false;
	const char *cat = NULL;
	size_t      catlen = 0;
	if (wb_page_limit(req, CONTENT_PAGE_DEFAULT, CONTENT_PAGE_MAX, &limit, rep) != WB_OK) {
		return WB_EINVAL;
	}
	if (wb_get_str(req, WB_F_CATEGORY, &cat, &catlen) && !content_category_ok(cat, catlen)) {
		wb_reply_error(
		    rep, WB_EINVAL, "category must be 1 to %d of a-z 0-9 _", POST_CATEGORY_MAX);
		return WB_EINVAL;
	}
	if (wb_get_u64(req, WB_F_BEFORE, &v)) {
		if (v == 0) {
			empty = true;
		} else {
			maxv = v - 1;
		}
	}
	if (wb_get_u64(req, WB_F_UNTIL, &v)) {
		uint64_t m = wb_id_min(v);
		if (m == 0) {
			empty = true;
		} else if (m - 1 < maxv) {
			maxv = m - 1;
		}
	}
	if (wb_get_u64(req, WB_F_SINCE, &v)) {
		minv = wb_id_min(v);
	}
	if (minv > maxv) {
		empty = true;
	}

	wb_reply_ok(rep);
	if (empty) {
		(void)wb_add_objs(rep, WB_F_POSTS, 0);
		return WB_OK;
	}
	wb_obj *posts = wb_add_objs(rep, WB_F_POSTS, limit);
	if (posts == NULL) {
		return WB_ENOMEM;
	}
	/* a category's posts: its index cells (author | category | ~id), then each post */
	uint8_t      row[8];
	hb_scan     *s = NULL;
	hb_cell      cell;
	hb_scan_opts opts;
	hb_scan_opts_id_row(&opts, row, uid);
	opts.min_version = minv;
	opts.max_version = maxv == UINT64_MAX ? 0 : maxv;
	opts.limit = limit + 1;
	if (cat != NULL) {
		opts.start_row = row;
		opts.start_row_len = 8;
		opts.start_qual = opts.qual_prefix = cat;
		opts.start_qual_len = opts.qual_prefix_len = catlen;
	}
	int rc = hb_scan_open(&s, c->t, cat != NULL ? CONTENT_FAM_PCAT : CONTENT_FAM_POST, &opts);
	size_t n = 0;
	bool   more = false;
	while (rc == WB_OK && (rc = hb_scan_next(s, &cell)) == WB_OK) {
		if (cat != NULL && cell.qual_len != catlen) {
			break; /* past the category: a longer one sharing its prefix */
		}
		if (n == limit) {
			more = true;
			break;
		}
		if (cat == NULL) {
			rc = content_post_fill(
			    &posts[n++], cell.version, uid, cell.value, cell.value_len);
		} else if ((rc = content_post_read(c, uid, cell.version, &posts[n])) == WB_OK) {
			n++;
		} else if (rc == WB_ENOPOST) {
			rc = WB_OK; /* deleted in the same batch as its index cell: not seen */
		}
	}
	hb_scan_close(s);
	if (rc == WB_EEND) {
		rc = WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	wb_shrink(rep, WB_F_POSTS, n);
	if (more && n > 0) {
		rc = wb_set_u64(rep, WB_F_NEXT, wb_u64(&posts[n - 1], WB_F_ID, 0));
	}
	return rc;
}

int
content_log(void *arg, const wb_obj *req, wb_obj *rep)
{
	content *c = arg;

	return evlog_serve(c->log, req, rep);
}

/*
 * content_authors: post.authors {after?, limit?, slots?} -> {uids,
 * next?}: the users above `after` with at least one post here,
 * ascending, only those in the slot range [lo, hi) when slots is given
 * (one seek per author in post: the rows are the authors).  The inbox
 * rebuild reads it to give each reader their own posts.
 */
int
content_authors(void *arg, const wb_obj *req, wb_obj *rep)
{
	content        *c = arg;
	uint64_t        limit, after = 0, *out, next;
	const uint64_t *slots = NULL;
	size_t          nslots = 0, n = 0;
	bool            has_after = wb_get_u64(req, WB_F_AFTER, &after), more = false;
	int             rc;

	if ((rc = wb_page_limit(req, CONTENT_AUTHORS_DEFAULT, CONTENT_AUTHORS_MAX, &limit, rep)) !=
	    WB_OK) {
		return rc;
	}
	if (wb_get_u64s(req, WB_F_SLOTS, &slots, &nslots) &&
	    (nslots != 2 || slots[0] >= slots[1] || slots[1] > WB_SLOTS)) {
		wb_reply_error(
		    rep, WB_EINVAL, "slots must be a range [lo, hi) within 0-%d", WB_SLOTS);
		return WB_EINVAL;
	}
	wb_reply_ok(rep);
	if ((out = wb_add_u64s(rep, WB_F_UIDS, limit)) == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	rc = has_after && after == UINT64_MAX ? WB_EEND : WB_OK;
	next = has_after ? after + 1 : 0;
	while (rc == WB_OK) {
		uint64_t uid = 0;

		if ((rc = hb_next_id_row(c->t, CONTENT_FAM_POST, next, &uid)) != WB_OK) {
			break;
		}
		unsigned slot = wb_slot(uid);
		if (slots == NULL || (slot >= slots[0] && slot < slots[1])) {
			if (n == limit) {
				more = true;
				break;
			}
			out[n++] = uid;
		}
		if (uid == UINT64_MAX) {
			break;
		}
		next = uid + 1;
	}
	if (rc != WB_OK && rc != WB_EEND) {
		RT_ERRORF("authors after %llu failed: %s %s", (unsigned long long)after,
		    wb_strerror(rc), hb_last_error());
		wb_reply_error(rep, rc, NULL);
		return rc;
	}
	wb_shrink(rep, WB_F_UIDS, n);
	return more ? wb_set_u64(rep, WB_F_NEXT, out[n - 1]) : WB_OK;
}
