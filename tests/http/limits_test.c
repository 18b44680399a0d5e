/*
 * limits_test.c - GET /api/v1/limits against a real cluster: it reports
 * the gateway's configured upload limit (WARBLE_MEDIA_MAX) and the bounds
 * of what users write, and each bound it reports is the one the services
 * enforce: a value at the bound is taken, one past it refused, over HTTP.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ht_api.h"

/* limit reads field k of the limits reply as a positive integer. */
static size_t
limit(json_t *j, const char *k)
{
	json_t *v = json_object_get(j, k);

	cr_assert(json_is_integer(v), "no integer \"%s\" in the limits", k);
	cr_assert_gt(json_integer_value(v), 0, "%s", k);
	return (size_t)json_integer_value(v);
}

/* repeat writes n copies of the UTF-8 character c into a new string. */
static char *
repeat(const char *c, size_t n)
{
	size_t len = strlen(c);
	char  *s = malloc(n * len + 1);

	cr_assert_not_null(s);
	for (size_t i = 0; i < n; i++) {
		memcpy(s + i * len, c, len);
	}
	s[n * len] = '\0';
	return s;
}

/* body_with is {"key": value, more} as JSON (caller frees). */
static char *
body_with(const char *key, const char *value, const char *more)
{
	json_t *o = json_pack("{s:s}", key, value);
	char   *s, *all;

	cr_assert_not_null(o);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	cr_assert_not_null(s);
	if (more == NULL) {
		return s;
	}
	cr_assert_not_null(all = malloc(strlen(s) + strlen(more) + 2));
	s[strlen(s) - 1] = '\0'; /* the closing brace */
	sprintf(all, "%s,%s}", s, more);
	free(s);
	return all;
}

/* bound checks that key at n characters c is taken (want status) and at n + 1 refused (400 err). */
static void
bound(const char *method, const char *path, const char *tok, const char *key, const char *c,
    size_t n, int want, const char *err, const char *more)
{
	char   *v = repeat(c, n), *b = body_with(key, v, more);
	json_t *j = call(want, method, path, tok, b);

	json_decref(j);
	free(v);
	free(b);
	v = repeat(c, n + 1);
	b = body_with(key, v, more);
	fail_with(400, err, method, path, tok, b);
	free(v);
	free(b);
}

/* upload_len sends an upload whose head says len bytes (and sends them: zeros) and returns the status. */
static int
upload_len(const char *tok, size_t len)
{
	char   head[512];
	char  *all;
	ht_res r;
	int    n, status;

	n = snprintf(head, sizeof(head),
	    "POST /api/v1/media HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
	    "Authorization: Bearer %s\r\nContent-Length: %zu\r\n\r\n",
	    tok, len);
	cr_assert_not_null(all = calloc(1, (size_t)n + len));
	memcpy(all, head, (size_t)n);
	cr_assert_eq(ht_raw(port, all, (size_t)n + len, &r, HT_DEADLINE_MS), 0);
	status = r.status;
	ht_res_free(&r);
	free(all);
	return status;
}

Test(http_limits, reported_and_enforced, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_MEDIA_MAX=8000", NULL };
	const char *a;
	json_t     *lim;
	size_t      media, text, title, alt, cat, display, bio;

	start(env);
	a = user("alice", 0);

	/* anyone may ask; an unknown parameter or another method is refused as anywhere */
	lim = call(200, "GET", "/api/v1/limits", NULL, NULL);
	media = limit(lim, "media_max");
	text = limit(lim, "text_max");
	title = limit(lim, "title_max");
	alt = limit(lim, "alt_max");
	cat = limit(lim, "category_max");
	display = limit(lim, "display_max");
	bio = limit(lim, "bio_max");
	cr_assert_eq(limit(lim, "images_max"), 4);
	cr_assert_eq(media, 8000, "media_max %zu is not the configured WARBLE_MEDIA_MAX", media);
	json_decref(lim);
	fail_with(400, "INVALID", "GET", "/api/v1/limits?media=1", NULL, NULL);
	fail_with(405, "METHOD_NOT_ALLOWED", "POST", "/api/v1/limits", a, "{}");

	/* media_max bytes are taken (and judged: zeros are no image), one more is too large */
	cr_assert_eq(upload_len(a, media), 415);
	cr_assert_eq(upload_len(a, media + 1), 413);

	/* each bound of a post: its text in code points (2-byte ones), title, category, alt */
	bound("POST", "/api/v1/posts", a, "text", "\xc3\xa9", text, 201, "TEXT_TOO_LONG", NULL);
	bound("POST", "/api/v1/posts", a, "title", "\xc3\xa9", title, 201, "INVALID",
	    "\"text\":\"x\"");
	bound("POST", "/api/v1/posts", a, "category", "c", cat, 201, "INVALID", "\"text\":\"x\"");
	{
		/* an alt text needs an image: a 1x1 PNG of alice's */
		static const unsigned char png[] = { 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
			0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
			0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63,
			0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92,
			0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
			0x82 };
		char                       head[512], *all, *alts, *b;
		ht_res                     r;
		int                        n = snprintf(head, sizeof(head),
		                           "POST /api/v1/media HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		                                                  "Authorization: Bearer %s\r\nContent-Length: %zu\r\n\r\n",
		                           a, sizeof(png));
		json_t                    *up;
		char                       img[200];

		cr_assert_not_null(all = malloc((size_t)n + sizeof(png)));
		memcpy(all, head, (size_t)n);
		memcpy(all + n, png, sizeof(png));
		cr_assert_eq(ht_raw(port, all, (size_t)n + sizeof(png), &r, HT_DEADLINE_MS), 0);
		free(all);
		cr_assert_eq(r.status, 201, "%s", r.body);
		up = json_loadb(r.body, r.len, 0, NULL);
		ht_res_free(&r);
		cr_assert_not_null(up);
		/* one past the bound first: a refused post leaves the image free for the next */
		alts = repeat("\xc3\xa9", alt + 1);
		snprintf(img, sizeof(img), "%s", str(up, "media"));
		json_decref(up);
		b = malloc(strlen(alts) + 300);
		cr_assert_not_null(b);
		sprintf(b, "{\"text\":\"x\",\"images\":[{\"media\":\"%s\",\"alt\":\"%s\"}]}", img,
		    alts);
		fail_with(400, "INVALID", "POST", "/api/v1/posts", a, b);
		alts[strlen(alts) - 2] = '\0';
		sprintf(b, "{\"text\":\"x\",\"images\":[{\"media\":\"%s\",\"alt\":\"%s\"}]}", img,
		    alts);
		json_decref(call(201, "POST", "/api/v1/posts", a, b));
		free(alts);
		free(b);
	}

	/* a profile: the display name in code points, the bio in bytes (2-byte characters) */
	bound("PATCH", "/api/v1/me", a, "display", "\xc3\xa9", display, 200, "INVALID", NULL);
	cr_assert_eq(bio % 2, 0);
	bound("PATCH", "/api/v1/me", a, "bio", "\xc3\xa9", bio / 2, 200, "INVALID", NULL);
	{
		/* bio_max + 1 bytes, far fewer characters */
		char *v = repeat("\xc3\xa9", bio / 2), *b;
		v[0] = 'a';
		v[1] = 'a'; /* "aa" and bio/2 - 1 of U+00E9: bio_max bytes */
		b = body_with("bio", v, NULL);
		json_decref(call(200, "PATCH", "/api/v1/me", a, b));
		free(b);
		v = realloc(v, strlen(v) + 2);
		strcat(v, "a");
		b = body_with("bio", v, NULL);
		fail_with(400, "INVALID", "PATCH", "/api/v1/me", a, b);
		free(b);
		free(v);
	}
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}
