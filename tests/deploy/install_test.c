/*
 * install_test.c - the SDK as a user gets it: `make install PREFIX=/usr
 * DESTDIR=<tmp>`, then examples/hello.c built against the installed tree
 * through pkg-config, once against the shared library and once with
 * `pkg-config --static` into a static program, and both run against a
 * live cluster.  Also: the shared library has its soname and exports only
 * warble_*; `make uninstall` leaves nothing behind.
 *
 * Runs from the checkout (tests/run.sh's folder) with the build named by
 * $BUILD; a sanitized build's objects would need the sanitizer's runtime
 * in the example too, so it is skipped there (the release run covers it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wbt.h"
#include "wbt_cluster.h"

static wbt_cluster cl;

/* sh runs a shell command (printf-style) and returns its exit status. */
static int __attribute__((format(printf, 1, 2))) sh(const char *fmt, ...)
{
	char    cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fprintf(stderr, "install_test: %s\n", cmd);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(install, sdk_shared_and_static_through_pkg_config, .fini = wbt_cleanup, .timeout = 300)
{
	const char *build = getenv("BUILD") != NULL ? getenv("BUILD") : "build";
	char        root[256], pc[1024];

	if (wbt_ms(1) > 1) {
		cr_skip_test("sanitized build: covered by the release run");
	}
	cr_assert_eq(wbt_path(root, sizeof(root), "root"), 0);
	/* the .pc file says prefix=/usr: point it at the staged tree */
	snprintf(pc, sizeof(pc),
	    "PKG_CONFIG_PATH=%s/usr/lib/pkgconfig pkg-config --define-variable=prefix=%s/usr", root,
	    root);
	cr_assert_eq(sh("make --no-print-directory -s install BUILD=%s PREFIX=/usr DESTDIR=%s "
	                ">/dev/null",
	                 build, root),
	    0, "make install");
	cr_assert_eq(sh("test -f %s/usr/include/warble/warble.h && "
	                "test -f %s/usr/include/warble/wb_errors.h && "
	                "test -L %s/usr/lib/libwarble.so && test -L %s/usr/lib/libwarble.so.0 && "
	                "test -f %s/usr/lib/libwarble.a && test -x %s/usr/bin/warblectl",
	                 root, root, root, root, root, root),
	    0, "the installed layout");
	cr_assert_eq(
	    sh("readelf -d %s/usr/lib/libwarble.so.0 | grep -q 'SONAME.*libwarble.so.0'", root), 0,
	    "soname libwarble.so.0");
	cr_assert_eq(sh("test -z \"$(nm -D --defined-only %s/usr/lib/libwarble.so.0 | "
	                "awk '$2 ~ /^[TDBR]$/ {print $3}' | grep -v '^warble_')\"",
	                 root),
	    0, "only warble_* exported");
	cr_assert_eq(
	    sh("cc -o %s/hello-shared examples/hello.c $(%s --cflags --libs warble)", root, pc), 0,
	    "build against the shared library");
	cr_assert_eq(sh("cc -static -o %s/hello-static examples/hello.c $(%s --static --cflags "
	                "--libs warble)",
	                 root, pc),
	    0, "build statically");

	cr_assert_eq(wbt_cluster_start(&cl, NULL), 0);
	cr_assert_eq(sh("LD_LIBRARY_PATH=%s/usr/lib %s/hello-shared %s hello_shared pass-0000",
	                 root, root, cl.gateway_url),
	    0, "the shared program against the cluster");
	cr_assert_eq(sh("%s/hello-static %s hello_static pass-0000", root, cl.gateway_url), 0,
	    "the static program against the cluster");
	cr_assert_eq(sh("LD_LIBRARY_PATH=%s/usr/lib ldd %s/hello-shared | grep -q 'libwarble.so.0 "
	                "=> %s/usr/lib'",
	                 root, root, root),
	    0, "the shared program uses the installed libwarble.so.0");
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);

	cr_assert_eq(sh("make --no-print-directory -s uninstall BUILD=%s PREFIX=/usr DESTDIR=%s",
	                 build, root),
	    0, "make uninstall");
	cr_assert_eq(sh("test -z \"$(find %s/usr -type f -o -type l)\"", root), 0,
	    "uninstall left files behind");
}
