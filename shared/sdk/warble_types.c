/*
 * warble_types.c - converting reply records into the SDK's structs, and
 * freeing them.  Every string is copied, so results outlive the reply.
 */
#include <stdlib.h>
#include <string.h>

#include "warble_int.h"

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
		warble_post_t *d = &p->posts[i];

		d->id = wb_u64(&posts[i], WB_F_ID, 0);
		d->author = wb_u64(&posts[i], WB_F_AUTHOR, 0);
		d->time = wb_u64(&posts[i], WB_F_TIME, 0);
		d->author_name = warble_types_str(&posts[i], WB_F_AUTHOR_NAME);
		d->text = warble_types_str(&posts[i], WB_F_TEXT);
		p->n = i + 1;
		if (d->author_name == NULL || d->text == NULL) {
			warble_posts_free(p);
			return WARBLE_ENOMEM;
		}
	}
	*out = p;
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
		free(p->posts[i].author_name);
		free(p->posts[i].text);
	}
	free(p->posts);
	free(p);
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
