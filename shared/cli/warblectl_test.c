/*
 * warblectl_test.c - warblectl as a real program: spawned with argument
 * vectors (no shell), its stdout, stderr and exit status checked, against
 * a real cluster (wbt_cluster) for the happy path and the errors, and for
 * posts with a title, a category and images, upload and media.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wbt.h"
#include "wbt_cluster.h"
#include "wbt_png.h"

extern char **environ;

#define CT_OUT_MAX 65536

typedef struct ct_out {
	int    status; /* exit code, or 128+signal */
	char   out[CT_OUT_MAX];
	char   err[CT_OUT_MAX];
	size_t nout; /* bytes in out (binary output has NULs) */
} ct_out;

static wbt_cluster cl;
static char        gateway_env[WBT_URL_MAX + 32];

/* ct_env builds the child's environment: ours minus WARBLE_* and XDG_CONFIG_HOME, plus extra. */
static char **
ct_env(const char *const *extra)
{
	static char *envp[512];
	int          k = 0;

	for (char **e = environ; *e != NULL && k < 400; e++) {
		if (strncmp(*e, "WARBLE_", 7) != 0 && strncmp(*e, "XDG_CONFIG_HOME=", 16) != 0) {
			envp[k++] = *e;
		}
	}
	if (gateway_env[0] != '\0') {
		envp[k++] = gateway_env;
	}
	for (int i = 0; extra != NULL && extra[i] != NULL && k < 510; i++) {
		envp[k++] = (char *)extra[i];
	}
	envp[k] = NULL;
	return envp;
}

/* ct_run runs warblectl with args (NULL-terminated, after argv[0]) and extra env; stdin is /dev/null. */
/* ct_start starts the test's cluster and points warblectl at its gateway. */
static void
ct_start(void)
{
	cr_assert_eq(wbt_cluster_start(&cl, NULL), 0);
	snprintf(gateway_env, sizeof(gateway_env), "WARBLE_GATEWAY_URL=%s", cl.gateway_url);
}

/* ct_config sets env to "XDG_CONFIG_HOME=<a folder of the test named who>": one user's saved token. */
static void
ct_config(char *env, size_t n, const char *who)
{
	cr_assert_gt(n, 16);
	memcpy(env, "XDG_CONFIG_HOME=", 16);
	cr_assert_eq(wbt_path(env + 16, n - 16, who), 0);
}

static void
ct_run(ct_out *o, const char *const *extra_env, const char *const *args)
{
	char                       bin[512];
	char                      *argv[64];
	int                        po[2], pe[2], n = 0, st;
	size_t                     lo = 0, le = 0;
	pid_t                      pid;
	posix_spawn_file_actions_t fa;

	memset(o, 0, sizeof(*o));
	cr_assert_eq(wbt_bin_path(bin, sizeof(bin), "warblectl"), 0);
	argv[n++] = bin;
	argv[n++] = "--timeout=20000"; /* a loaded CI machine; tests may override */
	for (int i = 0; args[i] != NULL && n < 62; i++) {
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	cr_assert_eq(pipe2(po, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(pe, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, argv, ct_env(extra_env)), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);

	long long     deadline = wbt_now_ms() + 20000;
	struct pollfd pf[2] = { { .fd = po[0], .events = POLLIN },
		{ .fd = pe[0], .events = POLLIN } };
	int           open_fds = 2;
	while (open_fds > 0) {
		int left = (int)(deadline - wbt_now_ms());
		if (left <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			cr_assert_fail("warblectl %s did not finish in 20 s", args[0]);
		}
		if (poll(pf, 2, left) < 0) {
			continue;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
				continue;
			}
			char   *buf = i == 0 ? o->out : o->err;
			size_t *len = i == 0 ? &lo : &le;
			char    tmp[4096];
			ssize_t r = read(pf[i].fd, tmp, sizeof(tmp));
			if (r <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
				continue;
			}
			size_t take =
			    (size_t)r < CT_OUT_MAX - 1 - *len ? (size_t)r : CT_OUT_MAX - 1 - *len;
			memcpy(buf + *len, tmp, take);
			*len += take;
		}
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	o->nout = lo;
}

#define CT_ARGS(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* ct_expect runs a command and checks its exit status and that stderr contains want_err (if given). */
static void
ct_expect(
    ct_out *o, const char *const *env, const char *const *args, int status, const char *want_err)
{
	ct_run(o, env, args);
	cr_assert_eq(o->status, status,
	    "warblectl %s %s: status %d, want %d\nstdout: %s\nstderr: %s", args[0],
	    args[1] != NULL ? args[1] : "", o->status, status, o->out, o->err);
	if (want_err != NULL) {
		cr_assert(
		    strstr(o->err, want_err) != NULL, "stderr lacks '%s': %s", want_err, o->err);
	}
}

/* ct_json parses a command's stdout as one JSON object. */
static json_t *
ct_json(const ct_out *o)
{
	json_error_t e;
	json_t      *j = json_loads(o->out, 0, &e);

	cr_assert_not_null(j, "not JSON (%s): %s", e.text, o->out);
	cr_assert(json_is_object(j));
	return j;
}

Test(warblectl, usage_errors, .fini = wbt_cleanup, .timeout = 60)
{
	ct_out *o = malloc(sizeof(*o));
	char    nowhere[WBT_URL_MAX];

	cr_assert_eq(wbt_ipc_url(nowhere, sizeof(nowhere), "nothing-here"), 0);
	snprintf(gateway_env, sizeof(gateway_env), "WARBLE_GATEWAY_URL=%s", nowhere);
	ct_expect(o, NULL, CT_ARGS("--help"), 0, NULL);
	cr_assert(strstr(o->out, "usage: warblectl") != NULL);
	cr_assert(strstr(o->out, "timeline USER") != NULL);
	ct_run(o, NULL, (const char *const[]) { NULL });
	cr_assert_eq(o->status, 2);
	ct_expect(o, NULL, CT_ARGS("frobnicate"), 2, "unknown command 'frobnicate'");
	ct_expect(o, NULL, CT_ARGS("--bogus", "whoami"), 2, "unknown option");
	ct_expect(o, NULL, CT_ARGS("home", "--limit", "abc"), 2, "bad --limit");
	ct_expect(o, NULL, CT_ARGS("home", "--limit", "0"), 2, "bad --limit");
	ct_expect(o, NULL, CT_ARGS("home", "--limit", "101"), 2, "bad --limit");
	ct_expect(o, NULL, CT_ARGS("home", "--limit", "-5"), 2, "bad --limit");
	ct_expect(o, NULL, CT_ARGS("home", "--before", "12x"), 2, "bad --before");
	ct_expect(
	    o, NULL, CT_ARGS("home", "--before", "99999999999999999999999"), 2, "bad --before");
	ct_expect(o, NULL, CT_ARGS("home", "--limit"), 2, "needs a value");
	ct_expect(o, NULL, CT_ARGS("delete", "abc"), 2, "bad post id");
	ct_expect(o, NULL, CT_ARGS("delete", "0"), 2, "bad post id");
	ct_expect(o, NULL, CT_ARGS("post"), 2, "needs more arguments");
	ct_expect(o, NULL, CT_ARGS("follow", "a", "b"), 2, "takes fewer arguments");
	ct_expect(o, NULL, CT_ARGS("follow", "bob", "--limit", "5"), 2, "does not apply");
	ct_expect(o, NULL, CT_ARGS("--timeout", "soon", "whoami"), 2, "bad --timeout");
	ct_expect(o, NULL, CT_ARGS("register", "zed"), 2, "password is required");
	ct_expect(o, NULL, CT_ARGS("--help"), 0, NULL);
	cr_assert(strstr(o->out, "upload FILE") != NULL && strstr(o->out, "media ID") != NULL &&
	              strstr(o->out, "--image FILE") != NULL,
	    "%s", o->out);
	ct_expect(o, NULL, CT_ARGS("post", "--alt", "a cat", "hi"), 2, "must follow an --image");
	ct_expect(o, NULL, CT_ARGS("post", "--image", "f.png", "--alt", "a", "--alt", "b", "hi"), 2,
	    "must follow an --image");
	ct_expect(o, NULL,
	    CT_ARGS("post", "--image", "1", "--image", "2", "--image", "3", "--image", "4",
	        "--image", "5", "hi"),
	    2, "too many --image");
	ct_expect(o, NULL, CT_ARGS("post", "--title", "t"), 2, "needs more arguments");
	ct_expect(o, NULL, CT_ARGS("home", "--category", "cats"), 2, "does not apply");
	ct_expect(o, NULL, CT_ARGS("upload"), 2, "needs more arguments");
	ct_expect(o, NULL, CT_ARGS("media"), 2, "needs more arguments");
	ct_expect(o, NULL, CT_ARGS("media", "7-1", "-o"), 2, "needs a value");
	ct_expect(o, NULL, CT_ARGS("media", "7", "-o", "x"), 2, "bad media id");
	ct_expect(o, NULL, CT_ARGS("media", "0-1", "-o", "x"), 2, "bad media id");
	ct_expect(o, NULL, CT_ARGS("--json", "media", "7-1"), 2, "needs -o FILE");
	ct_expect(o, NULL, CT_ARGS("timeline", "bob", "-o", "x"), 2, "does not apply");
	/* Well-formed, but nobody is listening: a request failure, not usage. */
	ct_expect(o, NULL, CT_ARGS("--timeout", "500", "profile", "zed"), 1, "warblectl: ");
	cr_assert(strstr(o->err, "UNAVAILABLE") != NULL || strstr(o->err, "TIMEOUT") != NULL, "%s",
	    o->err);
	free(o);
}

Test(warblectl, happy_path_and_errors, .fini = wbt_cleanup, .timeout = 120)
{
	ct_out     *o = malloc(sizeof(*o));
	char        xa[300], xb[300], tokpath[320], toolong[300];
	json_t     *j;
	struct stat sb;

	ct_start();
	ct_config(xa, sizeof(xa), "cfg-alice");
	ct_config(xb, sizeof(xb), "cfg-bob");
	const char *const alice[] = { xa, "WARBLE_PASSWORD=password1", NULL };
	const char *const bob[] = { xb, NULL };

	ct_expect(o, alice, CT_ARGS("register", "alice"), 0, NULL);
	cr_assert(strstr(o->out, "registered @alice") != NULL, "%s", o->out);
	ct_expect(o, alice, CT_ARGS("register", "alice"), 1,
	    "warblectl: NAME_TAKEN: username already taken");
	ct_expect(o, bob, CT_ARGS("--json", "register", "bob", "--password", "password2"), 0, NULL);
	j = ct_json(o);
	cr_assert(json_is_true(json_object_get(j, "ok")));
	cr_assert_str_eq(json_string_value(json_object_get(j, "name")), "bob");
	cr_assert_gt(json_integer_value(json_object_get(j, "uid")), 0);
	json_decref(j);

	ct_expect(o, alice, CT_ARGS("login", "alice", "--password", "wrong-password"), 1,
	    "warblectl: BAD_CREDENTIALS");
	ct_expect(o, alice, CT_ARGS("whoami"), 1, "UNAUTHORIZED");
	ct_expect(o, alice, CT_ARGS("login", "alice"), 0, NULL);
	snprintf(tokpath, sizeof(tokpath), "%s/warble/token", xa + 16);
	cr_assert_eq(stat(tokpath, &sb), 0, "login saves the token");
	cr_assert_eq(sb.st_mode & 0777, 0600, "token file mode %o", sb.st_mode & 0777);
	ct_expect(o, bob, CT_ARGS("login", "bob", "--password", "password2"), 0, NULL);

	ct_expect(o, alice, CT_ARGS("whoami"), 0, NULL);
	cr_assert(strstr(o->out, "@alice") != NULL, "%s", o->out);
	ct_expect(o, alice, CT_ARGS("post", "hello from the shell-less test"), 0, NULL);
	cr_assert(strstr(o->out, "posted #") != NULL, "%s", o->out);
	ct_expect(o, alice, CT_ARGS("--json", "post", "second post"), 0, NULL);
	j = ct_json(o);
	const char *id = json_string_value(json_object_get(j, "id"));
	cr_assert_not_null(id, "ids are JSON strings: %s", o->out);
	char idbuf[32];
	snprintf(idbuf, sizeof(idbuf), "%s", id);
	json_decref(j);

	memset(toolong, 'z', 281);
	toolong[281] = '\0';
	ct_expect(o, alice, CT_ARGS("post", toolong), 1, "warblectl: TEXT_TOO_LONG");
	ct_expect(o, alice, CT_ARGS("post", "bad \xff utf-8"), 1, "warblectl: BAD_TEXT");
	ct_expect(o, alice, CT_ARGS("--json", "follow", "alice"), 1, "FOLLOW_SELF");
	j = ct_json(o);
	cr_assert(json_is_false(json_object_get(j, "ok")));
	cr_assert_str_eq(json_string_value(json_object_get(j, "err")), "FOLLOW_SELF");
	json_decref(j);
	ct_expect(o, alice, CT_ARGS("follow", "nobody"), 1, "warblectl: NO_SUCH_USER");
	ct_expect(o, alice, CT_ARGS("profile", "nobody"), 1, "NO_SUCH_USER");
	const char *const bogus[] = { xa, "WARBLE_TOKEN=bogus", NULL };
	ct_expect(o, bogus, CT_ARGS("whoami"), 1, "warblectl: UNAUTHORIZED");

	ct_expect(o, bob, CT_ARGS("follow", "alice"), 0, NULL);
	cr_assert(strstr(o->out, "following @alice") != NULL, "%s", o->out);
	long long deadline = wbt_now_ms() + 10000;
	for (;;) {
		ct_expect(o, bob, CT_ARGS("--json", "home", "--limit", "10"), 0, NULL);
		j = ct_json(o);
		json_t *posts = json_object_get(j, "posts");
		cr_assert(json_is_array(posts));
		size_t n = json_array_size(posts);
		if (n == 2) {
			json_t *p0 = json_array_get(posts, 0);
			cr_assert_str_eq(json_string_value(json_object_get(p0, "id")), idbuf);
			cr_assert_str_eq(
			    json_string_value(json_object_get(p0, "author_name")), "alice");
			cr_assert_str_eq(
			    json_string_value(json_object_get(p0, "text")), "second post");
			json_decref(j);
			break;
		}
		json_decref(j);
		cr_assert_lt(wbt_now_ms(), deadline, "home never got both posts");
		wbt_sleep_ms(50);
	}
	ct_expect(o, bob, CT_ARGS("home"), 0, NULL);
	cr_assert(strstr(o->out, "@alice") != NULL && strstr(o->out, "second post") != NULL, "%s",
	    o->out);
	ct_expect(o, bob, CT_ARGS("timeline", "alice", "--limit", "1"), 0, NULL);
	cr_assert(strstr(o->out, "more: --before") != NULL, "%s", o->out);

	ct_expect(o, bob, CT_ARGS("--json", "profile", "alice"), 0, NULL);
	j = ct_json(o);
	cr_assert_eq(json_integer_value(json_object_get(j, "followers")), 1);
	cr_assert(json_is_true(json_object_get(j, "followed")));
	json_decref(j);
	ct_expect(o, bob, CT_ARGS("fans", "alice"), 0, NULL);
	cr_assert(strstr(o->out, "@bob") != NULL, "%s", o->out);
	ct_expect(o, bob, CT_ARGS("following", "bob"), 0, NULL);
	cr_assert(strstr(o->out, "@alice") != NULL, "%s", o->out);

	/* show: one post by its id, to anyone (bob's token is sent, and not needed) */
	ct_expect(o, bob, CT_ARGS("show", idbuf), 0, NULL);
	cr_assert(
	    strstr(o->out, "@alice  ") == o->out && strstr(o->out, "\n  second post\n") != NULL,
	    "%s", o->out);
	cr_assert(strstr(o->out, idbuf) != NULL, "%s", o->out);
	ct_expect(o, bob, CT_ARGS("--json", "show", idbuf), 0, NULL);
	j = ct_json(o);
	cr_assert(json_is_true(json_object_get(j, "ok")));
	cr_assert_str_eq(json_string_value(json_object_get(j, "id")), idbuf);
	cr_assert_str_eq(json_string_value(json_object_get(j, "author_name")), "alice");
	cr_assert_str_eq(json_string_value(json_object_get(j, "text")), "second post");
	json_decref(j);
	ct_expect(o, bob, CT_ARGS("show", "12x"), 2, "bad post id");
	ct_expect(o, bob, CT_ARGS("show"), 2, NULL);

	ct_expect(o, alice, CT_ARGS("delete", idbuf), 0, NULL);
	ct_expect(o, alice, CT_ARGS("delete", idbuf), 1, "NO_SUCH_POST");
	ct_expect(o, bob, CT_ARGS("show", idbuf), 1, "warblectl: NO_SUCH_POST");
	ct_expect(o, bob, CT_ARGS("unfollow", "alice"), 0, NULL);

	ct_expect(o, alice, CT_ARGS("logout"), 0, NULL);
	cr_assert_neq(stat(tokpath, &sb), 0, "logout removes the token file");
	ct_expect(o, alice, CT_ARGS("whoami"), 1, "warblectl: UNAUTHORIZED");
	cr_assert_eq(wbt_cluster_stop(&cl, 10000), 0);
	free(o);
}

/* ct_file_is tells whether path holds exactly len bytes of data. */
static bool
ct_file_is(const char *path, const void *data, size_t len)
{
	FILE  *f = fopen(path, "rb");
	char  *buf = malloc(len + 1);
	size_t n = f != NULL && buf != NULL ? fread(buf, 1, len + 1, f) : 0;
	bool   same = n == len && memcmp(buf, data, len) == 0;

	if (f != NULL) {
		fclose(f);
	}
	free(buf);
	return same;
}

/* ct_file_read returns path's bytes (malloc'd, *len of them). */
static unsigned char *
ct_file_read(const char *path, size_t *len)
{
	FILE          *f = fopen(path, "rb");
	unsigned char *buf = malloc(1 << 22);

	cr_assert(f != NULL && buf != NULL, "%s", path);
	*len = fread(buf, 1, 1 << 22, f);
	fclose(f);
	return buf;
}

/* ct_png writes a w x h PNG to <dir>/name and returns its bytes (*len of them). */
static unsigned char *
ct_png(char *path, size_t n, const char *name, uint32_t w, uint32_t h, uint32_t seed, size_t *len)
{
	unsigned char *png = wbt_png(w, h, seed, len);

	cr_assert_not_null(png);
	cr_assert_eq(wbt_path(path, n, name), 0);
	cr_assert_eq(wbt_write_file(path, png, *len), 0);
	return png;
}

Test(warblectl, images, .fini = wbt_cleanup, .timeout = 120)
{
	ct_out *o = malloc(sizeof(*o));
	char   xa[300], xb[300], xn[300], f1[256], f2[256], f3[256], ftxt[256], out[256], want[128];
	size_t l1, l2, l3;
	unsigned char *p1, *p2, *p3;
	json_t        *j;

	ct_start();
	ct_config(xa, sizeof(xa), "cfg-alice");
	ct_config(xb, sizeof(xb), "cfg-bob");
	const char *const alice[] = { xa, "WARBLE_PASSWORD=password1", NULL };
	const char *const bob[] = { xb, "WARBLE_PASSWORD=password2", NULL };
	ct_config(xn, sizeof(xn), "cfg-nobody");
	const char *const nobody[] = { xn, NULL }; /* no token */
	p1 = ct_png(f1, sizeof(f1), "one.png", 40, 30, 1, &l1);
	p2 = ct_png(f2, sizeof(f2), "two.png", 16, 64, 2, &l2);
	p3 = ct_png(f3, sizeof(f3), "three.png", 8, 8, 3, &l3);
	cr_assert_eq(wbt_path(ftxt, sizeof(ftxt), "notes.txt"), 0);
	cr_assert_eq(wbt_write_file(ftxt, "not an image\n", 13), 0);
	cr_assert_eq(wbt_path(out, sizeof(out), "fetched.png"), 0);

	ct_expect(o, alice, CT_ARGS("register", "alice"), 0, NULL);
	ct_expect(o, alice, CT_ARGS("login", "alice"), 0, NULL);
	ct_expect(o, bob, CT_ARGS("register", "bob"), 0, NULL);
	ct_expect(o, bob, CT_ARGS("login", "bob"), 0, NULL);
	ct_expect(o, bob, CT_ARGS("follow", "alice"), 0, NULL);

	/* upload: the id, type and dimensions, and the preview's */
	ct_expect(o, alice, CT_ARGS("upload", f1), 0, NULL);
	cr_assert(strstr(o->out, "media ") == o->out, "%s", o->out);
	cr_assert(strstr(o->out, " image/png 40x30 (") != NULL, "%s", o->out);
	cr_assert(strstr(o->out, " bytes), preview 40x30 (") != NULL, "%s", o->out);
	ct_expect(o, alice, CT_ARGS("--json", "upload", f3), 0, NULL);
	j = ct_json(o);
	cr_assert_str_eq(json_string_value(json_object_get(j, "type")), "image/png");
	cr_assert_eq(json_integer_value(json_object_get(j, "width")), 8);
	cr_assert_eq(json_integer_value(json_object_get(j, "height")), 8);
	cr_assert_eq(json_integer_value(json_object_get(j, "preview_width")), 8);
	cr_assert_gt(json_integer_value(json_object_get(j, "preview_size")), 0);
	json_int_t size3 = json_integer_value(json_object_get(j, "size"));
	char       up3[64];
	snprintf(up3, sizeof(up3), "%s", json_string_value(json_object_get(j, "media")));
	json_decref(j);
	/* an upload is its uploader's alone until it is on a post; what is stored is
	 * the image written again, of the size the upload said */
	ct_expect(o, alice, CT_ARGS("media", up3, "-o", out), 0, NULL);
	cr_assert(strstr(o->out, "not yet on a post") != NULL, "%s", o->out);
	size_t         s3;
	unsigned char *stored3 = ct_file_read(out, &s3);
	cr_assert_eq((json_int_t)s3, size3);
	cr_assert_eq(memcmp(stored3, "\x89PNG", 4), 0);
	free(stored3);
	ct_expect(o, bob, CT_ARGS("media", up3, "-o", out), 1, "warblectl: NO_SUCH_MEDIA");
	ct_expect(o, alice, CT_ARGS("media", up3, "--preview", "-o", out), 0, NULL);
	cr_assert(strstr(o->out, "(image/webp 8x8, not yet on a post)") != NULL, "%s", o->out);

	/* post --image: uploads, then publishes; --alt goes with the --image before it */
	ct_expect(o, alice,
	    CT_ARGS("--json", "post", "--title", "Grey things", "--category", "cats", "--image", f1,
	        "--alt", "a grey stripe", "--image", f2, "look at these"),
	    0, NULL);
	j = ct_json(o);
	cr_assert_not_null(json_string_value(json_object_get(j, "id")), "%s", o->out);
	char rich_id[32];
	snprintf(rich_id, sizeof(rich_id), "%s", json_string_value(json_object_get(j, "id")));
	json_t *ims = json_object_get(j, "images");
	cr_assert_eq(json_array_size(ims), 2, "%s", o->out);
	char m1[64], m2[64];
	snprintf(m1, sizeof(m1), "%s", json_string_value(json_array_get(ims, 0)));
	snprintf(m2, sizeof(m2), "%s", json_string_value(json_array_get(ims, 1)));
	json_decref(j);
	ct_expect(o, alice, CT_ARGS("post", "--category", "dogs", "--image", f3), 0, NULL);
	cr_assert(strstr(o->out, "posted #") != NULL, "no TEXT with an image: %s", o->out);
	ct_expect(o, alice, CT_ARGS("post", "--image", f3, ""), 0, NULL);

	/* a follower's home shows them */
	long long deadline = wbt_now_ms() + 10000;
	for (;;) {
		ct_expect(o, bob, CT_ARGS("--json", "home"), 0, NULL);
		j = ct_json(o);
		if (json_array_size(json_object_get(j, "posts")) == 3) {
			break;
		}
		json_decref(j);
		cr_assert_lt(wbt_now_ms(), deadline, "home never got the three posts");
		wbt_sleep_ms(50);
	}
	json_t *rich = json_array_get(json_object_get(j, "posts"), 2);
	cr_assert_str_eq(json_string_value(json_object_get(rich, "title")), "Grey things");
	cr_assert_str_eq(json_string_value(json_object_get(rich, "category")), "cats");
	cr_assert_str_eq(json_string_value(json_object_get(rich, "text")), "look at these");
	ims = json_object_get(rich, "images");
	cr_assert_eq(json_array_size(ims), 2);
	json_t *i0 = json_array_get(ims, 0), *i1 = json_array_get(ims, 1);
	cr_assert_str_eq(json_string_value(json_object_get(i0, "media")), m1);
	cr_assert_str_eq(json_string_value(json_object_get(i0, "type")), "image/png");
	cr_assert_eq(json_integer_value(json_object_get(i0, "width")), 40);
	cr_assert_eq(json_integer_value(json_object_get(i0, "height")), 30);
	cr_assert_str_eq(json_string_value(json_object_get(i0, "alt")), "a grey stripe");
	cr_assert_str_eq(json_string_value(json_object_get(i1, "media")), m2);
	cr_assert_eq(json_integer_value(json_object_get(i1, "width")), 16);
	cr_assert_eq(json_integer_value(json_object_get(i1, "height")), 64);
	cr_assert_null(json_object_get(i1, "alt"), "no alt: none in JSON");
	json_t *last = json_array_get(json_object_get(j, "posts"), 0);
	cr_assert_null(json_object_get(last, "title"));
	cr_assert_null(json_object_get(last, "category"));
	cr_assert_str_eq(json_string_value(json_object_get(last, "text")), "");
	json_decref(j);
	ct_expect(o, bob, CT_ARGS("home"), 0, NULL);
	cr_assert(
	    strstr(o->out, "\n  [cats] Grey things\n  look at these\n") != NULL, "%s", o->out);
	snprintf(want, sizeof(want), "\n  image %s image/png 40x30 \"a grey stripe\"\n", m1);
	cr_assert(strstr(o->out, want) != NULL, "%s", o->out);
	snprintf(want, sizeof(want), "\n  image %s image/png 16x64\n", m2);
	cr_assert(strstr(o->out, want) != NULL, "%s", o->out);
	cr_assert(strstr(o->out, "\n  [dogs]\n  image ") != NULL, "no text line: %s", o->out);

	/* show: the rich post as timelines show it, previews' sizes included, to anyone */
	ct_expect(o, nobody, CT_ARGS("--json", "show", rich_id), 0, NULL);
	j = ct_json(o);
	cr_assert_str_eq(json_string_value(json_object_get(j, "title")), "Grey things");
	cr_assert_str_eq(json_string_value(json_object_get(j, "category")), "cats");
	i0 = json_array_get(json_object_get(j, "images"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(i0, "media")), m1);
	cr_assert_eq(json_integer_value(json_object_get(i0, "preview_width")), 40);
	cr_assert_eq(json_integer_value(json_object_get(i0, "preview_height")), 30);
	json_decref(j);
	ct_expect(o, nobody, CT_ARGS("show", rich_id), 0, NULL);
	cr_assert(
	    strstr(o->out, "\n  [cats] Grey things\n  look at these\n") != NULL, "%s", o->out);

	/* media: the stored bytes, the same to a file or to stdout, for anyone once posted */
	size_t         s1, s2;
	unsigned char *stored1, *stored2;
	ct_expect(o, nobody, CT_ARGS("media", m1, "-o", out), 0, NULL);
	stored1 = ct_file_read(out, &s1);
	snprintf(want, sizeof(want), "wrote %zu bytes to ", s1);
	cr_assert(strstr(o->out, want) == o->out, "%s", o->out);
	ct_expect(o, bob, CT_ARGS("media", m1), 0, NULL);
	cr_assert_eq(o->nout, s1);
	cr_assert_eq(memcmp(o->out, stored1, s1), 0, "media to stdout: other bytes");
	ct_expect(o, bob, CT_ARGS("media", m2, "-o", out), 0, NULL);
	stored2 = ct_file_read(out, &s2);
	ct_expect(o, bob, CT_ARGS("--json", "media", m2, "--output", out), 0, NULL);
	j = ct_json(o);
	cr_assert(json_is_true(json_object_get(j, "public")));
	cr_assert_eq(json_integer_value(json_object_get(j, "size")), (json_int_t)s2);
	cr_assert_str_eq(json_string_value(json_object_get(j, "file")), out);
	json_decref(j);
	cr_assert(ct_file_is(out, stored2, s2));
	ct_expect(o, nobody, CT_ARGS("--json", "media", m2, "--preview", "-o", out), 0, NULL);
	j = ct_json(o);
	cr_assert_str_eq(json_string_value(json_object_get(j, "type")), "image/webp");
	cr_assert_eq(json_integer_value(json_object_get(j, "height")), 64);
	json_decref(j);

	/* timeline --category */
	ct_expect(o, bob, CT_ARGS("--json", "timeline", "alice", "--category", "cats"), 0, NULL);
	j = ct_json(o);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 1, "%s", o->out);
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_array_get(json_object_get(j, "posts"), 0), "title")),
	    "Grey things");
	json_decref(j);
	ct_expect(o, bob, CT_ARGS("timeline", "alice", "--category", "birds"), 0, NULL);
	cr_assert(strstr(o->out, "(no posts)") != NULL, "%s", o->out);

	/* errors */
	ct_expect(o, nobody, CT_ARGS("media", m2, "-o", out), 0, NULL);
	ct_expect(o, alice, CT_ARGS("media", "1-1", "-o", out), 1, "warblectl: NO_SUCH_MEDIA");
	cr_assert(ct_file_is(out, stored2, s2), "a failed fetch leaves the file alone");
	ct_expect(o, alice, CT_ARGS("upload", ftxt), 1, "warblectl: BAD_MEDIA");
	cr_assert(strstr(o->err, "notes.txt") != NULL, "the file is named: %s", o->err);
	ct_expect(o, alice, CT_ARGS("post", "--image", ftxt, "caption"), 1, "warblectl: BAD_MEDIA");
	ct_expect(o, alice, CT_ARGS("post", "--image", "/nonexistent.png", "x"), 1,
	    "cannot read /nonexistent.png");
	ct_expect(o, alice, CT_ARGS("post", "--category", "Bad-Cat", "x"), 1, "warblectl: INVALID");
	ct_expect(o, alice, CT_ARGS("post", "--image", f1, "--image", f2, "--image", f3, "x", "y"),
	    2, "takes fewer arguments");
	ct_expect(o, nobody, CT_ARGS("upload", f1), 1, "not logged in");
	ct_expect(o, bob, CT_ARGS("home"), 0, NULL);
	cr_assert(strstr(o->out, "caption") == NULL, "a failed upload posts nothing: %s", o->out);
	cr_assert_eq(wbt_cluster_stop(&cl, 10000), 0);
	free(p1);
	free(p2);
	free(p3);
	free(stored1);
	free(stored2);
	free(o);
}

Test(warblectl, delete_account_and_admin_delete_user, .fini = wbt_cleanup, .timeout = 120)
{
	ct_out     *o = malloc(sizeof(*o));
	char        xc[300], tokpath[320], user_env[WBT_URL_MAX + 32];
	json_t     *j;
	struct stat sb;

	ct_start();
	ct_config(xc, sizeof(xc), "cfg-carol");
	snprintf(user_env, sizeof(user_env), "WARBLE_USER_URL=%s", cl.user_url);
	const char *const carol[] = { xc, "WARBLE_PASSWORD=password1", NULL };
	const char *const nopass[] = { xc, NULL };
	const char *const admin[] = { user_env, NULL };

	ct_expect(o, carol, CT_ARGS("register", "carol"), 0, NULL);
	ct_expect(o, carol, CT_ARGS("login", "carol"), 0, NULL);
	ct_expect(o, nopass, CT_ARGS("delete-account"), 2, "a password is required");
	ct_expect(o, carol, CT_ARGS("delete-account", "extra"), 2, "takes fewer arguments");
	ct_expect(o, carol, CT_ARGS("delete-account", "--password", "wrong-one"), 1,
	    "warblectl: BAD_CREDENTIALS");
	ct_expect(o, carol, CT_ARGS("whoami"), 0, NULL); /* still there */
	ct_expect(o, carol, CT_ARGS("delete-account"), 0, NULL);
	cr_assert(strstr(o->out, "account deleted") != NULL, "%s", o->out);
	snprintf(tokpath, sizeof(tokpath), "%s/warble/token", xc + 16);
	cr_assert_neq(stat(tokpath, &sb), 0, "the token file is gone");
	ct_expect(o, carol, CT_ARGS("whoami"), 1, "not logged in");
	ct_expect(o, carol, CT_ARGS("login", "carol"), 1, "BAD_CREDENTIALS");
	ct_expect(o, carol, CT_ARGS("profile", "carol"), 1, "NO_SUCH_USER");
	ct_expect(o, carol, CT_ARGS("register", "carol"), 1, "NAME_TAKEN");

	/* the operator's: by name, on the user service's own port, no password */
	ct_expect(o, carol, CT_ARGS("register", "dave"), 0, NULL);
	ct_expect(o, admin, CT_ARGS("admin", "delete-user"), 2, "needs more arguments");
	ct_expect(o, admin, CT_ARGS("--json", "admin", "delete-user", "dave"), 0, NULL);
	j = ct_json(o);
	cr_assert_str_eq(json_string_value(json_object_get(j, "name")), "dave");
	cr_assert_gt(json_integer_value(json_object_get(j, "uid")), 0);
	json_decref(j);
	ct_expect(o, admin, CT_ARGS("admin", "delete-user", "dave"), 1, "NO_SUCH_USER");
	ct_expect(o, carol, CT_ARGS("login", "dave"), 1, "BAD_CREDENTIALS");
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
	free(o);
}

/* ct_store_fake makes dir/<store> holding one file named after it, as a copy of a store. */
static void
ct_store_fake(const char *dir, const char *store)
{
	char path[512];
	int  fd;

	snprintf(path, sizeof(path), "%s/%s", dir, store);
	cr_assert_eq(mkdir(path, 0755), 0, "%s", path);
	snprintf(path, sizeof(path), "%s/%s/CURRENT.%s", dir, store, store);
	cr_assert_geq(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644), 0, "%s", path);
	close(fd);
}

/* ct_has tells whether path exists. */
static bool
ct_has(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * admin restore of a sharded backup (its manifest written here, the
 * stores stand-ins): refused whole without --shard, naming the sharded
 * service, and with a --shard no service has; with --shard i, shard i of
 * each sharded service and every store of one shard go into
 * DATA/<service>; never over a store.
 */
Test(warblectl, restore_sharded, .fini = wbt_cleanup, .timeout = 60)
{
	static const char manifest[] =
	    "{\"warble_backup\": 1, \"consistent\": true, \"services\": [\n"
	    " {\"service\": \"inbox\", \"shard\": 0, \"shards\": 2, \"store\": \"inbox.0\",\n"
	    "  \"applied\": {\"content/0\": 3, \"relation/0\": 2}},\n"
	    " {\"service\": \"inbox\", \"shard\": 1, \"shards\": 2, \"store\": \"inbox.1\",\n"
	    "  \"applied\": {\"content/0\": 4, \"relation/1\": 1}},\n"
	    " {\"service\": \"content\", \"shard\": 0, \"shards\": 1, \"store\": \"content\",\n"
	    "  \"log_last\": {\"content/0\": 4}},\n"
	    " {\"service\": \"relation\", \"shard\": 0, \"shards\": 2, \"store\": \"relation.0\",\n"
	    "  \"log_last\": {\"relation/0\": 2}},\n"
	    " {\"service\": \"relation\", \"shard\": 1, \"shards\": 2, \"store\": \"relation.1\",\n"
	    "  \"log_last\": {\"relation/1\": 5}},\n"
	    " {\"service\": \"user\", \"shard\": 0, \"shards\": 1, \"store\": \"user\"}]}\n";
	static const char *const stores[] = { "inbox.0", "inbox.1", "content", "relation.0",
		"relation.1", "user" };
	ct_out                  *o = malloc(sizeof(*o));
	char                     dir[256], data[256], path[600];
	FILE                    *f;

	cr_assert_not_null(o);
	cr_assert_eq(wbt_path(dir, sizeof(dir), "backup"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	cr_assert_eq(mkdir(dir, 0755), 0);
	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++) {
		ct_store_fake(dir, stores[i]);
	}
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(manifest, f);
	fclose(f);

	ct_expect(o, NULL, CT_ARGS("admin", "restore", dir, data), 1,
	    "holds 2 inbox shards: restore each host's with --shard i");
	cr_assert(!ct_has(data), "a refused restore made %s", data);
	ct_expect(o, NULL, CT_ARGS("admin", "restore", "--shard", "2", dir, data), 1,
	    "has no shard 2: its services have at most 2 shards (0-1)");
	cr_assert(!ct_has(data), "a refused restore made %s", data);
	ct_expect(o, NULL, CT_ARGS("admin", "restore", "--shard", "1", dir, data), 0, NULL);
	static const char *const want[][2] = { { "inbox", "inbox.1" }, { "content", "content" },
		{ "relation", "relation.1" }, { "user", "user" } };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s/CURRENT.%s", data, want[i][0], want[i][1]);
		cr_assert(ct_has(path), "%s/%s is not %s's copy", data, want[i][0], want[i][1]);
	}
	ct_expect(o, NULL, CT_ARGS("admin", "restore", "--shard", "1", dir, data), 1,
	    "a restore goes into a fresh data folder");
	free(o);
}

Test(warblectl, blocks_and_suggestions, .fini = wbt_cleanup, .timeout = 120)
{
	ct_out *o = malloc(sizeof(*o));
	char    xa[300], xb[300], xc[300];
	json_t *j;

	ct_start();
	ct_config(xa, sizeof(xa), "cfg-ada");
	ct_config(xb, sizeof(xb), "cfg-bea");
	ct_config(xc, sizeof(xc), "cfg-cat");
	const char *const ada[] = { xa, "WARBLE_PASSWORD=password1", NULL };
	const char *const bea[] = { xb, "WARBLE_PASSWORD=password1", NULL };
	const char *const cat[] = { xc, "WARBLE_PASSWORD=password1", NULL };
	ct_expect(o, ada, CT_ARGS("register", "ada"), 0, NULL);
	ct_expect(o, bea, CT_ARGS("register", "bea"), 0, NULL);
	ct_expect(o, cat, CT_ARGS("register", "cat"), 0, NULL);
	ct_expect(o, ada, CT_ARGS("login", "ada"), 0, NULL);
	ct_expect(o, bea, CT_ARGS("login", "bea"), 0, NULL);
	ct_expect(o, cat, CT_ARGS("login", "cat"), 0, NULL);

	/* ada follows bea, bea follows cat: cat is ada's suggestion, followed by one */
	ct_expect(o, ada, CT_ARGS("follow", "bea"), 0, NULL);
	ct_expect(o, bea, CT_ARGS("follow", "cat"), 0, NULL);
	ct_expect(o, ada, CT_ARGS("suggestions"), 0, NULL);
	cr_assert(strstr(o->out, "@cat: followed by 1 you follow") != NULL, "%s", o->out);
	ct_expect(o, ada, CT_ARGS("--json", "suggestions", "--limit", "5"), 0, NULL);
	j = ct_json(o);
	json_t *u0 = json_array_get(json_object_get(j, "users"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(u0, "name")), "cat");
	cr_assert_eq(json_integer_value(json_object_get(u0, "followed_by")), 1);
	json_decref(j);

	/* ada blocks bea: the follow ends, bea cannot follow ada, ada's list names bea */
	ct_expect(o, ada, CT_ARGS("block", "bea"), 0, NULL);
	cr_assert(strstr(o->out, "blocking @bea") != NULL, "%s", o->out);
	ct_expect(o, bea, CT_ARGS("follow", "ada"), 1, "warblectl: BLOCKED: this user blocks you");
	ct_expect(o, ada, CT_ARGS("follow", "bea"), 1, "warblectl: BLOCKED");
	ct_expect(o, ada, CT_ARGS("blocks"), 0, NULL);
	cr_assert(strstr(o->out, "@bea") != NULL, "%s", o->out);
	ct_expect(o, ada, CT_ARGS("--json", "profile", "bea"), 0, NULL);
	j = ct_json(o);
	cr_assert(json_is_true(json_object_get(j, "blocking")));
	cr_assert(json_is_false(json_object_get(j, "followed")));
	json_decref(j);
	ct_expect(o, bea, CT_ARGS("profile", "ada"), 0, NULL);
	cr_assert(strstr(o->out, "blocks you") != NULL, "%s", o->out);
	ct_expect(o, ada, CT_ARGS("block", "ada"), 1, "warblectl: INVALID");
	ct_expect(o, ada, CT_ARGS("block"), 2, NULL);
	ct_expect(o, ada, CT_ARGS("unblock", "bea"), 0, NULL);
	cr_assert(strstr(o->out, "no longer blocking @bea") != NULL, "%s", o->out);
	ct_expect(o, ada, CT_ARGS("--json", "blocks"), 0, NULL);
	j = ct_json(o);
	cr_assert_eq(json_array_size(json_object_get(j, "users")), 0);
	json_decref(j);
	ct_expect(o, bea, CT_ARGS("follow", "ada"), 0, NULL);
	cr_assert_eq(wbt_cluster_stop(&cl, 10000), 0);
	free(o);
}
