/*
 * http_upload.c - the image upload slots: who may start receiving an
 * upload's body, and how many each user holds.
 *
 * An upload's body may be up to max_upload bytes, held in the
 * connection's buffer until it is whole, so only max_uploads are
 * received at once.  A slot is taken from the request head alone, but
 * only after its token has been checked: an anonymous client or a bad
 * token gets 401 at once (the body still on its way, so the connection
 * ends), and a user holds at most max_user_uploads slots, so that one
 * account cannot keep every slot either.
 *
 *   head of POST /api/v1/media
 *     -> Authorization: Bearer <token> -> gw_caller -> uid   (401: close)
 *     -> slots[] (max_uploads rows: uid, held)               (429 / 503: close)
 *     -> the connection's state holds the row until the request is
 *        served, refused or the connection goes (http_upload_give)
 */
#include <stdlib.h>

#include "http_int.h"

struct http_uploads {
	pthread_mutex_t mu;
	int             held;     /* slots taken, over every user */
	int             max;      /* max_uploads */
	int             per_user; /* max_user_uploads */
	struct {
		uint64_t uid;
		int      n; /* slots uid holds (0: a free row) */
	} rows[];
};

int
http_uploads_open(http_uploads **out, int max, int per_user)
{
	http_uploads *u = calloc(1, sizeof(*u) + (size_t)max * sizeof(u->rows[0]));

	*out = NULL;
	if (u == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_init(&u->mu, NULL);
	u->max = max;
	u->per_user = per_user;
	*out = u;
	return WB_OK;
}

void
http_uploads_close(http_uploads *u)
{
	if (u != NULL) {
		pthread_mutex_destroy(&u->mu);
		free(u);
	}
}

/*
 * http_uploads_take takes a slot for uid into *row: WB_OK, WB_ERATE (uid holds per_user) or
 * WB_EUNAVAIL (all taken).
 */
static int
http_uploads_take(http_uploads *u, uint64_t uid, int *row)
{
	int free_row = -1, mine = -1, rc = WB_OK;

	pthread_mutex_lock(&u->mu);
	for (int i = 0; i < u->max; i++) {
		if (u->rows[i].n > 0 && u->rows[i].uid == uid) {
			mine = i;
		} else if (u->rows[i].n == 0 && free_row < 0) {
			free_row = i;
		}
	}
	if (mine >= 0 && u->rows[mine].n >= u->per_user) {
		rc = WB_ERATE;
	} else if (u->held >= u->max) {
		rc = WB_EUNAVAIL;
	} else {
		/* fewer than max held: a user without a row finds a free one */
		*row = mine >= 0 ? mine : free_row;
		u->rows[*row].uid = uid;
		u->rows[*row].n++;
		u->held++;
	}
	pthread_mutex_unlock(&u->mu);
	return rc;
}

void
http_upload_give(http_uploads *u, uintptr_t state)
{
	int row = (int)(state >> HTTP_ST_ROW_SHIFT);

	if (!(state & HTTP_ST_UPLOAD) || row < 0 || row >= u->max) {
		return;
	}
	pthread_mutex_lock(&u->mu);
	if (u->rows[row].n > 0) {
		u->rows[row].n--;
		u->held--;
	}
	pthread_mutex_unlock(&u->mu);
}

bool
http_upload_begin(http_job *j, uintptr_t *st)
{
	http_server *h = j->h;
	const char  *msg = NULL;
	uint64_t     uid = 0;
	int          rc, row = 0;

	/* every refusal below comes before the body: the connection ends */
	j->close = true;
	wb_reset(j->q);
	wb_reset(j->rep);
	if (!http_token(j, WB_OP_UPLOAD)) {
		return false; /* answered 401 */
	}
	if ((rc = gw_caller(h->g, j->q, &uid, j->rep)) != WB_OK) {
		if (wb_reply_code(j->rep, &msg) == WB_OK || msg == NULL) {
			msg = wb_strerror(rc);
		}
		j->www_auth = rc == WB_EAUTH;
		http_fail(j, wb_err_http(rc), wb_err_name(rc), "%s", msg);
		return false;
	}
	switch (http_uploads_take(h->uploads, uid, &row)) {
	case WB_OK:
		break;
	case WB_ERATE:
		http_fail(j, 429, "RATE_LIMITED",
		    "you have %d image uploads in progress already: finish one first",
		    h->opts.max_user_uploads);
		return false;
	default:
		http_fail(j, 503, "UNAVAILABLE",
		    "%d image uploads are in progress already: try again shortly",
		    h->opts.max_uploads);
		return false;
	}
	*st |= HTTP_ST_UPLOAD | ((uintptr_t)row << HTTP_ST_ROW_SHIFT);
	j->close = false;
	return true;
}
