/*
 * warblectl - Warble from the command line, on libwarble.
 *
 *   warblectl register alice          (password: --password, $WARBLE_PASSWORD or prompt)
 *   warblectl login alice             (saves the session token)
 *   warblectl post "hello"            warblectl home --limit 10
 *   warblectl --json profile bob      (one JSON object per command)
 *   warblectl post --title "Tea" --category drinks --image cup.png --alt "a cup" "brewed"
 *   warblectl upload cup.png          warblectl media 7-7321123456789012 -o cup.png
 *   warblectl media 7-7321123456789012 --preview -o small.webp
 *   warblectl block bob               warblectl blocks       warblectl suggestions
 *   warblectl delete-account          (the logged-in user's, for good; asks for the password)
 *
 * The session token lives in $XDG_CONFIG_HOME/warble/token (or
 * ~/.config/warble/token), mode 0600; $WARBLE_TOKEN overrides it.
 * Exit status: 0 success, 1 the request failed, 2 usage error.
 *
 * The admin commands talk to each service's own port (the internal
 * network: WARBLE_USER_URL, ... or --user-url, ...), never to the
 * gateway, which does not route them:
 *
 *   warblectl admin backup DIR          a consistent backup and its manifest
 *   warblectl admin restore DIR DATA    a backup's stores into a fresh data folder
 *   warblectl admin rebuild-inbox       every inbox again from relation and content
 *   warblectl admin rotate-session-key  a new key signs sessions (--revoke: end the old ones)
 *   warblectl admin reencode-media      every stored image decoded and written again,
 *                                       with a preview (content_reencode.c)
 *   warblectl admin delete-user NAME    an account deleted, with no password (user.delete_name)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <nng/nng.h>

#include "rt_client.h"
#include "rt_shards.h"
#include "rt_tls.h"
#include "warble.h"
#include "wb_clock.h"
#include "wb_id.h"
#include "wb_proto.h"
#include "wb_services.h"

#define CTL_EXIT_FAIL  1
#define CTL_EXIT_USAGE 2
#define CTL_PASS_MAX   1024

/* Options, as bits: which were given, and which each command takes. */
enum {
	CTL_O_PASSWORD = 1 << 0,
	CTL_O_BEFORE = 1 << 1,
	CTL_O_LIMIT = 1 << 2,
	CTL_O_AFTER = 1 << 3,
	CTL_O_DISPLAY = 1 << 4,
	CTL_O_BIO = 1 << 5,
	CTL_O_DEPTH = 1 << 6,
	CTL_O_INBOX_LAST = 1 << 7,
	CTL_O_NO_WAIT = 1 << 8,
	CTL_O_URLS = 1 << 9, /* --user-url and the like */
	CTL_O_TIMEOUT = 1 << 10,
	CTL_O_TITLE = 1 << 11,
	CTL_O_CATEGORY = 1 << 12,
	CTL_O_IMAGE = 1 << 13, /* --image, and --alt after it */
	CTL_O_OUTPUT = 1 << 14,
	CTL_O_REVOKE = 1 << 15,
	CTL_O_PREVIEW = 1 << 16, /* media: the preview */
	CTL_O_SHARD = 1 << 17,   /* admin: one shard of each sharded service */
};

#define CTL_IMAGES_MAX 4 /* images on a post: publish takes 1-4 */
#define CTL_STR_(v)    #v
#define CTL_STR(v)     CTL_STR_(v)

/* An --image of post: its file, its --alt, and its bytes once read. */
typedef struct ctl_image {
	const char *path;
	const char *alt; /* NULL: none */
	void       *data;
	size_t      len;
} ctl_image;

typedef struct ctl {
	warble_client *c;
	int            json;
	unsigned       given; /* CTL_O_* */
	const char    *password;
	const char    *display;
	const char    *bio;
	uint64_t       before, after;
	unsigned       limit;
	char         **args;
	int            nargs;
	const char    *local_msg; /* why a request was refused before sending */
	const char    *title, *category;
	ctl_image      images[CTL_IMAGES_MAX];
	int            nimages;
	const char    *output; /* media -o FILE */
	/* admin */
	const char *url[WB_SVC_COUNT];  /* each service's own port (one shard) */
	const char *urls[WB_SVC_COUNT]; /* ... or its shards' ports, in order */
	rt_shards  *svc[WB_SVC_COUNT];  /* their clients, opened on first use */
	int         shard;              /* --shard i: only shard i of a sharded service (-1: all) */
	uint64_t    depth;              /* rebuild-inbox: posts per follow (0: the inbox's) */
	int         timeout_ms;
} ctl;

typedef int (*ctl_fn)(ctl *x);

typedef struct ctl_cmd {
	const char *name;
	int         nargs;
	unsigned    opts; /* CTL_O_* it accepts */
	ctl_fn      fn;
	int         auth; /* the saved token: 0 unused, 1 sent if any, 2 required */
	const char *usage;
} ctl_cmd;

static const char *ctl_prog = "warblectl";

static void ctl_usage_print(FILE *f);

/* ctl_usage_error reports a usage error and returns the usage exit status. */
static int
ctl_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", ctl_prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", ctl_prog);
	return CTL_EXIT_USAGE;
}

/* ctl_parse_u64 parses a decimal number in [min, max], strictly (no sign, no junk). */
static int
ctl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9') {
		return -1;
	}
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max) {
		return -1;
	}
	*out = v;
	return 0;
}

/* --- the token file ---------------------------------------------------- */

/* ctl_token_path writes the token file's path (and its folder's) into buf; -1 without a home. */
static int
ctl_token_path(char *buf, size_t len, char *dir, size_t dlen)
{
	const char *base = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	int         n;

	if (base != NULL && base[0] == '/') {
		n = snprintf(dir, dlen, "%s/warble", base);
	} else if (home != NULL && home[0] != '\0') {
		n = snprintf(dir, dlen, "%s/.config/warble", home);
	} else {
		return -1;
	}
	if (n < 0 || (size_t)n >= dlen) {
		return -1;
	}
	n = snprintf(buf, len, "%s/token", dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ctl_token_load reads the token from $WARBLE_TOKEN or the token file into tok ("" if none). */
static void
ctl_token_load(char *tok, size_t len)
{
	char  path[4096], dir[4096];
	FILE *f;

	const char *env = getenv("WARBLE_TOKEN");
	tok[0] = '\0';
	if (env != NULL && env[0] != '\0') {
		snprintf(tok, len, "%s", env);
		return;
	}
	if (ctl_token_path(path, sizeof(path), dir, sizeof(dir)) != 0 ||
	    (f = fopen(path, "r")) == NULL) {
		return;
	}
	if (fgets(tok, (int)len, f) != NULL) {
		tok[strcspn(tok, "\r\n")] = '\0';
	} else {
		tok[0] = '\0';
	}
	fclose(f);
}

/* ctl_mkdirs creates dir and its missing parents, mode 0700. */
static int
ctl_mkdirs(char *dir)
{
	for (char *p = dir + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
				return -1;
			}
			*p = '/';
		}
	}
	return mkdir(dir, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* ctl_token_save writes the token file (mode 0600) atomically. */
static int
ctl_token_save(const char *tok)
{
	char path[4096], dir[4096], tmp[4200];
	int  fd, ok;

	if (ctl_token_path(path, sizeof(path), dir, sizeof(dir)) != 0) {
		fprintf(
		    stderr, "%s: cannot save the token: no HOME or XDG_CONFIG_HOME\n", ctl_prog);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	if (ctl_mkdirs(dir) != 0 ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		fprintf(stderr, "%s: cannot save the token in %s: %s\n", ctl_prog, path,
		    strerror(errno));
		return -1;
	}
	size_t n = strlen(tok);
	ok = fchmod(fd, 0600) == 0 && write(fd, tok, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		fprintf(stderr, "%s: cannot save the token in %s: %s\n", ctl_prog, path,
		    strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* ctl_token_remove deletes the token file, if there is one. */
static void
ctl_token_remove(void)
{
	char path[4096], dir[4096];

	if (ctl_token_path(path, sizeof(path), dir, sizeof(dir)) == 0) {
		unlink(path);
	}
}

/* --- output -------------------------------------------------------------- */

/* ctl_fail_msg reports a failure with its message: on stderr, and as a JSON object with --json. */
static int
ctl_fail_msg(ctl *x, int rc, const char *msg)
{
	if (x->json) {
		json_t *o =
		    json_pack("{s:b, s:s, s:s}", "ok", 0, "err", warble_errname(rc), "msg", msg);
		if (o != NULL) {
			json_dumpf(o, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			json_decref(o);
		}
	}
	fprintf(stderr, "%s: %s: %s\n", ctl_prog, warble_errname(rc), msg);
	return CTL_EXIT_FAIL;
}

/* ctl_fail_local reports a failure on this side (a file that cannot be read or written): no wire code on stderr, INVALID in JSON. */
static int
ctl_fail_local(ctl *x, const char *msg)
{
	if (x->json) {
		json_t *o = json_pack(
		    "{s:b, s:s, s:s}", "ok", 0, "err", warble_errname(WARBLE_EINVAL), "msg", msg);
		if (o != NULL) {
			json_dumpf(o, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			json_decref(o);
		}
	}
	fprintf(stderr, "%s: %s\n", ctl_prog, msg);
	return CTL_EXIT_FAIL;
}

/* ctl_fail reports a failed request: on stderr, and as a JSON object with --json. */
static int
ctl_fail(ctl *x, int rc)
{
	const char *msg = x->c != NULL ? warble_errmsg(x->c) : x->local_msg;

	if (msg == NULL || msg[0] == '\0') {
		msg = warble_strerror(rc);
	}
	return ctl_fail_msg(x, rc, msg);
}

/* ctl_fail_about reports a failed request about what (a file): its message, then what. */
static int
ctl_fail_about(ctl *x, int rc, const char *what)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s: %s", what, warble_errmsg(x->c));
	return ctl_fail_msg(x, rc, msg);
}

/* ctl_emit prints a JSON reply object (taking the reference) with ok: true added. */
static int
ctl_emit(json_t *o)
{
	if (o == NULL) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		return CTL_EXIT_FAIL;
	}
	json_object_set_new(o, "ok", json_true());
	json_dumpf(o, stdout, JSON_COMPACT | JSON_SORT_KEYS);
	fputc('\n', stdout);
	json_decref(o);
	return 0;
}

/* ctl_id formats a post id as JSON: a string, since ids exceed 2^53. */
static json_t *
ctl_id(uint64_t id)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, id);
	return json_string(buf);
}

/* ctl_time formats ms since the epoch as UTC. */
static const char *
ctl_time(uint64_t ms, char *buf, size_t len)
{
	time_t    t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%d %H:%M:%SZ", &tm) == 0) {
		snprintf(buf, len, "%" PRIu64, ms);
	}
	return buf;
}

static json_t *
ctl_user_json(const warble_user_t *u, int full)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:I}", "uid", (json_int_t)u->uid, "name",
	    u->name, "display", u->display, "bio", u->bio, "created", (json_int_t)u->created);

	if (o != NULL && full) {
		json_object_set_new(o, "following", json_integer((json_int_t)u->following));
		json_object_set_new(o, "followers", json_integer((json_int_t)u->followers));
		json_object_set_new(o, "followed", json_boolean(u->followed));
		json_object_set_new(o, "blocking", json_boolean(u->blocking));
		json_object_set_new(o, "blocked_by", json_boolean(u->blocked_by));
	}
	if (o != NULL && u->followed_by != 0) {
		json_object_set_new(o, "followed_by", json_integer((json_int_t)u->followed_by));
	}
	return o;
}

static void
ctl_user_print(const warble_user_t *u)
{
	char t[64];

	printf("@%s", u->name);
	if (u->display[0] != '\0') {
		printf(" (%s)", u->display);
	}
	printf("\n");
	if (u->bio[0] != '\0') {
		printf("%s\n", u->bio);
	}
	printf("following %" PRIu64 ", followers %" PRIu64 "%s%s%s\n", u->following, u->followers,
	    u->followed ? ", you follow" : "", u->blocking ? ", you block" : "",
	    u->blocked_by ? ", blocks you" : "");
	printf("uid %" PRIu64 ", joined %s\n", u->uid, ctl_time(u->created, t, sizeof(t)));
}

/* ctl_post_json is a post as JSON, as the HTTP API has it: title, category and images only when set. */
static json_t *
ctl_post_json(const warble_post_t *q)
{
	json_t *o = json_pack("{s:o, s:I, s:s, s:s, s:I}", "id", ctl_id(q->id), "author",
	    (json_int_t)q->author, "author_name", q->author_name, "text", q->text, "time",
	    (json_int_t)q->time);

	if (o == NULL) {
		return NULL;
	}
	if (q->title != NULL && q->title[0] != '\0') {
		json_object_set_new(o, "title", json_string(q->title));
	}
	if (q->category != NULL && q->category[0] != '\0') {
		json_object_set_new(o, "category", json_string(q->category));
	}
	if (q->nimages > 0) {
		json_t *ims = json_array();
		for (size_t i = 0; ims != NULL && i < q->nimages; i++) {
			const warble_image_t *im = &q->images[i];
			json_t               *j =
			    json_pack("{s:s, s:s, s:I, s:I}", "media", im->media, "type", im->type,
			        "width", (json_int_t)im->width, "height", (json_int_t)im->height);
			if (j != NULL && im->alt[0] != '\0') {
				json_object_set_new(j, "alt", json_string(im->alt));
			}
			if (j != NULL && im->preview_width > 0) {
				json_object_set_new(j, "preview_width",
				    json_integer((json_int_t)im->preview_width));
				json_object_set_new(j, "preview_height",
				    json_integer((json_int_t)im->preview_height));
			}
			json_array_append_new(ims, j);
		}
		json_object_set_new(o, "images", ims);
	}
	return o;
}

/* ctl_post_print prints a post: its head, "[category] title", its text and one line per image. */
static void
ctl_post_print(const warble_post_t *q, bool first)
{
	char t[64];
	bool title = q->title != NULL && q->title[0] != '\0';
	bool cat = q->category != NULL && q->category[0] != '\0';

	printf("%s@%s  %s  #%" PRIu64 "\n", first ? "" : "\n", q->author_name,
	    ctl_time(q->time, t, sizeof(t)), q->id);
	if (cat || title) {
		printf("  %s%s%s%s%s\n", cat ? "[" : "", cat ? q->category : "", cat ? "]" : "",
		    cat && title ? " " : "", title ? q->title : "");
	}
	if (q->text[0] != '\0' || q->nimages == 0) {
		printf("  %s\n", q->text);
	}
	for (size_t i = 0; i < q->nimages; i++) {
		const warble_image_t *im = &q->images[i];
		printf("  image %s %s %" PRIu32 "x%" PRIu32, im->media, im->type, im->width,
		    im->height);
		if (im->alt[0] != '\0') {
			printf(" \"%s\"", im->alt);
		}
		printf("\n");
	}
}

static int
ctl_posts_out(ctl *x, warble_posts_t *p)
{
	if (x->json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr != NULL && i < p->n; i++) {
			json_array_append_new(arr, ctl_post_json(&p->posts[i]));
		}
		json_t *o = json_pack("{s:o}", "posts", arr);
		if (o != NULL && p->next != 0) {
			json_object_set_new(o, "next", ctl_id(p->next));
		}
		warble_posts_free(p);
		return ctl_emit(o);
	}
	for (size_t i = 0; i < p->n; i++) {
		ctl_post_print(&p->posts[i], i == 0);
	}
	if (p->n == 0) {
		printf("(no posts)\n");
	}
	if (p->next != 0) {
		printf("\nmore: --before %" PRIu64 "\n", p->next);
	}
	warble_posts_free(p);
	return 0;
}

static int
ctl_users_out(ctl *x, warble_users_t *u)
{
	if (x->json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr != NULL && i < u->n; i++) {
			json_array_append_new(arr, ctl_user_json(&u->users[i], 0));
		}
		json_t *o = json_pack("{s:o}", "users", arr);
		if (o != NULL && u->next != 0) {
			json_object_set_new(o, "next", json_integer((json_int_t)u->next));
		}
		warble_users_free(u);
		return ctl_emit(o);
	}
	for (size_t i = 0; i < u->n; i++) {
		printf("@%s", u->users[i].name);
		if (u->users[i].display[0] != '\0') {
			printf(" (%s)", u->users[i].display);
		}
		if (u->users[i].followed_by != 0) {
			printf(": followed by %" PRIu64 " you follow", u->users[i].followed_by);
		}
		printf("\n");
	}
	if (u->n == 0) {
		printf("(nobody)\n");
	}
	if (u->next != 0) {
		printf("\nmore: --after %" PRIu64 "\n", u->next);
	}
	warble_users_free(u);
	return 0;
}

/* --- passwords ------------------------------------------------------------ */

/* ctl_password finds the password: --password, $WARBLE_PASSWORD, or a no-echo prompt on the terminal. */
static int
ctl_password(ctl *x, char *buf, size_t len, const char **out)
{
	struct termios old, quiet;
	FILE          *tty;
	const char    *env = getenv("WARBLE_PASSWORD");
	int            ok;

	if (x->password != NULL) {
		*out = x->password;
		return 0;
	}
	if (env != NULL) {
		*out = env;
		return 0;
	}
	if (!isatty(STDIN_FILENO) || (tty = fopen("/dev/tty", "r+")) == NULL) {
		return ctl_usage_error("%s", "a password is required: --password, "
		                             "WARBLE_PASSWORD or a terminal");
	}
	fprintf(tty, "password: ");
	fflush(tty);
	ok = tcgetattr(fileno(tty), &old) == 0;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	if (ok) {
		tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
	}
	char *got = fgets(buf, (int)len, tty);
	if (ok) {
		tcsetattr(fileno(tty), TCSAFLUSH, &old);
	}
	fprintf(tty, "\n");
	fclose(tty);
	if (got == NULL) {
		return ctl_usage_error("%s", "no password given");
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	*out = buf;
	return 0;
}

/* --- commands ------------------------------------------------------------- */

static int
ctl_cmd_register(ctl *x)
{
	const char *pw = x->password;
	uint64_t    uid;
	int         rc;

	rc = warble_register(x->c, x->args[0], pw, &uid);
	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		return ctl_emit(
		    json_pack("{s:I, s:s}", "uid", (json_int_t)uid, "name", x->args[0]));
	}
	printf("registered @%s (uid %" PRIu64 ")\n", x->args[0], uid);
	return 0;
}

static int
ctl_cmd_login(ctl *x)
{
	const char *pw = x->password;
	uint64_t    uid;
	int         rc;

	rc = warble_login(x->c, x->args[0], pw, &uid);
	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (ctl_token_save(warble_token(x->c)) != 0) {
		return CTL_EXIT_FAIL;
	}
	if (x->json) {
		return ctl_emit(
		    json_pack("{s:I, s:s}", "uid", (json_int_t)uid, "name", x->args[0]));
	}
	printf("logged in as @%s\n", x->args[0]);
	return 0;
}

static int
ctl_cmd_logout(ctl *x)
{
	int rc = warble_logout(x->c);

	if (rc == WARBLE_OK || rc == WARBLE_EAUTH) {
		ctl_token_remove();
	}
	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		return ctl_emit(json_object());
	}
	printf("logged out\n");
	return 0;
}

/* ctl_profile_out prints a whole user (whoami, profile, update-profile). */
static int
ctl_profile_out(ctl *x, warble_user_t *u)
{
	int rc = 0;

	if (x->json) {
		rc = ctl_emit(ctl_user_json(u, 1));
	} else {
		ctl_user_print(u);
	}
	warble_user_free(u);
	return rc;
}

static int
ctl_cmd_whoami(ctl *x)
{
	warble_user_t *u;
	int            rc = warble_whoami(x->c, &u);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_profile_out(x, u);
}

static int
ctl_cmd_profile(ctl *x)
{
	warble_user_t *u;
	int            rc = warble_profile(x->c, x->args[0], &u);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_profile_out(x, u);
}

static int
ctl_cmd_update_profile(ctl *x)
{
	warble_user_t *u;
	int            rc;

	if ((x->given & (CTL_O_DISPLAY | CTL_O_BIO)) == 0) {
		return ctl_usage_error("%s", "update-profile needs --display and/or --bio");
	}
	if ((rc = warble_update_profile(x->c, x->display, x->bio)) != WARBLE_OK ||
	    (rc = warble_whoami(x->c, &u)) != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	return ctl_profile_out(x, u);
}

/* ctl_media_line prints an image's id, type, dimensions and size (and its preview's) on a line. */
static void
ctl_media_line(const char *what, const warble_media_t *m)
{
	printf("%s %s %s %" PRIu32 "x%" PRIu32 " (%" PRIu64 " bytes)", what, m->media, m->type,
	    m->width, m->height, m->size);
	if (m->preview_size > 0) {
		printf(", preview %" PRIu32 "x%" PRIu32 " (%" PRIu64 " bytes)", m->preview_width,
		    m->preview_height, m->preview_size);
	}
	printf("\n");
}

/* ctl_media_json is an image's record as JSON (file: where its bytes went, or NULL). */
static json_t *
ctl_media_json(const warble_media_t *m, bool with_public, const char *file)
{
	json_t *o =
	    json_pack("{s:s, s:s, s:I, s:I, s:I}", "media", m->media, "type", m->type, "width",
	        (json_int_t)m->width, "height", (json_int_t)m->height, "size", (json_int_t)m->size);

	if (o != NULL && with_public) {
		json_object_set_new(o, "public", json_boolean(m->public_));
	}
	if (o != NULL && m->preview_size > 0) {
		json_object_set_new(o, "preview_width", json_integer((json_int_t)m->preview_width));
		json_object_set_new(
		    o, "preview_height", json_integer((json_int_t)m->preview_height));
		json_object_set_new(o, "preview_size", json_integer((json_int_t)m->preview_size));
	}
	if (o != NULL && file != NULL) {
		json_object_set_new(o, "file", json_string(file));
	}
	return o;
}

/*
 * ctl_cmd_post uploads each --image, then publishes.  A failed upload or
 * a refused post leaves the uploads made so far unattached: the server
 * lets them expire.
 */
static int
ctl_cmd_post(ctl *x)
{
	warble_attach_t att[CTL_IMAGES_MAX];
	warble_media_t *up[CTL_IMAGES_MAX] = { NULL };
	const char     *text = x->nargs > 0 ? x->args[0] : NULL;
	uint64_t        id;
	int             rc = WARBLE_OK, out;

	for (int i = 0; i < x->nimages && rc == WARBLE_OK; i++) {
		if ((rc = warble_upload(x->c, x->images[i].data, x->images[i].len, &up[i])) !=
		    WARBLE_OK) {
			out = ctl_fail_about(x, rc, x->images[i].path);
			goto done;
		}
		att[i] = (warble_attach_t) { .media = up[i]->media, .alt = x->images[i].alt };
	}
	if ((rc = warble_post_rich(
	         x->c, text, x->title, x->category, att, (size_t)x->nimages, &id)) != WARBLE_OK) {
		out = ctl_fail(x, rc);
		goto done;
	}
	if (x->json) {
		json_t *o = json_pack("{s:o}", "id", ctl_id(id));
		if (o != NULL && x->nimages > 0) {
			json_t *ims = json_array();
			for (int i = 0; ims != NULL && i < x->nimages; i++) {
				json_array_append_new(ims, json_string(up[i]->media));
			}
			json_object_set_new(o, "images", ims);
		}
		out = ctl_emit(o);
		goto done;
	}
	printf("posted #%" PRIu64 "\n", id);
	for (int i = 0; i < x->nimages; i++) {
		ctl_media_line("  image", up[i]);
	}
	out = 0;
done:
	for (int i = 0; i < x->nimages; i++) {
		warble_media_free(up[i]);
	}
	return out;
}

static int
ctl_cmd_upload(ctl *x)
{
	warble_media_t *m;
	int             rc = warble_upload(x->c, x->images[0].data, x->images[0].len, &m);

	if (rc != WARBLE_OK) {
		return ctl_fail_about(x, rc, x->images[0].path);
	}
	if (x->json) {
		rc = ctl_emit(ctl_media_json(m, false, NULL));
	} else {
		ctl_media_line("media", m);
	}
	warble_media_free(m);
	return rc;
}

/* ctl_write_all writes len bytes to fd; 0, or -1 with errno. */
static int
ctl_write_all(int fd, const void *p, size_t len)
{
	const char *b = p;

	while (len > 0) {
		ssize_t w = write(fd, b, len);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return -1;
		}
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

/* ctl_cmd_media fetches an image (or its --preview) and writes its bytes to -o FILE or to stdout;
 * the file is only made once the bytes are here. */
static int
ctl_cmd_media(ctl *x)
{
	warble_media_t *m;
	char            msg[4200];
	int rc = (x->given & CTL_O_PREVIEW) != 0 ? warble_media_preview(x->c, x->args[0], &m)
	                                         : warble_media(x->c, x->args[0], &m),
	    fd = STDOUT_FILENO;
	bool ok;

	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->output != NULL &&
	    (fd = open(x->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		snprintf(msg, sizeof(msg), "cannot write %s: %s", x->output, strerror(errno));
		warble_media_free(m);
		return ctl_fail_local(x, msg);
	}
	fflush(stdout);
	ok = ctl_write_all(fd, m->data, m->size) == 0;
	if (fd != STDOUT_FILENO) {
		struct stat sb;
		bool        regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
		int         e = errno;
		ok = close(fd) == 0 && ok;
		if (!ok && regular) {
			unlink(x->output); /* no half image left behind */
		}
		errno = ok ? errno : e;
	}
	if (!ok) {
		snprintf(msg, sizeof(msg), "cannot write %s: %s",
		    x->output != NULL ? x->output : "stdout", strerror(errno));
		warble_media_free(m);
		return ctl_fail_local(x, msg);
	}
	rc = 0;
	if (x->json) {
		rc = ctl_emit(ctl_media_json(m, true, x->output));
	} else if (x->output != NULL) {
		printf("wrote %" PRIu64 " bytes to %s (%s %" PRIu32 "x%" PRIu32 "%s)\n", m->size,
		    x->output, m->type, m->width, m->height,
		    m->public_ ? "" : ", not yet on a post");
	}
	warble_media_free(m);
	return rc;
}

static int
ctl_cmd_delete(ctl *x)
{
	uint64_t id;
	int      rc;

	if (ctl_parse_u64(x->args[0], 1, UINT64_MAX, &id) != 0) {
		return ctl_usage_error("bad post id: '%s'", x->args[0]);
	}
	if ((rc = warble_delete(x->c, id)) != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		return ctl_emit(json_pack("{s:o}", "id", ctl_id(id)));
	}
	printf("deleted #%" PRIu64 "\n", id);
	return 0;
}

/* ctl_cmd_delete_account deletes the logged-in user's account (the password asked like login's). */
static int
ctl_cmd_delete_account(ctl *x)
{
	int rc = warble_delete_account(x->c, x->password);

	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	ctl_token_remove();
	if (x->json) {
		return ctl_emit(json_pack("{s:b}", "deleted", 1));
	}
	printf("account deleted: its posts, follows and images are being erased\n");
	return 0;
}

static int
ctl_cmd_show(ctl *x)
{
	warble_post_t *p;
	uint64_t       id;
	int            rc;

	if (ctl_parse_u64(x->args[0], 1, UINT64_MAX, &id) != 0) {
		return ctl_usage_error("bad post id: '%s'", x->args[0]);
	}
	if ((rc = warble_post_get(x->c, id, &p)) != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		json_t *o = ctl_post_json(p);
		warble_post_free(p);
		return ctl_emit(o);
	}
	ctl_post_print(p, true);
	warble_post_free(p);
	return 0;
}

static int
ctl_cmd_home(ctl *x)
{
	warble_posts_t *p;
	int             rc = warble_home(x->c, x->before, x->limit, &p);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_posts_out(x, p);
}

static int
ctl_cmd_timeline(ctl *x)
{
	warble_posts_t *p;
	int rc = warble_timeline_category(x->c, x->args[0], x->category, x->before, x->limit, &p);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_posts_out(x, p);
}

/* ctl_related reports a follow, unfollow, block or unblock of args[0]: now, or why it failed. */
static int
ctl_related(ctl *x, int rc, const char *now)
{
	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		return ctl_emit(json_pack("{s:s}", "name", x->args[0]));
	}
	printf("%s @%s\n", now, x->args[0]);
	return 0;
}

static int
ctl_cmd_follow(ctl *x)
{
	return ctl_related(x, warble_follow(x->c, x->args[0]), "following");
}

static int
ctl_cmd_unfollow(ctl *x)
{
	return ctl_related(x, warble_unfollow(x->c, x->args[0]), "no longer following");
}

static int
ctl_cmd_following(ctl *x)
{
	warble_users_t *u;
	int             rc = warble_following(x->c, x->args[0], x->after, x->limit, &u);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_users_out(x, u);
}

static int
ctl_cmd_fans(ctl *x)
{
	warble_users_t *u;
	int             rc = warble_fans(x->c, x->args[0], x->after, x->limit, &u);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_users_out(x, u);
}

static int
ctl_cmd_block(ctl *x)
{
	return ctl_related(x, warble_block(x->c, x->args[0]), "blocking");
}

static int
ctl_cmd_unblock(ctl *x)
{
	return ctl_related(x, warble_unblock(x->c, x->args[0]), "no longer blocking");
}

static int
ctl_cmd_blocks(ctl *x)
{
	warble_users_t *u;
	int             rc = warble_blocks(x->c, x->after, x->limit, &u);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_users_out(x, u);
}

static int
ctl_cmd_suggestions(ctl *x)
{
	warble_users_t *u;
	int             rc = warble_suggestions(x->c, x->limit, &u);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_users_out(x, u);
}

/* --- admin: backup, restore, rebuild-inbox (each shard's own port) ------ */

#define CTL_ADMIN_TIMEOUT_MS 600000 /* a checkpoint flushes the memtables first */
#define CTL_MANIFEST         "manifest.json"

/* The stateful services in the order a backup takes them: the inboxes before their sources. */
static const wb_service ctl_backup_order[] = { WB_SVC_INBOX, WB_SVC_CONTENT, WB_SVC_RELATION,
	WB_SVC_USER };

#define CTL_NSTORES (sizeof(ctl_backup_order) / sizeof(ctl_backup_order[0]))

/* ctl_admin_shards gives svc's shards (opened on first use): their count, 0 with msg if it cannot. */
static unsigned
ctl_admin_shards(ctl *x, wb_service svc, char *msg, size_t len)
{
	rt_client_opts o = { .timeout_ms = x->timeout_ms };

	if (x->svc[svc] == NULL &&
	    rt_shards_open(&x->svc[svc], x->urls[svc], x->url[svc], &o) != WB_OK) {
		snprintf(msg, len, "bad %s addresses: %s", wb_services[svc].name,
		    x->urls[svc] != NULL && x->urls[svc][0] != '\0' ? x->urls[svc] : x->url[svc]);
		return 0;
	}
	return rt_shards_count(x->svc[svc]);
}

/* ctl_admin_picked tells whether shard s of n is one the command acts on (--shard: that one). */
static bool
ctl_admin_picked(const ctl *x, unsigned s, unsigned n)
{
	return x->shard < 0 || n == 1 || (unsigned)x->shard == s;
}

/* ctl_admin_call sends req (freed here) to shard s of svc; *rep is the reply on WB_OK, and on error msg says why. */
static int
ctl_admin_call(ctl *x, wb_service svc, unsigned s, wb_obj *req, wb_obj **rep, char *msg, size_t len)
{
	const char *why = NULL;
	int         rc = req == NULL ? WB_ENOMEM : WB_OK;

	*rep = NULL;
	if (rc == WB_OK) {
		rc = rt_call(rt_shards_at(x->svc[svc], s), req, rep);
	}
	if (rc != WB_OK) {
		if (*rep != NULL) {
			(void)wb_reply_code(*rep, &why);
		}
		snprintf(msg, len, "%s: %s", rt_shards_url(x->svc[svc], s),
		    why != NULL ? why : wb_strerror(rc));
		wb_msg_free(*rep);
		*rep = NULL;
	}
	wb_msg_free(req);
	return rc;
}

/* ctl_admin_fail reports an admin failure (JSON too with --json) and returns the failure status. */
static int
ctl_admin_fail(ctl *x, int rc, const char *msg)
{
	if (x->json) {
		json_t *o =
		    json_pack("{s:b, s:s, s:s}", "ok", 0, "err", wb_err_name(rc), "msg", msg);
		if (o != NULL) {
			json_dumpf(o, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			json_decref(o);
		}
	}
	fprintf(stderr, "%s: %s: %s\n", ctl_prog, wb_err_name(rc), msg);
	return CTL_EXIT_FAIL;
}

/* ctl_logs_json turns a reply's LOGS into {source: seq} (field SEQ, or LAST for a source's own log). */
static json_t *
ctl_logs_json(const wb_obj *rep, wb_field f)
{
	const wb_obj *logs = NULL;
	size_t        n = 0;
	json_t       *o = json_object();

	(void)wb_get_objs(rep, WB_F_LOGS, &logs, &n);
	for (size_t i = 0; o != NULL && i < n; i++) {
		const char *src = wb_str(&logs[i], WB_F_SOURCE, NULL);
		uint64_t    v;
		if (src != NULL && wb_get_u64(&logs[i], f, &v)) {
			json_object_set_new(o, src, json_integer((json_int_t)v));
		}
	}
	return o;
}

/* ctl_json_u64 reads a non-negative integer member of o (false if absent or not one). */
static bool
ctl_json_u64(const json_t *o, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0) {
		return false;
	}
	*v = (uint64_t)json_integer_value(j);
	return true;
}

/* ctl_manifest_last finds the last seq of log source (as "content/1") among the manifest's copies. */
static bool
ctl_manifest_last(json_t *m, const char *source, uint64_t *last)
{
	json_t *e;
	size_t  i;

	json_array_foreach(json_object_get(m, "services"), i, e)
	{
		if (ctl_json_u64(json_object_get(e, "log_last"), source, last)) {
			return true;
		}
	}
	return false;
}

/*
 * ctl_manifest_check tells whether the copies of a manifest are safe to
 * restore together: each of the four services is there, and for each
 * inbox shard and each log it applies, its applied seq (an upper bound of
 * its copy's) does not pass that log's last seq (a lower bound of the
 * log's copy).  Else, after a restore, the inbox would skip the events
 * that take those seqs again.  why says what was found.
 */
static bool
ctl_manifest_check(json_t *m, char *why, size_t len)
{
	json_t *e;
	size_t  i, off = 0, checked = 0;
	bool    ok = true, seen[WB_SVC_COUNT] = { false };

	why[0] = '\0';
	json_array_foreach(json_object_get(m, "services"), i, e)
	{
		const char *name = json_string_value(json_object_get(e, "service"));
		for (int k = 0; name != NULL && k < WB_SVC_COUNT; k++) {
			seen[k] |= strcmp(name, wb_services[k].name) == 0;
		}
	}
	for (int k = 0; k < WB_SVC_COUNT; k++) {
		if (!seen[k]) {
			snprintf(why, len, "no %s copy in the manifest", wb_services[k].name);
			return false;
		}
	}
	json_array_foreach(json_object_get(m, "services"), i, e)
	{
		json_t     *applied = json_object_get(e, "applied"), *v;
		const char *src;

		json_object_foreach(applied, src, v)
		{
			uint64_t a = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0, last;
			if (!ctl_manifest_last(m, src, &last)) {
				snprintf(why, len, "no copy of the %s log the inbox applies", src);
				return false;
			}
			bool fine = a <= last;
			int  n = snprintf(why + off, len - off,
			     "%sinbox/%d applied %s %" PRIu64 " %s %" PRIu64, off > 0 ? "; " : "",
			     (int)json_integer_value(json_object_get(e, "shard")), src, a,
                            fine ? "<=" : ">", last);
			if (n > 0 && (size_t)n < len - off) {
				off += (size_t)n;
			}
			ok = ok && fine;
			checked++;
		}
	}
	if (checked == 0) {
		snprintf(why, len, "the manifest lacks the inbox's log positions");
		return false;
	}
	return ok;
}

/* ctl_mkdir_p creates dir and its missing parents, mode 0755. */
static int
ctl_mkdir_p(const char *dir)
{
	char p[4096];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *q = p + 1; *q != '\0'; q++) {
		if (*q == '/') {
			*q = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				return -1;
			}
			*q = '/';
		}
	}
	return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* ctl_manifest_write writes m to DIR/manifest.json (through a temporary file). */
static int
ctl_manifest_write(const char *dir, json_t *m)
{
	char path[4200], tmp[4300];

	snprintf(path, sizeof(path), "%s/%s", dir, CTL_MANIFEST);
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	if (json_dump_file(m, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 ||
	    rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * ctl_cmd_admin_backup copies every shard of every service into DIR, the
 * inboxes first and their sources after (a source copied later holds at
 * least every event its inboxes' copies applied), each into DIR/<service>
 * (one shard) or DIR/<service>.<i>, and writes the manifest, which says
 * which is which.  A backup takes every shard: an inbox shard applies the
 * logs of many shards, so a copy of one alone could not be checked.
 */
static int
ctl_cmd_admin_backup(ctl *x)
{
	const char *dir = x->args[0];
	char        msg[512], sub[4200], why[4096];
	uint64_t    t0 = wb_now_ms();
	json_t     *m, *svcs, *order;
	int         rc = WB_OK;
	size_t      idx[CTL_NSTORES];

	if (dir[0] != '/') {
		return ctl_usage_error("backup DIR must be an absolute path: '%s'", dir);
	}
	if (ctl_mkdir_p(dir) != 0) {
		snprintf(msg, sizeof(msg), "cannot create %s: %s", dir, strerror(errno));
		return ctl_admin_fail(x, WB_EIO, msg);
	}
	m = json_object();
	svcs = json_array();
	order = json_array();
	if (m == NULL || svcs == NULL || order == NULL) {
		json_decref(m), json_decref(svcs), json_decref(order);
		return ctl_admin_fail(x, WB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < CTL_NSTORES; i++) {
		idx[i] = i;
	}
	if ((x->given & CTL_O_INBOX_LAST) != 0) { /* the unsafe order, to see the check refuse it */
		for (size_t i = 0; i + 1 < CTL_NSTORES; i++) {
			idx[i] = i + 1;
		}
		idx[CTL_NSTORES - 1] = 0;
	}
	for (size_t k = 0; rc == WB_OK && k < CTL_NSTORES; k++) {
		wb_service  svc = ctl_backup_order[idx[k]];
		const char *name = wb_services[svc].name;
		unsigned    n = ctl_admin_shards(x, svc, msg, sizeof(msg));

		rc = n > 0 ? WB_OK : WB_EINVAL;
		for (unsigned s = 0; rc == WB_OK && s < n; s++) {
			wb_obj *req = wb_request(WB_OP_ADMIN_BACKUP), *rep = NULL;
			char    store[48];

			snprintf(store, sizeof(store), n == 1 ? "%s" : "%s.%u", name, s);
			snprintf(sub, sizeof(sub), "%s/%s", dir, store);
			if (req != NULL) {
				wb_set_cstr(req, WB_F_DIR, sub);
			}
			if ((rc = ctl_admin_call(x, svc, s, req, &rep, msg, sizeof(msg))) !=
			    WB_OK) {
				break;
			}
			json_t *e = json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:I, s:s}", "service",
			    name, "shard", (int)s, "shards", (int)n, "store", store, "dir", sub,
			    "time", (json_int_t)wb_u64(rep, WB_F_TIME, 0), "elapsed_ms",
			    (json_int_t)wb_u64(rep, WB_F_ELAPSED, 0), "release",
			    wb_str(rep, WB_F_RELEASE, "?"));
			if (e != NULL && svc == WB_SVC_INBOX) {
				json_object_set_new(e, "applied", ctl_logs_json(rep, WB_F_SEQ));
			} else if (e != NULL && svc != WB_SVC_USER) {
				json_object_set_new(e, "log_last", ctl_logs_json(rep, WB_F_LAST));
			}
			json_array_append_new(svcs, e);
			json_array_append_new(order, json_string(store));
			if (!x->json) {
				fprintf(stderr, "%s: %s copied into %s in %" PRIu64 " ms\n",
				    ctl_prog, store, sub, wb_u64(rep, WB_F_ELAPSED, 0));
			}
			wb_msg_free(rep);
		}
	}
	json_object_set_new(m, "warble_backup", json_integer(1));
	json_object_set_new(m, "release", json_string(WB_RELEASE));
	json_object_set_new(m, "started", json_integer((json_int_t)t0));
	json_object_set_new(m, "finished", json_integer((json_int_t)wb_now_ms()));
	json_object_set_new(m, "order", order);
	json_object_set_new(m, "services", svcs);
	if (rc != WB_OK) {
		json_decref(m);
		return ctl_admin_fail(x, rc, msg);
	}
	bool safe = ctl_manifest_check(m, why, sizeof(why));
	json_object_set_new(m, "consistent", json_boolean(safe));
	json_object_set_new(m, "check", json_string(why));
	if (ctl_manifest_write(dir, m) != 0) {
		snprintf(
		    msg, sizeof(msg), "cannot write %s/%s: %s", dir, CTL_MANIFEST, strerror(errno));
		json_decref(m);
		return ctl_admin_fail(x, WB_EIO, msg);
	}
	if (!safe) {
		char refuse[4400];
		snprintf(refuse, sizeof(refuse),
		    "refused: an inbox copy is ahead of a source (%s); it would skip events after "
		    "a "
		    "restore: back up again, the inbox first",
		    why);
		json_decref(m);
		return ctl_admin_fail(x, WB_ECORRUPT, refuse);
	}
	if (x->json) {
		json_object_set_new(m, "dir", json_string(dir));
		return ctl_emit(m);
	}
	printf("backup in %s (%s): %s\n", dir, CTL_MANIFEST, why);
	json_decref(m);
	return 0;
}

/* ctl_msgf writes a message into msg, cut to len bytes if it must be. */
static void __attribute__((format(printf, 3, 4)))
ctl_msgf(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* ctl_copy_file copies (or, for the immutable .sst files, hard-links) src to dst. */
static int
ctl_copy_file(const char *src, const char *dst, bool link_ok)
{
	char    buf[65536];
	ssize_t n;
	int     in, out, rc = 0;

	if (link_ok && link(src, dst) == 0) {
		return 0;
	}
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0) {
		return -1;
	}
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	}
	if (n < 0 || fsync(out) != 0) {
		rc = -1;
	}
	close(in);
	return close(out) != 0 ? -1 : rc;
}

/* ctl_copy_store copies the flat folder of one store from src into a new folder dst. */
static int
ctl_copy_store(const char *src, const char *dst, char *msg, size_t len)
{
	DIR           *d = opendir(src);
	struct dirent *e;
	char           a[4400], b[4400];
	int            rc = 0;

	if (d == NULL) {
		snprintf(msg, len, "cannot read %s: %s", src, strerror(errno));
		return -1;
	}
	if (mkdir(dst, 0755) != 0) {
		snprintf(msg, len, "cannot create %s: %s%s", dst, strerror(errno),
		    errno == EEXIST ? " (a restore never overwrites a store)" : "");
		closedir(d);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.') {
			continue;
		}
		int  ka = snprintf(a, sizeof(a), "%s/%s", src, e->d_name);
		int  kb = snprintf(b, sizeof(b), "%s/%s", dst, e->d_name);
		bool sst = n > 4 && strcmp(e->d_name + n - 4, ".sst") == 0;
		if (ka < 0 || kb < 0 || (size_t)ka >= sizeof(a) || (size_t)kb >= sizeof(b)) {
			ctl_msgf(msg, len, "path too long in %s", src);
			rc = -1;
		} else if (ctl_copy_file(a, b, sst) != 0) {
			ctl_msgf(msg, len, "cannot copy %s: %s", a, strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/*
 * ctl_cmd_admin_restore copies a backup's stores into a fresh data folder:
 * every store of a backup of one shard each, or with --shard i the stores
 * a host of shard i runs (shard i of each sharded service, and every
 * service of one shard), each into DATA/<service>, where the daemons
 * look for it.
 */
static int
ctl_cmd_admin_restore(ctl *x)
{
	const char  *from = x->args[0], *data = x->args[1];
	char         path[4200], src[4200], dst[4200], msg[8600], why[4096];
	json_error_t jerr;
	json_t      *m, *e;
	size_t       i;

	snprintf(path, sizeof(path), "%s/%s", from, CTL_MANIFEST);
	if ((m = json_load_file(path, 0, &jerr)) == NULL) {
		snprintf(msg, sizeof(msg), "cannot read %s: %s", path, jerr.text);
		return ctl_admin_fail(x, WB_EINVAL, msg);
	}
	json_t  *cons = json_object_get(m, "consistent");
	uint64_t fmt = 0;
	if (!ctl_json_u64(m, "warble_backup", &fmt) || fmt != 1) {
		json_decref(m);
		snprintf(msg, sizeof(msg), "%s is not a Warble backup manifest (version 1)", path);
		return ctl_admin_fail(x, WB_EINVAL, msg);
	}
	if (!ctl_manifest_check(m, why, sizeof(why)) || !json_is_true(cons)) {
		json_decref(m);
		snprintf(msg, sizeof(msg),
		    "refused: %s is not a consistent backup (%s): the inbox would skip events",
		    from, why);
		return ctl_admin_fail(x, WB_ECORRUPT, msg);
	}
	/* what goes: one shard each, or the stores of --shard i */
	bool     picked[256] = { false };
	uint64_t most = 1; /* shards of the most sharded service */
	json_array_foreach(json_object_get(m, "services"), i, e)
	{
		uint64_t shard = 0, shards = 1;
		(void)ctl_json_u64(e, "shard", &shard);
		(void)ctl_json_u64(e, "shards", &shards);
		most = shards > most ? shards : most;
		if (shards > 1 && x->shard < 0) {
			snprintf(msg, sizeof(msg),
			    "%s holds %" PRIu64 " %s shards: restore each host's with --shard i",
			    from, shards, json_string_value(json_object_get(e, "service")));
			json_decref(m); /* after the message: e and its strings are m's */
			return ctl_admin_fail(x, WB_EINVAL, msg);
		}
		picked[i % 256] = i < 256 && (shards == 1 || shard == (uint64_t)x->shard);
	}
	if (x->shard >= 0 && (uint64_t)x->shard >= most) { /* it would restore no shard at all */
		json_decref(m);
		snprintf(msg, sizeof(msg),
		    "%s has no shard %d: its services have at most %" PRIu64 " shards (0-%" PRIu64
		    ")",
		    from, x->shard, most, most - 1);
		return ctl_admin_fail(x, WB_EINVAL, msg);
	}
	if (ctl_mkdir_p(data) != 0) {
		json_decref(m);
		snprintf(msg, sizeof(msg), "cannot create %s: %s", data, strerror(errno));
		return ctl_admin_fail(x, WB_EIO, msg);
	}
	for (int pass = 0; pass < 2; pass++) { /* first check that nothing is overwritten */
		json_array_foreach(json_object_get(m, "services"), i, e)
		{
			const char *svc = json_string_value(json_object_get(e, "service"));
			const char *store = json_string_value(json_object_get(e, "store"));
			if (!picked[i % 256] || svc == NULL) {
				continue;
			}
			snprintf(src, sizeof(src), "%s/%s", from, store != NULL ? store : svc);
			snprintf(dst, sizeof(dst), "%s/%s", data, svc);
			if (pass == 0 && access(dst, F_OK) == 0) {
				json_decref(m);
				snprintf(msg, sizeof(msg),
				    "%s exists: a restore goes into a fresh data folder", dst);
				return ctl_admin_fail(x, WB_EINVAL, msg);
			}
			if (pass == 1 && ctl_copy_store(src, dst, msg, sizeof(msg)) != 0) {
				json_decref(m);
				return ctl_admin_fail(x, WB_EIO, msg);
			}
		}
	}
	json_decref(m);
	if (x->json) {
		return ctl_emit(
		    json_pack("{s:s, s:s, s:s}", "from", from, "data", data, "check", why));
	}
	printf("restored %s into %s (%s)\nstart the daemons with WARBLE_DATA=%s\n", from, data, why,
	    data);
	return 0;
}

/*
 * A long job a service runs on each shard (an inbox rebuild, the images'
 * re-encode pass): started on every shard the command acts on, then
 * followed until each is over, its figures summed.
 */
typedef struct ctl_job {
	const char *name; /* "rebuild-inbox" */
	wb_service  svc;
	wb_op       start, status;
	const char *running; /* the state names of a job not over, | separated */
	void (*line)(const wb_obj *sum, bool tty, bool last);
} ctl_job;

/* ctl_job_add adds the figures of one shard's status st into sum (state: the least advanced). */
static void
ctl_job_add(const ctl_job *j, wb_obj *sum, const wb_obj *st, bool first)
{
	static const wb_field add[] = { WB_F_DONE, WB_F_TOTAL, WB_F_COUNT, WB_F_ERRORS };
	const char           *state = wb_str(st, WB_F_STATE, "?");
	const char           *have = wb_str(sum, WB_F_STATE, "");

	for (size_t k = 0; k < sizeof(add) / sizeof(add[0]); k++) {
		wb_set_u64(sum, add[k], wb_u64(sum, add[k], 0) + wb_u64(st, add[k], 0));
	}
	if (wb_u64(st, WB_F_ELAPSED, 0) > wb_u64(sum, WB_F_ELAPSED, 0)) {
		wb_set_u64(sum, WB_F_ELAPSED, wb_u64(st, WB_F_ELAPSED, 0));
	}
	if (first) {
		wb_set_u64(sum, WB_F_LIMIT, wb_u64(st, WB_F_LIMIT, 0));
	}
	/* a shard still running, then one failed, decide the whole */
	if (first || strstr(j->running, state) != NULL ||
	    (strcmp(state, "failed") == 0 && strstr(j->running, have) == NULL)) {
		wb_set_cstr(sum, WB_F_STATE, state);
		if (wb_has(st, WB_F_MSG)) {
			wb_set_cstr(sum, WB_F_MSG, wb_str(st, WB_F_MSG, ""));
		}
	}
}

/* ctl_job_run starts job j (start: the request for each shard, NULL for a bare one) and follows it. */
static int
ctl_job_run(ctl *x, const ctl_job *j, wb_obj *(*start)(ctl *x))
{
	char     msg[512];
	bool     tty = isatty(STDERR_FILENO) && !x->json;
	uint64_t next_line = 0;
	unsigned n = ctl_admin_shards(x, j->svc, msg, sizeof(msg));
	wb_obj  *sum = NULL, *rep = NULL;
	int      rc = n > 0 ? WB_OK : WB_EINVAL;

	if (rc == WB_OK && x->shard >= 0 && (unsigned)x->shard >= n) { /* else none is picked */
		snprintf(msg, sizeof(msg), "no shard %d: %s has %u shard%s (0-%u)", x->shard,
		    wb_services[j->svc].name, n, n == 1 ? "" : "s", n - 1);
		return ctl_admin_fail(x, WB_EINVAL, msg);
	}

	for (wb_op op = j->start; rc == WB_OK;) {
		wb_msg_free(sum);
		if ((sum = wb_msg_new()) == NULL) {
			rc = WB_ENOMEM;
			break;
		}
		bool first = true;
		for (unsigned s = 0; rc == WB_OK && s < n; s++) {
			if (!ctl_admin_picked(x, s, n)) {
				continue;
			}
			wb_obj *req = op == j->start && start != NULL ? start(x) : wb_request(op);
			if ((rc = ctl_admin_call(x, j->svc, s, req, &rep, msg, sizeof(msg))) ==
			    WB_OK) {
				ctl_job_add(j, sum, rep, first);
				first = false;
			}
			wb_msg_free(rep);
		}
		if (rc != WB_OK) {
			break;
		}
		bool over = strstr(j->running, wb_str(sum, WB_F_STATE, "?")) == NULL ||
		            (x->given & CTL_O_NO_WAIT) != 0;
		if (!x->json && (tty || over || wb_mono_us() / 1000 >= next_line)) {
			j->line(sum, tty, over);
			next_line = wb_mono_us() / 1000 + 5000;
		}
		if (over) {
			break;
		}
		usleep(200000);
		op = j->status;
	}
	if (rc != WB_OK) {
		wb_msg_free(sum);
		return ctl_admin_fail(x, rc, msg);
	}
	if (strcmp(wb_str(sum, WB_F_STATE, "?"), "failed") == 0) {
		snprintf(msg, sizeof(msg), "%s failed: %s (the service tries again)", j->name,
		    wb_str(sum, WB_F_MSG, "?"));
		wb_msg_free(sum);
		return ctl_admin_fail(x, WB_EUNAVAIL, msg);
	}
	rc = 0;
	if (x->json) {
		rc = ctl_emit(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "state",
		    wb_str(sum, WB_F_STATE, "?"), "done", (json_int_t)wb_u64(sum, WB_F_DONE, 0),
		    "total", (json_int_t)wb_u64(sum, WB_F_TOTAL, 0), "count",
		    (json_int_t)wb_u64(sum, WB_F_COUNT, 0), "errors",
		    (json_int_t)wb_u64(sum, WB_F_ERRORS, 0), "limit",
		    (json_int_t)wb_u64(sum, WB_F_LIMIT, 0), "elapsed_ms",
		    (json_int_t)wb_u64(sum, WB_F_ELAPSED, 0)));
	}
	wb_msg_free(sum);
	return rc;
}

/* ctl_progress draws the rebuild's progress bar on stderr (one line per call without a terminal). */
static void
ctl_progress(const wb_obj *st, bool tty, bool last)
{
	uint64_t done = wb_u64(st, WB_F_DONE, 0), total = wb_u64(st, WB_F_TOTAL, 0);
	uint64_t pct = total > 0 ? done * 100 / total : 0;
	char     bar[41];

	if (pct > 100 || last) {
		pct = last && strcmp(wb_str(st, WB_F_STATE, ""), "done") == 0
		          ? 100
		          : (pct > 99 ? 99 : pct);
	}
	for (int i = 0; i < 40; i++) {
		bar[i] = (uint64_t)i < pct * 40 / 100 ? '#' : '.';
	}
	bar[40] = '\0';
	fprintf(stderr,
	    "%srebuild-inbox [%s] %3" PRIu64 "%%  %" PRIu64 "/%" PRIu64 " follows  %" PRIu64
	    " users  %.1f s%s",
	    tty ? "\r" : "", bar, pct, done, total, wb_u64(st, WB_F_COUNT, 0),
	    (double)wb_u64(st, WB_F_ELAPSED, 0) / 1000.0, tty && !last ? "" : "\n");
	fflush(stderr);
}

/* ctl_rebuild_req is inbox.rebuild with --depth. */
static wb_obj *
ctl_rebuild_req(ctl *x)
{
	wb_obj *req = wb_request(WB_OP_INBOX_REBUILD);

	if (req != NULL && x->depth > 0 && wb_set_u64(req, WB_F_LIMIT, x->depth) != WB_OK) {
		wb_msg_free(req);
		req = NULL;
	}
	return req;
}

/* ctl_cmd_admin_rebuild_inbox rebuilds every inbox shard (or --shard i's) from relation and content. */
static int
ctl_cmd_admin_rebuild_inbox(ctl *x)
{
	static const ctl_job j = { "rebuild-inbox", WB_SVC_INBOX, WB_OP_INBOX_REBUILD,
		WB_OP_INBOX_REBUILD_STATUS, "queued|running", ctl_progress };

	return ctl_job_run(x, &j, ctl_rebuild_req);
}

/*
 * ctl_cmd_admin_rotate_key: a new key signs every session from now on;
 * sessions of the earlier one keep working until they expire, or with
 * --revoke end now (every user logs in again).
 */
static int
ctl_cmd_admin_rotate_key(ctl *x)
{
	wb_obj *req = wb_request(WB_OP_USER_ROTATE_KEY), *rep = NULL;
	bool    revoke = (x->given & CTL_O_REVOKE) != 0;
	char    msg[512];
	int     rc;

	if (req != NULL && revoke && wb_set_bool(req, WB_F_REVOKE, true) != WB_OK) {
		wb_msg_free(req);
		req = NULL;
	}
	if (ctl_admin_shards(x, WB_SVC_USER, msg, sizeof(msg)) == 0) {
		wb_msg_free(req);
		return ctl_admin_fail(x, WB_EINVAL, msg);
	}
	if ((rc = ctl_admin_call(x, WB_SVC_USER, 0, req, &rep, msg, sizeof(msg))) != WB_OK) {
		return ctl_admin_fail(x, rc, msg);
	}
	uint64_t kid = wb_u64(rep, WB_F_KID, 0);
	wb_msg_free(rep);
	if (x->json) {
		return ctl_emit(json_pack("{s:I, s:b}", "kid", (json_int_t)kid, "revoked", revoke));
	}
	printf("session key %" PRIu64 " signs from now on; %s\n", kid,
	    revoke ? "every earlier session has ended" : "earlier sessions last until they expire");
	return 0;
}

/*
 * ctl_cmd_admin_delete_user deletes the account NAME (user.delete_name on
 * the user service's own port, as the admin identity; no password): it
 * closes at once, and its data is erased in the background.
 */
static int
ctl_cmd_admin_delete_user(ctl *x)
{
	wb_obj *req = wb_request(WB_OP_USER_DELETE_NAME), *rep = NULL;
	char    msg[512];
	int     rc;

	if (req != NULL && wb_set_cstr(req, WB_F_NAME, x->args[0]) != WB_OK) {
		wb_msg_free(req);
		req = NULL;
	}
	if (ctl_admin_shards(x, WB_SVC_USER, msg, sizeof(msg)) == 0) {
		wb_msg_free(req);
		return ctl_admin_fail(x, WB_EINVAL, msg);
	}
	if ((rc = ctl_admin_call(x, WB_SVC_USER, 0, req, &rep, msg, sizeof(msg))) != WB_OK) {
		return ctl_admin_fail(x, rc, msg);
	}
	uint64_t uid = wb_u64(rep, WB_F_UID, 0);
	wb_msg_free(rep);
	if (x->json) {
		return ctl_emit(
		    json_pack("{s:s, s:I}", "name", x->args[0], "uid", (json_int_t)uid));
	}
	printf("deleted @%s (uid %" PRIu64 "): its data is being erased\n", x->args[0], uid);
	return 0;
}

/* ctl_reencode_line prints the re-encode pass's progress on stderr (a line a call off a tty). */
static void
ctl_reencode_line(const wb_obj *st, bool tty, bool last)
{
	fprintf(stderr,
	    "%sreencode-media %s: %" PRIu64 " images written again (of about %" PRIu64 "), %" PRIu64
	    " posts updated, %" PRIu64 " deleted (no image)  %.1f s%s",
	    tty ? "\r" : "", wb_str(st, WB_F_STATE, "?"), wb_u64(st, WB_F_DONE, 0),
	    wb_u64(st, WB_F_TOTAL, 0), wb_u64(st, WB_F_COUNT, 0), wb_u64(st, WB_F_ERRORS, 0),
	    (double)wb_u64(st, WB_F_ELAPSED, 0) / 1000.0, tty && !last ? "" : "\n");
	fflush(stderr);
}

/*
 * ctl_cmd_admin_reencode_media starts the re-encode pass of every content
 * shard (or --shard i's: media.reencode, every stored image decoded and
 * written again with no metadata, and a preview) and follows it to its
 * end, unless --no-wait.  A pass running already (the one a store starts
 * after an upgrade) is followed, not started twice.
 */
static int
ctl_cmd_admin_reencode_media(ctl *x)
{
	static const ctl_job j = { "reencode-media", WB_SVC_CONTENT, WB_OP_MEDIA_REENCODE,
		WB_OP_MEDIA_REENCODE_STATUS, "running", ctl_reencode_line };

	return ctl_job_run(x, &j, NULL);
}

/* --- files for post --image, upload and media -o ----------------------- */

/* ctl_read_image reads an image file whole (at most what one request carries); exit status 1 with a message if it cannot. */
static int
ctl_read_image(ctl *x, ctl_image *im)
{
	size_t max = wb_limits_default.max_bin, cap = 0, len = 0;
	char  *buf = NULL, msg[4200];
	int    fd = open(im->path, O_RDONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;

	while (fd >= 0 && e == 0) {
		if (len == max + 1) {
			snprintf(msg, sizeof(msg),
			    "%s: over %zu bytes, more than a request carries", im->path, max);
			close(fd);
			free(buf);
			return ctl_fail_msg(x, WARBLE_ETOOBIG, msg);
		}
		if (len == cap) { /* grow up to max + 1: one byte more tells it is too large */
			size_t ncap = cap == 0 ? 65536 : cap * 2;
			char  *nb = realloc(buf, ncap < max + 1 ? ncap : max + 1);
			if (nb == NULL) {
				e = ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap < max + 1 ? ncap : max + 1;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r == 0) {
			close(fd);
			im->data = buf != NULL ? buf : malloc(1);
			im->len = len;
			return 0;
		}
		if (r > 0) {
			len += (size_t)r;
		} else if (errno != EINTR) {
			e = errno;
		}
	}
	snprintf(msg, sizeof(msg), "cannot read %s: %s", im->path, strerror(e));
	if (fd >= 0) {
		close(fd);
	}
	free(buf);
	return ctl_fail_local(x, msg);
}

/* ctl_images_free frees the bytes of every image read. */
static void
ctl_images_free(ctl *x)
{
	for (int i = 0; i < x->nimages; i++) {
		free(x->images[i].data);
		x->images[i].data = NULL;
	}
}

/* ctl_media_check refuses, before anything is sent, a malformed media id and bytes that would go to a terminal or into --json's output. */
static int
ctl_media_check(ctl *x)
{
	uint64_t author, id;

	if (!wb_media_id_parse(x->args[0], strlen(x->args[0]), &author, &id)) {
		return ctl_usage_error("bad media id: '%s' (like 7-7321123456789012)", x->args[0]);
	}
	if (x->output == NULL && x->json) {
		return ctl_usage_error("%s", "media --json needs -o FILE: stdout is for the JSON");
	}
	if (x->output == NULL && isatty(STDOUT_FILENO)) {
		return ctl_usage_error("%s",
		    "media: not writing an image to a terminal: give -o FILE "
		    "or redirect stdout");
	}
	return 0;
}

static const ctl_cmd ctl_cmds[] = {
	{ "register", 1, CTL_O_PASSWORD, ctl_cmd_register, 0, "register NAME [--password PW]" },
	{ "login", 1, CTL_O_PASSWORD, ctl_cmd_login, 0, "login NAME [--password PW]" },
	{ "logout", 0, 0, ctl_cmd_logout, 2, "logout" },
	{ "whoami", 0, 0, ctl_cmd_whoami, 2, "whoami" },
	{ "post", 1, CTL_O_TITLE | CTL_O_CATEGORY | CTL_O_IMAGE, ctl_cmd_post, 2,
	    "post [--title T] [--category C] [--image FILE [--alt TEXT]]... TEXT" },
	{ "upload", 1, 0, ctl_cmd_upload, 2, "upload FILE" },
	{ "media", 1, CTL_O_OUTPUT | CTL_O_PREVIEW, ctl_cmd_media, 1,
	    "media ID [--preview] [-o FILE]" },
	{ "delete", 1, 0, ctl_cmd_delete, 2, "delete ID" },
	{ "home", 0, CTL_O_BEFORE | CTL_O_LIMIT, ctl_cmd_home, 2,
	    "home [--before ID] [--limit N]" },
	{ "timeline", 1, CTL_O_CATEGORY | CTL_O_BEFORE | CTL_O_LIMIT, ctl_cmd_timeline, 1,
	    "timeline USER [--category C] [--before ID] [--limit N]" },
	{ "follow", 1, 0, ctl_cmd_follow, 2, "follow USER" },
	{ "unfollow", 1, 0, ctl_cmd_unfollow, 2, "unfollow USER" },
	{ "following", 1, CTL_O_AFTER | CTL_O_LIMIT, ctl_cmd_following, 1,
	    "following USER [--after UID] [--limit N]" },
	{ "fans", 1, CTL_O_AFTER | CTL_O_LIMIT, ctl_cmd_fans, 1,
	    "fans USER [--after UID] [--limit N]" },
	{ "profile", 1, 0, ctl_cmd_profile, 1, "profile USER" },
	{ "update-profile", 0, CTL_O_DISPLAY | CTL_O_BIO, ctl_cmd_update_profile, 2,
	    "update-profile [--display TEXT] [--bio TEXT]" },
	{ "show", 1, 0, ctl_cmd_show, 1, "show ID" },
	{ "block", 1, 0, ctl_cmd_block, 2, "block USER" },
	{ "unblock", 1, 0, ctl_cmd_unblock, 2, "unblock USER" },
	{ "blocks", 0, CTL_O_AFTER | CTL_O_LIMIT, ctl_cmd_blocks, 2,
	    "blocks [--after UID] [--limit N]" },
	{ "suggestions", 0, CTL_O_LIMIT, ctl_cmd_suggestions, 2, "suggestions [--limit N]" },
	{ "delete-account", 0, CTL_O_PASSWORD, ctl_cmd_delete_account, 2,
	    "delete-account [--password PW]" },
};

#define CTL_NCMDS (sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

static const ctl_cmd ctl_admin_cmds[] = {
	{ "backup", 1, CTL_O_URLS | CTL_O_INBOX_LAST, ctl_cmd_admin_backup, 0,
	    "admin backup DIR [--inbox-last]" },
	{ "restore", 2, CTL_O_SHARD, ctl_cmd_admin_restore, 0,
	    "admin restore BACKUP DATA [--shard I]" },
	{ "rebuild-inbox", 0, CTL_O_URLS | CTL_O_SHARD | CTL_O_DEPTH | CTL_O_NO_WAIT,
	    ctl_cmd_admin_rebuild_inbox, 0,
	    "admin rebuild-inbox [--shard I] [--depth N] [--no-wait]" },
	{ "rotate-session-key", 0, CTL_O_URLS | CTL_O_REVOKE, ctl_cmd_admin_rotate_key, 0,
	    "admin rotate-session-key [--revoke]" },
	{ "reencode-media", 0, CTL_O_URLS | CTL_O_SHARD | CTL_O_NO_WAIT,
	    ctl_cmd_admin_reencode_media, 0, "admin reencode-media [--shard I] [--no-wait]" },
	{ "delete-user", 1, CTL_O_URLS, ctl_cmd_admin_delete_user, 0, "admin delete-user NAME" },
};

#define CTL_NADMIN (sizeof(ctl_admin_cmds) / sizeof(ctl_admin_cmds[0]))

static void
ctl_usage_print(FILE *f)
{
	fprintf(f,
	    "usage: %s [options] COMMAND [ARGS]\n"
	    "\n"
	    "Warble from the command line.\n"
	    "\n"
	    "commands:\n",
	    ctl_prog);
	for (size_t i = 0; i < CTL_NCMDS; i++) {
		fprintf(f, "  %s\n", ctl_cmds[i].usage);
	}
	for (size_t i = 0; i < CTL_NADMIN; i++) {
		fprintf(f, "  %s\n", ctl_admin_cmds[i].usage);
	}
	fprintf(f, "\n"
	           "options:\n"
	           "  --gateway URL    gateway msgpack API (WARBLE_GATEWAY_URL, default "
	           "tcp://127.0.0.1:7100)\n"
	           "  --timeout MS     deadline of each request (default 5000)\n"
	           "  --json           print one JSON object per command\n"
	           "  --password PW    password for register, login and delete-account (or\n"
	           "                   WARBLE_PASSWORD; prompted without echo on a terminal)\n"
	           "  --before ID      home/timeline: posts older than post ID\n"
	           "  --after UID      following/fans: users after this cursor\n"
	           "  --limit N        page size, 1-100\n"
	           "  --display TEXT, --bio TEXT   update-profile fields\n"
	           "  --title T        post: a title, at most 100 characters\n"
	           "  --category C     post: a category, [a-z0-9_]{1,32}; timeline: only\n"
	           "                   that category's posts\n"
	           "  --image FILE     post: upload FILE (PNG, JPEG, GIF or WebP) and attach it;\n"
	           "                   up to 4; TEXT may then be left out or \"\"\n"
	           "  --alt TEXT       post: the description of the --image before it\n"
	           "  -o, --output FILE  media: write the bytes to FILE (default stdout)\n"
	           "  --preview        media: the image's preview (a WebP, at most 640 px a side)\n"
	           "  --user-url URL, --relation-url URL, --content-url URL, --inbox-url URL\n"
	           "                   admin: each service's own port (WARBLE_USER_URL, ...;\n"
	           "                   the defaults of warble-NAME --print-defaults)\n"
	           "  --relation-urls URLS, --content-urls URLS, --inbox-urls URLS\n"
	           "                   admin: a sharded service's ports, shard 0 first,\n"
	           "                   comma-separated (WARBLE_RELATION_URLS, ...)\n"
	           "  --shard I        rebuild-inbox, reencode-media: that shard only;\n"
	           "                   restore: the stores a host of shard I runs (shard I\n"
	           "                   of each sharded service, and the unsharded ones)\n"
	           "  --depth N        rebuild-inbox: posts per follow (default the inbox's\n"
	           "                   WARBLE_BACKFILL), 1-100000\n"
	           "  --no-wait        rebuild-inbox, reencode-media: start it and return\n"
	           "  --revoke         rotate-session-key: end every session of the earlier\n"
	           "                   keys now (default: they last until they expire)\n"
	           "  --inbox-last     backup: take the inbox last (unsafe; the manifest check\n"
	           "                   then refuses the backup if events came in meanwhile)\n"
	           "  -h, --help       this help\n"
	           "\n"
	           "The session token is kept in $XDG_CONFIG_HOME/warble/token\n"
	           "(~/.config/warble/token); WARBLE_TOKEN overrides it.\n"
	           "Exit status: 0 success, 1 the request failed, 2 usage error.\n"
	           "\n"
	           "The admin commands go to each service's own port, never the gateway.\n"
	           "A backup takes every inbox shard first and their sources after, writes\n"
	           "DIR/manifest.json and refuses a copy whose inbox is ahead of a source.\n"
	           "DIR is a path on the services' machines (backup --timeout default 600000).\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "gateway", required_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "password", required_argument, NULL, 'p' },
		{ "before", required_argument, NULL, 'b' },
		{ "after", required_argument, NULL, 'a' },
		{ "limit", required_argument, NULL, 'l' },
		{ "display", required_argument, NULL, 'd' },
		{ "bio", required_argument, NULL, 'B' },
		{ "user-url", required_argument, NULL, 'U' },
		{ "relation-url", required_argument, NULL, 'R' },
		{ "content-url", required_argument, NULL, 'C' },
		{ "inbox-url", required_argument, NULL, 'I' },
		{ "relation-urls", required_argument, NULL, '1' },
		{ "content-urls", required_argument, NULL, '2' },
		{ "inbox-urls", required_argument, NULL, '3' },
		{ "shard", required_argument, NULL, 'S' },
		{ "depth", required_argument, NULL, 'D' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "revoke", no_argument, NULL, 'r' },
		{ "inbox-last", no_argument, NULL, 'L' },
		{ "title", required_argument, NULL, 'T' },
		{ "category", required_argument, NULL, 'c' },
		{ "image", required_argument, NULL, 'i' },
		{ "alt", required_argument, NULL, 'A' },
		{ "output", required_argument, NULL, 'o' },
		{ "preview", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	ctl            x = { .shard = -1 };
	const char    *gateway = getenv("WARBLE_GATEWAY_URL");
	const ctl_cmd *cmd = NULL;
	uint64_t       v, timeout = 5000;
	char           pass[CTL_PASS_MAX], token[1024] = "";
	int            opt, rc;
	bool           timeout_given = false;

	if (gateway == NULL || gateway[0] == '\0') {
		gateway = "tcp://127.0.0.1:7100";
	}
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			gateway = optarg;
			break;
		case 't':
			if (ctl_parse_u64(optarg, 1, 3600000, &timeout) != 0) {
				return ctl_usage_error(
				    "bad --timeout: '%s' (1-3600000 ms)", optarg);
			}
			timeout_given = true;
			break;
		case 'U':
		case 'R':
		case 'C':
		case 'I':
			x.url[opt == 'U'   ? WB_SVC_USER
			      : opt == 'R' ? WB_SVC_RELATION
			      : opt == 'C' ? WB_SVC_CONTENT
			                   : WB_SVC_INBOX] = optarg;
			x.given |= CTL_O_URLS;
			break;
		case '1':
		case '2':
		case '3':
			x.urls[opt == '1'   ? WB_SVC_RELATION
			       : opt == '2' ? WB_SVC_CONTENT
			                    : WB_SVC_INBOX] = optarg;
			x.given |= CTL_O_URLS;
			break;
		case 'S':
			if (ctl_parse_u64(optarg, 0, WB_SHARDS_MAX - 1, &v) != 0) {
				return ctl_usage_error(
				    "bad --shard: '%s' (a shard index, 0-63)", optarg);
			}
			x.shard = (int)v;
			x.given |= CTL_O_SHARD;
			break;
		case 'D':
			if (ctl_parse_u64(optarg, 1, 100000, &x.depth) != 0) {
				return ctl_usage_error("bad --depth: '%s' (1-100000)", optarg);
			}
			x.given |= CTL_O_DEPTH;
			break;
		case 'W':
			x.given |= CTL_O_NO_WAIT;
			break;
		case 'r':
			x.given |= CTL_O_REVOKE;
			break;
		case 'L':
			x.given |= CTL_O_INBOX_LAST;
			break;
		case 'j':
			x.json = 1;
			break;
		case 'p':
			x.password = optarg;
			x.given |= CTL_O_PASSWORD;
			break;
		case 'b':
			if (ctl_parse_u64(optarg, 1, UINT64_MAX, &x.before) != 0) {
				return ctl_usage_error("bad --before: '%s' (a post id)", optarg);
			}
			x.given |= CTL_O_BEFORE;
			break;
		case 'a':
			if (ctl_parse_u64(optarg, 1, UINT64_MAX, &x.after) != 0) {
				return ctl_usage_error("bad --after: '%s' (a user id)", optarg);
			}
			x.given |= CTL_O_AFTER;
			break;
		case 'l':
			if (ctl_parse_u64(optarg, 1, 100, &v) != 0) {
				return ctl_usage_error("bad --limit: '%s' (1-100)", optarg);
			}
			x.limit = (unsigned)v;
			x.given |= CTL_O_LIMIT;
			break;
		case 'd':
			x.display = optarg;
			x.given |= CTL_O_DISPLAY;
			break;
		case 'B':
			x.bio = optarg;
			x.given |= CTL_O_BIO;
			break;
		case 'T':
			x.title = optarg;
			x.given |= CTL_O_TITLE;
			break;
		case 'c':
			x.category = optarg;
			x.given |= CTL_O_CATEGORY;
			break;
		case 'i':
			if (x.nimages == CTL_IMAGES_MAX) {
				return ctl_usage_error("too many --image: a post has at most %s",
				    CTL_STR(CTL_IMAGES_MAX));
			}
			x.images[x.nimages++].path = optarg;
			x.given |= CTL_O_IMAGE;
			break;
		case 'A':
			if (x.nimages == 0 || x.images[x.nimages - 1].alt != NULL) {
				return ctl_usage_error(
				    "--alt '%s' must follow an --image (one each)", optarg);
			}
			x.images[x.nimages - 1].alt = optarg;
			break;
		case 'o':
			x.output = optarg;
			x.given |= CTL_O_OUTPUT;
			break;
		case 'P':
			x.given |= CTL_O_PREVIEW;
			break;
		case 'h':
			ctl_usage_print(stdout);
			return 0;
		case ':':
			return ctl_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return ctl_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		return ctl_usage_error("%s", "no command given");
	}
	bool admin = strcmp(argv[optind], "admin") == 0;
	if (admin && optind + 1 >= argc) {
		return ctl_usage_error("%s",
		    "admin needs a command: backup, restore, rebuild-inbox, rotate-session-key, "
		    "reencode-media or delete-user");
	}
	for (size_t i = 0; !admin && i < CTL_NCMDS; i++) {
		if (strcmp(argv[optind], ctl_cmds[i].name) == 0) {
			cmd = &ctl_cmds[i];
		}
	}
	for (size_t i = 0; admin && i < CTL_NADMIN; i++) {
		if (strcmp(argv[optind + 1], ctl_admin_cmds[i].name) == 0) {
			cmd = &ctl_admin_cmds[i];
		}
	}
	if (cmd == NULL) {
		return ctl_usage_error(
		    admin ? "unknown admin command '%s'" : "unknown command '%s'",
		    argv[optind + (admin ? 1 : 0)]);
	}
	if (admin) {
		optind++;
	}
	x.args = argv + optind + 1;
	x.nargs = argc - optind - 1;
	if (cmd->fn == ctl_cmd_post && x.nimages > 0 && x.nargs == 0) {
		/* post --image FILE: no text at all */
	} else if (x.nargs != cmd->nargs) {
		fprintf(stderr, "%s: %s %s\nusage: %s %s\n", ctl_prog, cmd->name,
		    x.nargs < cmd->nargs ? "needs more arguments" : "takes fewer arguments",
		    ctl_prog, cmd->usage);
		return CTL_EXIT_USAGE;
	}
	if ((x.given & ~cmd->opts) != 0) {
		fprintf(stderr, "%s: an option given does not apply to %s\nusage: %s %s\n",
		    ctl_prog, cmd->name, ctl_prog, cmd->usage);
		return CTL_EXIT_USAGE;
	}
	if (admin) {
		for (int i = 0; i < WB_SVC_COUNT; i++) {
			const wb_endpoint_info *one = &wb_endpoints[wb_services[i].ep];
			const char             *env = getenv(one->env);
			if (x.url[i] == NULL) {
				x.url[i] = env != NULL && env[0] != '\0' ? env : one->url;
			}
			if (x.urls[i] == NULL && wb_services[i].list != wb_services[i].ep) {
				x.urls[i] = getenv(wb_endpoints[wb_services[i].list].env);
			}
		}
		x.timeout_ms = timeout_given                     ? (int)timeout
		               : cmd->fn == ctl_cmd_admin_backup ? CTL_ADMIN_TIMEOUT_MS
		                                                 : 10000;
		rt_tls *tls = NULL; /* with WARBLE_TLS_DIR: the admin identity on every port */
		if (rt_tls_from_env(&tls, "admin") != WB_OK) {
			return ctl_usage_error(
			    "%s", "no usable admin certificate in WARBLE_TLS_DIR");
		}
		rt_tls_default_set(tls);
		rc = cmd->fn(&x);
		fflush(stdout);
		for (int i = 0; i < WB_SVC_COUNT; i++) {
			rt_shards_close(x.svc[i]);
		}
		rt_tls_default_set(NULL);
		rt_tls_close(tls);
		nng_fini(); /* every client is closed: else ASan's leak check sees nng's late frees */
		return rc;
	}
	/*
	 * Everything that can fail locally fails before the client exists: a
	 * connection opened and dropped at once is no use to the gateway.
	 */
	if (cmd->fn == ctl_cmd_delete && ctl_parse_u64(x.args[0], 1, UINT64_MAX, &v) != 0) {
		return ctl_usage_error("bad post id: '%s'", x.args[0]);
	}
	if (cmd->fn == ctl_cmd_update_profile && (x.given & (CTL_O_DISPLAY | CTL_O_BIO)) == 0) {
		return ctl_usage_error("%s", "update-profile needs --display and/or --bio");
	}
	if (cmd->fn == ctl_cmd_media && (rc = ctl_media_check(&x)) != 0) {
		return rc;
	}
	if (cmd->fn == ctl_cmd_upload) {
		x.images[0].path = x.args[0];
		x.nimages = 1;
	}
	for (int i = 0; i < x.nimages; i++) {
		if ((rc = ctl_read_image(&x, &x.images[i])) != 0) {
			ctl_images_free(&x);
			return rc;
		}
	}
	if ((cmd->opts & CTL_O_PASSWORD) != 0 &&
	    (rc = ctl_password(&x, pass, sizeof(pass), &x.password)) != 0) {
		return rc;
	}
	if (cmd->auth != 0) {
		ctl_token_load(token, sizeof(token));
	}
	if (cmd->auth == 2 && token[0] == '\0') {
		x.local_msg = "not logged in (run: warblectl login NAME)";
		ctl_images_free(&x);
		return ctl_fail(&x, WARBLE_EAUTH);
	}
	if ((rc = warble_open(&x.c, gateway, (int)timeout)) != WARBLE_OK) {
		fprintf(stderr, "%s: %s: cannot use gateway %s\n", ctl_prog, warble_errname(rc),
		    gateway);
		ctl_images_free(&x);
		return rc == WARBLE_EINVAL ? CTL_EXIT_USAGE : CTL_EXIT_FAIL;
	}
	if (token[0] != '\0' && warble_set_token(x.c, token) != WARBLE_OK) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		warble_close(x.c);
		ctl_images_free(&x);
		return CTL_EXIT_FAIL;
	}
	rc = cmd->fn(&x);
	explicit_bzero(pass, sizeof(pass));
	fflush(stdout);
	warble_close(x.c);
	ctl_images_free(&x);
	return rc;
}
