/*
 * lg_warble_media.c - Warble's side of the media phase: the gateway's
 * public msgpack ops (upload, publish with images, media), each thread
 * on an rt_client of its own, as a client of the SDK would be.
 */
#include <stdlib.h>
#include <string.h>

#include "lg_warble.h"
#include "rt_client.h"

struct lg_conn {
	lg_warble *w;
	rt_client *gw;
};

/* lg_wm_call sends req (freed here) to the gateway; *rep gets a success reply (if rep != NULL). */
static int
lg_wm_call(lg_conn *c, wb_obj *req, wb_obj **rep)
{
	wb_obj     *r = NULL;
	const char *msg = NULL;
	int         rc = req == NULL ? WB_ENOMEM : rt_call(c->gw, req, &r);

	if (rc != WB_OK) {
		(void)(r ? wb_reply_code(r, &msg) : 0);
		fprintf(stderr, "warble-load: %s: %s %s\n", req ? wb_op_name(wb_op_of(req)) : "?",
		    wb_strerror(rc), msg ? msg : "");
	}
	wb_msg_free(req);
	if (rep != NULL && rc == WB_OK) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

static lg_conn *
lg_wm_open(void *ctx)
{
	rt_client_opts o = { .timeout_ms = 60000, .plain = true };
	lg_conn       *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		return NULL;
	}
	c->w = ctx;
	if (rt_client_open(&c->gw, lg_warble_gateway(c->w), &o) != WB_OK) {
		free(c);
		return NULL;
	}
	return c;
}

static void
lg_wm_close(lg_conn *c)
{
	if (c != NULL) {
		rt_client_close(c->gw);
		free(c);
	}
}

static int
lg_wm_put(
    lg_conn *c, uint32_t u, const void *p, size_t n, char *ref, size_t *stored, size_t *preview)
{
	wb_obj     *req = wb_request(WB_OP_UPLOAD), *rep = NULL;
	const char *m;
	size_t      mn = 0;

	if (req != NULL && (wb_set_cstr(req, WB_F_TOKEN, c->w->token[u]) != WB_OK ||
	                       wb_set_bin(req, WB_F_DATA, p, n) != WB_OK)) {
		wb_msg_free(req);
		req = NULL;
	}
	if (lg_wm_call(c, req, &rep) != WB_OK) {
		return -1;
	}
	/* the content service stores the image written again: its own size */
	int ok = wb_get_str(rep, WB_F_MEDIA, &m, &mn) && mn < LG_MEDIA_REF_MAX &&
	         wb_u64(rep, WB_F_SIZE, 0) > 0 && wb_u64(rep, WB_F_PREVIEW_SIZE, 0) > 0;
	if (ok) {
		memcpy(ref, m, mn + 1);
		*stored = (size_t)wb_u64(rep, WB_F_SIZE, 0);
		*preview = (size_t)wb_u64(rep, WB_F_PREVIEW_SIZE, 0);
	}
	wb_msg_free(rep);
	return ok ? 0 : -1;
}

static int
lg_wm_publish(lg_conn *c, uint32_t u, char (*refs)[LG_MEDIA_REF_MAX], size_t n)
{
	wb_obj *req = wb_request(WB_OP_PUBLISH), *im;
	int     rc = req == NULL ? WB_ENOMEM : wb_set_cstr(req, WB_F_TOKEN, c->w->token[u]);

	if (rc == WB_OK) {
		rc = wb_set_cstr(req, WB_F_TEXT, "pictures");
	}
	if (rc == WB_OK && (im = wb_add_objs(req, WB_F_IMAGES, n)) == NULL) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		rc = wb_set_cstr(&im[i], WB_F_MEDIA, refs[i]);
	}
	if (rc != WB_OK) {
		wb_msg_free(req);
		return -1;
	}
	return lg_wm_call(c, req, NULL) == WB_OK ? 0 : -1;
}

/* lg_wm_get reads an image: the size its upload gave, a PNG as the upload was. */
static int
lg_wm_get(lg_conn *c, const char *ref, const void *p, size_t n, size_t stored)
{
	wb_obj     *req = wb_request(WB_OP_MEDIA), *rep = NULL;
	const void *d = NULL;
	size_t      dn = 0;

	if (req != NULL && wb_set_cstr(req, WB_F_MEDIA, ref) != WB_OK) {
		wb_msg_free(req);
		req = NULL;
	}
	if (lg_wm_call(c, req, &rep) != WB_OK) {
		return -1;
	}
	int ok = wb_get_bin(rep, WB_F_DATA, &d, &dn) && dn == stored && dn >= 8 && n >= 8 &&
	         memcmp(d, p, 8) == 0;
	wb_msg_free(rep);
	return ok ? 0 : -1;
}

void
lg_warble_media_backend(lg_warble *w, lg_media_backend *b)
{
	memset(b, 0, sizeof(*b));
	b->name = "warble";
	b->ctx = w;
	b->conn_open = lg_wm_open;
	b->conn_close = lg_wm_close;
	b->put = lg_wm_put;
	b->publish = lg_wm_publish;
	b->get = lg_wm_get;
}
