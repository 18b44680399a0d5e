/*
 * browser_test.c - the web page end to end in headless Chromium: starts
 * a cluster whose gateway serves HTTP on a free port and runs
 * tests/browser/e2e.mjs (playwright-core, /usr/bin/chromium) against it:
 * follow, post (one's own post in one's home after a reload) and
 * unfollow, a post's own page opened logged out and gone once deleted,
 * then a post with a title, a category and an image, then an account
 * deleted from its own page.  The screenshots land in
 * tests/artifacts/browser-home.png and tests/artifacts/browser-rich-post.png.
 * fresh_state runs tests/browser/state.mjs against a cluster of its own:
 * nothing stale left on the page.
 * suggestions runs tests/browser/suggest.mjs: a new user's empty home lists
 * whom to follow, a click follows and brings the posts, then a block and an
 * unblock on a profile.  Chromium,
 * node and playwright-core are installed by `make deps`; without them this
 * test fails (it does not skip), so CI cannot pass without running it.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "../http/ht.h"

Test(browser, follow_post_unfollow, .fini = wbt_cleanup, .timeout = 240)
{
	wbt_cluster cl;
	char        root[1024], log[256], cmd[3800], shot[1200], rich[1200];
	struct stat st;
	int         port, rc;

	cr_assert_eq(ht_root(root, sizeof(root), "tests/browser/e2e.mjs"), 0,
	    "cannot find tests/browser/e2e.mjs");
	cr_assert_eq(
	    access("/usr/bin/chromium", X_OK), 0, "/usr/bin/chromium is missing: run make deps");
	cr_assert_eq(
	    system("command -v node >/dev/null 2>&1"), 0, "node is missing: run make deps");
	snprintf(
	    cmd, sizeof(cmd), "%s/tests/browser/node_modules/playwright-core/package.json", root);
	cr_assert_eq(access(cmd, R_OK), 0,
	    "playwright-core is not installed: run make deps (npm ci in tests/browser)");

	port = ht_cluster_start(&cl, NULL);
	cr_assert_gt(port, 0, "cluster did not start");
	cr_assert_eq(wbt_path(log, sizeof(log), "e2e.log"), 0);
	snprintf(shot, sizeof(shot), "%s/tests/artifacts/browser-home.png", root);
	snprintf(rich, sizeof(rich), "%s/tests/artifacts/browser-rich-post.png", root);
	unlink(shot);
	unlink(rich);
	snprintf(cmd, sizeof(cmd),
	    "cd '%s' && timeout -k 5 200 node tests/browser/e2e.mjs http://127.0.0.1:%d '%s' '%s' "
	    ">'%s' 2>&1",
	    root, port, shot, rich, log);
	rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "sed 's/^/    /' '%s' >&2", log);
	if (rc != 0 && system(cmd) != 0) {
		fprintf(stderr, "cannot show %s\n", log);
	}
	cr_assert_eq(rc, 0, "the browser scenario failed (log above)");
	cr_assert_eq(stat(shot, &st), 0, "no screenshot at %s", shot);
	cr_assert_gt(st.st_size, 1000);
	cr_assert_eq(stat(rich, &st), 0, "no screenshot at %s", rich);
	cr_assert_gt(st.st_size, 1000);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* browser_ready checks what the browser tests need: the scenario, Chromium, node and
 * playwright-core; root gets the repository's root. */
static void
browser_ready(char *root, size_t n, const char *script)
{
	char probe[1200];

	cr_assert_eq(ht_root(root, n, script), 0, "cannot find %s", script);
	cr_assert_eq(
	    access("/usr/bin/chromium", X_OK), 0, "/usr/bin/chromium is missing: run make deps");
	cr_assert_eq(
	    system("command -v node >/dev/null 2>&1"), 0, "node is missing: run make deps");
	snprintf(probe, sizeof(probe), "%s/tests/browser/node_modules/playwright-core/package.json",
	    root);
	cr_assert_eq(access(probe, R_OK), 0,
	    "playwright-core is not installed: run make deps (npm ci in tests/browser)");
}

/* browser_run runs cmd (a node scenario, from the root) with its output in log, shown on failure; its status. */
static int
browser_run(const char *cmd, const char *log)
{
	char show[400];
	int  rc = system(cmd);

	snprintf(show, sizeof(show), "sed 's/^/    /' '%s' >&2", log);
	if (rc != 0 && system(show) != 0) {
		fprintf(stderr, "cannot show %s\n", log);
	}
	return rc;
}

/* browser_scenario runs tests/browser/NAME.mjs against a cluster of its own (started with env)
 * as node NAME.mjs URL [arg] ARTIFACTS; failing says what, with the scenario's log. */
static void
browser_scenario(const char *name, const char *const *env, const char *arg, const char *failing)
{
	wbt_cluster cl;
	char        script[64], file[64], root[1024], log[256], cmd[3000];
	int         port;

	snprintf(script, sizeof(script), "tests/browser/%s.mjs", name);
	snprintf(file, sizeof(file), "%s.log", name);
	browser_ready(root, sizeof(root), script);
	port = ht_cluster_start(&cl, env);
	cr_assert_gt(port, 0, "cluster did not start");
	cr_assert_eq(wbt_path(log, sizeof(log), file), 0);
	snprintf(cmd, sizeof(cmd),
	    "cd '%s' && timeout -k 5 200 node %s http://127.0.0.1:%d %s '%s/tests/artifacts' "
	    ">'%s' 2>&1",
	    root, script, port, arg != NULL ? arg : "", root, log);
	cr_assert_eq(browser_run(cmd, log), 0, "%s (log above)", failing);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* The page keeps nothing stale: tests/browser/state.mjs, each of its checks in fresh
 * browser contexts.  WARBLE_MEDIA_MAX is below the default, so a size check in the page
 * holds only with the server's own limit (GET /api/v1/limits). */
Test(browser, fresh_state, .fini = wbt_cleanup, .timeout = 240)
{
	const char *env[] = { "WARBLE_MEDIA_MAX=300000", NULL };

	browser_scenario("state", env, "300000", "a check of the page's state failed");
}

/* A new user follows a suggestion of the empty home and sees its posts; a block from a
 * profile hides them again: tests/browser/suggest.mjs. */
Test(browser, suggestions, .fini = wbt_cleanup, .timeout = 240)
{
	browser_scenario("suggest", NULL, NULL, "the suggestions scenario failed");
}
