/*
 * gw_media.c - images: upload and media, each one call to the content
 * service, which owns the bytes and decides their type and size.
 *
 *   upload  token -> uid -> media.put {uid, data}
 *   media   token? -> uid (0: anyone) -> media.get {media, uid}
 */
#include "gw_int.h"

/* gw_media_forward makes rep a success reply holding every field of r but ok. */
static int
gw_media_forward(const wb_obj *r, wb_obj *rep)
{
	int rc = wb_reply_ok(rep);

	if (rc == WB_OK) {
		rc = wb_copy(rep, r);
	}
	if (rc != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	return rc;
}

int
gw_op_upload(gw *g, const wb_obj *req, wb_obj *rep)
{
	const void *data = NULL;
	size_t      len = 0;
	uint64_t    uid;
	wb_obj     *q, *r;
	int         rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	(void)wb_get_bin(req, WB_F_DATA, &data, &len);
	if (len > gw_media_max(g)) {
		wb_reply_error(rep, WB_ETOOBIG,
		    "an image of %zu bytes exceeds the limit of %zu bytes", len, gw_media_max(g));
		return WB_ETOOBIG;
	}
	if ((q = wb_request(WB_OP_MEDIA_PUT)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	        wb_set_bin(q, WB_F_DATA, data, len) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_CONTENT, q, &r, rep)) != WB_OK) {
		return rc;
	}
	rc = gw_media_forward(r, rep);
	wb_msg_free(r);
	return rc;
}

int
gw_op_media(gw *g, const wb_obj *req, wb_obj *rep)
{
	const char *media = "";
	size_t      len = 0;
	uint64_t    uid;
	wb_obj     *q, *r;
	int         rc;

	if ((rc = gw_auth_optional(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	(void)wb_get_str(req, WB_F_MEDIA, &media, &len);
	if ((q = wb_request(WB_OP_MEDIA_GET)) != NULL &&
	    (wb_set_str(q, WB_F_MEDIA, media, len) != WB_OK ||
	        (uid != 0 && wb_set_u64(q, WB_F_UID, uid) != WB_OK))) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_CONTENT, q, &r, rep)) != WB_OK) {
		return rc;
	}
	rc = gw_media_forward(r, rep);
	wb_msg_free(r);
	return rc;
}
