/*
 * warble_types.c - converting reply records into the SDK's structs, and
 * freeing them.  Every string is copied, so results outlive the reply.
 * Also the compile-time checks that warble_post_t keeps its 0.1 layout
 * and warble_image_t and warble_media_t their 0.2 layouts.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "warble_int.h"

/*
 * warble_post_t as libwarble 0.1 laid it out: 0.2's fields took four of
 * its reserved slots, so programs built against the 0.1 header find
 * every field where they left it, and arrays keep their stride
 * (tests/data/abi/warble-0.1.h is that header; warble_test.c runs a
 * program built against it).
 */
typedef struct warble_post_0_1 {
	uint64_t  id;
	uint64_t  author;
	char     *author_name;
	char     *text;
	uint64_t  time;
	uintptr_t reserved_[WARBLE_RESERVED];
} warble_post_0_1;

_Static_assert(sizeof(warble_post_t) == sizeof(warble_post_0_1),
    "warble_post_t keeps its size (docs/sdk.md): take reserved slots, never add");
_Static_assert(offsetof(warble_post_t, id) == offsetof(warble_post_0_1, id) &&
                   offsetof(warble_post_t, author) == offsetof(warble_post_0_1, author) &&
                   offsetof(warble_post_t, author_name) == offsetof(warble_post_0_1, author_name) &&
                   offsetof(warble_post_t, text) == offsetof(warble_post_0_1, text) &&
                   offsetof(warble_post_t, time) == offsetof(warble_post_0_1, time),
    "warble_post_t's 0.1 fields stay where they were");
_Static_assert(offsetof(warble_post_t, title) == offsetof(warble_post_0_1, reserved_) &&
                   offsetof(warble_post_t, reserved_) ==
                       offsetof(warble_post_0_1, reserved_) + 4 * sizeof(uintptr_t),
    "0.2's four fields fill four reserved slots exactly");

/*
 * warble_image_t and warble_media_t as libwarble 0.2 laid them out: 0.3's
 * preview sizes took reserved slots, so their sizes (an array's stride)
 * and the 0.2 fields' places stay.
 */
typedef struct warble_image_0_2 {
	char     *media;
	char     *type;
	uint32_t  width, height;
	char     *alt;
	uintptr_t reserved_[WARBLE_RESERVED];
} warble_image_0_2;

typedef struct warble_media_0_2 {
	char     *media;
	char     *type;
	uint32_t  width, height;
	uint64_t  size;
	void     *data;
	bool      public_;
	uintptr_t reserved_[WARBLE_RESERVED];
} warble_media_0_2;

_Static_assert(sizeof(warble_image_t) == sizeof(warble_image_0_2) &&
                   offsetof(warble_image_t, alt) == offsetof(warble_image_0_2, alt) &&
                   offsetof(warble_image_t, preview_width) == offsetof(warble_image_0_2, reserved_),
    "warble_image_t keeps its size and its 0.2 fields' places");
_Static_assert(sizeof(warble_media_t) == sizeof(warble_media_0_2) &&
                   offsetof(warble_media_t, public_) == offsetof(warble_media_0_2, public_) &&
                   offsetof(warble_media_t, preview_size) == offsetof(warble_media_0_2, reserved_),
    "warble_media_t keeps its size and its 0.2 fields' places");

/* warble_types_str copies field f of o ("" if absent); NULL if out of memory. */
static char *
warble_types_str(const wb_obj *o, wb_field f)
{
	return strdup(wb_str(o, f, ""));
}

/* warble_types_user_clear frees a user's strings (not the struct). */
static void
warble_types_user_clear(warble_user_t *u)
{
	free(u->name);
	free(u->display);
	free(u->bio);
}

int
warble_user_from(warble_user_t *u, const wb_obj *o)
{
	memset(u, 0, sizeof(*u));
	u->uid = wb_u64(o, WB_F_UID, 0);
	u->created = wb_u64(o, WB_F_CREATED, 0);
	u->following = wb_u64(o, WB_F_FOLLOWING, 0);
	u->followers = wb_u64(o, WB_F_FOLLOWERS, 0);
	wb_get_bool(o, WB_F_FOLLOWED, &u->followed);
	u->name = warble_types_str(o, WB_F_NAME);
	u->display = warble_types_str(o, WB_F_DISPLAY);
	u->bio = warble_types_str(o, WB_F_BIO);
	if (u->name == NULL || u->display == NULL || u->bio == NULL) {
		warble_types_user_clear(u);
		memset(u, 0, sizeof(*u));
		return WARBLE_ENOMEM;
	}
	return WARBLE_OK;
}

/* warble_types_image_clear frees an image's strings (not the struct). */
static void
warble_types_image_clear(warble_image_t *im)
{
	free(im->media);
	free(im->type);
	free(im->alt);
}

/* warble_types_dim reads a dimension, clamped to 32 bits. */
static uint32_t
warble_types_dim(const wb_obj *o, wb_field f)
{
	uint64_t v = wb_u64(o, f, 0);

	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* warble_types_post fills d from a post record; WARBLE_ENOMEM on failure (d is then freed by warble_posts_free). */
static int
warble_types_post(warble_post_t *d, const wb_obj *o)
{
	const wb_obj *ims = NULL;
	size_t        n = 0;

	d->id = wb_u64(o, WB_F_ID, 0);
	d->author = wb_u64(o, WB_F_AUTHOR, 0);
	d->time = wb_u64(o, WB_F_TIME, 0);
	d->author_name = warble_types_str(o, WB_F_AUTHOR_NAME);
	d->text = warble_types_str(o, WB_F_TEXT);
	d->title = warble_types_str(o, WB_F_TITLE);
	d->category = warble_types_str(o, WB_F_CATEGORY);
	if (d->author_name == NULL || d->text == NULL || d->title == NULL || d->category == NULL) {
		return WARBLE_ENOMEM;
	}
	if (!wb_get_objs(o, WB_F_IMAGES, &ims, &n) || n == 0) {
		return WARBLE_OK;
	}
	if ((d->images = calloc(n, sizeof(*d->images))) == NULL) {
		return WARBLE_ENOMEM;
	}
	d->nimages = n;
	for (size_t i = 0; i < n; i++) {
		warble_image_t *im = &d->images[i];

		im->width = warble_types_dim(&ims[i], WB_F_WIDTH);
		im->height = warble_types_dim(&ims[i], WB_F_HEIGHT);
		im->preview_width = warble_types_dim(&ims[i], WB_F_PREVIEW_WIDTH);
		im->preview_height = warble_types_dim(&ims[i], WB_F_PREVIEW_HEIGHT);
		im->media = warble_types_str(&ims[i], WB_F_MEDIA);
		im->type = warble_types_str(&ims[i], WB_F_TYPE);
		im->alt = warble_types_str(&ims[i], WB_F_ALT);
		if (im->media == NULL || im->type == NULL || im->alt == NULL) {
			return WARBLE_ENOMEM;
		}
	}
	return WARBLE_OK;
}

/* warble_types_post_clear frees a post's strings and images (not the struct). */
static void
warble_types_post_clear(warble_post_t *d)
{
	free(d->author_name);
	free(d->text);
	free(d->title);
	free(d->category);
	for (size_t j = 0; j < d->nimages; j++) {
		warble_types_image_clear(&d->images[j]);
	}
	free(d->images);
}

int
warble_post_from(warble_post_t **out, const wb_obj *rep)
{
	warble_post_t *d;

	*out = NULL;
	if (wb_u64(rep, WB_F_ID, 0) == 0) {
		return WARBLE_EBADMSG;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		return WARBLE_ENOMEM;
	}
	if (warble_types_post(d, rep) != WARBLE_OK) {
		warble_post_free(d);
		return WARBLE_ENOMEM;
	}
	*out = d;
	return WARBLE_OK;
}

int
warble_posts_from(warble_posts_t **out, const wb_obj *rep)
{
	const wb_obj   *posts = NULL;
	size_t          n = 0;
	warble_posts_t *p;

	*out = NULL;
	wb_get_objs(rep, WB_F_POSTS, &posts, &n);
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (n > 0 && (p->posts = calloc(n, sizeof(*p->posts))) == NULL)) {
		free(p);
		return WARBLE_ENOMEM;
	}
	p->next = wb_u64(rep, WB_F_NEXT, 0);
	for (size_t i = 0; i < n; i++) {
		p->n = i + 1;
		if (warble_types_post(&p->posts[i], &posts[i]) != WARBLE_OK) {
			warble_posts_free(p);
			return WARBLE_ENOMEM;
		}
	}
	*out = p;
	return WARBLE_OK;
}

int
warble_media_from(warble_media_t **out, const wb_obj *rep, bool with_data)
{
	warble_media_t *m;
	const void     *data = NULL;
	size_t          len = 0;

	*out = NULL;
	if (with_data && !wb_get_bin(rep, WB_F_DATA, &data, &len)) {
		return WARBLE_EBADMSG;
	}
	if (!wb_has(rep, WB_F_MEDIA) ||
	    (with_data && wb_has(rep, WB_F_SIZE) && wb_u64(rep, WB_F_SIZE, 0) != len)) {
		return WARBLE_EBADMSG;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		return WARBLE_ENOMEM;
	}
	m->width = warble_types_dim(rep, WB_F_WIDTH);
	m->height = warble_types_dim(rep, WB_F_HEIGHT);
	m->size = with_data ? len : wb_u64(rep, WB_F_SIZE, 0);
	m->preview_width = warble_types_dim(rep, WB_F_PREVIEW_WIDTH);
	m->preview_height = warble_types_dim(rep, WB_F_PREVIEW_HEIGHT);
	m->preview_size = wb_u64(rep, WB_F_PREVIEW_SIZE, 0);
	wb_get_bool(rep, WB_F_PUBLIC, &m->public_);
	m->media = warble_types_str(rep, WB_F_MEDIA);
	m->type = warble_types_str(rep, WB_F_TYPE);
	if (with_data && (m->data = malloc(len + 1)) != NULL) {
		memcpy(m->data, data, len);
		((char *)m->data)[len] = '\0';
	}
	if (m->media == NULL || m->type == NULL || (with_data && m->data == NULL)) {
		warble_media_free(m);
		return WARBLE_ENOMEM;
	}
	*out = m;
	return WARBLE_OK;
}

int
warble_users_from(warble_users_t **out, const wb_obj *rep)
{
	const wb_obj   *users = NULL;
	size_t          n = 0;
	warble_users_t *u;

	*out = NULL;
	wb_get_objs(rep, WB_F_USERS, &users, &n);
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (n > 0 && (u->users = calloc(n, sizeof(*u->users))) == NULL)) {
		free(u);
		return WARBLE_ENOMEM;
	}
	u->next = wb_u64(rep, WB_F_NEXT, 0);
	for (size_t i = 0; i < n; i++) {
		if (warble_user_from(&u->users[i], &users[i]) != WARBLE_OK) {
			warble_users_free(u);
			return WARBLE_ENOMEM;
		}
		u->n = i + 1;
	}
	*out = u;
	return WARBLE_OK;
}

void
warble_user_free(warble_user_t *u)
{
	if (u == NULL) {
		return;
	}
	warble_types_user_clear(u);
	free(u);
}

void
warble_posts_free(warble_posts_t *p)
{
	if (p == NULL) {
		return;
	}
	for (size_t i = 0; i < p->n; i++) {
		warble_types_post_clear(&p->posts[i]);
	}
	free(p->posts);
	free(p);
}

void
warble_post_free(warble_post_t *p)
{
	if (p == NULL) {
		return;
	}
	warble_types_post_clear(p);
	free(p);
}

void
warble_media_free(warble_media_t *m)
{
	if (m == NULL) {
		return;
	}
	free(m->media);
	free(m->type);
	free(m->data);
	free(m);
}

void
warble_users_free(warble_users_t *u)
{
	if (u == NULL) {
		return;
	}
	for (size_t i = 0; i < u->n; i++) {
		warble_types_user_clear(&u->users[i]);
	}
	free(u->users);
	free(u);
}
