/*
 * warble_ops.c - one function per public operation of the gateway.  Each
 * builds the request, sends it through warble_call and converts the
 * reply; the wire fields are those of proto/wb_proto.h.
 */
#include <stdlib.h>
#include <string.h>

#include "warble_int.h"

/* warble_ops_req starts a request for op with a string field (if s is given); NULL if out of memory. */
static wb_obj *
warble_ops_req(wb_op op, wb_field f, const char *s)
{
	wb_obj *q = wb_request(op);

	if (q != NULL && s != NULL && wb_set_cstr(q, f, s) != WB_OK) {
		wb_msg_free(q);
		return NULL;
	}
	return q;
}

/* warble_ops_simple sends op with an optional string field and drops the reply. */
static int
warble_ops_simple(warble_client *c, wb_op op, wb_field f, const char *s, warble_auth auth)
{
	wb_obj *r;
	int     rc = warble_call(c, warble_ops_req(op, f, s), auth, &r);

	wb_msg_free(r);
	return rc;
}

/* warble_ops_bad rejects a missing argument before anything is sent. */
static int
warble_ops_bad(warble_client *c, const char *what)
{
	return warble_fail(c, WARBLE_EINVAL, what);
}

/* warble_ops_credentials sends op with a name and password; the reply goes to *rep. */
static int
warble_ops_credentials(
    warble_client *c, wb_op op, const char *name, const char *password, wb_obj **rep)
{
	wb_obj *q;

	*rep = NULL;
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (name == NULL || password == NULL) {
		return warble_ops_bad(c, "name and password are required");
	}
	q = warble_ops_req(op, WB_F_NAME, name);
	if (q != NULL && wb_set_cstr(q, WB_F_PASSWORD, password) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	return warble_call(c, q, WARBLE_AUTH_NONE, rep);
}

int
warble_register(warble_client *c, const char *name, const char *password, uint64_t *uid)
{
	wb_obj *r;
	int     rc = warble_ops_credentials(c, WB_OP_REGISTER, name, password, &r);

	if (rc == WARBLE_OK && uid != NULL) {
		*uid = wb_u64(r, WB_F_UID, 0);
	}
	wb_msg_free(r);
	return rc;
}

int
warble_login(warble_client *c, const char *name, const char *password, uint64_t *uid)
{
	wb_obj *r;
	int     rc;

	rc = warble_ops_credentials(c, WB_OP_LOGIN, name, password, &r);
	if (rc != WARBLE_OK) {
		return rc;
	}
	if (!wb_has(r, WB_F_TOKEN)) {
		wb_msg_free(r);
		return warble_fail(c, WARBLE_EBADMSG, "login reply carries no token");
	}
	rc = warble_set_token(c, wb_str(r, WB_F_TOKEN, ""));
	if (rc == WARBLE_OK && uid != NULL) {
		*uid = wb_u64(r, WB_F_UID, 0);
	}
	wb_msg_free(r);
	return rc;
}

int
warble_logout(warble_client *c)
{
	int rc;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	rc = warble_ops_simple(c, WB_OP_LOGOUT, WB_F_TOKEN, NULL, WARBLE_AUTH_REQUIRED);
	if (rc == WARBLE_OK || rc == WARBLE_EAUTH) {
		warble_set_token(c, NULL);
	}
	return rc;
}

int
warble_logout_all(warble_client *c)
{
	int rc;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	rc = warble_ops_simple(c, WB_OP_LOGOUT_ALL, WB_F_TOKEN, NULL, WARBLE_AUTH_REQUIRED);
	if (rc == WARBLE_OK || rc == WARBLE_EAUTH) {
		warble_set_token(c, NULL);
	}
	return rc;
}

int
warble_change_password(warble_client *c, const char *password, const char *new_password)
{
	wb_obj *q, *r;
	int     rc;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (password == NULL || new_password == NULL) {
		return warble_ops_bad(c, "the current and the new password are required");
	}
	q = warble_ops_req(WB_OP_CHANGE_PASSWORD, WB_F_PASSWORD, password);
	if (q != NULL && wb_set_cstr(q, WB_F_NEW_PASSWORD, new_password) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = warble_call(c, q, WARBLE_AUTH_REQUIRED, &r)) != WARBLE_OK) {
		return rc;
	}
	if (!wb_has(r, WB_F_TOKEN)) {
		wb_msg_free(r);
		return warble_fail(c, WARBLE_EBADMSG, "password change reply carries no token");
	}
	rc = warble_set_token(c, wb_str(r, WB_F_TOKEN, ""));
	wb_msg_free(r);
	return rc;
}

int
warble_delete_account(warble_client *c, const char *password)
{
	wb_obj *r;
	int     rc;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (password == NULL) {
		return warble_ops_bad(c, "the password is required");
	}
	rc = warble_call(c, warble_ops_req(WB_OP_DELETE_ACCOUNT, WB_F_PASSWORD, password),
	    WARBLE_AUTH_REQUIRED, &r);
	if (rc != WARBLE_OK) {
		return rc;
	}
	wb_msg_free(r);
	return warble_set_token(c, NULL); /* its sessions ended with it */
}

/* warble_ops_user runs a request whose reply is one user record. */
static int
warble_ops_user(warble_client *c, wb_obj *q, warble_auth auth, warble_user_t **out)
{
	warble_user_t *u;
	wb_obj        *r;
	int            rc;

	*out = NULL;
	if ((rc = warble_call(c, q, auth, &r)) != WARBLE_OK) {
		return rc;
	}
	if ((u = malloc(sizeof(*u))) == NULL || warble_user_from(u, r) != WARBLE_OK) {
		free(u);
		wb_msg_free(r);
		return warble_fail(c, WARBLE_ENOMEM, NULL);
	}
	wb_msg_free(r);
	*out = u;
	return WARBLE_OK;
}

int
warble_whoami(warble_client *c, warble_user_t **out)
{
	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	return warble_ops_user(c, wb_request(WB_OP_WHOAMI), WARBLE_AUTH_REQUIRED, out);
}

int
warble_profile(warble_client *c, const char *name, warble_user_t **out)
{
	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	return warble_ops_user(
	    c, warble_ops_req(WB_OP_PROFILE, WB_F_NAME, name), WARBLE_AUTH_OPTIONAL, out);
}

/* warble_ops_opt sets string field f of q when s is neither NULL nor ""; false if out of memory. */
static bool
warble_ops_opt(wb_obj *q, wb_field f, const char *s)
{
	return s == NULL || s[0] == '\0' || wb_set_cstr(q, f, s) == WB_OK;
}

/* warble_ops_publish is warble_post and warble_post_rich: the request carries only the fields given. */
static int
warble_ops_publish(warble_client *c, const char *text, const char *title, const char *category,
    const warble_attach_t *images, size_t nimages, uint64_t *id)
{
	wb_obj *q, *r, *ims;
	int     rc;

	if ((q = warble_ops_req(WB_OP_PUBLISH, WB_F_TEXT, text)) != NULL &&
	    (!warble_ops_opt(q, WB_F_TITLE, title) ||
	        !warble_ops_opt(q, WB_F_CATEGORY, category))) {
		wb_msg_free(q);
		q = NULL;
	}
	if (q != NULL && nimages > 0) {
		if ((ims = wb_add_objs(q, WB_F_IMAGES, nimages)) == NULL) {
			wb_msg_free(q);
			q = NULL;
		}
		for (size_t i = 0; q != NULL && i < nimages; i++) {
			if (wb_set_cstr(&ims[i], WB_F_MEDIA, images[i].media) != WB_OK ||
			    (images[i].alt != NULL &&
			        wb_set_cstr(&ims[i], WB_F_ALT, images[i].alt) != WB_OK)) {
				wb_msg_free(q);
				q = NULL;
			}
		}
	}
	if ((rc = warble_call(c, q, WARBLE_AUTH_REQUIRED, &r)) != WARBLE_OK) {
		return rc;
	}
	if (id != NULL) {
		*id = wb_u64(r, WB_F_ID, 0);
	}
	wb_msg_free(r);
	return WARBLE_OK;
}

int
warble_post(warble_client *c, const char *text, uint64_t *id)
{
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (text == NULL) {
		return warble_ops_bad(c, "text is required");
	}
	return warble_ops_publish(c, text, NULL, NULL, NULL, 0, id);
}

int
warble_post_rich(warble_client *c, const char *text, const char *title, const char *category,
    const warble_attach_t *images, size_t nimages, uint64_t *id)
{
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (nimages > 0 && images == NULL) {
		return warble_ops_bad(c, "images is NULL but nimages is not 0");
	}
	for (size_t i = 0; i < nimages; i++) {
		if (images[i].media == NULL) {
			return warble_ops_bad(c, "every image needs a media id");
		}
	}
	if (nimages == 0 && text == NULL) {
		return warble_ops_bad(c, "text is required when there are no images");
	}
	return warble_ops_publish(c, text, title, category, images, nimages, id);
}

int
warble_upload(warble_client *c, const void *data, size_t len, warble_media_t **out)
{
	wb_obj *q, *r;
	int     rc;

	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (data == NULL) {
		return warble_ops_bad(c, "data is required");
	}
	if (len > wb_limits_default.max_bin) {
		return warble_fail(c, WARBLE_ETOOBIG, "image larger than a request can carry");
	}
	/* the token's place comes before the image (warble_call fills it in): the
	 * gateway reads a large request's op and token before taking the rest */
	if ((q = wb_request(WB_OP_UPLOAD)) != NULL &&
	    (wb_set_str(q, WB_F_TOKEN, "", 0) != WB_OK ||
	        wb_set_bin(q, WB_F_DATA, data, len) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = warble_call(c, q, WARBLE_AUTH_REQUIRED, &r)) != WARBLE_OK) {
		return rc;
	}
	rc = warble_media_from(out, r, false);
	wb_msg_free(r);
	return rc == WARBLE_OK        ? rc
	       : rc == WARBLE_EBADMSG ? warble_fail(c, rc, "upload reply carries no media id")
	                              : warble_fail(c, rc, NULL);
}

/* warble_ops_media fetches an image (its preview if preview) into *out. */
static int
warble_ops_media(warble_client *c, const char *media, bool preview, warble_media_t **out)
{
	wb_obj *q, *r;
	int     rc;

	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (media == NULL) {
		return warble_ops_bad(c, "a media id is required");
	}
	q = warble_ops_req(WB_OP_MEDIA, WB_F_MEDIA, media);
	if (q != NULL && preview && wb_set_bool(q, WB_F_PREVIEW, true) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	rc = warble_call(c, q, WARBLE_AUTH_OPTIONAL, &r);
	if (rc != WARBLE_OK) {
		return rc;
	}
	rc = warble_media_from(out, r, true);
	wb_msg_free(r);
	return rc == WARBLE_OK ? rc
	       : rc == WARBLE_EBADMSG
	           ? warble_fail(c, rc, "media reply lacks its id or bytes, or its size is wrong")
	           : warble_fail(c, rc, NULL);
}

int
warble_media(warble_client *c, const char *media, warble_media_t **out)
{
	return warble_ops_media(c, media, false, out);
}

int
warble_media_preview(warble_client *c, const char *media, warble_media_t **out)
{
	return warble_ops_media(c, media, true, out);
}

int
warble_delete(warble_client *c, uint64_t id)
{
	wb_obj *q, *r;
	int     rc;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if ((q = wb_request(WB_OP_DELETE)) != NULL && wb_set_u64(q, WB_F_ID, id) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	rc = warble_call(c, q, WARBLE_AUTH_REQUIRED, &r);
	wb_msg_free(r);
	return rc;
}

int
warble_post_get(warble_client *c, uint64_t id, warble_post_t **out)
{
	wb_obj *q, *r;
	int     rc;

	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (id == 0) {
		return warble_ops_bad(c, "a post id is required");
	}
	if ((q = wb_request(WB_OP_POST)) != NULL && wb_set_u64(q, WB_F_ID, id) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = warble_call(c, q, WARBLE_AUTH_OPTIONAL, &r)) != WARBLE_OK) {
		return rc;
	}
	rc = warble_post_from(out, r);
	wb_msg_free(r);
	return rc == WARBLE_OK ? rc : warble_fail(c, rc, NULL);
}

/* warble_ops_page adds a cursor (if nonzero) and a limit (if nonzero) to q. */
static wb_obj *
warble_ops_page(wb_obj *q, wb_field cursor, uint64_t at, unsigned limit)
{
	if (q != NULL && ((at != 0 && wb_set_u64(q, cursor, at) != WB_OK) ||
	                     (limit != 0 && wb_set_u64(q, WB_F_LIMIT, limit) != WB_OK))) {
		wb_msg_free(q);
		return NULL;
	}
	return q;
}

/* warble_ops_posts runs a request whose reply is a page of posts. */
static int
warble_ops_posts(warble_client *c, wb_obj *q, warble_auth auth, warble_posts_t **out)
{
	wb_obj *r;
	int     rc;

	if ((rc = warble_call(c, q, auth, &r)) != WARBLE_OK) {
		return rc;
	}
	rc = warble_posts_from(out, r);
	wb_msg_free(r);
	return rc == WARBLE_OK ? rc : warble_fail(c, rc, NULL);
}

int
warble_home(warble_client *c, uint64_t before, unsigned limit, warble_posts_t **out)
{
	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	return warble_ops_posts(c,
	    warble_ops_page(wb_request(WB_OP_HOME), WB_F_BEFORE, before, limit),
	    WARBLE_AUTH_REQUIRED, out);
}

int
warble_timeline(
    warble_client *c, const char *name, uint64_t before, unsigned limit, warble_posts_t **out)
{
	return warble_timeline_category(c, name, NULL, before, limit, out);
}

int
warble_timeline_category(warble_client *c, const char *name, const char *category, uint64_t before,
    unsigned limit, warble_posts_t **out)
{
	wb_obj *q;

	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	if ((q = warble_ops_req(WB_OP_TIMELINE, WB_F_NAME, name)) != NULL &&
	    !warble_ops_opt(q, WB_F_CATEGORY, category)) {
		wb_msg_free(q);
		q = NULL;
	}
	return warble_ops_posts(
	    c, warble_ops_page(q, WB_F_BEFORE, before, limit), WARBLE_AUTH_OPTIONAL, out);
}

int
warble_follow(warble_client *c, const char *name)
{
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	return warble_ops_simple(c, WB_OP_FOLLOW, WB_F_NAME, name, WARBLE_AUTH_REQUIRED);
}

int
warble_unfollow(warble_client *c, const char *name)
{
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	return warble_ops_simple(c, WB_OP_UNFOLLOW, WB_F_NAME, name, WARBLE_AUTH_REQUIRED);
}

/* warble_ops_users runs following or fans. */
static int
warble_ops_users(warble_client *c, wb_op op, const char *name, uint64_t after, unsigned limit,
    warble_users_t **out)
{
	wb_obj *r;
	int     rc;

	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	rc = warble_call(c,
	    warble_ops_page(warble_ops_req(op, WB_F_NAME, name), WB_F_AFTER, after, limit),
	    WARBLE_AUTH_OPTIONAL, &r);
	if (rc != WARBLE_OK) {
		return rc;
	}
	rc = warble_users_from(out, r);
	wb_msg_free(r);
	return rc == WARBLE_OK ? rc : warble_fail(c, rc, NULL);
}

int
warble_following(
    warble_client *c, const char *name, uint64_t after, unsigned limit, warble_users_t **out)
{
	return warble_ops_users(c, WB_OP_FOLLOWING_LIST, name, after, limit, out);
}

int
warble_fans(
    warble_client *c, const char *name, uint64_t after, unsigned limit, warble_users_t **out)
{
	return warble_ops_users(c, WB_OP_FANS_LIST, name, after, limit, out);
}

int
warble_update_profile(warble_client *c, const char *display, const char *bio)
{
	wb_obj *q, *r;
	int     rc;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	q = warble_ops_req(WB_OP_UPDATE_PROFILE, WB_F_DISPLAY, display);
	if (q != NULL && bio != NULL && wb_set_cstr(q, WB_F_BIO, bio) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	rc = warble_call(c, q, WARBLE_AUTH_REQUIRED, &r);
	wb_msg_free(r);
	return rc;
}

int
warble_block(warble_client *c, const char *name)
{
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	return warble_ops_simple(c, WB_OP_BLOCK, WB_F_NAME, name, WARBLE_AUTH_REQUIRED);
}

int
warble_unblock(warble_client *c, const char *name)
{
	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (name == NULL) {
		return warble_ops_bad(c, "a username is required");
	}
	return warble_ops_simple(c, WB_OP_UNBLOCK, WB_F_NAME, name, WARBLE_AUTH_REQUIRED);
}

/* warble_ops_mine runs a request of the logged-in user's whose reply is a page of users. */
static int
warble_ops_mine(warble_client *c, wb_obj *q, warble_users_t **out)
{
	wb_obj *r;
	int     rc;

	if ((rc = warble_call(c, q, WARBLE_AUTH_REQUIRED, &r)) != WARBLE_OK) {
		return rc;
	}
	rc = warble_users_from(out, r);
	wb_msg_free(r);
	return rc == WARBLE_OK ? rc : warble_fail(c, rc, NULL);
}

int
warble_blocks(warble_client *c, uint64_t after, unsigned limit, warble_users_t **out)
{
	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	return warble_ops_mine(
	    c, warble_ops_page(wb_request(WB_OP_BLOCKS_LIST), WB_F_AFTER, after, limit), out);
}

int
warble_suggestions(warble_client *c, unsigned limit, warble_users_t **out)
{
	if (c == NULL || out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	return warble_ops_mine(
	    c, warble_ops_page(wb_request(WB_OP_SUGGESTIONS), WB_F_AFTER, 0, limit), out);
}
