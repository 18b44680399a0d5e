/*
 * browser_test.c - the web page end to end in headless Chromium: starts
 * a cluster whose gateway serves HTTP on a free port and runs
 * tests/browser/e2e.mjs (playwright-core, /usr/bin/chromium) against it:
 * follow, post (one's own post in one's home after a reload) and
 * unfollow, a post's own page opened logged out and gone once deleted,
 * then a post with a title, a category and an image, then an account
 * deleted from its own page.  The screenshots land in tests/artifacts/browser-home.png and
 * tests/artifacts/browser-rich-post.png.  Chromium,
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
