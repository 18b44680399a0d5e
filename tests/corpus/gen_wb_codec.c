/*
 * gen_wb_codec.c - writes the seed corpus of wb_codec_fuzz into the folder
 * given as argument: a valid request for every operation (with its
 * required fields, and with every optional field too) and typical replies.
 *   make -f tests/fuzz.mk corpus
 */
#include <stdio.h>
#include <stdlib.h>

#include "wb_proto.h"
#include "wb_sample.h"

static int
gen_write(const char *dir, const char *name, wb_obj *m)
{
	char   path[512], *buf;
	size_t len;
	FILE  *f;
	int    ok;

	if (m == NULL || wb_encode_buf(m, &buf, &len) != WB_OK) {
		fprintf(stderr, "gen_wb_codec: cannot build %s\n", name);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.mp", dir, name);
	ok = (f = fopen(path, "wb")) != NULL && fwrite(buf, 1, len, f) == len;
	if (f != NULL && fclose(f) != 0) {
		ok = 0;
	}
	free(buf);
	wb_msg_free(m);
	if (!ok) {
		perror(path);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char    name[128];
	wb_obj *m;
	int     rv = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_wb_codec DIR\n");
		return 2;
	}
	for (int op = 1; op < WB_OP_COUNT; op++) {
		snprintf(name, sizeof(name), "req-%s", wb_op_name((wb_op)op));
		rv |= gen_write(argv[1], name, wb_sample_request((wb_op)op, false));
		snprintf(name, sizeof(name), "req-%s-all", wb_op_name((wb_op)op));
		rv |= gen_write(argv[1], name, wb_sample_request((wb_op)op, true));
	}
	static const int codes[] = { WB_EINVAL, WB_EBADMSG, WB_ENOPOST, WB_EAUTH, WB_ETOOLONG };
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		m = wb_msg_new();
		wb_reply_error(m, codes[i], "%s: a detail", wb_err_name(codes[i]));
		snprintf(name, sizeof(name), "reply-error-%s", wb_err_name(codes[i]));
		rv |= gen_write(argv[1], name, m);
	}
	/* success replies carrying every kind of record */
	static const wb_field recs[] = { WB_F_POSTS, WB_F_USERS, WB_F_EVENTS, WB_F_STATS,
		WB_F_GAUGES };
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		m = wb_msg_new();
		wb_reply_ok(m);
		wb_sample_fill(m, recs[i], (unsigned)i);
		wb_sample_fill(m, WB_F_NEXT, (unsigned)i);
		wb_sample_fill(m, WB_F_MISSING, (unsigned)i);
		snprintf(name, sizeof(name), "reply-%s", wb_field_name(recs[i]));
		rv |= gen_write(argv[1], name, m);
	}
	m = wb_msg_new();
	wb_reply_ok(m);
	uint64_t *u = wb_add_u64s(m, WB_F_UIDS, 300);
	for (int i = 0; i < 300; i++) {
		u[i] = 1000 + (uint64_t)i * 77;
	}
	rv |= gen_write(argv[1], "reply-fans", m);
	return rv == 0 ? 0 : 1;
}
