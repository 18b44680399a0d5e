/*
 * gw_auth.c - who calls, and from where: the session token of a request
 * resolved to a uid (checked here by gw_tokens.c, or by the user service
 * when this gateway cannot judge), before the body of a large request is
 * read (gw_admit, the msgpack port; gw_caller, HTTP uploads), and the
 * client's address that the user service limits password checks and
 * registrations by.
 *
 * Behind a reverse proxy every connection comes from the proxy.  Only a
 * connection from a trusted proxy (WARBLE_TRUSTED_PROXIES) has its
 * X-Forwarded-For believed, and then only as far as it was written by
 * trusted proxies: the list is read from the right (each proxy appends
 * the address it saw), skipping trusted proxies, and the first address
 * that is not one is the client.  A malformed entry ends the walk at the
 * last address known good, so a client cannot pose as anyone by writing
 * the header itself.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_int.h"
#include "rt_log.h"

int
gw_auth(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep)
{
	const char *tok;
	size_t      len;
	wb_obj     *q, *r;
	int         rc;

	if (!wb_get_str(req, WB_F_TOKEN, &tok, &len) || len == 0) {
		wb_reply_error(rep, WB_EAUTH, "a session token is required");
		return WB_EAUTH;
	}
	switch (gw_tokens_check(g->tokens, tok, len, uid)) {
	case GW_TOKEN_OK:
		return WB_OK;
	case GW_TOKEN_BAD:
		wb_reply_error(rep, WB_EAUTH, NULL);
		return WB_EAUTH;
	case GW_TOKEN_ASK:
		break;
	}
	if ((q = wb_request(WB_OP_USER_AUTH)) != NULL &&
	    wb_set_str(q, WB_F_TOKEN, tok, len) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_USER, gw_user(g), q, &r, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_u64(r, WB_F_UID, uid) || *uid == 0) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_EINTERNAL, "user service gave no uid");
		return WB_EINTERNAL;
	}
	wb_msg_free(r);
	return WB_OK;
}

int
gw_caller(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep)
{
	return gw_auth(g, req, uid, rep);
}

int
gw_admit(void *arg, const wb_obj *head, bool final, wb_obj *rep)
{
	gw      *g = arg;
	wb_mask  req = 0, opt = 0;
	wb_op    op = wb_op_of(head);
	uint64_t uid;

	if (!wb_has(head, WB_F_OP)) {
		if (!final) {
			return -1;
		}
		wb_reply_error(rep, WB_ETOOBIG, "a large request names its op first");
		return WB_ETOOBIG;
	}
	if (gw_is_public(op)) {
		wb_op_fields(op, &req, &opt);
	}
	if (((req | opt) & WB_M(DATA)) == 0) {
		wb_reply_error(rep, WB_ETOOBIG, "a request this large must be an upload, not %.32s",
		    wb_str(head, WB_F_OP, "?"));
		return WB_ETOOBIG;
	}
	if (!wb_has(head, WB_F_TOKEN)) {
		if (!final) {
			return -1;
		}
		wb_reply_error(rep, WB_EAUTH,
		    "a large %s request carries its token before its data", wb_op_name(op));
		return WB_EAUTH;
	}
	return gw_auth(g, head, &uid, rep);
}

int
gw_auth_optional(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep)
{
	int rc;

	*uid = 0;
	if (!wb_has(req, WB_F_TOKEN)) {
		return WB_OK;
	}
	rc = gw_auth(g, req, uid, rep);
	if (rc == WB_EAUTH) {
		/* A stale token on a public read: answer as to anyone. */
		wb_reset(rep);
		*uid = 0;
		return WB_OK;
	}
	return rc;
}

void
gw_auth_sync(gw *g)
{
	int rc = gw_tokens_sync(g->tokens);

	if (rc != WB_OK) {
		/* the feed thread retries; until it succeeds, nothing is trusted here
		 * past session-check-ms, so the ended session cannot outlive that */
		RT_WARNF(
		    "session revocations: pull after a session ended failed: %s", wb_strerror(rc));
	}
}

/* gw_auth_parse reads one address ("192.0.2.1", "2001:db8::1") into *c as a full-length range. */
static bool
gw_auth_parse(const char *s, gw_cidr *c)
{
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, s, c->addr) == 1) {
		c->family = AF_INET;
		c->bits = 32;
		return true;
	}
	if (inet_pton(AF_INET6, s, c->addr) == 1) {
		c->family = AF_INET6;
		c->bits = 128;
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)c->addr)) {
			memmove(c->addr, c->addr + 12, 4); /* ::ffff:a.b.c.d is a.b.c.d */
			memset(c->addr + 4, 0, 12);
			c->family = AF_INET;
			c->bits = 32;
		}
		return true;
	}
	return false;
}

/* gw_auth_in tells whether address a lies in range r. */
static bool
gw_auth_in(const gw_cidr *a, const gw_cidr *r)
{
	int whole = r->bits / 8, rest = r->bits % 8;

	if (a->family != r->family || memcmp(a->addr, r->addr, (size_t)whole) != 0) {
		return false;
	}
	return rest == 0 || ((a->addr[whole] ^ r->addr[whole]) & (0xff << (8 - rest))) == 0;
}

/* gw_auth_trusted tells whether a is one of g's trusted proxies. */
static bool
gw_auth_trusted(const gw *g, const gw_cidr *a)
{
	for (int i = 0; i < g->nproxies; i++) {
		if (gw_auth_in(a, &g->proxies[i])) {
			return true;
		}
	}
	return false;
}

int
gw_auth_proxies(gw *g, const char *list)
{
	const char *p = list != NULL ? list : "";

	g->nproxies = 0;
	while (*p != '\0') {
		char    item[64], *slash;
		size_t  n = strcspn(p, ", \t");
		gw_cidr c;
		long    bits = -1;

		if (n == 0) {
			p++;
			continue;
		}
		if (n >= sizeof(item) || g->nproxies == GW_PROXIES) {
			RT_ERRORF(
			    "trusted-proxies: more than %d ranges, or one over %zu characters",
			    GW_PROXIES, sizeof(item) - 1);
			return WB_EINVAL;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		p += n;
		if ((slash = strchr(item, '/')) != NULL) {
			char *end;
			*slash = '\0';
			bits = strtol(slash + 1, &end, 10);
			if (*end != '\0' || slash[1] < '0' || slash[1] > '9') {
				bits = 1000; /* refused below */
			}
		}
		if (!gw_auth_parse(item, &c) || bits > c.bits) {
			RT_ERRORF(
			    "trusted-proxies: \"%s\" is not an address or an address/bits range",
			    item);
			return WB_EINVAL;
		}
		if (bits >= 0) {
			c.bits = (int)bits;
		}
		g->proxies[g->nproxies++] = c;
	}
	return WB_OK;
}

/* gw_auth_peer reads a connection's peer into *c; false if it is not IPv4 or IPv6. */
static bool
gw_auth_peer(const struct sockaddr_storage *ss, gw_cidr *c)
{
	memset(c, 0, sizeof(*c));
	if (ss == NULL) {
		return false;
	}
	if (ss->ss_family == AF_INET) {
		c->family = AF_INET;
		c->bits = 32;
		memcpy(c->addr, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return true;
	}
	if (ss->ss_family == AF_INET6) {
		char s[GW_ADDR_MAX];
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, s, sizeof(s));
		return gw_auth_parse(s, c);
	}
	return false;
}

void
gw_auth_addr(gw *g, const gw_from *from, char addr[GW_ADDR_MAX])
{
	gw_cidr     client;
	const char *xff = from != NULL ? from->forwarded_for : NULL;

	addr[0] = '\0';
	if (from == NULL || !gw_auth_peer(from->peer, &client)) {
		return;
	}
	if (xff != NULL && gw_auth_trusted(g, &client)) {
		/* from the right: each hop appended what it saw */
		size_t end = strlen(xff);
		while (end > 0) {
			size_t  start = end, n;
			char    item[64];
			gw_cidr hop;
			while (start > 0 && xff[start - 1] != ',') {
				start--;
			}
			const char *s = xff + start;
			while (*s == ' ' || *s == '\t') {
				s++;
			}
			n = (size_t)(xff + end - s);
			while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
				n--;
			}
			if (n == 0 || n >= sizeof(item)) {
				break;
			}
			memcpy(item, s, n);
			item[n] = '\0';
			if (!gw_auth_parse(item, &hop)) {
				break; /* written by someone untrusted: the last good hop is the client */
			}
			client = hop;
			if (!gw_auth_trusted(g, &hop)) {
				break;
			}
			end = start > 0 ? start - 1 : 0;
		}
	}
	inet_ntop(client.family, client.addr, addr, GW_ADDR_MAX);
}
