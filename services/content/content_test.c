/*
 * content_test.c - the UTF-8 validator (unit) and warble-content as a real
 * daemon: publish, get, timeline paging and time ranges, delete and its
 * permissions, text limits, id order, the event log, rich posts and
 * their images and previews, uploads decoded whole (metadata gone, files
 * joined or cut short refused), uploads through a kill -9, the
 * re-encode pass over a store of images kept as they were uploaded, and
 * the authors with posts (post.authors).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <vips/vips.h>

#include "content_post.h"
#include "content_schema.h"
#include "content_text.h"
#include "rt_client.h"
#include "wb_clock.h"
#include "wb_id.h"
#include "wb_slot.h"
#include "wbt.h"
#include "wbt_img.h"
#include "wbt_png.h"

/* ---- the validator ---- */

typedef struct utf8_case {
	const char *bytes;
	size_t      len;
	long        count; /* -1: invalid */
	const char *what;
} utf8_case;

#define U(s, c, w)                     \
	{                              \
		s, sizeof(s) - 1, c, w \
	}

static const utf8_case utf8_cases[] = {
	U("", 0, "empty"),
	U("hello", 5, "ascii"),
	U("\x00", 1, "NUL is a code point"),
	U("\x7f", 1, "U+007F"),
	U("\xc2\x80", 1, "U+0080 smallest 2-byte"),
	U("\xdf\xbf", 1, "U+07FF largest 2-byte"),
	U("\xe0\xa0\x80", 1, "U+0800 smallest 3-byte"),
	U("\xed\x9f\xbf", 1, "U+D7FF before surrogates"),
	U("\xee\x80\x80", 1, "U+E000 after surrogates"),
	U("\xef\xbf\xbd", 1, "U+FFFD"),
	U("\xef\xbf\xbf", 1, "U+FFFF"),
	U("\xf0\x90\x80\x80", 1, "U+10000 smallest 4-byte"),
	U("\xf4\x8f\xbf\xbf", 1, "U+10FFFF largest"),
	U("h\xc3\xa9llo w\xc3\xb6rld \xe5\xbe\xae\xe5\x8d\x9a \xf0\x9f\x90\xa6", 16, "mixed"),
	U("\x80", -1, "lone continuation"),
	U("\xbf", -1, "lone continuation BF"),
	U("\xc0\x80", -1, "overlong NUL (C0)"),
	U("\xc1\xbf", -1, "overlong C1"),
	U("\xe0\x80\x80", -1, "overlong 3-byte NUL"),
	U("\xe0\x9f\xbf", -1, "overlong U+07FF in 3 bytes"),
	U("\xf0\x80\x80\x80", -1, "overlong 4-byte NUL"),
	U("\xf0\x8f\xbf\xbf", -1, "overlong U+FFFF in 4 bytes"),
	U("\xed\xa0\x80", -1, "surrogate U+D800"),
	U("\xed\xbf\xbf", -1, "surrogate U+DFFF"),
	U("\xed\xa0\xbd\xed\xb2\xa9", -1, "CESU-8 surrogate pair"),
	U("\xf4\x90\x80\x80", -1, "U+110000"),
	U("\xf5\x80\x80\x80", -1, "F5 lead"),
	U("\xf8\x88\x80\x80\x80", -1, "5-byte form"),
	U("\xfc\x84\x80\x80\x80\x80", -1, "6-byte form"),
	U("\xfe", -1, "FE"),
	U("\xff", -1, "FF"),
	U("\xc2", -1, "truncated 2-byte"),
	U("\xe2\x82", -1, "truncated 3-byte"),
	U("\xf0\x9f\x90", -1, "truncated 4-byte"),
	U("a\xc2", -1, "truncated at the end"),
	U("\xc2\x41", -1, "bad continuation (ASCII)"),
	U("\xe2\x28\xa1", -1, "bad second byte"),
	U("\xe2\x82\x28", -1, "bad third byte"),
	U("\xf0\x9f\x90\x28", -1, "bad fourth byte"),
	U("\xc2\xc2\x80", -1, "lead byte as continuation"),
};

Test(text, utf8_table)
{
	for (size_t i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++) {
		const utf8_case *c = &utf8_cases[i];
		cr_expect_eq(text_utf8_count(c->bytes, c->len), c->count, "%s: got %ld want %ld",
		    c->what, text_utf8_count(c->bytes, c->len), c->count);
	}
}

Test(text, every_two_byte_sequence)
{
	/* exhaustive over 2 bytes: valid iff a correct 1- or 2-byte form */
	for (int a = 0; a < 256; a++) {
		for (int b = 0; b < 256; b++) {
			char s[2] = { (char)a, (char)b };
			bool ascii = a < 0x80 && b < 0x80;
			bool two = a >= 0xc2 && a <= 0xdf && b >= 0x80 && b <= 0xbf;
			long want = ascii ? 2 : two ? 1 : -1;
			cr_assert_eq(text_utf8_count(s, 2), want, "%02x %02x", a, b);
		}
	}
}

Test(text, limits)
{
	char buf[4 * 300];
	memset(buf, 'a', 281);
	cr_assert_eq(text_check(buf, 280), WB_OK);
	cr_assert_eq(text_check(buf, 281), WB_ETOOLONG);
	cr_assert_eq(text_check(buf, 0), WB_EBADTEXT);
	cr_assert_eq(text_check(NULL, 0), WB_EBADTEXT);
	for (int i = 0; i < 281; i++) {
		memcpy(buf + 4 * i, "\xf0\x9f\x90\xa6", 4); /* 4 bytes, 1 code point */
	}
	cr_assert_eq(text_check(buf, 4 * 280), WB_OK);
	cr_assert_eq(text_check(buf, 4 * 281), WB_ETOOLONG);
	cr_assert_eq(text_check(buf, 4 * 280 - 1), WB_EBADTEXT);
	buf[0] = (char)0xc0;
	cr_assert_eq(text_check(buf, 4 * 281), WB_EBADTEXT); /* invalid beats long */
}

/* A blank text: nothing but white space and zero-width characters, in every encoding length. */
Test(text, blank)
{
	static const char *const blank[] = {
		" ",
		"\t\n\v\f\r",
		"\xc2\x85",                             /* U+0085 NEXT LINE */
		"\xc2\xa0",                             /* U+00A0 NO-BREAK SPACE */
		"\xe1\x9a\x80",                         /* U+1680 OGHAM SPACE MARK */
		"\xe1\xa0\x8e",                         /* U+180E MONGOLIAN VOWEL SEPARATOR */
		"\xe2\x80\x80\xe2\x80\x8a",             /* U+2000 EN QUAD, U+200A HAIR SPACE */
		"\xe2\x80\x8b\xe2\x80\x8c\xe2\x80\x8d", /* zero width space, non-joiner, joiner */
		"\xe2\x80\xa8\xe2\x80\xa9",             /* LINE and PARAGRAPH SEPARATOR */
		"\xe2\x80\xaf\xe2\x81\x9f", /* NARROW NO-BREAK SPACE, MEDIUM MATHEMATICAL */
		"\xe2\x81\xa0",             /* U+2060 WORD JOINER */
		"\xe3\x80\x80",             /* U+3000 IDEOGRAPHIC SPACE */
		"\xef\xbb\xbf",             /* U+FEFF ZERO WIDTH NO-BREAK SPACE */
		" \xc2\xa0\t\xe3\x80\x80\n",
	};
	static const char *const shown[] = {
		"a", " a ", "\xc2\xa0x\xc2\xa0",
		"\xe3\x80\x80\xe5\xbe\xae", /* an ideographic space, then a CJK character */
		"\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9", /* two emoji joined by U+200D */
		"_", "\xc2\xad", /* U+00AD SOFT HYPHEN: not on the list */
		"\xe2\x80\x8e",  /* U+200E LEFT-TO-RIGHT MARK: not on the list */
	};
	for (size_t i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
		cr_assert(text_blank(blank[i], strlen(blank[i])), "blank %zu", i);
		cr_assert_eq(
		    text_check(blank[i], strlen(blank[i])), WB_OK, "blank %zu is UTF-8", i);
	}
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		cr_assert_not(text_blank(shown[i], strlen(shown[i])), "shown %zu", i);
	}
}

/* ---- the daemon ---- */

static char        url[128], pub_url[128], user_url[128], user_pub[128];
static wbt_daemon *daemon_;
static rt_client  *cli;

static void
start(void)
{
	char data[256];
	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "content"), 0);
	cr_assert_eq(wbt_ipc_url(pub_url, sizeof(pub_url), "content-pub"), 0);
	/* no user service: its log of deletions is not there to read */
	cr_assert_eq(wbt_ipc_url(user_url, sizeof(user_url), "no-user"), 0);
	cr_assert_eq(wbt_ipc_url(user_pub, sizeof(user_pub), "no-user-pub"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	const char *args[] = { "--content-url", url, "--content-pub-url", pub_url, "--user-url",
		user_url, "--user-pub-url", user_pub, "--data", data, NULL };
	daemon_ = wbt_spawn("warble-content", args, NULL);
	cr_assert(daemon_ != NULL);
	cr_assert_eq(wbt_wait_ready(daemon_, url, 15000), 0);
	rt_client_opts o = { .timeout_ms = 10000 };
	cr_assert_eq(rt_client_open(&cli, url, &o), WB_OK);
}

static void
stop(void)
{
	rt_client_close(cli);
	cli = NULL;
	wbt_cleanup();
}

/* call sends req (freed) and returns the reply code; *rep gets the reply (caller frees). */
static int
call(wb_obj *req, wb_obj **rep)
{
	wb_obj *r = NULL;
	int     rc = rt_call(cli, req, &r);
	wb_msg_free(req);
	if (rep) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

static int
publish(uint64_t uid, const char *text, size_t len, uint64_t *id)
{
	wb_obj *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_str(req, WB_F_TEXT, text, len);
	int rc = call(req, &rep);
	if (rc == WB_OK) {
		cr_assert(wb_get_u64(rep, WB_F_ID, id));
		cr_assert_eq(wb_u64(rep, WB_F_TIME, 0), wb_id_ms(*id));
	}
	wb_msg_free(rep);
	return rc;
}

static wb_obj *
timeline(uint64_t uid, uint64_t before, uint64_t limit, uint64_t since, uint64_t until)
{
	wb_obj *req = wb_request(WB_OP_POST_TIMELINE), *rep = NULL;
	wb_set_u64(req, WB_F_UID, uid);
	if (before) {
		wb_set_u64(req, WB_F_BEFORE, before);
	}
	if (limit) {
		wb_set_u64(req, WB_F_LIMIT, limit);
	}
	if (since) {
		wb_set_u64(req, WB_F_SINCE, since);
	}
	if (until) {
		wb_set_u64(req, WB_F_UNTIL, until);
	}
	cr_assert_eq(call(req, &rep), WB_OK);
	return rep;
}

Test(content, publish_get_delete, .init = start, .fini = stop, .timeout = 60)
{
	uint64_t id1, id2;
	cr_assert_eq(publish(7, "hello", 5, &id1), WB_OK);
	cr_assert_eq(publish(8, "w\xc3\xb6rld", 6, &id2), WB_OK);
	cr_assert_geq(wb_id_ms(id2), wb_id_ms(id1));
	cr_assert_eq(wb_id_node(id1), wb_slot_group(wb_slot(7)), "the author's slot group");
	cr_assert_eq(wb_id_node(id2), wb_slot_group(wb_slot(8)));

	wb_obj  *req = wb_request(WB_OP_POST_GET), *rep = NULL;
	uint64_t ids[] = { id2, 12345, id1 };
	wb_set_u64s(req, WB_F_IDS, ids, 3);
	cr_assert_eq(call(req, &rep), WB_OK);
	const wb_obj   *posts;
	size_t          n, nm;
	const uint64_t *missing;
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 2);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id2);
	cr_assert_eq(wb_u64(&posts[0], WB_F_AUTHOR, 0), 8);
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TEXT, ""), "w\xc3\xb6rld");
	cr_assert_eq(wb_u64(&posts[0], WB_F_TIME, 0), wb_id_ms(id2));
	cr_assert_eq(wb_u64(&posts[1], WB_F_ID, 0), id1);
	cr_assert_str_eq(wb_str(&posts[1], WB_F_TEXT, ""), "hello");
	cr_assert(wb_get_u64s(rep, WB_F_MISSING, &missing, &nm));
	cr_assert_eq(nm, 1);
	cr_assert_eq(missing[0], 12345);
	wb_msg_free(rep);

	/* only the author deletes */
	req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, 8);
	wb_set_u64(req, WB_F_ID, id1);
	cr_assert_eq(call(req, NULL), WB_EPERM);
	req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, 7);
	wb_set_u64(req, WB_F_ID, id1 + 1000);
	cr_assert_eq(call(req, NULL), WB_ENOPOST);
	req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, 7);
	wb_set_u64(req, WB_F_ID, id1);
	cr_assert_eq(call(req, NULL), WB_OK);
	req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, 7);
	wb_set_u64(req, WB_F_ID, id1);
	cr_assert_eq(call(req, NULL), WB_ENOPOST, "deleted twice");

	req = wb_request(WB_OP_POST_GET);
	wb_set_u64s(req, WB_F_IDS, &id1, 1);
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert(!wb_get_objs(rep, WB_F_POSTS, &posts, &n) || n == 0);
	cr_assert(wb_get_u64s(rep, WB_F_MISSING, &missing, &nm) && nm == 1);
	wb_msg_free(rep);
	rep = timeline(7, 0, 0, 0, 0);
	cr_assert(!wb_get_objs(rep, WB_F_POSTS, &posts, &n) || n == 0);
	wb_msg_free(rep);

	/* the log: post 7, post 8, delete 7 */
	req = wb_request(WB_OP_POST_LOG);
	wb_set_u64(req, WB_F_FROM, 1);
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert_eq(wb_u64(rep, WB_F_LAST, 0), 3);
	cr_assert(wb_get_objs(rep, WB_F_EVENTS, &posts, &n));
	cr_assert_eq(n, 3);
	static const char *types[] = { "post", "post", "delete" };
	uint64_t           evid[] = { id1, id2, id1 }, evuid[] = { 7, 8, 7 };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(wb_u64(&posts[i], WB_F_SEQ, 0), i + 1);
		cr_assert_str_eq(wb_str(&posts[i], WB_F_TYPE, ""), types[i]);
		cr_assert_eq(wb_u64(&posts[i], WB_F_ID, 0), evid[i]);
		cr_assert_eq(wb_u64(&posts[i], WB_F_UID, 0), evuid[i]);
	}
	wb_msg_free(rep);

	/* too many ids */
	req = wb_request(WB_OP_POST_GET);
	uint64_t *many = wb_add_u64s(req, WB_F_IDS, 1001);
	for (int i = 0; i < 1001; i++) {
		many[i] = (uint64_t)i + 1;
	}
	cr_assert_eq(call(req, NULL), WB_ETOOBIG);
}

/* post.get with author hints: right, wrong, zero and deleted ones all answer as without hints. */
Test(content, page_limit_rule, .init = start, .fini = stop, .timeout = 60)
{
	uint64_t id;
	wb_obj  *req = wb_request(WB_OP_POST_TIMELINE), *rep;

	cr_assert_eq(publish(7, "one", 3, &id), WB_OK);
	wb_set_u64(req, WB_F_UID, 7);
	wb_set_u64(req, WB_F_LIMIT, 0);
	cr_assert_eq(call(req, NULL), WB_EINVAL, "limit 0 is refused");
	rep = timeline(7, 0, 1000000, 0, 0); /* above the maximum: the maximum */
	const wb_obj *posts;
	size_t        n = 0;
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 1);
	wb_msg_free(rep);
}

Test(content, get_with_author_hints, .init = start, .fini = stop, .timeout = 60)
{
	uint64_t id1, id2, id3;
	cr_assert_eq(publish(7, "one", 3, &id1), WB_OK);
	cr_assert_eq(publish(8, "two", 3, &id2), WB_OK);
	cr_assert_eq(publish(7, "three", 5, &id3), WB_OK);
	wb_obj *req = wb_request(WB_OP_POST_DELETE), *rep = NULL;
	wb_set_u64(req, WB_F_UID, 7);
	wb_set_u64(req, WB_F_ID, id3);
	cr_assert_eq(call(req, NULL), WB_OK);

	/* id1 right, id2 wrong (8 wrote it), 999 unknown, id3 deleted (right author), id1 again with 0 */
	uint64_t        ids[] = { id1, id2, 999, id3, id1 }, hints[] = { 7, 9, 7, 7, 0 };
	const wb_obj   *posts;
	const uint64_t *missing;
	size_t          n, nm;
	req = wb_request(WB_OP_POST_GET);
	wb_set_u64s(req, WB_F_IDS, ids, 5);
	wb_set_u64s(req, WB_F_UIDS, hints, 5);
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 3);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id1);
	cr_assert_eq(wb_u64(&posts[0], WB_F_AUTHOR, 0), 7);
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TEXT, ""), "one");
	cr_assert_eq(wb_u64(&posts[1], WB_F_ID, 0), id2);
	cr_assert_eq(
	    wb_u64(&posts[1], WB_F_AUTHOR, 0), 8, "the author is the post's, not the hint");
	cr_assert_str_eq(wb_str(&posts[1], WB_F_TEXT, ""), "two");
	cr_assert_eq(wb_u64(&posts[2], WB_F_ID, 0), id1);
	cr_assert(wb_get_u64s(rep, WB_F_MISSING, &missing, &nm));
	cr_assert_eq(nm, 2);
	cr_assert_eq(missing[0], 999);
	cr_assert_eq(missing[1], id3);
	wb_msg_free(rep);

	/* hints that do not pair with the ids are ignored */
	req = wb_request(WB_OP_POST_GET);
	wb_set_u64s(req, WB_F_IDS, ids, 2);
	wb_set_u64s(req, WB_F_UIDS, hints, 1);
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 2);
	cr_assert_eq(wb_u64(&posts[1], WB_F_AUTHOR, 0), 8);
	wb_msg_free(rep);
}

Test(content, text_rules, .init = start, .fini = stop, .timeout = 60)
{
	char     buf[4 * 300];
	uint64_t id;
	memset(buf, 'x', 281);
	cr_assert_eq(publish(1, buf, 280, &id), WB_OK);
	cr_assert_eq(publish(1, buf, 281, &id), WB_ETOOLONG);
	for (int i = 0; i < 281; i++) {
		memcpy(buf + 3 * i, "\xe5\xbe\xae", 3);
	}
	cr_assert_eq(publish(1, buf, 3 * 280, &id), WB_OK);
	cr_assert_eq(publish(1, buf, 3 * 281, &id), WB_ETOOLONG);
	cr_assert_eq(publish(1, "", 0, &id), WB_EBADTEXT);
	cr_assert_eq(publish(1, "\xc0\xaf", 2, &id), WB_EBADTEXT);
	cr_assert_eq(publish(1, "\xed\xa0\x80", 3, &id), WB_EBADTEXT);
	cr_assert_eq(publish(1, "\xf4\x90\x80\x80", 4, &id), WB_EBADTEXT);
	cr_assert_eq(publish(1, "ok\xe2\x82", 4, &id), WB_EBADTEXT);
	cr_assert_eq(publish(1, " \t\n", 3, &id), WB_EBADTEXT, "only white space");
	cr_assert_eq(publish(1, "\xc2\xa0\xe3\x80\x80\xe2\x80\x8b", 8, &id), WB_EBADTEXT,
	    "NBSP, ideographic space, zero width space");
	wb_obj       *rep = timeline(1, 0, 100, 0, 0);
	const wb_obj *posts;
	size_t        n;
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 2, "only the two valid posts were stored");
	wb_msg_free(rep);
}

/* authors_page reads one page of post.authors (slots: [lo, hi), or none if lo == hi) into out; returns the count, with *next the cursor (0: none). */
static size_t
authors_page(
    uint64_t after, uint64_t limit, unsigned lo, unsigned hi, uint64_t *out, uint64_t *next)
{
	wb_obj         *req = wb_request(WB_OP_POST_AUTHORS), *rep = NULL;
	const uint64_t *v = NULL;
	size_t          n = 0;
	uint64_t        slots[2] = { lo, hi };

	if (after != 0) {
		wb_set_u64(req, WB_F_AFTER, after);
	}
	wb_set_u64(req, WB_F_LIMIT, limit);
	if (lo != hi) {
		wb_set_u64s(req, WB_F_SLOTS, slots, 2);
	}
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &n));
	cr_assert_leq(n, limit);
	memcpy(out, v, n * sizeof(*v));
	*next = wb_u64(rep, WB_F_NEXT, 0);
	wb_msg_free(rep);
	return n;
}

/* post.authors pages through the users with posts, ascending, within a slot range if asked: a
 * user whose posts are all deleted is no longer one. */
Test(content, authors_with_posts, .init = start, .fini = stop, .timeout = 60)
{
	static const uint64_t authors[] = { 3, 5, 8, 13, 21, 34, 55, 89, 144, 233 };
	enum { N = sizeof(authors) / sizeof(authors[0]) };
	uint64_t got[64], next, id;
	size_t   n = 0;

	for (size_t i = 0; i < N; i++) {
		cr_assert_eq(publish(authors[i], "a post", 6, &id), WB_OK);
	}
	cr_assert_eq(publish(4, "deleted", 7, &id), WB_OK);
	wb_obj *req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, 4);
	wb_set_u64(req, WB_F_ID, id);
	cr_assert_eq(call(req, NULL), WB_OK);

	/* pages of 3, every author once, in order; 4 has none left */
	next = 0;
	for (int pages = 0; pages < 10; pages++) {
		n += authors_page(next, 3, 0, 0, got + n, &next);
		if (next == 0) {
			break;
		}
		cr_assert_eq(next, got[n - 1], "the cursor is the last uid given");
	}
	cr_assert_eq(n, N);
	for (size_t i = 0; i < N; i++) {
		cr_assert_eq(got[i], authors[i], "author %zu", i);
	}
	/* a slot range: only the authors whose slot is in it */
	unsigned lo = wb_slot(authors[0]), hi = lo + 1;
	n = authors_page(0, 100, lo, hi, got, &next);
	cr_assert_geq(n, 1);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(wb_slot(got[i]), lo);
	}
	cr_assert_eq(next, 0);
	n = authors_page(authors[N - 1], 100, 0, 0, got, &next);
	cr_assert_eq(n, 0, "nobody after the last");
	/* a malformed range is refused */
	req = wb_request(WB_OP_POST_AUTHORS);
	uint64_t bad[2] = { 10, 10 };
	wb_set_u64s(req, WB_F_SLOTS, bad, 2);
	cr_assert_eq(call(req, NULL), WB_EINVAL);
}

Test(content, timeline_paging_and_time_range, .init = start, .fini = stop, .timeout = 120)
{
	enum { N = 250 };
	static uint64_t ids[N];
	char            text[32];
	for (int i = 0; i < N; i++) {
		int len = snprintf(text, sizeof(text), "post %d", i);
		cr_assert_eq(publish(42, text, (size_t)len, &ids[i]), WB_OK);
		if (i > 0) {
			cr_assert_gt(ids[i], ids[i - 1], "ids increase");
		}
		if (i % 50 == 0) {
			wbt_sleep_ms(3); /* spread the posts over a few ms */
		}
	}
	uint64_t other;
	cr_assert_eq(publish(43, "not mine", 8, &other), WB_OK);

	/* default page is 20, newest first */
	wb_obj       *rep = timeline(42, 0, 0, 0, 0);
	const wb_obj *posts;
	size_t        n;
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 20);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), ids[N - 1]);
	wb_msg_free(rep);

	/* page through everything with limit 33 (and a limit over 100 is capped) */
	uint64_t before = 0;
	int      seen = 0, pages = 0;
	for (;;) {
		cr_assert(pages++ < 100);
		rep = timeline(42, before, 33, 0, 0);
		cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n) || seen == N);
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(wb_u64(&posts[i], WB_F_ID, 0), ids[N - 1 - seen]);
			cr_assert_eq(wb_u64(&posts[i], WB_F_AUTHOR, 0), 42);
			snprintf(text, sizeof(text), "post %d", N - 1 - seen);
			cr_assert_str_eq(wb_str(&posts[i], WB_F_TEXT, ""), text);
			seen++;
		}
		bool more = wb_get_u64(rep, WB_F_NEXT, &before);
		wb_msg_free(rep);
		if (!more) {
			break;
		}
	}
	cr_assert_eq(seen, N);
	cr_assert_eq(pages, (N + 32) / 33, "no empty last page");
	rep = timeline(42, 0, 1000, 0, 0);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 100);
	wb_msg_free(rep);

	/* time range [since, until): compare with the ids' own times */
	uint64_t since = wb_id_ms(ids[60]), until = wb_id_ms(ids[180]);
	int      want = 0, first = -1;
	for (int i = N - 1; i >= 0; i--) {
		uint64_t ms = wb_id_ms(ids[i]);
		if (ms >= since && ms < until) {
			if (first < 0) {
				first = i;
			}
			want++;
		}
	}
	rep = timeline(42, 0, 100, since, until);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n) || want == 0);
	cr_assert_eq((int)n, want < 100 ? want : 100);
	for (size_t i = 0; i < n; i++) {
		uint64_t t = wb_u64(&posts[i], WB_F_TIME, 0);
		cr_assert(t >= since && t < until);
		cr_assert_eq(wb_u64(&posts[i], WB_F_ID, 0), ids[first - (int)i]);
	}
	wb_msg_free(rep);
	rep = timeline(42, 0, 100, until, since); /* empty range */
	cr_assert(!wb_get_objs(rep, WB_F_POSTS, &posts, &n) || n == 0);
	wb_msg_free(rep);
}

Test(content, ids_survive_restart, .init = start, .fini = stop, .timeout = 60)
{
	uint64_t a, b;
	cr_assert_eq(publish(5, "before", 6, &a), WB_OK);
	rt_client_close(cli);
	cli = NULL;
	cr_assert_eq(wbt_stop(daemon_, SIGKILL, 10000), 128 + SIGKILL);
	start();
	cr_assert_eq(publish(5, "after", 5, &b), WB_OK);
	cr_assert_gt(b, a);
	wb_obj *req = wb_request(WB_OP_POST_LOG), *rep = NULL;
	wb_set_u64(req, WB_F_FROM, 1);
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert_eq(wb_u64(rep, WB_F_LAST, 0), 2, "seq continues after a kill");
	wb_msg_free(rep);
}

/* ---- images ---- */

/* png_make returns a real 64x48 PNG (malloc'd, *len bytes) whose pixels depend on seq. */
static uint8_t *
png_make(unsigned seq, size_t *len)
{
	uint8_t *p = wbt_png(64, 48, seq, len);

	cr_assert_not_null(p);
	return p;
}

/* media_put uploads data as uid; on WB_OK media gets its id and *stored the size it was kept at. */
static int
media_put(uint64_t uid, const uint8_t *data, size_t len, char *media, size_t mlen, size_t *stored)
{
	wb_obj *req = wb_request(WB_OP_MEDIA_PUT), *rep = NULL;
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_bin(req, WB_F_DATA, data, len);
	int rc = call(req, &rep);
	if (rc == WB_OK) {
		cr_assert_str_eq(wb_str(rep, WB_F_TYPE, ""), "image/png");
		cr_assert_eq(wb_u64(rep, WB_F_WIDTH, 0), 64);
		cr_assert_eq(wb_u64(rep, WB_F_HEIGHT, 0), 48);
		cr_assert_eq(
		    wb_u64(rep, WB_F_PREVIEW_WIDTH, 0), 64, "no preview larger than its image");
		cr_assert_eq(wb_u64(rep, WB_F_PREVIEW_HEIGHT, 0), 48);
		cr_assert_gt(wb_u64(rep, WB_F_PREVIEW_SIZE, 0), 0);
		cr_assert_gt(wb_u64(rep, WB_F_SIZE, 0), 0);
		snprintf(media, mlen, "%s", wb_str(rep, WB_F_MEDIA, ""));
		if (stored != NULL) {
			*stored = wb_u64(rep, WB_F_SIZE, 0);
		}
	}
	wb_msg_free(rep);
	return rc;
}

/* An image as media.get answers it: its bytes (malloc'd) and record. */
typedef struct got {
	uint8_t *p;
	size_t   n;
	char     type[16];
	uint64_t width, height;
} got;

/* media_fetch reads media (its preview if preview) as reader (0: anyone) into *g (when WB_OK). */
static int
media_fetch(const char *media, uint64_t reader, bool preview, got *g)
{
	wb_obj     *req = wb_request(WB_OP_MEDIA_GET), *rep = NULL;
	const void *data;
	size_t      n;
	wb_set_cstr(req, WB_F_MEDIA, media);
	if (reader != 0) {
		wb_set_u64(req, WB_F_UID, reader);
	}
	if (preview) {
		wb_set_bool(req, WB_F_PREVIEW, true);
	}
	int rc = call(req, &rep);
	if (rc == WB_OK && g != NULL) {
		cr_assert(wb_get_bin(rep, WB_F_DATA, &data, &n));
		cr_assert_eq(wb_u64(rep, WB_F_SIZE, 0), n);
		cr_assert_not_null(g->p = malloc(n + 1));
		memcpy(g->p, data, n);
		g->n = n;
		snprintf(g->type, sizeof(g->type), "%s", wb_str(rep, WB_F_TYPE, ""));
		g->width = wb_u64(rep, WB_F_WIDTH, 0);
		g->height = wb_u64(rep, WB_F_HEIGHT, 0);
		bool pv = false;
		cr_assert_eq(wb_get_bool(rep, WB_F_PREVIEW, &pv) && pv, preview);
	}
	wb_msg_free(rep);
	return rc;
}

/* media_get reads media (or its preview) as reader and checks its bytes are want's (if want). */
static int
media_get(const char *media, uint64_t reader, bool preview, const got *want)
{
	got g = { 0 };
	int rc = media_fetch(media, reader, preview, &g);

	if (rc == WB_OK && want != NULL) {
		cr_assert_eq(g.n, want->n, "%s: %zu bytes, want %zu", media, g.n, want->n);
		cr_assert_eq(memcmp(g.p, want->p, g.n), 0, "%s: other bytes", media);
	}
	free(g.p);
	return rc;
}

Test(content, rich_post_columns_and_category, .init = start, .fini = stop, .timeout = 60)
{
	size_t   len, stored = 0;
	uint8_t *img = png_make(1, &len);
	char     media[64], why[128];
	uint64_t plain, rich, other;
	wb_obj  *req, *rep;
	got      orig = { 0 }, pv = { 0 };

	cr_assert_eq(media_put(9, img, len, media, sizeof(media), &stored), WB_OK);
	cr_assert_eq(media_fetch(media, 9, false, &orig), WB_OK);
	cr_assert_eq(orig.n, stored);
	cr_assert_str_eq(orig.type, "image/png");
	cr_assert(wbt_img_clean(orig.p, orig.n, why, sizeof(why)), "%s", why);
	cr_assert_eq(media_fetch(media, 9, true, &pv), WB_OK);
	cr_assert_str_eq(pv.type, "image/webp", "a preview is a WebP");
	cr_assert_eq(pv.width, 64);
	cr_assert_eq(media_get(media, 0, false, NULL), WB_ENOMEDIA, "not public yet");
	cr_assert_eq(media_get(media, 0, true, NULL), WB_ENOMEDIA, "its preview neither");
	cr_assert_eq(media_get(media, 10, false, NULL), WB_ENOMEDIA);
	cr_assert_eq(publish(9, "plain", 5, &plain), WB_OK);
	req = wb_request(WB_OP_POST_PUBLISH);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_cstr(req, WB_F_TITLE, "T\xc3\xaftle");
	wb_set_cstr(req, WB_F_CATEGORY, "cats");
	wb_obj *im = wb_add_objs(req, WB_F_IMAGES, 1);
	wb_set_cstr(&im[0], WB_F_MEDIA, media);
	wb_set_cstr(&im[0], WB_F_ALT, "grey");
	rep = NULL;
	cr_assert_eq(call(req, &rep), WB_OK, "%s", wb_str(rep, WB_F_MSG, ""));
	rich = wb_u64(rep, WB_F_ID, 0);
	wb_msg_free(rep);
	cr_assert_eq(media_get(media, 0, false, &orig), WB_OK, "public once attached");
	cr_assert_eq(media_get(media, 0, true, &pv), WB_OK, "its preview too");
	cr_assert_eq(publish(9, "other", 5, &other), WB_OK);

	/* the timeline: newest first, each post with only its own columns */
	wb_obj       *tl = timeline(9, 0, 0, 0, 0);
	const wb_obj *posts;
	size_t        n;
	cr_assert(wb_get_objs(tl, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 3);
	cr_assert_eq(wb_u64(&posts[1], WB_F_ID, 0), rich);
	cr_assert_str_eq(wb_str(&posts[1], WB_F_TEXT, "?"), "");
	cr_assert_str_eq(wb_str(&posts[1], WB_F_TITLE, ""), "T\xc3\xaftle");
	cr_assert_str_eq(wb_str(&posts[1], WB_F_CATEGORY, ""), "cats");
	const wb_obj *imgs;
	size_t        ni;
	cr_assert(wb_get_objs(&posts[1], WB_F_IMAGES, &imgs, &ni));
	cr_assert_eq(ni, 1);
	cr_assert_str_eq(wb_str(&imgs[0], WB_F_MEDIA, ""), media);
	cr_assert_str_eq(wb_str(&imgs[0], WB_F_TYPE, ""), "image/png");
	cr_assert_eq(wb_u64(&imgs[0], WB_F_WIDTH, 0), 64);
	cr_assert_eq(wb_u64(&imgs[0], WB_F_PREVIEW_WIDTH, 0), 64, "the record has its preview");
	cr_assert_eq(wb_u64(&imgs[0], WB_F_PREVIEW_HEIGHT, 0), 48);
	cr_assert_str_eq(wb_str(&imgs[0], WB_F_ALT, ""), "grey");
	cr_assert_not(wb_has(&posts[0], WB_F_TITLE));
	cr_assert_not(wb_has(&posts[2], WB_F_IMAGES));
	wb_msg_free(tl);

	/* by category */
	req = wb_request(WB_OP_POST_TIMELINE);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_cstr(req, WB_F_CATEGORY, "cats");
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 1);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), rich);
	wb_msg_free(rep);

	/* the delete takes the image, its preview and the index row */
	req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_u64(req, WB_F_ID, rich);
	cr_assert_eq(call(req, NULL), WB_OK);
	cr_assert_eq(media_get(media, 9, false, NULL), WB_ENOMEDIA);
	cr_assert_eq(media_get(media, 9, true, NULL), WB_ENOMEDIA);
	req = wb_request(WB_OP_POST_TIMELINE);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_cstr(req, WB_F_CATEGORY, "cats");
	cr_assert_eq(call(req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 0);
	wb_msg_free(rep);
	free(orig.p);
	free(pv.p);
	free(img);
}

/* What media.put refuses: no whole image, a polyglot, too many pixels; nothing is stored. */
Test(content, uploads_are_decoded_whole, .init = start, .fini = stop, .timeout = 60)
{
	size_t   len, n;
	uint8_t *png = png_make(2, &len), *meta, *x;
	char     media[64], why[128];
	got      g = { 0 };
	wb_obj  *req, *rep = NULL;

	/* metadata in, none out */
	cr_assert_not_null(meta = wbt_img_png_meta(png, len, &n));
	cr_assert_eq(media_put(9, meta, n, media, sizeof(media), NULL), WB_OK);
	cr_assert_eq(media_fetch(media, 9, false, &g), WB_OK);
	cr_assert(wbt_img_clean(g.p, g.n, why, sizeof(why)), "%s", why);
	free(g.p);
	free(meta);
	/* a PNG and an HTML page in one file; a PNG cut short */
	x = wbt_img_join(png, len, "<html><script>alert(1)</script></html>", 38, &n);
	req = wb_request(WB_OP_MEDIA_PUT);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_bin(req, WB_F_DATA, x, n);
	cr_assert_eq(call(req, &rep), WB_EMEDIATYPE);
	cr_assert(strstr(wb_str(rep, WB_F_MSG, ""), "follow the end") != NULL, "%s",
	    wb_str(rep, WB_F_MSG, ""));
	wb_msg_free(rep);
	free(x);
	req = wb_request(WB_OP_MEDIA_PUT);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_bin(req, WB_F_DATA, png, len - 20);
	cr_assert_eq(call(req, NULL), WB_EMEDIATYPE);
	free(png);
	/* media-pixels (25 MP by default): 5000 x 5001 black pixels, a few KB, are over */
	VipsImage *black = NULL;
	void      *big = NULL;
	cr_assert_eq(VIPS_INIT("content_test"), 0);
	cr_assert_eq(vips_black(&black, 5000, 5001, NULL), 0);
	cr_assert_eq(vips_pngsave_buffer(black, &big, &n, "compression", 9, NULL), 0);
	cr_assert_lt(n, 100000);
	req = wb_request(WB_OP_MEDIA_PUT);
	wb_set_u64(req, WB_F_UID, 9);
	wb_set_bin(req, WB_F_DATA, big, n);
	rep = NULL;
	int rc = call(req, &rep);
	cr_assert(rc == WB_ETOOBIG, "%s: %s", wb_err_name(rc), wb_str(rep, WB_F_MSG, ""));
	cr_assert(strstr(wb_str(rep, WB_F_MSG, ""), "5000x5001") != NULL);
	wb_msg_free(rep);
	g_free(big);
	g_object_unref(black);
}

/* One uploader thread, acknowledged ids recorded as they come. */
typedef struct uploader {
	pthread_t   thread;
	char        ids[400][48];
	unsigned    acked;
	atomic_bool stop;
} uploader;

static void *
uploader_run(void *arg)
{
	uploader      *u = arg;
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = 3000 };

	if (rt_client_open(&c, url, &o) != WB_OK) {
		return NULL;
	}
	for (unsigned i = 0; i < 400 && !atomic_load(&u->stop); i++) {
		wb_obj  *req = wb_request(WB_OP_MEDIA_PUT), *rep = NULL;
		size_t   len = 0;
		uint8_t *img = wbt_png(64, 48, i, &len);
		wb_set_u64(req, WB_F_UID, 11);
		wb_set_bin(req, WB_F_DATA, img, len);
		int rc = rt_call(c, req, &rep);
		wb_msg_free(req);
		free(img);
		if (rc == WB_OK) {
			snprintf(
			    u->ids[u->acked], sizeof(u->ids[0]), "%s", wb_str(rep, WB_F_MEDIA, ""));
			u->acked++; /* acknowledged: it must be there after the kill */
		}
		wb_msg_free(rep);
		if (rc != WB_OK) {
			break; /* the daemon is gone */
		}
	}
	rt_client_close(c);
	return NULL;
}

/* A kill -9 of the content service in the middle of uploads loses no acknowledged image. */
Test(content, uploads_survive_kill9, .init = start, .fini = stop, .timeout = 120)
{
	uploader *u = calloc(1, sizeof(*u));

	/* this test's daemon takes uploads without the per-user limit */
	rt_client_close(cli);
	cli = NULL;
	cr_assert_eq(wbt_stop(daemon_, SIGTERM, 10000), 0);
	cr_assert_eq(setenv("WARBLE_MEDIA_RATE", "0", 1), 0); /* the daemon inherits it */
	start();
	cr_assert_not_null(u);
	cr_assert_eq(pthread_create(&u->thread, NULL, uploader_run, u), 0);
	long long end = wbt_now_ms() + 30000;
	while (u->acked < 30 && wbt_now_ms() < end) {
		wbt_sleep_ms(5);
	}
	cr_assert_geq(u->acked, 30, "uploads too slow");
	cr_assert_lt(u->acked, 400, "the kill came after the last upload");
	cr_assert_eq(wbt_stop(daemon_, SIGKILL, 10000), 128 + SIGKILL);
	atomic_store(&u->stop, true);
	pthread_join(u->thread, NULL);
	rt_client_close(cli);
	cli = NULL;
	start();
	for (unsigned i = 0; i < u->acked; i++) {
		cr_assert_eq(media_get(u->ids[i], 11, false, NULL), WB_OK, "upload %u of %u lost",
		    i, u->acked);
		cr_assert_eq(media_get(u->ids[i], 11, true, NULL), WB_OK,
		    "upload %u of %u: its preview lost", i, u->acked);
	}
	cr_log_info("%u acknowledged uploads, all there after kill -9", u->acked);
	free(u);
}

/* ---- the re-encode pass ---- */

/* old_value makes a media cell's value as stored before uploads were decoded: the header read from
 * the bytes, then the bytes as they came. */
static uint8_t *
old_value(uint8_t type, uint32_t w, uint32_t h, const void *p, size_t n, size_t *len)
{
	uint8_t *v = malloc(9 + n);

	cr_assert_not_null(v);
	v[0] = type;
	for (int i = 0; i < 4; i++) {
		v[1 + i] = (uint8_t)(w >> (24 - 8 * i));
		v[5 + i] = (uint8_t)(h >> (24 - 8 * i));
	}
	memcpy(v + 9, p, n);
	*len = 9 + n;
	return v;
}

/*
 * reencode_wait asks the pass's state (starting it if start) until it is
 * over: the last reply.  Without start the pass is the daemon's own, which
 * starts just after its port opens: "idle" until then.
 */
static wb_obj *
reencode_wait(bool start)
{
	long long end = wbt_now_ms() + wbt_ms(60000);
	wb_obj   *rep = NULL;
	bool      idle_ok = !start;

	for (;;) {
		wb_obj *req =
		    wb_request(start ? WB_OP_MEDIA_REENCODE : WB_OP_MEDIA_REENCODE_STATUS);
		start = false;
		cr_assert_eq(call(req, &rep), WB_OK);
		const char *st = wb_str(rep, WB_F_STATE, "?");
		if (strcmp(st, "done") == 0 || strcmp(st, "failed") == 0) {
			return rep;
		}
		cr_assert(strcmp(st, "running") == 0 || (idle_ok && strcmp(st, "idle") == 0),
		    "state %s", st);
		idle_ok = idle_ok && strcmp(st, "idle") == 0;
		cr_assert_lt(wbt_now_ms(), end, "the pass takes too long");
		wb_msg_free(rep);
		wbt_sleep_ms(20);
	}
}

/*
 * A store from before uploads were decoded: a post with a JPEG kept as
 * uploaded (EXIF with a GPS position and orientation 6, XMP, IPTC, a
 * comment) and a "PNG" that is only a header (the old check took it), and
 * an upload not yet attached with PNG text chunks.  The pass runs at the
 * first start: the JPEG is turned and clean with a preview, its record
 * follows (sizes swapped, preview's size), the non-image goes with its
 * record, the upload is clean with a preview; a second pass finds nothing.
 */
Test(content, reencode_pass_mends_old_images, .init = start, .fini = stop, .timeout = 120)
{
	char           data[256], dir[300], m1[64], m2[64], m3[64], why[128];
	hb_family_opts fams[CONTENT_FAM_COUNT];
	hb_table      *t = NULL;
	wb_idgen      *gen = wb_idgen_new();
	uint64_t       author = 7, id1, id2, id3, pid;
	uint8_t        row[8], *v, *raw;
	size_t         vn, rn, pn;
	hb_table_opts  topts = { 0 };
	VipsImage     *im = NULL;
	void          *jpg = NULL;
	size_t         jn = 0;

	/* the old store, written with the daemon stopped */
	rt_client_close(cli);
	cli = NULL;
	cr_assert_eq(wbt_stop(daemon_, SIGTERM, 10000), 0);
	cr_assert_eq(VIPS_INIT("content_test"), 0);
	cr_assert_eq(vips_black(&im, 40, 30, "bands", 3, NULL), 0);
	cr_assert_eq(vips_jpegsave_buffer(im, &jpg, &jn, "strip", TRUE, NULL), 0);
	g_object_unref(im);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	snprintf(dir, sizeof(dir), "%s/content", data);
	content_schema_families(fams);
	cr_assert_eq(hb_open(&t, dir, fams, CONTENT_FAM_COUNT, &topts), WB_OK);
	hb_u64_be(row, author);
	id1 = wb_id_next(gen, 5, wb_now_ms());
	id2 = wb_id_next(gen, 5, wb_now_ms());
	id3 = wb_id_next(gen, 5, wb_now_ms());
	pid = wb_id_next(gen, 5, wb_now_ms());
	wb_media_id_format(m1, author, id1);
	wb_media_id_format(m2, author, id2);
	wb_media_id_format(m3, author, id3);
	cr_assert_not_null(raw = wbt_img_jpeg_meta(jpg, jn, 6, &rn));
	v = old_value(2, 40, 30, raw, rn, &vn);
	cr_assert_eq(hb_put(t, CONTENT_FAM_MEDIA, row, 8, NULL, 0, id1, v, vn), WB_OK);
	free(v);
	free(raw);
	static const uint8_t head[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
		'I', 'H', 'D', 'R', 0, 0, 0, 64, 0, 0, 0, 48, 8, 2, 0, 0, 0, 0x5a, 0x2b, 0x3c, 0x4d,
		1, 2 };
	v = old_value(1, 64, 48, head, sizeof(head), &vn);
	cr_assert_eq(hb_put(t, CONTENT_FAM_MEDIA, row, 8, NULL, 0, id2, v, vn), WB_OK);
	free(v);
	uint8_t *png = wbt_png(20, 10, 1, &pn);
	cr_assert_not_null(raw = wbt_img_png_meta(png, pn, &rn));
	v = old_value(1, 20, 10, raw, rn, &vn);
	cr_assert_eq(hb_put(t, CONTENT_FAM_UPLOAD, row, 8, NULL, 0, id3, v, vn), WB_OK);
	free(v);
	free(raw);
	free(png);
	wb_obj *post = wb_msg_new(), *ims = wb_add_objs(post, WB_F_IMAGES, 2);
	wb_set_cstr(post, WB_F_TEXT, "from before");
	wb_set_cstr(&ims[0], WB_F_MEDIA, m1);
	wb_set_cstr(&ims[0], WB_F_TYPE, "image/jpeg");
	wb_set_u64(&ims[0], WB_F_WIDTH, 40);
	wb_set_u64(&ims[0], WB_F_HEIGHT, 30);
	wb_set_cstr(&ims[0], WB_F_ALT, "a black square");
	wb_set_cstr(&ims[1], WB_F_MEDIA, m2);
	wb_set_cstr(&ims[1], WB_F_TYPE, "image/png");
	wb_set_u64(&ims[1], WB_F_WIDTH, 64);
	wb_set_u64(&ims[1], WB_F_HEIGHT, 48);
	cr_assert_eq(content_post_encode_rich(post, &v, &vn), WB_OK);
	cr_assert_eq(hb_put(t, CONTENT_FAM_POST, row, 8, NULL, 0, pid, v, vn), WB_OK);
	free(v);
	wb_msg_free(post);
	/* a store from before has no mark: the pass is due */
	hb_batch *b = NULL;
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	cr_assert_eq(hb_batch_delete_column(b, t, CONTENT_FAM_META, CONTENT_META_REENCODED,
	                 sizeof(CONTENT_META_REENCODED) - 1, NULL, 0, HB_LATEST),
	    WB_OK);
	cr_assert_eq(hb_write(t, b), WB_OK);
	hb_batch_free(b);
	hb_close(t);
	g_free(jpg);
	wb_idgen_free(gen);

	/* the first start runs the pass */
	start();
	wb_obj *st = reencode_wait(false);
	cr_assert_str_eq(wb_str(st, WB_F_STATE, ""), "done", "%s", wb_str(st, WB_F_MSG, ""));
	cr_assert_eq(wb_u64(st, WB_F_DONE, 0), 2, "the JPEG and the upload");
	cr_assert_eq(wb_u64(st, WB_F_ERRORS, 0), 1, "the header without an image");
	cr_assert_eq(wb_u64(st, WB_F_COUNT, 0), 1, "one post");
	wb_msg_free(st);

	wb_obj       *tl = timeline(author, 0, 0, 0, 0);
	const wb_obj *posts, *imgs;
	size_t        n, ni;
	cr_assert(wb_get_objs(tl, WB_F_POSTS, &posts, &n));
	cr_assert_eq(n, 1);
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TEXT, ""), "from before");
	cr_assert(wb_get_objs(&posts[0], WB_F_IMAGES, &imgs, &ni));
	cr_assert_eq(ni, 1, "the non-image's record is gone");
	cr_assert_str_eq(wb_str(&imgs[0], WB_F_MEDIA, ""), m1);
	cr_assert_eq(wb_u64(&imgs[0], WB_F_WIDTH, 0), 30, "turned upright");
	cr_assert_eq(wb_u64(&imgs[0], WB_F_HEIGHT, 0), 40);
	cr_assert_eq(wb_u64(&imgs[0], WB_F_PREVIEW_WIDTH, 0), 30);
	cr_assert_eq(wb_u64(&imgs[0], WB_F_PREVIEW_HEIGHT, 0), 40);
	cr_assert_str_eq(wb_str(&imgs[0], WB_F_ALT, ""), "a black square");
	wb_msg_free(tl);

	got g = { 0 };
	cr_assert_eq(media_fetch(m1, 0, false, &g), WB_OK);
	cr_assert(wbt_img_clean(g.p, g.n, why, sizeof(why)), "the JPEG: %s", why);
	cr_assert_eq(g.width, 30);
	free(g.p);
	cr_assert_eq(media_fetch(m1, 0, true, &g), WB_OK);
	cr_assert(wbt_img_clean(g.p, g.n, why, sizeof(why)), "its preview: %s", why);
	free(g.p);
	cr_assert_eq(media_get(m2, author, false, NULL), WB_ENOMEDIA, "the non-image is gone");
	cr_assert_eq(media_fetch(m3, author, false, &g), WB_OK);
	cr_assert(wbt_img_clean(g.p, g.n, why, sizeof(why)), "the upload: %s", why);
	free(g.p);
	cr_assert_eq(media_get(m3, author, true, NULL), WB_OK, "the upload's preview");

	/* asked again: nothing left to do */
	st = reencode_wait(true);
	cr_assert_str_eq(wb_str(st, WB_F_STATE, ""), "done");
	cr_assert_eq(wb_u64(st, WB_F_DONE, 0), 0);
	cr_assert_eq(wb_u64(st, WB_F_ERRORS, 0), 0);
	wb_msg_free(st);
}
