/*
 * gw_media.c - images: upload and media, each one call to the content
 * shard of the owner (a media id names its owner), which keeps the bytes
 * and decides their type and size.
 *
 *   upload  token -> uid -> media.put {uid, data} (the bytes not copied)
 *   media   token? -> uid (0: anyone) -> media.get {media, uid, preview?}
 */
#include "gw_int.h"
#include "wb_id.h"

/* gw_media_call sends q (consumed) to the content shard of owner and makes rep its reply. */
static int
gw_media_call(gw *g, uint64_t owner, wb_obj *q, wb_obj *rep)
{
	wb_obj *r;
	int     rc = gw_call(WB_SVC_CONTENT, gw_shard(g, WB_SVC_CONTENT, owner), q, &r, rep);

	if (rc != WB_OK) {
		return rc;
	}
	if ((rc = wb_reply_ok(rep)) != WB_OK || (rc = wb_copy(rep, r)) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(r);
	return rc;
}

int
gw_op_upload(gw *g, const wb_obj *req, wb_obj *rep)
{
	const void *data = NULL;
	size_t      len = 0;
	uint64_t    uid;
	wb_obj     *q;
	int         rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	/* the bytes go on as they came (req outlives q), judged by the content service */
	(void)wb_get_bin(req, WB_F_DATA, &data, &len);
	if ((q = wb_request(WB_OP_MEDIA_PUT)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	        wb_set_bin_ref(q, WB_F_DATA, data, len) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	return gw_media_call(g, uid, q, rep);
}

int
gw_op_media(gw *g, const wb_obj *req, wb_obj *rep)
{
	const char *media = "";
	size_t      len = 0;
	uint64_t    uid, author = 0, id;
	bool        preview = false;
	wb_obj     *q;
	int         rc;

	if ((rc = gw_auth_optional(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	(void)wb_get_str(req, WB_F_MEDIA, &media, &len);
	(void)wb_get_bool(req, WB_F_PREVIEW, &preview);
	if (!wb_media_id_parse(media, len, &author, &id)) {
		wb_reply_error(rep, WB_ENOMEDIA, "no such media: not a media id");
		return WB_ENOMEDIA;
	}
	if ((q = wb_request(WB_OP_MEDIA_GET)) != NULL &&
	    (wb_set_str(q, WB_F_MEDIA, media, len) != WB_OK ||
	        (uid != 0 && wb_set_u64(q, WB_F_UID, uid) != WB_OK) ||
	        (preview && wb_set_bool(q, WB_F_PREVIEW, true) != WB_OK))) {
		wb_msg_free(q);
		q = NULL;
	}
	return gw_media_call(g, author, q, rep);
}
