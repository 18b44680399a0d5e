/*
 * wb_codec_test.c - the msgpack codec: round trips of every field type and
 * every operation, and a decoder that rejects every kind of bad input
 * (truncation, wrong types, limits, hostile length headers) quickly and
 * without large allocations.
 */
#include <criterion/criterion.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wb_proto.h"
#include "wb_sample.h"

/* ---- helpers ----------------------------------------------------------- */

typedef struct mp {
	msgpack_sbuffer sb;
	msgpack_packer  pk;
} mp;

static void
mp_init(mp *m)
{
	msgpack_sbuffer_init(&m->sb);
	msgpack_packer_init(&m->pk, &m->sb, msgpack_sbuffer_write);
}

static void
mp_str(mp *m, const char *s)
{
	msgpack_pack_str_with_body(&m->pk, s, strlen(s));
}

static void
mp_done(mp *m)
{
	msgpack_sbuffer_destroy(&m->sb);
}

/* dec decodes and frees, returning the code; err gets the message. */
static int
dec(const void *b, size_t n, const wb_limits *lim, char *err, size_t errlen)
{
	wb_obj *m = (wb_obj *)0x1;
	int     rv = wb_decode(&m, b, n, lim, err, errlen);

	if (rv != WB_OK) {
		cr_assert_null(m, "a failed decode leaves *out NULL");
	}
	wb_msg_free(m);
	return rv;
}

/* roundtrip encodes m, decodes it and checks it came back equal. */
static wb_obj *
roundtrip(const wb_obj *m)
{
	char   *buf, err[160] = "";
	size_t  len;
	wb_obj *back;

	cr_assert_eq(wb_encode_buf(m, &buf, &len), WB_OK);
	cr_assert_eq(wb_decode(&back, buf, len, NULL, err, sizeof(err)), WB_OK, "decode: %s", err);
	cr_assert(wb_equal(m, back), "decoded message differs");
	free(buf);
	return back;
}

static size_t
encoded_len(const wb_obj *m)
{
	char  *buf;
	size_t len;
	cr_assert_eq(wb_encode_buf(m, &buf, &len), WB_OK);
	free(buf);
	return len;
}

/* A timeline reply: 20 posts with their authors. */
static wb_obj *
timeline_reply(void)
{
	wb_obj *m = wb_msg_new();
	wb_obj *p;

	wb_reply_ok(m);
	p = wb_add_objs(m, WB_F_POSTS, 20);
	for (int i = 0; i < 20; i++) {
		wb_set_u64(&p[i], WB_F_ID, (UINT64_C(153000000000) + (uint64_t)i) << 22);
		wb_set_u64(&p[i], WB_F_AUTHOR, 1000 + (uint64_t)i);
		wb_set_cstr(&p[i], WB_F_AUTHOR_NAME, "some_author");
		wb_set_cstr(&p[i], WB_F_TEXT,
		    "a post of typical length about nothing in particular, with a link "
		    "https://example.org/x");
		wb_set_u64(&p[i], WB_F_TIME, UINT64_C(1700000000000) + (uint64_t)i);
	}
	wb_set_u64(m, WB_F_NEXT, UINT64_C(152999999999) << 22);
	return m;
}

/* A fans page of n uids. */
static wb_obj *
fans_reply(size_t n)
{
	wb_obj   *m = wb_msg_new();
	uint64_t *u;

	wb_reply_ok(m);
	u = wb_add_u64s(m, WB_F_UIDS, n);
	for (size_t i = 0; i < n; i++) {
		u[i] = 100000 + i * 37;
	}
	wb_set_u64(m, WB_F_NEXT, 12345);
	return m;
}

/* ---- round trips ------------------------------------------------------- */

Test(wb_codec, every_field_alone_and_all_together)
{
	wb_obj *all = wb_msg_new();

	for (int f = 0; f < WB_FIELD_COUNT; f++) {
		for (unsigned variant = 0; variant < 3; variant++) {
			wb_obj *m = wb_msg_new();
			cr_assert_eq(wb_sample_fill(m, (wb_field)f, variant), WB_OK);
			wb_msg_free(roundtrip(m));
			wb_msg_free(m);
		}
		cr_assert_eq(wb_sample_fill(all, (wb_field)f, (unsigned)f), WB_OK);
	}
	wb_obj *back = roundtrip(all);
	cr_assert_eq(back->n, WB_FIELD_COUNT);
	wb_msg_free(back);
	wb_msg_free(all);
}

Test(wb_codec, integer_widths)
{
	static const struct {
		uint64_t v;
		size_t   bytes;
	} cases[] = {
		{ 0, 1 },
		{ 127, 1 },
		{ 128, 2 },
		{ 255, 2 },
		{ 256, 3 },
		{ 65535, 3 },
		{ 65536, 5 },
		{ UINT32_MAX, 5 },
		{ UINT64_C(1) << 32, 9 },
		{ UINT64_MAX, 9 },
	};
	uint64_t all[sizeof(cases) / sizeof(cases[0])];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wb_obj *m = wb_msg_new();
		wb_set_u64(m, WB_F_UID, cases[i].v); /* {"uid": v}: 1 + 4 + v */
		cr_assert_eq(encoded_len(m), 1 + 4 + cases[i].bytes, "value %llu",
		    (unsigned long long)cases[i].v);
		wb_obj *back = roundtrip(m);
		cr_assert_eq(wb_u64(back, WB_F_UID, 1), cases[i].v);
		wb_msg_free(back);
		wb_set_u64(m, WB_F_ID, cases[i].v);
		wb_msg_free(roundtrip(m));
		all[i] = cases[i].v;
		wb_msg_free(m);
	}
	wb_obj *m = wb_msg_new();
	wb_set_u64s(m, WB_F_UIDS, all, sizeof(all) / sizeof(all[0]));
	wb_set_u64s(m, WB_F_IDS, all, sizeof(all) / sizeof(all[0]));
	wb_msg_free(roundtrip(m));
	wb_msg_free(m);
}

Test(wb_codec, string_lengths_up_to_the_limit)
{
	static const size_t lens[] = { 0, 1, 31, 32, 255, 256, 65535, 65536 };
	char               *s = malloc(65536);

	for (size_t i = 0; i < 65536; i++) {
		s[i] = (char)('a' + i % 26);
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		wb_obj *m = wb_msg_new();
		wb_set_str(m, WB_F_TEXT, s, lens[i]);
		wb_obj     *back = roundtrip(m);
		const char *t;
		size_t      n;
		cr_assert(wb_get_str(back, WB_F_TEXT, &t, &n));
		cr_assert_eq(n, lens[i]);
		cr_assert_eq(t[n], '\0');
		wb_msg_free(back);
		wb_msg_free(m);
	}
	free(s);
}

Test(wb_codec, array_lengths_up_to_the_limit)
{
	static const size_t lens[] = { 0, 1, 15, 16, 65535, 65536, 100000 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		wb_obj *m = fans_reply(lens[i]);
		wb_msg_free(roundtrip(m));
		wb_msg_free(m);
	}
	for (size_t n = 0; n < 40; n += 13) {
		wb_obj *m = wb_msg_new();
		wb_obj *objs = wb_add_objs(m, WB_F_USERS, n);
		for (size_t i = 0; i < n; i++) {
			wb_set_u64(&objs[i], WB_F_UID, i);
			wb_set_bool(&objs[i], WB_F_FOLLOWED, i % 2);
		}
		wb_add_objs(m, WB_F_GAUGES, 1); /* an empty nested map */
		wb_msg_free(roundtrip(m));
		wb_msg_free(m);
	}
}

Test(wb_codec, every_op_over_the_wire)
{
	char  err[160];
	wb_op op;

	for (int o = 1; o < WB_OP_COUNT; o++) {
		for (int all = 0; all < 2; all++) {
			wb_obj *m = wb_sample_request((wb_op)o, all);
			wb_obj *back = roundtrip(m);
			cr_assert_eq(wb_check_request(back, &op, err, sizeof(err)), WB_OK, "%s: %s",
			    wb_op_name((wb_op)o), err);
			cr_assert_eq(op, o);
			wb_msg_free(back);
			wb_msg_free(m);
		}
	}
}

Test(wb_codec, error_replies_over_the_wire)
{
	const char *msg;

	for (int code = 1; code < WB_ERR_COUNT; code++) {
		wb_obj *m = wb_msg_new();
		cr_assert_eq(wb_reply_error(m, code, "detail for %s", wb_err_name(code)), WB_OK);
		wb_obj *back = roundtrip(m);
		cr_assert_eq(wb_reply_code(back, &msg), code);
		char want[64];
		snprintf(want, sizeof(want), "detail for %s", wb_err_name(code));
		cr_assert_str_eq(msg, want);
		wb_msg_free(back);
		wb_msg_free(m);
	}
	wb_obj *m = timeline_reply();
	wb_obj *back = roundtrip(m);
	cr_assert_eq(wb_reply_code(back, &msg), WB_OK);
	wb_msg_free(back);
	wb_msg_free(m);
}

static int
collect(void *arg, const char *b, size_t n)
{
	msgpack_sbuffer_write(arg, b, n);
	return 0;
}

static int
fail_after(void *arg, const char *b, size_t n)
{
	size_t *left = arg;
	(void)b;
	if (n > *left) {
		return WB_EUNAVAIL;
	}
	*left -= n;
	return 0;
}

Test(wb_codec, encode_through_a_writer)
{
	wb_obj         *m = timeline_reply();
	msgpack_sbuffer sb;
	char           *buf;
	size_t          len;

	msgpack_sbuffer_init(&sb);
	cr_assert_eq(wb_encode(m, collect, &sb), WB_OK);
	cr_assert_eq(wb_encode_buf(m, &buf, &len), WB_OK);
	cr_assert_eq(sb.size, len);
	cr_assert_eq(memcmp(sb.data, buf, len), 0);
	/* a writer error stops the encoding and comes back */
	for (size_t cut = 0; cut < len; cut += 97) {
		size_t left = cut;
		cr_assert_eq(wb_encode(m, fail_after, &left), WB_EUNAVAIL);
	}
	cr_assert_eq(wb_encode(NULL, collect, &sb), WB_EINVAL);
	cr_assert_eq(wb_encode(m, NULL, &sb), WB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
	free(buf);
	wb_msg_free(m);
}

/* ---- the decoder rejects bad input ------------------------------------- */

Test(wb_decode, truncation_at_every_offset)
{
	wb_obj *msgs[5];
	char    err[160];

	msgs[0] = wb_sample_request(WB_OP_POST_PUBLISH, true);
	msgs[1] = timeline_reply();
	msgs[2] = fans_reply(300);
	msgs[3] = wb_msg_new();
	wb_reply_error(msgs[3], WB_ETOOLONG, NULL);
	msgs[4] = wb_sample_request(WB_OP_EVENTS, true);
	for (size_t i = 0; i < 5; i++) {
		char  *buf;
		size_t len;
		cr_assert_eq(wb_encode_buf(msgs[i], &buf, &len), WB_OK);
		cr_assert_eq(dec(buf, len, NULL, err, sizeof(err)), WB_OK);
		for (size_t cut = 0; cut < len; cut++) {
			/* a fresh allocation of exactly cut bytes, so ASan sees any over-read */
			char *part = malloc(cut ? cut : 1);
			memcpy(part, buf, cut);
			int rv = dec(part, cut, NULL, err, sizeof(err));
			cr_assert_eq(rv, WB_EBADMSG, "message %zu cut at %zu of %zu: %d %s", i, cut,
			    len, rv, err);
			free(part);
		}
		free(buf);
		wb_msg_free(msgs[i]);
	}
	cr_assert_eq(dec("", 0, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "empty message");
	cr_assert_eq(dec(NULL, 5, NULL, err, sizeof(err)), WB_EBADMSG);
	/* no room for a message is fine too */
	cr_assert_eq(dec("\x81\xa3uid", 5, NULL, NULL, 0), WB_EBADMSG);
	cr_assert_eq(dec("\x81\xa5"
	                 "bogus\x01",
	                 8, NULL, err, 1),
	    WB_EBADMSG);
	cr_assert_str_eq(err, "");
	cr_assert_eq(wb_decode(NULL, "\x80", 1, NULL, NULL, 0), WB_EINVAL);
}

/*
 * wb_decode_head on every prefix of a request: the fields wholly within
 * it, in order, never one cut off, never an error for a prefix of a good
 * message; the whole message gives the message itself.
 */
Test(wb_decode, head_of_every_prefix)
{
	static const char data[300] = { 1, 2, 3 };
	wb_obj           *req = wb_request(WB_OP_UPLOAD), *h;
	char              err[160], *buf;
	size_t            len, nfields_before = 0;

	cr_assert_eq(wb_set_cstr(req, WB_F_TOKEN, "tok-123"), WB_OK);
	cr_assert_eq(wb_set_bin(req, WB_F_DATA, data, sizeof(data)), WB_OK);
	cr_assert_eq(wb_encode_buf(req, &buf, &len), WB_OK);
	for (size_t cut = 0; cut <= len; cut++) {
		char *part = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees any over-read */
		size_t nf = 0;

		memcpy(part, buf, cut);
		cr_assert_eq(wb_decode_head(&h, part, cut, NULL, err, sizeof(err)), WB_OK,
		    "cut at %zu of %zu: %s", cut, len, err);
		nf += wb_has(h, WB_F_OP) + wb_has(h, WB_F_V) + wb_has(h, WB_F_TOKEN) +
		      wb_has(h, WB_F_DATA);
		cr_assert_geq(nf, nfields_before, "cut at %zu: fields went away", cut);
		nfields_before = nf;
		if (wb_has(h, WB_F_OP)) {
			cr_assert_eq(wb_op_of(h), WB_OP_UPLOAD);
		}
		if (wb_has(h, WB_F_TOKEN)) {
			cr_assert_str_eq(wb_str(h, WB_F_TOKEN, ""), "tok-123", "cut at %zu", cut);
		}
		cr_assert_eq(wb_has(h, WB_F_DATA), cut == len,
		    "cut at %zu: the data is whole only at the end", cut);
		if (cut == len) {
			cr_assert(wb_equal(h, req), "the whole message's head is the message");
		}
		wb_msg_free(h);
		free(part);
	}
	cr_assert_eq(nfields_before, 4);
	/* the token is whole well before the data */
	cr_assert_eq(wb_decode_head(&h, buf, 40, NULL, err, sizeof(err)), WB_OK);
	cr_assert(wb_has(h, WB_F_TOKEN) && !wb_has(h, WB_F_DATA));
	wb_msg_free(h);
	free(buf);
	wb_msg_free(req);

	/* not a map, a map of too many fields, a bad whole field: errors */
	h = (wb_obj *)0x1;
	cr_assert_eq(wb_decode_head(&h, "\x93\x01", 2, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_null(h);
	cr_assert_str_eq(err, "message must be a map");
	cr_assert_eq(wb_decode_head(&h, "\xde\xff\xff", 3, NULL, err, sizeof(err)), WB_ETOOBIG);
	cr_assert_eq(wb_decode_head(&h, "\x82\xa2op\x05\xa1v", 7, NULL, err, sizeof(err)),
	    WB_EBADMSG, "op of the wrong type, though v is cut");
	cr_assert_eq(wb_decode_head(&h, "\x82\xc1", 2, NULL, err, sizeof(err)), WB_EBADMSG);
	/* nothing yet, or half a map 16 header: no fields */
	cr_assert_eq(wb_decode_head(&h, "", 0, NULL, err, sizeof(err)), WB_OK);
	cr_assert_eq(wb_has(h, WB_F_OP), false);
	wb_msg_free(h);
	cr_assert_eq(wb_decode_head(&h, "\xde\x00", 2, NULL, err, sizeof(err)), WB_OK);
	wb_msg_free(h);
	cr_assert_eq(wb_decode_head(NULL, "", 0, NULL, err, sizeof(err)), WB_EINVAL);
}

Test(wb_decode, limits)
{
	wb_limits lim = wb_limits_default;
	char      err[160];
	wb_obj   *m = fans_reply(1000);
	char     *buf;
	size_t    len;

	cr_assert_eq(wb_encode_buf(m, &buf, &len), WB_OK);
	lim.max_bytes = len - 1;
	cr_assert_eq(dec(buf, len, &lim, err, sizeof(err)), WB_ETOOBIG);
	lim.max_bytes = len;
	cr_assert_eq(dec(buf, len, &lim, err, sizeof(err)), WB_OK);
	lim.max_array = 999;
	cr_assert_eq(dec(buf, len, &lim, err, sizeof(err)), WB_ETOOBIG);
	cr_assert_str_eq(err, "array of 1000 elements exceeds the limit of 999");
	lim = wb_limits_default;
	lim.max_fields = 2;
	cr_assert_eq(dec(buf, len, &lim, err, sizeof(err)), WB_ETOOBIG);
	cr_assert_str_eq(err, "map of 3 fields exceeds the limit of 2");
	free(buf);
	wb_msg_free(m);

	/* the default message limit */
	char *huge = calloc(1, wb_limits_default.max_bytes + 1);
	huge[0] = (char)0x80;
	cr_assert_eq(
	    dec(huge, wb_limits_default.max_bytes + 1, NULL, err, sizeof(err)), WB_ETOOBIG);
	free(huge);

	/* strings: one byte over the limit */
	mp    b;
	char *s = calloc(1, 65537);
	memset(s, 'x', 65537);
	mp_init(&b);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "text");
	msgpack_pack_str_with_body(&b.pk, s, 65537);
	cr_assert_eq(dec(b.sb.data, b.sb.size, NULL, err, sizeof(err)), WB_ETOOBIG);
	cr_assert_str_eq(err, "string of 65537 bytes exceeds the limit of 65536");
	mp_done(&b);
	/* bin has its own limit (media), and only a bin field takes it */
	mp_init(&b);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "text");
	msgpack_pack_bin_with_body(&b.pk, s, 65537);
	cr_assert_eq(dec(b.sb.data, b.sb.size, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "field 'text' must be a string");
	mp_done(&b);
	mp_init(&b);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "data");
	msgpack_pack_bin_with_body(&b.pk, s, 65537);
	cr_assert_eq(dec(b.sb.data, b.sb.size, NULL, err, sizeof(err)), WB_OK, "%s", err);
	wb_limits small = wb_limits_default;
	small.max_bin = 65536;
	cr_assert_eq(dec(b.sb.data, b.sb.size, &small, err, sizeof(err)), WB_ETOOBIG);
	cr_assert_str_eq(err, "bin of 65537 bytes exceeds the limit of 65536");
	mp_done(&b);
	free(s);

	/* the value budget: 1000 posts of 4 fields pass every per-container limit */
	lim = wb_limits_default;
	lim.max_array = 1000;
	m = wb_msg_new();
	wb_obj *p = wb_add_objs(m, WB_F_POSTS, 1000);
	for (int i = 0; i < 1000; i++) {
		wb_set_u64(&p[i], WB_F_ID, 1);
		wb_set_u64(&p[i], WB_F_AUTHOR, 2);
		wb_set_u64(&p[i], WB_F_TIME, 3);
		wb_set_cstr(&p[i], WB_F_TEXT, "t");
	}
	cr_assert_eq(wb_encode_buf(m, &buf, &len), WB_OK);
	cr_assert_eq(dec(buf, len, &lim, err, sizeof(err)), WB_ETOOBIG);
	cr_assert_str_eq(err, "too many values in message");
	cr_assert_eq(dec(buf, len, NULL, err, sizeof(err)), WB_OK);
	free(buf);
	wb_msg_free(m);
}

/* The msgpack kinds a value can have on the wire. */
enum kind {
	K_UINT,
	K_NEG,
	K_BOOL,
	K_STR,
	K_BIN,
	K_FLOAT,
	K_NIL,
	K_UINTS,
	K_MAPS,
	K_MAP,
	K_EXT,
	K_MIXED_INTS,
	K_MIXED_MAPS,
	K_COUNT
};

static void
pack_kind(mp *b, enum kind k)
{
	switch (k) {
	case K_UINT:
		msgpack_pack_uint64(&b->pk, 5);
		break;
	case K_NEG:
		msgpack_pack_int64(&b->pk, -5);
		break;
	case K_BOOL:
		msgpack_pack_true(&b->pk);
		break;
	case K_STR:
		mp_str(b, "x");
		break;
	case K_BIN:
		msgpack_pack_bin_with_body(&b->pk, "x", 1);
		break;
	case K_FLOAT:
		msgpack_pack_double(&b->pk, 1.5);
		break;
	case K_NIL:
		msgpack_pack_nil(&b->pk);
		break;
	case K_UINTS:
		msgpack_pack_array(&b->pk, 2);
		msgpack_pack_uint64(&b->pk, 1);
		msgpack_pack_uint64(&b->pk, 2);
		break;
	case K_MAPS:
		msgpack_pack_array(&b->pk, 1);
		msgpack_pack_map(&b->pk, 0);
		break;
	case K_MAP:
		msgpack_pack_map(&b->pk, 0);
		break;
	case K_EXT:
		msgpack_pack_ext_with_body(&b->pk, "abcd", 4, 1);
		break;
	case K_MIXED_INTS:
		msgpack_pack_array(&b->pk, 2);
		msgpack_pack_uint64(&b->pk, 1);
		msgpack_pack_int64(&b->pk, -1);
		break;
	case K_MIXED_MAPS:
		msgpack_pack_array(&b->pk, 2);
		msgpack_pack_map(&b->pk, 0);
		msgpack_pack_uint64(&b->pk, 1);
		break;
	case K_COUNT:
		break;
	}
}

static bool
kind_fits(wb_type t, enum kind k)
{
	switch (t) {
	case WB_T_U64:
	case WB_T_ID:
		return k == K_UINT;
	case WB_T_BOOL:
		return k == K_BOOL;
	case WB_T_STR:
		return k == K_STR;
	case WB_T_U64S:
	case WB_T_IDS:
		return k == K_UINTS;
	case WB_T_OBJS:
		return k == K_MAPS;
	case WB_T_BIN:
		return k == K_BIN;
	}
	return false;
}

Test(wb_decode, wrong_types_for_every_field)
{
	char err[160], want[64];

	for (int f = 0; f < WB_FIELD_COUNT; f++) {
		for (int k = 0; k < K_COUNT; k++) {
			mp b;
			mp_init(&b);
			msgpack_pack_map(&b.pk, 1);
			mp_str(&b, wb_field_name((wb_field)f));
			pack_kind(&b, (enum kind)k);
			int rv = dec(b.sb.data, b.sb.size, NULL, err, sizeof(err));
			if (kind_fits(wb_field_type((wb_field)f), (enum kind)k)) {
				cr_assert_eq(rv, WB_OK, "field %s kind %d: %s",
				    wb_field_name((wb_field)f), k, err);
			} else {
				cr_assert_eq(rv, WB_EBADMSG, "field %s kind %d",
				    wb_field_name((wb_field)f), k);
				snprintf(want, sizeof(want), "field '%s' must be ",
				    wb_field_name((wb_field)f));
				cr_assert_eq(strncmp(err, want, strlen(want)), 0, "%s", err);
			}
			mp_done(&b);
		}
	}
	/* the exact wording of the common cases */
	mp b;
	mp_init(&b);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "uid");
	mp_str(&b, "7");
	cr_assert_eq(dec(b.sb.data, b.sb.size, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "field 'uid' must be an unsigned integer");
	mp_done(&b);
	/* a wrong type inside a nested object */
	mp_init(&b);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "posts");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "text");
	msgpack_pack_uint64(&b.pk, 1);
	cr_assert_eq(dec(b.sb.data, b.sb.size, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "field 'text' must be a string");
	mp_done(&b);
}

Test(wb_decode, nesting_depth)
{
	char      err[160];
	wb_limits lim = wb_limits_default;
	mp        b;

	/* {"reps": [{"posts": [{"posts": [{}]}]}]}: seven levels */
	mp_init(&b);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "reps");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "posts");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_map(&b.pk, 1);
	mp_str(&b, "posts");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_map(&b.pk, 0);
	cr_assert_eq(dec(b.sb.data, b.sb.size, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "message nested deeper than 6 levels");
	lim.max_depth = 7;
	cr_assert_eq(dec(b.sb.data, b.sb.size, &lim, err, sizeof(err)), WB_OK, "%s", err);
	mp_done(&b);

	/* 100000 nested arrays: rejected without deep recursion */
	size_t   n = 100000;
	uint8_t *deep = malloc(n + 6);
	memcpy(deep, "\x81\xa4uids", 6);
	memset(deep + 6, 0x91, n - 1);
	deep[n + 5] = 0x90;
	cr_assert_eq(dec(deep, n + 6, NULL, err, sizeof(err)), WB_EBADMSG);
	memset(deep, 0x81, n); /* maps of maps, with keys missing */
	cr_assert_eq(dec(deep, n, NULL, err, sizeof(err)), WB_EBADMSG);
	free(deep);

	/* a limit of 1 allows a flat message only */
	lim.max_depth = 1;
	wb_obj *m = wb_sample_request(WB_OP_USER_GET, false);
	char   *buf;
	size_t  len;
	wb_encode_buf(m, &buf, &len);
	cr_assert_eq(dec(buf, len, &lim, err, sizeof(err)), WB_EBADMSG);
	free(buf);
	wb_msg_free(m);
}

Test(wb_decode, root_keys_fields_and_trailing_bytes)
{
	char err[160];
	/* not a map at the root */
	static const struct {
		const char *b;
		size_t      n;
	} roots[] = {
		{ "\x01", 1 },
		{ "\xa3"
		  "abc",
		    4 },
		{ "\x91\x01", 2 },
		{ "\xc0", 1 },
		{ "\xc3", 1 },
		{ "\xc4\x01x", 3 },
		{ "\xcb\0\0\0\0\0\0\0\0", 9 },
		{ "\xff", 1 },
		{ "\xdc\0\0", 3 },
	};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		cr_assert_eq(
		    dec(roots[i].b, roots[i].n, NULL, err, sizeof(err)), WB_EBADMSG, "root %zu", i);
		cr_assert_str_eq(err, "message must be a map");
	}
	/* empty maps are fine, in all three encodings */
	cr_assert_eq(dec("\x80", 1, NULL, err, sizeof(err)), WB_OK);
	cr_assert_eq(dec("\xde\0\0", 3, NULL, err, sizeof(err)), WB_OK);
	cr_assert_eq(dec("\xdf\0\0\0\0", 5, NULL, err, sizeof(err)), WB_OK);
	/* keys must be strings */
	cr_assert_eq(dec("\x81\x01\x01", 3, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "map keys must be strings");
	cr_assert_eq(dec("\x81\xc0\x01", 3, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_eq(dec("\x81\xc4\x03uid\x01", 7, NULL, err, sizeof(err)), WB_EBADMSG, "bin keys");
	cr_assert_eq(dec("\x81\x91\xa3uid\x01", 7, NULL, err, sizeof(err)), WB_EBADMSG);
	/* unknown fields */
	cr_assert_eq(dec("\x81\xa5"
	                 "bogus\x01",
	                 8, NULL, err, sizeof(err)),
	    WB_EBADMSG);
	cr_assert_str_eq(err, "unknown field 'bogus'");
	cr_assert_eq(dec("\x81\xa4u\nd\x01\x01", 7, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "unknown field 'u?d?'");
	cr_assert_eq(dec("\x81\xa0\x01", 3, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "unknown field ''");
	/* duplicates, at the root and nested */
	cr_assert_eq(dec("\x82\xa3uid\x01\xa3uid\x02", 11, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "duplicate field 'uid'");
	cr_assert_eq(dec("\x81\xa5posts\x91\x82\xa2id\x01\xa2id\x01", 17, NULL, err, sizeof(err)),
	    WB_EBADMSG);
	cr_assert_str_eq(err, "duplicate field 'id'");
	/* trailing bytes */
	cr_assert_eq(dec("\x81\xa3uid\x01\x00", 7, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "1 trailing bytes after the message");
	cr_assert_eq(dec("\x80\x80", 2, NULL, err, sizeof(err)), WB_EBADMSG);
	/* strings with a NUL byte */
	cr_assert_eq(dec("\x81\xa4text\xa3"
	                 "a\0b",
	                 10, NULL, err, sizeof(err)),
	    WB_EBADMSG);
	cr_assert_str_eq(err, "field 'text' contains a NUL byte");
	/* the one byte msgpack never uses */
	cr_assert_eq(dec("\x81\xa3uid\xc1", 6, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "invalid msgpack byte 0xc1");
	/* int8/int16 encodings of non-negative values are unsigned integers */
	cr_assert_eq(dec("\x81\xa3uid\xd0\x05", 7, NULL, err, sizeof(err)), WB_OK, "%s", err);
	cr_assert_eq(dec("\x81\xa3uid\xd1\x00\x05", 8, NULL, err, sizeof(err)), WB_OK, "%s", err);
	cr_assert_eq(dec("\x81\xa3uid\xd0\xff", 7, NULL, err, sizeof(err)), WB_EBADMSG);
	/* str8 and str16 forms of short strings */
	cr_assert_eq(dec("\x81\xd9\x03uid\xd9\x01x", 9, NULL, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "field 'uid' must be an unsigned integer");
	cr_assert_eq(
	    dec("\x81\xda\x00\x04text\xda\x00\x01x", 12, NULL, err, sizeof(err)), WB_OK, "%s", err);
	/* every fixext and ext size is stepped over, then refused as a value */
	static const struct {
		const char *b;
		size_t      n;
	} exts[] = {
		{ "\x81\xa3uid\xd4\x01\x00", 8 },
		{ "\x81\xa3uid\xd5\x01\0\0", 9 },
		{ "\x81\xa3uid\xd6\x01\0\0\0\0", 11 },
		{ "\x81\xa3uid\xd7\x01\0\0\0\0\0\0\0\0", 15 },
		{ "\x81\xa3uid\xd8\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 23 },
		{ "\x81\xa3uid\xc7\x01\x01\x00", 9 },
		{ "\x81\xa3uid\xc8\0\x01\x01\x00", 10 },
		{ "\x81\xa3uid\xc9\0\0\0\x01\x01\x00", 12 },
		{ "\x81\xa3uid\xca\0\0\0\0", 10 },
		{ "\x81\xa3uid\xd2\0\0\0\x01", 10 },
		{ "\x81\xa3uid\xd3\0\0\0\0\0\0\0\x01", 14 },
	};
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		int rv = dec(exts[i].b, exts[i].n, NULL, err, sizeof(err));
		if (i >= 9) {
			cr_assert_eq(
			    rv, WB_OK, "int form %zu: %s", i, err); /* int32/int64 holding 1 */
		} else {
			cr_assert_eq(rv, WB_EBADMSG, "ext form %zu", i);
			cr_assert_str_eq(err, "field 'uid' must be an unsigned integer",
			    "ext form %zu: %s", i, err);
		}
	}
}

/* Hostile headers: a few bytes that claim huge contents. */
static const struct {
	const char *b;
	size_t      n;
} hostile[] = {
	{ "\xdd\x01\x00\x00\x00", 5 },                       /* array32: 16M elements */
	{ "\xdd\xff\xff\xff\xff", 5 },                       /* array32: 4G elements */
	{ "\xdf\x01\x00\x00\x00", 5 },                       /* map32: 16M entries */
	{ "\xdf\xff\xff\xff\xff", 5 },                       /* map32: 4G entries */
	{ "\xdb\xff\xff\xff\xff", 5 },                       /* str32: 4 GB */
	{ "\xc6\xff\xff\xff\xff", 5 },                       /* bin32: 4 GB */
	{ "\xc9\xff\xff\xff\xff\x01", 6 },                   /* ext32: 4 GB */
	{ "\xdc\xff\xff", 3 },                               /* array16 */
	{ "\xde\xff\xff", 3 },                               /* map16 */
	{ "\x81\xa4uids\xdd\x01\x00\x00\x00", 10 },          /* inside a valid map */
	{ "\x81\xa4uids\xdd\x00\x01\x86\xa0\x01\x02", 12 },  /* 100000 claimed, 2 present */
	{ "\x81\xa5posts\xdd\x01\x00\x00\x00\x80\x80", 13 }, /* 16M maps claimed */
	{ "\x81\xa5posts\x91\xdf\x01\x00\x00\x00", 12 },     /* a nested map32 */
	{ "\x81\xa4text\xdb\x7f\xff\xff\xff", 10 },          /* str32 2 GB inside a map */
	{ "\x8f\xdd\x01\x00\x00\x00", 6 },                   /* fixmap whose key is an array32 */
};

Test(wb_decode, hostile_headers_fail_fast)
{
	char            err[160];
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
			int rv = dec(hostile[i].b, hostile[i].n, NULL, err, sizeof(err));
			cr_assert(
			    rv == WB_EBADMSG || rv == WB_ETOOBIG, "input %zu: %d %s", i, rv, err);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* 30000 decodes; each is a few header reads, so even ASan takes milliseconds */
	cr_assert_lt(s, 2.0, "hostile inputs took %.3f s", s);
}

/*
 * The proof that hostile headers cost no memory.  Without ASan: a child
 * process with its address space capped 64 MB above its current size
 * decodes them; msgpack-c reserving 16M elements (~400 MB) would fail
 * there with WB_ENOMEM instead of the pre-walk's clean rejection, and a
 * malloc of 256 MB is checked to fail first, so the cap is real.  Under
 * ASan (which reserves terabytes of shadow, so RLIMIT_AS cannot be used)
 * the sanitizer's malloc hook records the largest allocation instead.
 */
#if defined(__SANITIZE_ADDRESS__)
#define WB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WB_TEST_ASAN 1
#endif
#endif

#ifdef WB_TEST_ASAN
int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void *, size_t), void (*free_hook)(const volatile void *));

static volatile size_t largest_alloc;

static void
hook_malloc(const volatile void *p, size_t n)
{
	(void)p;
	if (n > largest_alloc) {
		largest_alloc = n;
	}
}

static void
hook_free(const volatile void *p)
{
	(void)p;
}

Test(wb_decode, hostile_headers_allocate_nothing_large)
{
	char err[160];

	cr_assert_neq(__sanitizer_install_malloc_and_free_hooks(hook_malloc, hook_free), 0);
	/* the hook sees a real large decode, so the check below can fail */
	wb_obj *m = fans_reply(100000);
	char   *buf;
	size_t  len;
	wb_encode_buf(m, &buf, &len);
	largest_alloc = 0;
	cr_assert_eq(dec(buf, len, NULL, err, sizeof(err)), WB_OK);
	cr_assert_geq(largest_alloc, 100000 * sizeof(uint64_t), "largest %zu", largest_alloc);
	free(buf);
	wb_msg_free(m);

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		largest_alloc = 0;
		int rv = dec(hostile[i].b, hostile[i].n, NULL, err, sizeof(err));
		cr_assert(rv == WB_EBADMSG || rv == WB_ETOOBIG, "input %zu: %d %s", i, rv, err);
		cr_assert_lt(largest_alloc, 64 * 1024, "input %zu allocated %zu bytes at once", i,
		    largest_alloc);
	}
}
#else
static size_t
vm_bytes(void)
{
	FILE         *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;

	if (f != NULL) {
		if (fscanf(f, "%lu", &pages) != 1) {
			pages = 0;
		}
		fclose(f);
	}
	return pages * (size_t)sysconf(_SC_PAGESIZE);
}

Test(wb_decode, hostile_headers_allocate_nothing_large)
{
	pid_t pid = fork();
	int   status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char          err[160];
		size_t        vm = vm_bytes();
		struct rlimit rl = { vm + (64u << 20), vm + (64u << 20) };
		if (vm == 0 || setrlimit(RLIMIT_AS, &rl) != 0) {
			_exit(10);
		}
		void *big = malloc(256u << 20);
		if (big != NULL) {
			_exit(11); /* the cap does not work: the test would prove nothing */
		}
		/* a legitimate 100000-uid page still fits */
		wb_obj *m = fans_reply(100000);
		char   *buf;
		size_t  len;
		if (wb_encode_buf(m, &buf, &len) != WB_OK ||
		    dec(buf, len, NULL, err, sizeof(err)) != WB_OK) {
			_exit(12);
		}
		free(buf);
		wb_msg_free(m);
		for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
			int rv = dec(hostile[i].b, hostile[i].n, NULL, err, sizeof(err));
			if (rv != WB_EBADMSG && rv != WB_ETOOBIG) {
				_exit(
				    20 + (int)i); /* WB_ENOMEM: something tried a huge allocation */
			}
		}
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died");
	cr_assert_eq(WEXITSTATUS(status), 0,
	    "child exit %d (20+i: hostile input i hit the memory cap)", WEXITSTATUS(status));
}
#endif

Test(wb_decode, random_mutations_never_crash, .timeout = 60)
{
	wb_obj      *msgs[3] = { timeline_reply(), wb_sample_request(WB_OP_POST_TIMELINE, true),
		     wb_sample_request(WB_OP_EVENTS, true) };
	char         err[160];
	unsigned int seed = 12345;
	int          ok = 0;

	for (size_t i = 0; i < 3; i++) {
		char  *buf;
		size_t len;
		wb_encode_buf(msgs[i], &buf, &len);
		char *mut = malloc(len);
		for (int round = 0; round < 3000; round++) {
			memcpy(mut, buf, len);
			int flips = 1 + rand_r(&seed) % 4;
			for (int k = 0; k < flips; k++) {
				mut[rand_r(&seed) % len] = (char)rand_r(&seed);
			}
			size_t  n = (rand_r(&seed) % 8 == 0) ? (size_t)rand_r(&seed) % len : len;
			wb_obj *m;
			if (wb_decode(&m, mut, n, NULL, err, sizeof(err)) == WB_OK) {
				wb_msg_free(roundtrip(
				    m)); /* whatever decodes re-encodes to the same thing */
				wb_msg_free(m);
				ok++;
			}
		}
		free(mut);
		free(buf);
		wb_msg_free(msgs[i]);
	}
	cr_assert_gt(ok, 0, "some mutations are still valid messages");
}
