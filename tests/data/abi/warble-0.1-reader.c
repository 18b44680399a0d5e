/*
 * warble-0.1-reader.c - a program as it was written against libwarble
 * 0.1: built by warble_test (test sdk::old_header_program) against
 * warble-0.1.h, the 0.1 header kept as it was, and linked to the newest
 * libwarble.so.0.  It prints the size of a post as it knows it, then
 * every post of NAME's first page, one per line:
 *
 *   size 104
 *   <id> <author> <time> <author_name> <text>
 */
#include <inttypes.h>
#include <stdio.h>

#include "warble-0.1.h"

int
main(int argc, char **argv)
{
	warble_client  *c;
	warble_posts_t *p;
	int             rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s GATEWAY_URL NAME\n", argv[0]);
		return 2;
	}
	if ((rc = warble_open(&c, argv[1], 10000)) != WARBLE_OK) {
		fprintf(stderr, "warble_open: %s\n", warble_errname(rc));
		return 1;
	}
	if ((rc = warble_timeline(c, argv[2], 0, 0, &p)) != WARBLE_OK) {
		fprintf(stderr, "warble_timeline: %s: %s\n", warble_errname(rc), warble_errmsg(c));
		warble_close(c);
		return 1;
	}
	printf("size %zu\n", sizeof(warble_post_t));
	for (size_t i = 0; i < p->n; i++) {
		const warble_post_t *q = &p->posts[i];
		printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %s %s\n", q->id, q->author, q->time,
		    q->author_name, q->text);
	}
	warble_posts_free(p);
	warble_close(c);
	return 0;
}
