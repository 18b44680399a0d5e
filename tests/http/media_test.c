/*
 * media_test.c - rich posts and images over HTTP against a real cluster:
 * uploads of the four types carrying every kind of metadata (decoded and
 * written again with none of it, a JPEG turned upright, a preview each),
 * whole images only (a polyglot, data after a JPEG's end, files cut short
 * refused; a multi-picture JPEG keeps its first picture), posts with a
 * title, a category and up to four images in a follower's home with
 * their previews, GET /media and /media/{media}/preview with their
 * caching, ETag, range and HEAD answers, visibility before and after a
 * post attaches an upload, deletes, and every refusal: wrong type, a file
 * that lies, too large, too many pixels, too many images, someone else's
 * image, bounds of the title, category and alt text, the upload rate and
 * the uploads in flight.
 */
#include <poll.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "ht_api.h"
#include "wbt_img.h"

/* A fixture of tests/data/media. */
typedef struct fixture {
	char  *p;
	size_t len;
} fixture;

static fixture
load(const char *name)
{
	char    root[1024], path[1200];
	fixture f = { 0 };
	FILE   *fp;
	long    n;

	cr_assert_eq(ht_root(root, sizeof(root), "tests/data/media/photo.png"), 0);
	snprintf(path, sizeof(path), "%s/tests/data/media/%s", root, name);
	cr_assert_not_null(fp = fopen(path, "rb"), "%s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	cr_assert_gt(n, 0);
	f.len = (size_t)n;
	cr_assert_not_null(f.p = malloc(f.len));
	cr_assert_eq(fread(f.p, 1, f.len, fp), f.len);
	fclose(fp);
	return f;
}

/* send_bytes sends one request with a raw body and extra header lines (each ending CRLF, or NULL). */
static void
send_bytes(const char *method, const char *path, const char *token, const char *headers,
    const void *body, size_t len, ht_res *r)
{
	char  head[2048];
	char *all;
	int   n = snprintf(head, sizeof(head),
	      "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s%s%s%sContent-Length: %zu\r\n\r\n",
	      method, path, token ? "Authorization: Bearer " : "", token ? token : "",
            token ? "\r\n" : "", headers ? headers : "", len);

	cr_assert(n > 0 && (size_t)n < sizeof(head));
	cr_assert_not_null(all = malloc((size_t)n + len + 1));
	memcpy(all, head, (size_t)n);
	if (len > 0) {
		memcpy(all + n, body, len);
	}
	cr_assert_eq(ht_raw(port, all, (size_t)n + len, r, HT_DEADLINE_MS), 0);
	free(all);
}

/* upload posts f as token's image and checks the status; a 201's JSON reply is returned (else NULL, after checking the error name). */
static json_t *
upload(const char *token, const fixture *f, int want, const char *err)
{
	ht_res       r;
	json_error_t je;
	json_t      *j;

	send_bytes("POST", "/api/v1/media", token, "Content-Type: image/png\r\n", f->p, f->len, &r);
	cr_assert_eq(r.status, want, "upload: %d, want %d: %s", r.status, want, r.body);
	cr_assert_not_null(j = json_loadb(r.body, r.len, 0, &je), "%s", r.body);
	ht_res_free(&r);
	if (err != NULL) {
		cr_assert_str_eq(str(j, "error"), err);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* media_id uploads f and returns its media id (static slot). */
static const char *
media_id(const char *token, const fixture *f, int slot)
{
	static char ids[8][64];
	json_t     *j = upload(token, f, 201, NULL);

	snprintf(ids[slot], sizeof(ids[slot]), "%s", str(j, "media"));
	json_decref(j);
	return ids[slot];
}

/* get_media fetches /media/id (token may be NULL) with extra headers and checks the status. */
static void
get_media(
    const char *method, const char *id, const char *token, const char *headers, int want, ht_res *r)
{
	char path[128];

	snprintf(path, sizeof(path), "/media/%s", id);
	send_bytes(method, path, token, headers, NULL, 0, r);
	cr_assert_eq(
	    r->status, want, "%s %s: %d, want %d: %s", method, path, r->status, want, r->body);
}

static bool
has_bytes(const char *hay, size_t n, const char *needle)
{
	return memmem(hay, n, needle, strlen(needle)) != NULL;
}

/* with_meta returns fixture f with every kind of metadata of its type in it (wbt_img.h); a JPEG
 * gets orientation 6. */
static fixture
with_meta(const char *name, const fixture *f)
{
	fixture m = { 0 };
	char   *p;

	if (strstr(name, ".png") != NULL) {
		p = (char *)wbt_img_png_meta(f->p, f->len, &m.len);
	} else if (strstr(name, ".jpg") != NULL) {
		p = (char *)wbt_img_jpeg_meta(f->p, f->len, 6, &m.len);
	} else if (strstr(name, ".gif") != NULL) {
		p = (char *)wbt_img_gif_meta(f->p, f->len, &m.len);
	} else {
		p = (char *)wbt_img_webp_meta(f->p, f->len, 64, 48, &m.len);
	}
	cr_assert_not_null(p, "%s", name);
	m.p = p;
	return m;
}

/* get_preview fetches /media/id/preview (token may be NULL) and checks the status. */
static void
get_preview(const char *id, const char *token, const char *headers, int want, ht_res *r)
{
	char path[128];

	snprintf(path, sizeof(path), "/media/%s/preview", id);
	send_bytes("GET", path, token, headers, NULL, 0, r);
	cr_assert_eq(r->status, want, "GET %s: %d, want %d: %s", path, r->status, want, r->body);
}

/* Each type, carrying GPS in EXIF, XMP, text chunks, comments: decoded, written again in its type
 * with none of it, a JPEG turned upright, and a preview. */
Test(media, four_types_decoded_and_written_again_clean, .fini = wbt_cleanup, .timeout = 120)
{
	static const struct {
		const char *file, *type;
		int         w, h;
	} want[] = {
		{ "photo.png", "image/png", 64, 48 }, { "photo.webp", "image/webp", 64, 48 },
		{ "flat.gif", "image/gif", 32, 24 },
		{ "exif.jpg", "image/jpeg", 30, 40 }, /* 40 x 30, EXIF orientation 6 */
	};
	const char *a, *b;
	char        why[128], ct[64], cc[96];
	ht_res      r;

	start(NULL);
	a = user("alice", 0);
	b = user("bob", 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		fixture f = load(want[i].file), m = with_meta(want[i].file, &f);
		json_t *j;
		char    id[64];

		cr_assert(has_bytes(m.p, m.len, WBT_IMG_SECRET));
		j = upload(a, &m, 201, NULL);
		cr_assert_str_eq(str(j, "type"), want[i].type, "%s", want[i].file);
		cr_assert_eq(
		    json_integer_value(json_object_get(j, "width")), want[i].w, "%s", want[i].file);
		cr_assert_eq(json_integer_value(json_object_get(j, "height")), want[i].h);
		cr_assert_eq(json_integer_value(json_object_get(j, "preview_width")), want[i].w);
		cr_assert_eq(json_integer_value(json_object_get(j, "preview_height")), want[i].h);
		snprintf(id, sizeof(id), "%s", str(j, "media"));
		cr_assert(strncmp(id, "1-", 2) == 0, "a media id names its owner: %s", id);
		/* an upload no post holds yet: its uploader's only */
		get_media("GET", id, a, NULL, 200, &r);
		cr_assert_str_eq(ht_header(&r, "Content-Type", ct, sizeof(ct)), want[i].type);
		cr_assert(
		    strncmp(ht_header(&r, "Cache-Control", cc, sizeof(cc)), "private", 7) == 0);
		cr_assert_eq((size_t)json_integer_value(json_object_get(j, "size")), r.len);
		cr_assert(
		    wbt_img_clean(r.body, r.len, why, sizeof(why)), "%s: %s", want[i].file, why);
		ht_res_free(&r);
		get_preview(id, a, NULL, 200, &r);
		cr_assert_str_eq(ht_header(&r, "Content-Type", ct, sizeof(ct)), "image/webp");
		cr_assert_eq((size_t)json_integer_value(json_object_get(j, "preview_size")), r.len);
		cr_assert(wbt_img_clean(r.body, r.len, why, sizeof(why)), "%s preview: %s",
		    want[i].file, why);
		ht_res_free(&r);
		get_media("GET", id, NULL, NULL, 404, &r);
		ht_res_free(&r);
		get_preview(id, NULL, NULL, 404, &r);
		ht_res_free(&r);
		get_media("GET", id, b, NULL, 404, &r);
		ht_res_free(&r);
		json_decref(j);
		free(f.p);
		free(m.p);
	}
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* A file joined to another, data after an image's end and files cut short are refused; a
 * multi-picture JPEG keeps its first picture. */
Test(media, whole_images_only, .fini = wbt_cleanup, .timeout = 120)
{
	static const char html[] =
	    "<html><body><script>alert(document.cookie)</script></body></html>";
	fixture        png = load("photo.png"), jpg = load("exif.jpg"), x;
	size_t         tn, sn;
	unsigned char *tiff = wbt_img_exif(1, &tn), seg[600], *second;
	const char    *a;
	char           why[128];
	ht_res         r;

	start(NULL);
	a = user("alice", 0);
	/* a polyglot: a PNG, then an HTML page */
	x.p = (char *)wbt_img_join(png.p, png.len, html, sizeof(html) - 1, &x.len);
	upload(a, &x, 415, "BAD_MEDIA");
	free(x.p);
	/* an EXIF block with a GPS position after the JPEG's end marker */
	cr_assert_lt(tn + 10, sizeof(seg));
	memcpy(seg, "\xff\xe1", 2);
	seg[2] = (unsigned char)((tn + 8) >> 8);
	seg[3] = (unsigned char)(tn + 8);
	memcpy(seg + 4, "Exif\0\0", 6);
	memcpy(seg + 10, tiff, tn);
	x.p = (char *)wbt_img_join(jpg.p, jpg.len, seg, tn + 10, &x.len);
	upload(a, &x, 415, "BAD_MEDIA");
	free(x.p);
	/* a PNG with no image data, a PNG cut in its IDAT */
	x.p = malloc(png.len);
	memcpy(x.p, png.p, 33);
	memcpy(x.p + 33, png.p + png.len - 12, 12);
	x.len = 45;
	upload(a, &x, 415, "BAD_MEDIA");
	memcpy(x.p, png.p, png.len - 40);
	x.len = png.len - 40;
	upload(a, &x, 415, "BAD_MEDIA");
	free(x.p);
	/* a multi-picture JPEG: its second picture, with its own GPS, is dropped */
	cr_assert_not_null(second = wbt_img_jpeg_meta(jpg.p, jpg.len, 1, &sn));
	x.p = (char *)wbt_img_join(jpg.p, jpg.len, second, sn, &x.len);
	json_t *j = upload(a, &x, 201, NULL);
	get_media("GET", str(j, "media"), a, NULL, 200, &r);
	cr_assert(wbt_img_clean(r.body, r.len, why, sizeof(why)), "%s", why);
	cr_assert_eq(json_integer_value(json_object_get(j, "width")), 40);
	ht_res_free(&r);
	json_decref(j);
	free(x.p);
	free(second);
	free(tiff);
	free(png.p);
	free(jpg.p);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

Test(media, rich_post_in_a_followers_home, .fini = wbt_cleanup, .timeout = 120)
{
	fixture png = load("photo.png"), gif = load("flat.gif"), webp = load("photo.webp"),
	        jpg = load("exif.jpg");
	const char *a, *b, *ids[4];
	char        body[1024], path[128], etag[96], hdr[160], v[160];
	json_t     *j, *p, *im;
	ht_res      r;

	start(NULL);
	a = user("alice", 0);
	b = user("bob", 1);
	json_decref(call(200, "PUT", "/api/v1/me/following/alice", b, NULL));
	ids[0] = media_id(a, &png, 0);
	ids[1] = media_id(a, &gif, 1);
	ids[2] = media_id(a, &webp, 2);
	ids[3] = media_id(a, &jpg, 3);
	snprintf(body, sizeof(body),
	    "{\"text\":\"four pictures\",\"title\":\"Caf\\u00e9 "
	    "trip\",\"category\":\"travel_2026\","
	    "\"images\":[{\"media\":\"%s\",\"alt\":\"a gradient\"},{\"media\":\"%s\"},"
	    "{\"media\":\"%s\"},{\"media\":\"%s\",\"alt\":\"\"}]}",
	    ids[0], ids[1], ids[2], ids[3]);
	j = call(201, "POST", "/api/v1/posts", a, body);
	char post_id[32];
	snprintf(post_id, sizeof(post_id), "%s", str(j, "id"));
	json_decref(j);
	json_decref(call(201, "POST", "/api/v1/posts", a, "{\"text\":\"plain as before\"}"));

	/* the post's own page: as a timeline shows it, previews' paths included */
	snprintf(path, sizeof(path), "/api/v1/posts/%s", post_id);
	j = call(200, "GET", path, NULL, NULL);
	cr_assert_str_eq(str(j, "title"), "Caf\xc3\xa9 trip");
	cr_assert_str_eq(str(j, "category"), "travel_2026");
	cr_assert_str_eq(str(j, "author_name"), "alice");
	cr_assert_eq(json_array_size(json_object_get(j, "images")), 4);
	im = json_array_get(json_object_get(j, "images"), 0);
	snprintf(v, sizeof(v), "/media/%s/preview", ids[0]);
	cr_assert_str_eq(str(im, "preview_url"), v);
	cr_assert_str_eq(str(im, "alt"), "a gradient");
	json_decref(j);

	/* bob's home: the rich post with every image's dimensions, never its bytes */
	j = home_wait(b, 2);
	p = json_array_get(json_object_get(j, "posts"), 1);
	/* the bytes served are the stored ones, written again from the upload */
	fixture stored;
	get_media("GET", ids[0], a, NULL, 200, &r);
	stored.len = r.len;
	cr_assert_not_null(stored.p = malloc(r.len));
	memcpy(stored.p, r.body, r.len);
	ht_res_free(&r);
	cr_assert_str_eq(str(p, "title"), "Caf\xc3\xa9 trip");
	cr_assert_str_eq(str(p, "category"), "travel_2026");
	cr_assert_str_eq(str(p, "text"), "four pictures");
	cr_assert_eq(json_array_size(json_object_get(p, "images")), 4);
	static const int dims[4][2] = { { 64, 48 }, { 32, 24 }, { 64, 48 }, { 40, 30 } };
	for (size_t i = 0; i < 4; i++) {
		im = json_array_get(json_object_get(p, "images"), i);
		cr_assert_str_eq(str(im, "media"), ids[i]);
		cr_assert_eq(json_integer_value(json_object_get(im, "width")), dims[i][0]);
		cr_assert_eq(json_integer_value(json_object_get(im, "height")), dims[i][1]);
		cr_assert_null(json_object_get(im, "data"));
		/* and its preview: no larger than 640 px, where the record says */
		cr_assert_eq(json_integer_value(json_object_get(im, "preview_width")), dims[i][0]);
		cr_assert_eq(json_integer_value(json_object_get(im, "preview_height")), dims[i][1]);
		snprintf(path, sizeof(path), "/media/%s/preview", ids[i]);
		cr_assert_str_eq(str(im, "preview_url"), path);
	}
	cr_assert_str_eq(str(json_array_get(json_object_get(p, "images"), 0), "alt"), "a gradient");
	cr_assert_null(json_object_get(json_array_get(json_object_get(p, "images"), 1), "alt"));
	/* a text-only post has none of the new columns */
	p = json_array_get(json_object_get(j, "posts"), 0);
	cr_assert_str_eq(str(p, "text"), "plain as before");
	cr_assert_null(json_object_get(p, "title"));
	cr_assert_null(json_object_get(p, "category"));
	cr_assert_null(json_object_get(p, "images"));
	json_decref(j);

	/* attached: anyone may read it, cached for good, the bytes stored */
	get_media("GET", ids[0], NULL, NULL, 200, &r);
	cr_assert_eq(r.len, stored.len);
	cr_assert_eq(memcmp(r.body, stored.p, stored.len), 0);
	cr_assert_str_eq(
	    ht_header(&r, "Cache-Control", v, sizeof(v)), "public, max-age=31536000, immutable");
	cr_assert_str_eq(ht_header(&r, "X-Content-Type-Options", v, sizeof(v)), "nosniff");
	cr_assert_str_eq(
	    ht_header(&r, "Content-Security-Policy", v, sizeof(v)), "default-src 'none'; sandbox");
	cr_assert_str_eq(ht_header(&r, "Accept-Ranges", v, sizeof(v)), "bytes");
	cr_assert_not_null(ht_header(&r, "ETag", etag, sizeof(etag)));
	cr_assert_eq(etag[0], '"');
	ht_res_free(&r);
	snprintf(hdr, sizeof(hdr), "If-None-Match: W/\"x\", %s\r\n", etag);
	get_media("GET", ids[0], NULL, hdr, 304, &r);
	cr_assert_eq(r.len, 0);
	cr_assert_str_eq(ht_header(&r, "ETag", v, sizeof(v)), etag);
	ht_res_free(&r);
	get_media("GET", ids[0], NULL, "If-None-Match: \"other\"\r\n", 200, &r);
	ht_res_free(&r);
	get_media("GET", ids[0], NULL, "Range: bytes=10-19\r\n", 206, &r);
	cr_assert_eq(r.len, 10);
	cr_assert_eq(memcmp(r.body, stored.p + 10, 10), 0);
	snprintf(hdr, sizeof(hdr), "bytes 10-19/%zu", stored.len);
	cr_assert_str_eq(ht_header(&r, "Content-Range", v, sizeof(v)), hdr);
	ht_res_free(&r);
	get_media("GET", ids[0], NULL, "Range: bytes=-16\r\n", 206, &r);
	cr_assert_eq(r.len, 16);
	cr_assert_eq(memcmp(r.body, stored.p + stored.len - 16, 16), 0);
	ht_res_free(&r);
	get_media("GET", ids[0], NULL, "Range: bytes=100000-\r\n", 416, &r);
	snprintf(hdr, sizeof(hdr), "bytes */%zu", stored.len);
	cr_assert_str_eq(ht_header(&r, "Content-Range", v, sizeof(v)), hdr);
	/* an error like any other: JSON, not the image's type, and not cached */
	cr_assert_str_eq(ht_header(&r, "Content-Type", v, sizeof(v)), "application/json");
	cr_assert(has_bytes(r.body, r.len, "\"error\":\"RANGE_NOT_SATISFIABLE\""), "%s", r.body);
	cr_assert_str_eq(ht_header(&r, "Cache-Control", v, sizeof(v)), "no-store");
	cr_assert_null(ht_header(&r, "ETag", v, sizeof(v)));
	ht_res_free(&r);
	/* numbers past 64 bits: a last position past the end is the end, a suffix
	 * longer than the image is all of it, a first position past it is 416 */
	snprintf(hdr, sizeof(hdr), "bytes 0-%zu/%zu", stored.len - 1, stored.len);
	static const char *const whole[] = {
		"Range: bytes=0-18446744073709551615\r\n",
		"Range: bytes=0-99999999999999999999999999\r\n",
		"Range: bytes=-18446744073709551616\r\n",
	};
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		get_media("GET", ids[0], NULL, whole[i], 206, &r);
		cr_assert_eq(r.len, stored.len, "%s", whole[i]);
		cr_assert_str_eq(ht_header(&r, "Content-Range", v, sizeof(v)), hdr, "%s", whole[i]);
		ht_res_free(&r);
	}
	get_media("GET", ids[0], NULL, "Range: bytes=18446744073709551616-\r\n", 416, &r);
	cr_assert_str_eq(ht_header(&r, "Content-Type", v, sizeof(v)), "application/json");
	ht_res_free(&r);
	get_media("GET", ids[0], NULL, "Range: bytes=x-1\r\n", 200, &r); /* unparsable: ignored */
	cr_assert_eq(r.len, stored.len);
	ht_res_free(&r);
	/* If-Range: the range only for this very ETag, compared strongly; a date
	 * never matches (no Last-Modified is sent): the whole image instead */
	snprintf(hdr, sizeof(hdr), "If-Range: %s\r\nRange: bytes=10-19\r\n", etag);
	get_media("GET", ids[0], NULL, hdr, 206, &r);
	cr_assert_eq(r.len, 10);
	ht_res_free(&r);
	snprintf(hdr, sizeof(hdr), "If-Range: W/%s\r\nRange: bytes=10-19\r\n", etag);
	const char *const stale[] = {
		"If-Range: \"1-1\"\r\nRange: bytes=10-19\r\n",
		"If-Range: Wed, 21 Oct 2015 07:28:00 GMT\r\nRange: bytes=10-19\r\n",
		hdr,
		"If-Range: \"1-1\"\r\nRange: bytes=100000-\r\n",
	};
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
		get_media("GET", ids[0], NULL, stale[i], 200, &r);
		cr_assert_eq(r.len, stored.len, "%s", stale[i]);
		cr_assert_eq(memcmp(r.body, stored.p, stored.len), 0);
		cr_assert_null(ht_header(&r, "Content-Range", v, sizeof(v)), "%s", stale[i]);
		ht_res_free(&r);
	}
	get_media("GET", ids[0], NULL, "Range: bytes=0-1,4-5\r\n", 200, &r); /* several: all */
	cr_assert_eq(r.len, stored.len);
	ht_res_free(&r);
	get_media("HEAD", ids[0], NULL, NULL, 200, &r);
	snprintf(hdr, sizeof(hdr), "%zu", stored.len);
	cr_assert_str_eq(ht_header(&r, "Content-Length", v, sizeof(v)), hdr);
	cr_assert_eq(r.len, 0);
	ht_res_free(&r);
	/* the preview: its own ETag, cached for good too */
	char pv_etag[96];
	get_preview(ids[0], NULL, NULL, 200, &r);
	cr_assert_str_eq(ht_header(&r, "Content-Type", v, sizeof(v)), "image/webp");
	cr_assert_str_eq(
	    ht_header(&r, "Cache-Control", v, sizeof(v)), "public, max-age=31536000, immutable");
	cr_assert_not_null(ht_header(&r, "ETag", pv_etag, sizeof(pv_etag)));
	cr_assert_str_neq(pv_etag, etag, "a preview's ETag is not its original's");
	ht_res_free(&r);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", pv_etag);
	get_preview(ids[0], NULL, hdr, 304, &r);
	ht_res_free(&r);
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
	get_preview(ids[0], NULL, hdr, 200, &r);
	ht_res_free(&r);

	/* by category: the index row written with the post */
	j = call(200, "GET", "/api/v1/users/alice/posts?category=travel_2026", NULL, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 1);
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "posts"), 0), "id"), post_id);
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/alice/posts?category=travel", NULL, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 0, "a prefix is not a category");
	json_decref(j);
	fail_with(400, "INVALID", "GET", "/api/v1/users/alice/posts?category=Travel", NULL, NULL);

	/* a deleted post takes its images and its category row with it */
	snprintf(path, sizeof(path), "/api/v1/posts/%s", post_id);
	json_decref(call(200, "DELETE", path, a, NULL));
	for (size_t i = 0; i < 4; i++) {
		get_media("GET", ids[i], a, NULL, 404, &r);
		ht_res_free(&r);
		get_preview(ids[i], a, NULL, 404, &r);
		ht_res_free(&r);
	}
	free(stored.p);
	j = call(200, "GET", "/api/v1/users/alice/posts?category=travel_2026", NULL, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 0);
	json_decref(j);
	free(png.p);
	free(gif.p);
	free(webp.p);
	free(jpg.p);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

Test(media, refusals, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_MEDIA_MAX=8000", NULL };
	fixture     png = load("photo.png"), jpg = load("exif.jpg");
	fixture     text = { "just some words, not a picture", 30 };
	const char *a, *b, *ids[5], *bobs;
	char        body[2048], alt[1100];
	ht_res      r;

	start(env);
	a = user("alice", 0);
	b = user("bob", 1);
	/* the type is read from the bytes: words, and a PNG signature over a JPEG */
	upload(a, &text, 415, "BAD_MEDIA");
	fixture liar = { malloc(jpg.len + 8), jpg.len + 8 };
	memcpy(liar.p, "\x89PNG\r\n\x1a\n", 8);
	memcpy(liar.p + 8, jpg.p, jpg.len);
	upload(a, &liar, 415, "BAD_MEDIA");
	fixture empty = { "", 0 };
	upload(a, &empty, 415, "BAD_MEDIA"); /* as over msgpack */
	/* too large: refused from its head, before the body is read */
	fixture big = { calloc(1, 9000), 9000 };
	memcpy(big.p, png.p, png.len);
	send_bytes("POST", "/api/v1/media", a, NULL, big.p, big.len, &r);
	cr_assert_eq(r.status, 413, "%s", r.body);
	ht_res_free(&r);
	send_bytes("POST", "/api/v1/media", NULL, NULL, png.p, png.len, &r);
	cr_assert_eq(r.status, 401);
	ht_res_free(&r);

	for (int i = 0; i < 5; i++) {
		ids[i] = media_id(a, &png, i);
	}
	bobs = media_id(b, &png, 5);
	/* five images */
	snprintf(body, sizeof(body),
	    "{\"text\":\"x\",\"images\":[{\"media\":\"%s\"},{\"media\":\"%s\"},{\"media\":\"%s\"},"
	    "{\"media\":\"%s\"},{\"media\":\"%s\"}]}",
	    ids[0], ids[1], ids[2], ids[3], ids[4]);
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, body);
	/* someone else's image, a repeat, a malformed or unknown id */
	snprintf(body, sizeof(body), "{\"text\":\"x\",\"images\":[{\"media\":\"%s\"}]}", bobs);
	fail_with(403, "FORBIDDEN", "POST", "/api/v1/posts", a, body);
	snprintf(body, sizeof(body),
	    "{\"text\":\"x\",\"images\":[{\"media\":\"%s\"},{\"media\":\"%s\"}]}", ids[0], ids[0]);
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, body);
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a,
	    "{\"text\":\"x\",\"images\":[{\"media\":\"1_2\"}]}");
	fail_with(404, "NO_SUCH_MEDIA", "POST", "/api/v1/posts", a,
	    "{\"text\":\"x\",\"images\":[{\"media\":\"1-12345\"}]}");
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, "{\"text\":\"x\",\"images\":[{}]}");
	/* bounds of the title, the category and the alt text */
	memset(alt, 'a', 1001);
	alt[1001] = '\0';
	snprintf(body, sizeof(body), "{\"text\":\"x\",\"title\":\"%.101s\"}", alt);
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, body);
	snprintf(body, sizeof(body), "{\"text\":\"x\",\"title\":\"%.100s\"}", alt);
	json_decref(call(201, "POST", "/api/v1/posts", a, body));
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, "{\"text\":\"x\",\"title\":\"\"}");
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a,
	    "{\"text\":\"x\",\"category\":\"Bad-Cat\"}");
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a,
	    "{\"text\":\"x\",\"category\":\"abcdefghijklmnopqrstuvwxyz0123456\"}");
	json_decref(call(201, "POST", "/api/v1/posts", a,
	    "{\"text\":\"x\",\"category\":\"abcdefghijklmnopqrstuvwxyz012345\"}"));
	snprintf(body, sizeof(body),
	    "{\"text\":\"x\",\"images\":[{\"media\":\"%s\",\"alt\":\"%s\"}]}", ids[0], alt);
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, body);
	/* text: empty, or only white space, only with an image */
	fail_with(400, "BAD_TEXT", "POST", "/api/v1/posts", a, "{\"text\":\"\"}");
	fail_with(400, "BAD_TEXT", "POST", "/api/v1/posts", a, "{\"title\":\"only a title\"}");
	fail_with(400, "BAD_TEXT", "POST", "/api/v1/posts", a,
	    "{\"text\":\" \\u00a0\\t\\n\\u3000\",\"title\":\"blank text\"}");
	snprintf(body, sizeof(body), "{\"text\":\" \\u3000\\n\",\"images\":[{\"media\":\"%s\"}]}",
	    ids[1]);
	json_decref(call(201, "POST", "/api/v1/posts", a, body));
	snprintf(body, sizeof(body), "{\"images\":[{\"media\":\"%s\"}]}", ids[0]);
	json_decref(call(201, "POST", "/api/v1/posts", a, body));
	/* attached once only */
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, body);
	/* the bytes never travel as JSON */
	fail_with(400, "INVALID", "POST", "/api/v1/posts", a, "{\"text\":\"x\",\"data\":\"AAAA\"}");
	free(big.p);
	free(liar.p);
	free(png.p);
	free(jpg.p);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

Test(media, pixel_and_rate_limits, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_MEDIA_PIXELS=3000", "WARBLE_MEDIA_RATE=4", NULL };
	fixture     png = load("photo.png"), gif = load("flat.gif");
	const char *a, *b;

	start(env);
	a = user("alice", 0);
	b = user("bob", 1);
	upload(a, &png, 413, "TOO_LARGE"); /* 64 x 48 = 3,072 pixels */
	for (int i = 0; i < 3; i++) {
		json_decref(upload(a, &gif, 201, NULL)); /* 32 x 24 */
	}
	upload(a, &gif, 429, "RATE_LIMITED");
	json_decref(upload(b, &gif, 201, NULL)); /* per user */
	free(png.p);
	free(gif.p);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* hold_upload starts an upload on a new connection that sends 100 bytes of its body and no more; returns the fd. */
static int
hold_upload(const char *tok, const fixture *f)
{
	char head[512];
	int  fd, n;

	cr_assert_geq(fd = ht_connect(port), 0);
	n = snprintf(head, sizeof(head),
	    "POST /api/v1/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
	    "Content-Length: %zu\r\n\r\n",
	    tok, f->len);
	cr_assert_eq(ht_send(fd, head, (size_t)n), 0);
	cr_assert_eq(ht_send(fd, f->p, 100), 0); /* and the rest never comes */
	return fd;
}

/* Only so many upload bodies are held at once: one more is refused from its head with 503, and a slot comes back when its connection goes mid-body. */
Test(media, uploads_in_flight, .fini = wbt_cleanup, .timeout = 120)
{
	const char   *env[] = { "WARBLE_HTTP_UPLOADS=1", NULL };
	fixture       png = load("photo.png");
	const char   *a;
	ht_res        r;
	int           fd;
	struct pollfd pf = { .events = POLLIN };

	start(env);
	a = user("alice", 0);
	fd = hold_upload(a, &png);
	long long end = wbt_now_ms() + 10000;
	for (;;) { /* the held upload's head is being read: wait until it holds the slot */
		send_bytes("POST", "/api/v1/media", a, NULL, png.p, png.len, &r);
		if (r.status == 503) {
			break;
		}
		cr_assert_eq(r.status, 201, "%s", r.body);
		ht_res_free(&r);
		pf.fd = fd;
		if (poll(&pf, 1, 0) == 1) {
			/* that upload took the slot first and the held one was
			 * refused (or closed): hold another */
			close(fd);
			fd = hold_upload(a, &png);
		}
		cr_assert_lt(wbt_now_ms(), end, "a second upload was never refused");
		wbt_sleep_ms(20);
	}
	cr_assert(strstr(r.body, "UNAVAILABLE") != NULL, "%s", r.body);
	ht_res_free(&r);
	close(fd);
	for (end = wbt_now_ms() + 10000;; wbt_sleep_ms(20)) {
		send_bytes("POST", "/api/v1/media", a, NULL, png.p, png.len, &r);
		if (r.status == 201) {
			break;
		}
		cr_assert_eq(r.status, 503, "%s", r.body);
		ht_res_free(&r);
		cr_assert_lt(wbt_now_ms(), end, "the slot never came back");
	}
	ht_res_free(&r);
	free(png.p);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}
