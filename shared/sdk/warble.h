/*
 * warble.h - libwarble, the C client of Warble's public API.
 *
 *   warble_client *c;
 *   warble_posts_t *home;
 *   if (warble_open(&c, "tcp://127.0.0.1:7100", 5000) != WARBLE_OK) ...
 *   if (warble_login(c, "alice", "correct horse", NULL) != WARBLE_OK)
 *       fprintf(stderr, "%s\n", warble_errmsg(c));
 *   warble_post(c, "hello, world", NULL);
 *   if (warble_home(c, 0, 20, &home) == WARBLE_OK) {
 *       for (size_t i = 0; i < home->n; i++)
 *           printf("@%s: %s\n", home->posts[i].author_name, home->posts[i].text);
 *       warble_posts_free(home);
 *   }
 *   warble_close(c);
 *
 * The client speaks msgpack over the SP request/reply protocol (nng's
 * REQ/REP wire format) to warble-gateway.  It is thread-safe: many
 * threads may call through one client at once (each call has its own
 * connection and deadline).  Every function returns
 * WARBLE_OK (0) or one of the WARBLE_* codes below, which are Warble's
 * wire error codes (wb_errors.h): the server's code when it refused, or
 * WARBLE_EUNAVAIL / WARBLE_ETIMEDOUT when the gateway cannot be reached
 * in time.  Results are returned through an output pointer and released
 * with the matching *_free function.
 */
#ifndef WARBLE_H
#define WARBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The error codes, as WARBLE_OK, WARBLE_EINVAL, ... (same values as WB_*). */
enum warble_err {
#define WARBLE_ERR_ENUM(e, name, msg, http) WARBLE_##e = WB_##e,
	WB_ERRORS(WARBLE_ERR_ENUM)
#undef WARBLE_ERR_ENUM
};

typedef struct warble_client warble_client;

/*
 * The records below, but warble_attach_t, are allocated and freed by the
 * library; a program only reads them.  They keep their size across
 * releases of soname libwarble.so.0: a new field takes the place of
 * reserved slots at the end (zero until then), so a program built
 * against an older header still finds every field it knows, in arrays
 * too.  When the room is used up the soname changes (docs/sdk.md).
 */
#define WARBLE_RESERVED 8

/*
 * An image of a post.  media is its id, "<author uid>-<id>"
 * ("7-7321123456789012"): warble_media fetches its bytes, and over HTTP it
 * is served at /media/<media>.  Its preview (a WebP of at most 640 px a
 * side, what a timeline shows) comes from warble_media_preview, and over
 * HTTP from /media/<media>/preview; preview_width and preview_height came
 * in 0.3 (one reserved slot on 64-bit, two on 32-bit): 0 when the image
 * has no preview yet (stored before previews, until the re-encode pass)
 * or the library predates them.
 */
typedef struct warble_image_t {
	char     *media;
	char     *type;          /* MIME type: image/png, image/jpeg, image/gif, image/webp */
	uint32_t  width, height; /* pixels (a frame's, for an animation) */
	char     *alt;           /* description ("" if none) */
	uint32_t  preview_width, preview_height; /* its preview's pixels (0: none yet) */
	uintptr_t reserved_[WARBLE_RESERVED - 8 / sizeof(uintptr_t)]; /* room to grow: zero */
} warble_image_t;

/*
 * A post, hydrated: ids are time-ordered (newer is larger), time is ms
 * since the Unix epoch.  title, category, images and nimages came in 0.2
 * (they took four reserved slots): a 0.1 library leaves them NULL and 0.
 */
typedef struct warble_post_t {
	uint64_t        id;
	uint64_t        author;      /* author's uid */
	char           *author_name; /* author's username */
	char           *text;        /* UTF-8 ("" for a post of images only) */
	uint64_t        time;
	char           *title;    /* at most 100 characters ("" if none) */
	char           *category; /* [a-z0-9_]{1,32} ("" if none) */
	warble_image_t *images;   /* nimages images, in order (NULL if none) */
	size_t          nimages;
	uintptr_t       reserved_[WARBLE_RESERVED - 4]; /* room to grow: zero */
} warble_post_t;

/*
 * A user; counts, followed, blocking and blocked_by are filled by
 * warble_profile and warble_whoami only, followed_by by
 * warble_suggestions.  blocking and blocked_by came in 0.5, in the
 * padding after followed, and followed_by in one reserved slot on 64-bit
 * (two on 32-bit): a library before 0.5 leaves them false and 0.
 */
typedef struct warble_user_t {
	uint64_t  uid;
	char     *name;    /* username */
	char     *display; /* display name ("" if unset) */
	char     *bio;     /* profile text ("" if unset) */
	uint64_t  created; /* ms since the Unix epoch */
	uint64_t  following;
	uint64_t  followers;
	bool      followed;    /* the logged-in caller follows this user */
	bool      blocking;    /* the logged-in caller blocks this user (since 0.5) */
	bool      blocked_by;  /* this user blocks the logged-in caller (since 0.5) */
	uint64_t  followed_by; /* suggestions: how many of the caller's follows follow it (0.5) */
	uintptr_t reserved_[WARBLE_RESERVED - 8 / sizeof(uintptr_t)]; /* room to grow: zero */
} warble_user_t;

/* A page of posts, newest first; next is the cursor of the following page (0: none). */
typedef struct warble_posts_t {
	warble_post_t *posts;
	size_t         n;
	uint64_t       next;
} warble_posts_t;

/* A page of users; next is the cursor of the following page (0: none). */
typedef struct warble_users_t {
	warble_user_t *users;
	size_t         n;
	uint64_t       next;
} warble_users_t;

/*
 * An image to attach to a post (warble_post_rich): an upload of the
 * logged-in user's (warble_upload) not yet on a post, and its
 * description (NULL: none).  A program fills it, in arrays, so it never
 * grows: a new field would come with a new function.
 */
typedef struct warble_attach_t {
	const char *media;
	const char *alt;
} warble_attach_t;

/*
 * An uploaded image (warble_upload, warble_media, warble_media_preview).
 * data holds size bytes (a NUL follows them, not counted) and is NULL from
 * warble_upload.  public_ is true once the image is on a post (anyone may
 * read it); an upload not yet on a post is served to its uploader only,
 * and expires.  The bytes are what the server wrote from the decoded
 * upload (no metadata, turned upright), never the upload's own.  From
 * warble_upload, preview_* give its preview's size (since 0.3, in reserved
 * slots: two on 64-bit, four on 32-bit); they are 0 from the others.
 */
typedef struct warble_media_t {
	char     *media;         /* its id, "<author uid>-<id>" */
	char     *type;          /* MIME type: image/png, image/jpeg, image/gif, image/webp */
	uint32_t  width, height; /* pixels */
	uint64_t  size;          /* bytes */
	void     *data;          /* the bytes (NULL from warble_upload) */
	bool      public_;       /* on a post: anyone may read it */
	uint64_t  preview_size;  /* warble_upload: its preview's bytes */
	uint32_t  preview_width, preview_height; /* warble_upload: its preview's pixels */
	uintptr_t reserved_[WARBLE_RESERVED - 16 / sizeof(uintptr_t)]; /* room to grow: zero */
} warble_media_t;

/* warble_open creates a client of the gateway at gateway_url (tcp:// or ipc://), each call bounded by timeout_ms (<= 0: 5000). */
int warble_open(warble_client **out, const char *gateway_url, int timeout_ms);

/* warble_close closes the client and frees it; NULL is ignored. */
void warble_close(warble_client *c);

/* warble_strerror returns the human message of an error code. */
const char *warble_strerror(int code);

/* warble_errname returns the wire name of an error code ("NAME_TAKEN"). */
const char *warble_errname(int code);

/* warble_errmsg returns the message of the most recent failed call on c (the server's own words when it refused); "" if none. */
const char *warble_errmsg(warble_client *c);

/* warble_retry_ms returns, after a call refused with WARBLE_ERATE, how many ms to wait before a retry can pass (0 after any other outcome). */
uint64_t warble_retry_ms(warble_client *c);

/* warble_set_token sets the session token later calls send (NULL clears it). */
int warble_set_token(warble_client *c, const char *token);

/* warble_token returns the current session token or NULL; valid until the token next changes. */
const char *warble_token(warble_client *c);

/* warble_register creates an account; *uid (if uid is not NULL) receives its user id. */
int warble_register(warble_client *c, const char *name, const char *password, uint64_t *uid);

/* warble_login opens a session and keeps its token in c for later calls (see warble_token); *uid gets the user id. */
int warble_login(warble_client *c, const char *name, const char *password, uint64_t *uid);

/* warble_logout ends the session of the current token and forgets the token. */
int warble_logout(warble_client *c);

/* warble_logout_all ends every session of the logged-in user, on every device, and forgets the token. */
int warble_logout_all(warble_client *c);

/* warble_change_password sets a new password (the current one must match); every other session ends, and c keeps the new session's token. */
int warble_change_password(warble_client *c, const char *password, const char *new_password);

/*
 * warble_delete_account deletes the logged-in user's account for good
 * (the password must match: WARBLE_ELOGIN if not, WARBLE_ERATE after
 * repeated failures, as warble_login) and forgets the token.  The account
 * closes at once: every session ends, the name no longer logs in, the
 * profile and posts are no longer served; its posts, follows, images and
 * home are then erased in the background (docs/http-api.md), and the
 * name is held for a while before anyone may register it.  Since 0.5.
 */
int warble_delete_account(warble_client *c, const char *password);

/* warble_whoami returns the logged-in user's profile. */
int warble_whoami(warble_client *c, warble_user_t **out);

/* warble_post publishes text (UTF-8, at most 280 characters) as the logged-in user; *id gets the post id. */
int warble_post(warble_client *c, const char *text, uint64_t *id);

/*
 * warble_post_rich publishes a post with a title, a category and images
 * as the logged-in user; *id (if id is not NULL) gets the post id.  text
 * is at most 280 characters, and may be NULL or "" when there are images;
 * title (at most 100 characters) and category ([a-z0-9_]{1,32}) are left
 * out when NULL or "".  images are 0 to 4 of the user's own uploads
 * (warble_upload), each on one post only, with descriptions of at most
 * 1000 characters.  A refused post attaches nothing.  Since 0.2.
 */
int warble_post_rich(warble_client *c, const char *text, const char *title, const char *category,
    const warble_attach_t *images, size_t nimages, uint64_t *id);

/*
 * warble_upload stores len bytes of a PNG, JPEG, GIF or WebP image for
 * the logged-in user, to attach to a post (warble_post_rich): the server
 * decodes it whole and writes it again with no metadata, and makes its
 * preview.  *out gets its id, type, dimensions and size, and its
 * preview's (data NULL), freed with warble_media_free.
 * WARBLE_EMEDIATYPE if the bytes are not one whole image of those types
 * (cut short, damaged, or followed by other data), WARBLE_ETOOBIG over
 * the byte or pixel limit, WARBLE_EUNAVAIL when the server's decoders
 * are all busy (try again).  Since 0.2.
 */
int warble_upload(warble_client *c, const void *data, size_t len, warble_media_t **out);

/*
 * warble_media fetches an image and its bytes: any image on a post, or
 * the logged-in user's own upload not yet on one; WARBLE_ENOMEDIA
 * otherwise.  Free *out with warble_media_free.  Since 0.2.
 */
int warble_media(warble_client *c, const char *media, warble_media_t **out);

/*
 * warble_media_preview fetches an image's preview and its bytes: a WebP
 * of at most 640 px a side (the first frame of an animation), what a
 * timeline shows; visible as warble_media is.  WARBLE_ENOMEDIA if there
 * is none (no such image, or one stored before previews that the
 * re-encode pass has not reached).  Free *out with warble_media_free.
 * Since 0.3.
 */
int warble_media_preview(warble_client *c, const char *media, warble_media_t **out);

/* warble_media_free frees a result of warble_upload, warble_media or warble_media_preview; NULL is
 * ignored.  Since 0.2. */
void warble_media_free(warble_media_t *m);

/* warble_delete deletes one of the logged-in user's posts. */
int warble_delete(warble_client *c, uint64_t id);

/*
 * warble_post_get reads one post by its id, hydrated as timelines show it
 * (author_name, title, category, images with their previews' sizes), the
 * post's own page; no login needed.  WARBLE_ENOPOST if there is no such
 * post (never published, or deleted).  Free *out with warble_post_free.
 * Since 0.4.
 */
int warble_post_get(warble_client *c, uint64_t id, warble_post_t **out);

/* warble_post_free frees a post returned by warble_post_get; NULL is ignored.  Since 0.4. */
void warble_post_free(warble_post_t *p);

/* warble_home reads the logged-in user's home timeline, newest first: posts below before (0: newest), up to limit (0: default; at most 100). */
int warble_home(warble_client *c, uint64_t before, unsigned limit, warble_posts_t **out);

/* warble_timeline reads the posts of user name, newest first, paged like warble_home. */
int warble_timeline(
    warble_client *c, const char *name, uint64_t before, unsigned limit, warble_posts_t **out);

/* warble_timeline_category reads user name's posts of one category, newest first, paged like warble_home (category NULL or "": every post).  Since 0.2. */
int warble_timeline_category(warble_client *c, const char *name, const char *category,
    uint64_t before, unsigned limit, warble_posts_t **out);

/* warble_follow makes the logged-in user follow name. */
int warble_follow(warble_client *c, const char *name);

/* warble_unfollow makes the logged-in user stop following name. */
int warble_unfollow(warble_client *c, const char *name);

/* warble_following lists the users name follows, from the cursor after (0: start), up to limit (0: default; at most 100). */
int warble_following(
    warble_client *c, const char *name, uint64_t after, unsigned limit, warble_users_t **out);

/* warble_fans lists the users following name, paged like warble_following. */
int warble_fans(
    warble_client *c, const char *name, uint64_t after, unsigned limit, warble_users_t **out);

/* warble_profile returns user name's profile with counts (and followed, when logged in). */
int warble_profile(warble_client *c, const char *name, warble_user_t **out);

/* warble_update_profile sets the logged-in user's display name and bio (NULL leaves one unchanged). */
int warble_update_profile(warble_client *c, const char *display, const char *bio);

/*
 * warble_block makes the logged-in user block name, as on Mastodon: the
 * follows between them end both ways, neither can follow the other
 * while it stands (WARBLE_EBLOCKED), and neither sees the other's posts
 * in their home or the other's timeline, nor a post of theirs on its
 * own (WARBLE_ENOPOST).  Blocking again changes nothing.  Since 0.5.
 */
int warble_block(warble_client *c, const char *name);

/* warble_unblock lifts the logged-in user's block of name (follows are not restored); idempotent.
 * Since 0.5. */
int warble_unblock(warble_client *c, const char *name);

/* warble_blocks lists whom the logged-in user blocks, paged like warble_following.  Since 0.5. */
int warble_blocks(warble_client *c, uint64_t after, unsigned limit, warble_users_t **out);

/*
 * warble_suggestions lists up to limit (0: 20; at most 20) accounts the
 * logged-in user may want to follow: those the people they follow follow,
 * most followed by them first (followed_by says by how many), then the
 * most followed accounts; never one they follow, one with a block either
 * way, or themselves.  Since 0.5.
 */
int warble_suggestions(warble_client *c, unsigned limit, warble_users_t **out);

/* warble_user_free frees a user returned by warble_whoami or warble_profile; NULL is ignored. */
void warble_user_free(warble_user_t *u);

/* warble_posts_free frees a page of posts; NULL is ignored. */
void warble_posts_free(warble_posts_t *p);

/* warble_users_free frees a page of users; NULL is ignored. */
void warble_users_free(warble_users_t *u);

#ifdef __cplusplus
}
#endif

#endif
