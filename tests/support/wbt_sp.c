/*
 * wbt_sp.c - the SP wire by hand for tests (wbt_sp.h).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "wb_proto.h"
#include "wbt_sp.h"

#define WBT_SP_REPLY_MAX (1u << 20) /* a reply's bytes, id and msgpack, are fewer */

int
wbt_sp_hello(int fd)
{
	static const uint8_t hello[8] = { 0, 'S', 'P', 0, 0, 0x30, 0, 0 }; /* REQ */
	uint8_t              back[8];

	if (send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello) ||
	    recv(fd, back, sizeof(back), MSG_WAITALL) != (ssize_t)sizeof(back)) {
		return -1;
	}
	return 0;
}

uint8_t *
wbt_sp_frame(const wb_obj *req, uint32_t id, size_t *n)
{
	char    *m;
	size_t   mn;
	uint8_t *f;

	if (wb_encode_buf(req, &m, &mn) != WB_OK) {
		return NULL;
	}
	if ((f = malloc(mn + 12)) == NULL) {
		free(m);
		return NULL;
	}
	for (int i = 0; i < 8; i++) {
		f[i] = (uint8_t)((uint64_t)(mn + 4) >> (56 - 8 * i));
	}
	id |= 0x80000000u;
	for (int i = 0; i < 4; i++) {
		f[8 + i] = (uint8_t)(id >> (24 - 8 * i));
	}
	memcpy(f + 12, m, mn);
	free(m);
	*n = mn + 12;
	return f;
}

int
wbt_sp_reply(int fd, int ms, uint32_t *id, wb_obj **rep, char *err, size_t errlen)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	uint8_t       len[8], *body;
	uint64_t      n = 0;
	int           rc;

	*rep = NULL;
	if (errlen > 0) {
		err[0] = '\0';
	}
	if (poll(&pf, 1, ms) != 1 || recv(fd, len, 8, MSG_WAITALL) != 8) {
		return WB_ETIMEDOUT;
	}
	for (int i = 0; i < 8; i++) {
		n = n << 8 | len[i];
	}
	if (n < 4 || n >= WBT_SP_REPLY_MAX) {
		snprintf(err, errlen, "a reply of %llu bytes", (unsigned long long)n);
		return WB_EBADMSG;
	}
	if ((body = malloc(n)) == NULL) {
		return WB_ENOMEM;
	}
	if (recv(fd, body, n, MSG_WAITALL) != (ssize_t)n) {
		snprintf(err, errlen, "a reply cut short");
		free(body);
		return WB_EBADMSG;
	}
	if (id != NULL) {
		*id = (uint32_t)body[0] << 24 | (uint32_t)body[1] << 16 | (uint32_t)body[2] << 8 |
		      body[3];
	}
	rc = wb_decode(rep, body + 4, n - 4, &wb_limits_default, err, errlen);
	free(body);
	return rc;
}

bool
wbt_sp_closed(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char          c;

	return poll(&pf, 1, ms) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}
