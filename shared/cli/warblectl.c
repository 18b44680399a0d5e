/*
 * warblectl - Warble from the command line, on libwarble.
 *
 *   warblectl register alice          (password: --password, $WARBLE_PASSWORD or prompt)
 *   warblectl login alice             (saves the session token)
 *   warblectl post "hello"            warblectl home --limit 10
 *   warblectl --json profile bob      (one JSON object per command)
 *
 * The session token lives in $XDG_CONFIG_HOME/warble/token (or
 * ~/.config/warble/token), mode 0600; $WARBLE_TOKEN overrides it.
 * Exit status: 0 success, 1 the request failed, 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "warble.h"

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
};

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

/* ctl_fail reports a failed request: on stderr, and as a JSON object with --json. */
static int
ctl_fail(ctl *x, int rc)
{
	const char *msg = x->c != NULL ? warble_errmsg(x->c) : x->local_msg;

	if (msg == NULL || msg[0] == '\0') {
		msg = warble_strerror(rc);
	}
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
	printf("following %" PRIu64 ", followers %" PRIu64 "%s\n", u->following, u->followers,
	    u->followed ? ", you follow" : "");
	printf("uid %" PRIu64 ", joined %s\n", u->uid, ctl_time(u->created, t, sizeof(t)));
}

static int
ctl_posts_out(ctl *x, warble_posts_t *p)
{
	char t[64];

	if (x->json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr != NULL && i < p->n; i++) {
			const warble_post_t *q = &p->posts[i];
			json_t *o = json_pack("{s:o, s:I, s:s, s:s, s:I}", "id", ctl_id(q->id),
			    "author", (json_int_t)q->author, "author_name", q->author_name, "text",
			    q->text, "time", (json_int_t)q->time);
			json_array_append_new(arr, o);
		}
		json_t *o = json_pack("{s:o}", "posts", arr);
		if (o != NULL && p->next != 0) {
			json_object_set_new(o, "next", ctl_id(p->next));
		}
		warble_posts_free(p);
		return ctl_emit(o);
	}
	for (size_t i = 0; i < p->n; i++) {
		const warble_post_t *q = &p->posts[i];
		printf("%s@%s  %s  #%" PRIu64 "\n  %s\n", i > 0 ? "\n" : "", q->author_name,
		    ctl_time(q->time, t, sizeof(t)), q->id, q->text);
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

static int
ctl_cmd_post(ctl *x)
{
	uint64_t id;
	int      rc = warble_post(x->c, x->args[0], &id);

	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		return ctl_emit(json_pack("{s:o}", "id", ctl_id(id)));
	}
	printf("posted #%" PRIu64 "\n", id);
	return 0;
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
	int             rc = warble_timeline(x->c, x->args[0], x->before, x->limit, &p);

	return rc != WARBLE_OK ? ctl_fail(x, rc) : ctl_posts_out(x, p);
}

/* ctl_relate runs follow or unfollow. */
static int
ctl_relate(ctl *x, int follow)
{
	int rc = follow ? warble_follow(x->c, x->args[0]) : warble_unfollow(x->c, x->args[0]);

	if (rc != WARBLE_OK) {
		return ctl_fail(x, rc);
	}
	if (x->json) {
		return ctl_emit(json_pack("{s:s}", "name", x->args[0]));
	}
	printf("%s @%s\n", follow ? "following" : "no longer following", x->args[0]);
	return 0;
}

static int
ctl_cmd_follow(ctl *x)
{
	return ctl_relate(x, 1);
}

static int
ctl_cmd_unfollow(ctl *x)
{
	return ctl_relate(x, 0);
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

static const ctl_cmd ctl_cmds[] = {
	{ "register", 1, CTL_O_PASSWORD, ctl_cmd_register, 0, "register NAME [--password PW]" },
	{ "login", 1, CTL_O_PASSWORD, ctl_cmd_login, 0, "login NAME [--password PW]" },
	{ "logout", 0, 0, ctl_cmd_logout, 2, "logout" },
	{ "whoami", 0, 0, ctl_cmd_whoami, 2, "whoami" },
	{ "post", 1, 0, ctl_cmd_post, 2, "post TEXT" },
	{ "delete", 1, 0, ctl_cmd_delete, 2, "delete ID" },
	{ "home", 0, CTL_O_BEFORE | CTL_O_LIMIT, ctl_cmd_home, 2,
	    "home [--before ID] [--limit N]" },
	{ "timeline", 1, CTL_O_BEFORE | CTL_O_LIMIT, ctl_cmd_timeline, 1,
	    "timeline USER [--before ID] [--limit N]" },
	{ "follow", 1, 0, ctl_cmd_follow, 2, "follow USER" },
	{ "unfollow", 1, 0, ctl_cmd_unfollow, 2, "unfollow USER" },
	{ "following", 1, CTL_O_AFTER | CTL_O_LIMIT, ctl_cmd_following, 1,
	    "following USER [--after UID] [--limit N]" },
	{ "fans", 1, CTL_O_AFTER | CTL_O_LIMIT, ctl_cmd_fans, 1,
	    "fans USER [--after UID] [--limit N]" },
	{ "profile", 1, 0, ctl_cmd_profile, 1, "profile USER" },
	{ "update-profile", 0, CTL_O_DISPLAY | CTL_O_BIO, ctl_cmd_update_profile, 2,
	    "update-profile [--display TEXT] [--bio TEXT]" },
};

#define CTL_NCMDS (sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

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
	fprintf(f, "\n"
	           "options:\n"
	           "  --gateway URL    gateway msgpack API (WARBLE_GATEWAY_URL, default "
	           "tcp://127.0.0.1:7100)\n"
	           "  --timeout MS     deadline of each request (default 5000)\n"
	           "  --json           print one JSON object per command\n"
	           "  --password PW    password for register/login (or WARBLE_PASSWORD;\n"
	           "                   prompted without echo on a terminal)\n"
	           "  --before ID      home/timeline: posts older than post ID\n"
	           "  --after UID      following/fans: users after this cursor\n"
	           "  --limit N        page size, 1-100\n"
	           "  --display TEXT, --bio TEXT   update-profile fields\n"
	           "  -h, --help       this help\n"
	           "\n"
	           "The session token is kept in $XDG_CONFIG_HOME/warble/token\n"
	           "(~/.config/warble/token); WARBLE_TOKEN overrides it.\n"
	           "Exit status: 0 success, 1 the request failed, 2 usage error.\n");
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	ctl            x = { 0 };
	const char    *gateway = getenv("WARBLE_GATEWAY_URL");
	const ctl_cmd *cmd = NULL;
	uint64_t       v, timeout = 5000;
	char           pass[CTL_PASS_MAX], token[1024] = "";
	int            opt, rc;

	if (gateway == NULL || gateway[0] == '\0') {
		gateway = "tcp://127.0.0.1:7100";
	}
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			gateway = optarg;
			break;
		case 't':
			if (ctl_parse_u64(optarg, 1, 3600000, &timeout) != 0) {
				return ctl_usage_error(
				    "bad --timeout: '%s' (1-3600000 ms)", optarg);
			}
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
	for (size_t i = 0; i < CTL_NCMDS; i++) {
		if (strcmp(argv[optind], ctl_cmds[i].name) == 0) {
			cmd = &ctl_cmds[i];
		}
	}
	if (cmd == NULL) {
		return ctl_usage_error("unknown command '%s'", argv[optind]);
	}
	x.args = argv + optind + 1;
	x.nargs = argc - optind - 1;
	if (x.nargs != cmd->nargs) {
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
	if ((cmd->opts & CTL_O_PASSWORD) != 0 &&
	    (rc = ctl_password(&x, pass, sizeof(pass), &x.password)) != 0) {
		return rc;
	}
	if (cmd->auth != 0) {
		ctl_token_load(token, sizeof(token));
	}
	if (cmd->auth == 2 && token[0] == '\0') {
		x.local_msg = "not logged in (run: warblectl login NAME)";
		return ctl_fail(&x, WARBLE_EAUTH);
	}
	if ((rc = warble_open(&x.c, gateway, (int)timeout)) != WARBLE_OK) {
		fprintf(stderr, "%s: %s: cannot use gateway %s\n", ctl_prog, warble_errname(rc),
		    gateway);
		return rc == WARBLE_EINVAL ? CTL_EXIT_USAGE : CTL_EXIT_FAIL;
	}
	if (token[0] != '\0' && warble_set_token(x.c, token) != WARBLE_OK) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		warble_close(x.c);
		return CTL_EXIT_FAIL;
	}
	rc = cmd->fn(&x);
	explicit_bzero(pass, sizeof(pass));
	fflush(stdout);
	warble_close(x.c);
	return rc;
}
