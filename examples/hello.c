/*
 * hello.c - a first program against libwarble: register (or reuse) an
 * account, log in, post, and read the home timeline.
 *
 *   cc hello.c $(pkg-config --cflags --libs warble) -o hello
 *   ./hello [gateway URL (tcp://127.0.0.1:7100)] [name] [password]
 */
#include <stdio.h>
#include <warble/warble.h>

int
main(int argc, char **argv)
{
	const char     *url = argc > 1 ? argv[1] : "tcp://127.0.0.1:7100";
	const char     *name = argc > 2 ? argv[2] : "hello_example";
	const char     *pass = argc > 3 ? argv[3] : "hello-password";
	warble_client  *c = NULL;
	warble_posts_t *home = NULL;
	uint64_t        uid = 0, id = 0;
	int             rc;

	if ((rc = warble_open(&c, url, 5000)) != WARBLE_OK) {
		fprintf(stderr, "hello: %s\n", warble_strerror(rc));
		return 1;
	}
	rc = warble_register(c, name, pass, &uid);
	if (rc != WARBLE_OK && rc != WARBLE_EEXIST) {
		fprintf(stderr, "hello: register: %s\n", warble_errmsg(c));
		goto out;
	}
	if ((rc = warble_login(c, name, pass, &uid)) != WARBLE_OK ||
	    (rc = warble_post(c, "hello from libwarble", &id)) != WARBLE_OK ||
	    (rc = warble_timeline(c, name, 0, 10, &home)) != WARBLE_OK) {
		fprintf(stderr, "hello: %s: %s\n", warble_errname(rc), warble_errmsg(c));
		goto out;
	}
	printf("uid %llu posted %llu; newest of %zu: %s\n", (unsigned long long)uid,
	    (unsigned long long)id, home->n, home->n > 0 ? home->posts[0].text : "");
	rc = home->n > 0 && home->posts[0].id == id ? WARBLE_OK : WARBLE_ENOTFOUND;
out:
	warble_posts_free(home);
	warble_close(c);
	return rc == WARBLE_OK ? 0 : 1;
}
