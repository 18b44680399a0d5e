/*
 * http_api.c - routing and the REST mapping (runs on the HTTP workers).
 *
 * Each route names a public operation; the request object is built
 * generically from the path ({name}, {id}), the query string and the JSON
 * body (http_json.h), the token comes from "Authorization: Bearer", and
 * gw_dispatch runs it exactly as for the msgpack API.  The reply object,
 * less "ok", is the JSON body; errors become
 * {"error": CODE_NAME, "message": ...} with the status wb_err_http gives.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "http_int.h"
#include "http_json.h"
#include "wb_clock.h"
#include "wb_limits.h"

#define M(f)      WB_M(f)
#define HTTP_SEGS 8 /* path segments matched */

typedef enum http_kind {
	HTTP_API,     /* a public operation */
	HTTP_UPLOAD,  /* a public operation whose body is an image, not JSON */
	HTTP_MEDIA,   /* a public operation answered with the bytes of an image */
	HTTP_HEALTHZ, /* process up */
	HTTP_READYZ,  /* backends answer */
	HTTP_LIMITS,  /* the bounds a client checks before sending */
} http_kind;

struct http_route {
	const char *method;
	const char *path; /* "{name}", "{id}" and "{media}" match one segment */
	http_kind   kind;
	wb_op       op;
	wb_mask     query;  /* fields taken from the query string */
	wb_mask     body;   /* fields taken from the JSON body */
	int         status; /* on success */
	wb_mask     set;    /* boolean fields the route itself sets true */
};

/* The API.  docs/http-api.md documents each line; keep them together. */
static const http_route http_routes[] = {
	{ "POST", "/api/v1/users", HTTP_API, WB_OP_REGISTER, 0, M(NAME) | M(PASSWORD), 201 },
	{ "GET", "/api/v1/users/{name}", HTTP_API, WB_OP_PROFILE, 0, 0, 200 },
	{ "GET", "/api/v1/users/{name}/posts", HTTP_API, WB_OP_TIMELINE,
	    M(BEFORE) | M(LIMIT) | M(SINCE) | M(UNTIL) | M(CATEGORY), 0, 200 },
	{ "GET", "/api/v1/users/{name}/following", HTTP_API, WB_OP_FOLLOWING_LIST,
	    M(AFTER) | M(LIMIT), 0, 200 },
	{ "GET", "/api/v1/users/{name}/fans", HTTP_API, WB_OP_FANS_LIST, M(AFTER) | M(LIMIT), 0,
	    200 },
	{ "POST", "/api/v1/sessions", HTTP_API, WB_OP_LOGIN, 0, M(NAME) | M(PASSWORD), 201 },
	{ "DELETE", "/api/v1/sessions", HTTP_API, WB_OP_LOGOUT, 0, 0, 200 },
	{ "DELETE", "/api/v1/me/sessions", HTTP_API, WB_OP_LOGOUT_ALL, 0, 0, 200 },
	{ "PUT", "/api/v1/me/password", HTTP_API, WB_OP_CHANGE_PASSWORD, 0,
	    M(PASSWORD) | M(NEW_PASSWORD), 200 },
	{ "GET", "/api/v1/me", HTTP_API, WB_OP_WHOAMI, 0, 0, 200 },
	{ "PATCH", "/api/v1/me", HTTP_API, WB_OP_UPDATE_PROFILE, 0, M(DISPLAY) | M(BIO), 200 },
	{ "DELETE", "/api/v1/me", HTTP_API, WB_OP_DELETE_ACCOUNT, 0, M(PASSWORD), 200 },
	{ "PUT", "/api/v1/me/following/{name}", HTTP_API, WB_OP_FOLLOW, 0, 0, 200 },
	{ "DELETE", "/api/v1/me/following/{name}", HTTP_API, WB_OP_UNFOLLOW, 0, 0, 200 },
	{ "GET", "/api/v1/home", HTTP_API, WB_OP_HOME, M(BEFORE) | M(LIMIT), 0, 200 },
	{ "POST", "/api/v1/posts", HTTP_API, WB_OP_PUBLISH, 0,
	    M(TEXT) | M(TITLE) | M(CATEGORY) | M(IMAGES), 201 },
	{ "POST", "/api/v1/media", HTTP_UPLOAD, WB_OP_UPLOAD, 0, 0, 201 },
	{ "GET", "/media/{media}", HTTP_MEDIA, WB_OP_MEDIA, 0, 0, 200 },
	{ "GET", "/media/{media}/preview", HTTP_MEDIA, WB_OP_MEDIA, 0, 0, 200, M(PREVIEW) },
	{ "DELETE", "/api/v1/posts/{id}", HTTP_API, WB_OP_DELETE, 0, 0, 200 },
	{ "GET", "/api/v1/posts/{id}", HTTP_API, WB_OP_POST, 0, 0, 200 },
	{ "PUT", "/api/v1/me/blocks/{name}", HTTP_API, WB_OP_BLOCK, 0, 0, 200 },
	{ "DELETE", "/api/v1/me/blocks/{name}", HTTP_API, WB_OP_UNBLOCK, 0, 0, 200 },
	{ "GET", "/api/v1/me/blocks", HTTP_API, WB_OP_BLOCKS_LIST, M(AFTER) | M(LIMIT), 0, 200 },
	{ "GET", "/api/v1/me/suggestions", HTTP_API, WB_OP_SUGGESTIONS, M(LIMIT), 0, 200 },
	{ "GET", "/api/v1/limits", HTTP_LIMITS, WB_OP_NONE, 0, 0, 200 },
	{ "GET", "/healthz", HTTP_HEALTHZ, WB_OP_NONE, 0, 0, 200 },
	{ "GET", "/readyz", HTTP_READYZ, WB_OP_NONE, 0, 0, 200 },
};

#define HTTP_NROUTES (sizeof(http_routes) / sizeof(http_routes[0]))

/* A request path split into percent-decoded segments. */
typedef struct http_path {
	const char *seg[HTTP_SEGS];
	size_t      len[HTTP_SEGS];
	int         n;
	char        buf[HTTP_PATH_MAX];
} http_path;

static int
http_hex(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* http_unescape percent-decodes s[0..n) into dst (NUL-terminated, at most cap bytes); plus turns '+' into ' '; -1 on a bad escape, NUL or overflow. */
static ssize_t
http_unescape(const char *s, size_t n, bool plus, char *dst, size_t cap)
{
	size_t k = 0;

	if (cap == 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n || (hi = http_hex(s[i + 1])) < 0 ||
			    (lo = http_hex(s[i + 2])) < 0) {
				return -1;
			}
			c = (char)(hi * 16 + lo);
			i += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		if (c == '\0' || k + 1 >= cap) {
			return -1;
		}
		dst[k++] = c;
	}
	dst[k] = '\0';
	return (ssize_t)k;
}

/* http_path_split splits path (without the query) into decoded segments; false if malformed or too deep. */
static bool
http_path_split(const char *path, size_t n, http_path *p)
{
	size_t  used = 0, i = 0;
	ssize_t k;

	p->n = 0;
	if (n == 0 || path[0] != '/') {
		return false;
	}
	while (i < n) {
		size_t start = ++i;

		while (i < n && path[i] != '/') {
			i++;
		}
		if (i == start && i == n) {
			break; /* a trailing slash */
		}
		if (p->n == HTTP_SEGS) {
			return false;
		}
		k = http_unescape(
		    path + start, i - start, false, p->buf + used, sizeof(p->buf) - used);
		if (k < 0) {
			return false;
		}
		p->seg[p->n] = p->buf + used;
		p->len[p->n] = (size_t)k;
		p->n++;
		used += (size_t)k + 1;
	}
	return true;
}

/* http_route_match tells whether p matches pattern; *name, *id and *media get the {name}, {id} and {media} segments. */
static bool
http_route_match(const char *pattern, const http_path *p, int *name, int *id, int *media)
{
	const char *s = pattern;
	int         i = 0;

	*name = *id = *media = -1;
	while (*s == '/') {
		const char *e = strchr(s + 1, '/');
		size_t      len = e != NULL ? (size_t)(e - s - 1) : strlen(s + 1);

		if (i >= p->n) {
			return false;
		}
		if (len == 6 && memcmp(s + 1, "{name}", 6) == 0) {
			*name = i;
		} else if (len == 4 && memcmp(s + 1, "{id}", 4) == 0) {
			*id = i;
		} else if (len == 7 && memcmp(s + 1, "{media}", 7) == 0) {
			*media = i;
		} else if (len != p->len[i] || memcmp(s + 1, p->seg[i], len) != 0) {
			return false;
		}
		i++;
		s += len + 1;
	}
	return i == p->n;
}

/* http_fields lists a field mask's names, for messages. */
static void
http_fields(wb_mask mask, char *buf, size_t n)
{
	size_t k = 0;

	buf[0] = '\0';
	for (int f = 0; f < WB_FIELD_COUNT && k < n; f++) {
		if (mask & wb_mask_bit(f)) {
			k += (size_t)snprintf(
			    buf + k, n - k, "%s%s", k ? ", " : "", wb_field_name((wb_field)f));
		}
	}
	if (k == 0) {
		snprintf(buf, n, "none");
	}
}

/* http_parse_fail records an error answer in out; returns false. */
static bool __attribute__((format(printf, 4, 5)))
http_parse_fail(http_parsed *out, int status, const char *name, const char *fmt, ...)
{
	va_list ap;

	out->status = status;
	out->error = name;
	va_start(ap, fmt);
	vsnprintf(out->msg, sizeof(out->msg), fmt, ap);
	va_end(ap);
	return false;
}

/* http_query sets the query string's parameters on q; false with the error in out. */
static bool
http_query(wb_obj *q, const http_route *r, const char *qs, http_parsed *out)
{
	char key[64], val[512], err[160], allowed[160];

	while (qs != NULL && *qs != '\0') {
		const char *amp = strchr(qs, '&');
		size_t      len = amp != NULL ? (size_t)(amp - qs) : strlen(qs);
		const char *eq = memchr(qs, '=', len);
		size_t      kl = eq != NULL ? (size_t)(eq - qs) : len;
		ssize_t     kn, vn;
		int         f;

		if (len > 0) {
			kn = http_unescape(qs, kl, true, key, sizeof(key));
			vn = eq != NULL
			         ? http_unescape(eq + 1, len - kl - 1, true, val, sizeof(val))
			         : 0;
			if (eq == NULL) {
				val[0] = '\0';
			}
			if (kn < 0 || vn < 0) {
				return http_parse_fail(
				    out, 400, "BAD_MESSAGE", "malformed query string");
			}
			f = wb_field_lookup(key, (size_t)kn);
			if (f < 0 || (r->query & wb_mask_bit(f)) == 0) {
				http_fields(r->query, allowed, sizeof(allowed));
				return http_parse_fail(out, 400, "INVALID",
				    "unknown query parameter \"%.40s\" (this endpoint takes: %s)",
				    key, allowed);
			}
			if (http_json_set_text(q, (wb_field)f, val, (size_t)vn, err, sizeof(err)) !=
			    WB_OK) {
				if (f == WB_F_LIMIT && vn > 0 &&
				    strspn(val, "0123456789") == (size_t)vn) {
					/* a page size beyond 64 bits: its range is wrong, as 0's */
					return http_parse_fail(out, 400, "INVALID",
					    "limit must be 1 to %d", GW_PAGE_MAX);
				}
				return http_parse_fail(out, 400, "BAD_MESSAGE", "%s", err);
			}
		}
		qs = amp != NULL ? amp + 1 : NULL;
	}
	return true;
}

bool
http_token(http_job *j, wb_op op)
{
	wb_mask     req, opt;
	const char *a = j->head.authorization;
	size_t      n;

	wb_op_fields(op, &req, &opt);
	if (((req | opt) & M(TOKEN)) == 0) {
		return true;
	}
	if (a == NULL) {
		if (req & M(TOKEN)) {
			j->www_auth = true;
			http_fail(j, 401, "UNAUTHORIZED",
			    "this endpoint needs a header Authorization: Bearer <token>");
			return false;
		}
		return true;
	}
	if (strncasecmp(a, "Bearer ", 7) != 0) {
		j->www_auth = true;
		http_fail(j, 401, "UNAUTHORIZED", "Authorization must be: Bearer <token>");
		return false;
	}
	a += 7;
	while (*a == ' ') {
		a++;
	}
	n = strlen(a);
	while (n > 0 && a[n - 1] == ' ') {
		n--;
	}
	if (n == 0) {
		j->www_auth = true;
		http_fail(j, 401, "UNAUTHORIZED", "empty bearer token");
		return false;
	}
	if (wb_set_str(j->q, WB_F_TOKEN, a, n) != WB_OK) {
		http_fail(j, 503, "NO_MEMORY", "out of memory");
		return false;
	}
	return true;
}

/* http_api runs route r's operation on j->q (already holding op, v, the path's and the query's fields). */
static void
http_api(http_job *j, const http_route *r)
{
	char                    err[192];
	const char             *msg;
	struct sockaddr_storage client;
	wb_op                   op;
	int                     rc, status;

	wb_reset(j->rep);
	if (!http_token(j, r->op)) {
		return;
	}
	if (r->kind == HTTP_UPLOAD) {
		/* the body is the image (left in place), judged by the content service */
		if ((rc = wb_set_bin_ref(j->q, WB_F_DATA, j->body, j->body_len)) != WB_OK) {
			http_fail(j, wb_err_http(rc), wb_err_name(rc), "%s", wb_strerror(rc));
			return;
		}
	} else if (j->body_len > 0) {
		if (r->body == 0) {
			http_fail(j, 400, "INVALID", "this endpoint takes no request body");
			return;
		}
		if ((rc = http_json_to_obj(
		         j->q, j->body, j->body_len, r->body, err, sizeof(err))) != WB_OK) {
			http_fail(j, wb_err_http(rc), wb_err_name(rc), "%s", err);
			return;
		}
	}
	if ((rc = wb_check_request(j->q, &op, err, sizeof(err))) != WB_OK) {
		http_fail(j, wb_err_http(rc), wb_err_name(rc), "%s", err);
		return;
	}
	http_client(j, &client);
	rc = gw_dispatch(j->h->g, op, j->q, j->rep, &(gw_from) { &client, j->head.forwarded_for });
	gw_metrics_record(j->h->metrics, op, wb_mono_us() - j->start_us, rc != WB_OK);
	if (rc != WB_OK) {
		msg = NULL;
		if (wb_reply_code(j->rep, &msg) == WB_OK || msg == NULL) {
			msg = wb_strerror(rc);
		}
		status = wb_err_http(rc);
		j->www_auth = status == 401 && rc == WB_EAUTH;
		if (wb_has(j->rep, WB_F_RETRY)) {
			/* whole seconds, rounded up: a retry at once would be refused again */
			snprintf(j->headers, sizeof(j->headers),
			    "Retry-After: %llu\r\nCache-Control: no-store\r\n",
			    (unsigned long long)(wb_u64(j->rep, WB_F_RETRY, 0) + 999) / 1000);
		}
		http_fail(j, status, wb_err_name(rc), "%s", msg);
		return;
	}
	if (r->kind == HTTP_MEDIA) {
		http_media(j);
		return;
	}
	http_buf_clear(&j->out);
	if (http_json_from_obj(j->rep, M(OK) | M(ERR) | M(MSG), &j->out) != WB_OK) {
		http_fail(j, 503, "NO_MEMORY", "out of memory");
		return;
	}
	http_respond(j, r->status, "application/json", j->out.p, j->out.len);
}

/*
 * http_limits answers GET /api/v1/limits: an image's byte limit (media-max,
 * as configured: the content service reads the same WARBLE_MEDIA_MAX; the
 * body limit is never below 64 KiB) and the bounds of what users write
 * (wb_limits.h), so a client can refuse what the server would before
 * sending it.
 */
static void
http_limits(http_job *j)
{
	char body[256];
	int  n;

	n = snprintf(body, sizeof(body),
	    "{\"media_max\":%zu,\"images_max\":%d,\"text_max\":%d,\"title_max\":%d,"
	    "\"alt_max\":%d,\"category_max\":%d,\"display_max\":%d,\"bio_max\":%d}",
	    j->h->media_max, WB_IMAGES_MAX, WB_TEXT_MAX, WB_TITLE_MAX, WB_ALT_MAX, WB_CATEGORY_MAX,
	    WB_DISPLAY_MAX, WB_BIO_MAX);
	http_respond(j, 200, "application/json", body, (size_t)n);
}

/*
 * http_ops answers /healthz, /readyz and /api/v1/limits.  /metrics is not here: the
 * figures are on the admin port (WARBLE_METRICS_URL, rt_metrics.h), not
 * on the public one.
 */
static void
http_ops(http_job *j, http_kind kind)
{
	char  *report = NULL;
	size_t len = 0;
	FILE  *out;
	int    rc;

	http_buf_clear(&j->out);
	switch (kind) {
	case HTTP_HEALTHZ:
		http_respond(j, 200, "application/json", "{\"status\":\"ok\"}", 15);
		return;
	case HTTP_READYZ:
		if ((out = open_memstream(&report, &len)) == NULL) {
			http_fail(j, 503, "NO_MEMORY", "out of memory");
			return;
		}
		rc = gw_metrics_ready(j->h->metrics, out);
		if (fclose(out) != 0 || http_buf_add(&j->out, report, len) != WB_OK) {
			free(report);
			http_fail(j, 503, "NO_MEMORY", "out of memory");
			return;
		}
		free(report);
		http_respond(j, rc == WB_OK ? 200 : 503, "application/json",
		    j->out.p != NULL ? j->out.p : "", j->out.len);
		return;
	case HTTP_LIMITS:
		http_limits(j);
		return;
	default:
		http_fail(j, 500, "INTERNAL", "bad route");
		return;
	}
}

/* http_static serves a file of the web page; false if path names none. */
static bool
http_static(http_job *j, const char *method, const char *path)
{
	const http_file *f = http_static_find(j->h, path);

	if (f == NULL) {
		return false;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		j->allow = "GET, HEAD";
		http_fail(j, 405, "METHOD_NOT_ALLOWED", "%s is not allowed here", method);
		return true;
	}
	http_respond(j, 200, f->ctype, f->data, f->len);
	return true;
}

bool
http_is_upload(const char *method, const char *uri)
{
	const char *qs = strchr(uri, '?');
	http_path   p;
	int         name, id, media;

	if (strcmp(method, "POST") != 0 ||
	    !http_path_split(uri, qs != NULL ? (size_t)(qs - uri) : strlen(uri), &p)) {
		return false;
	}
	for (size_t i = 0; i < HTTP_NROUTES; i++) {
		const http_route *r = &http_routes[i];
		if (r->kind == HTTP_UPLOAD && strcmp(r->method, method) == 0 &&
		    http_route_match(r->path, &p, &name, &id, &media)) {
			return true;
		}
	}
	return false;
}

int
http_parse(const char *method, const char *uri, wb_obj *q, http_parsed *out)
{
	const char *qs = strchr(uri, '?');
	size_t      plen = qs != NULL ? (size_t)(qs - uri) : strlen(uri);
	http_path   p;
	size_t      k = 0;
	int         name, id, media;
	bool        found = false;
	char        err[192];

	/* HEAD is GET without the body (http_respond leaves it out). */
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;

	memset(out, 0, sizeof(*out));
	wb_reset(q);
	if (qs != NULL) {
		qs++;
	}
	if (!http_path_split(uri, plen, &p)) {
		http_parse_fail(out, 400, "BAD_MESSAGE", "malformed path");
		return out->status;
	}
	for (size_t i = 0; i < HTTP_NROUTES; i++) {
		const http_route *r = &http_routes[i];

		if (!http_route_match(r->path, &p, &name, &id, &media)) {
			continue;
		}
		if (strcmp(r->method, m) != 0) {
			found = true;
			k += (size_t)snprintf(out->allow + k, sizeof(out->allow) - k, "%s%s%s",
			    k ? ", " : "", r->method,
			    strcmp(r->method, "GET") == 0 ? ", HEAD" : "");
			continue;
		}
		out->route = r;
		if (r->op == WB_OP_NONE) {
			/* an API path refuses an unknown query parameter, as every other */
			if (r->kind == HTTP_LIMITS && !http_query(q, r, qs, out)) {
				return out->status;
			}
			return 0;
		}
		if (wb_set_cstr(q, WB_F_OP, wb_op_name(r->op)) != WB_OK ||
		    wb_set_u64(q, WB_F_V, WB_PROTO_VERSION) != WB_OK ||
		    (name >= 0 && wb_set_str(q, WB_F_NAME, p.seg[name], p.len[name]) != WB_OK) ||
		    (media >= 0 &&
		        wb_set_str(q, WB_F_MEDIA, p.seg[media], p.len[media]) != WB_OK)) {
			http_parse_fail(out, 503, "NO_MEMORY", "out of memory");
			return out->status;
		}
		for (wb_mask set = r->set; set != 0; set &= set - 1) {
			if (wb_set_bool(q, (wb_field)wb_mask_first(set), true) != WB_OK) {
				http_parse_fail(out, 503, "NO_MEMORY", "out of memory");
				return out->status;
			}
		}
		if (id >= 0 && http_json_set_text(
		                   q, WB_F_ID, p.seg[id], p.len[id], err, sizeof(err)) != WB_OK) {
			http_parse_fail(
			    out, 400, "BAD_MESSAGE", "post id must be a decimal string");
			return out->status;
		}
		if (!http_query(q, r, qs, out)) {
			return out->status;
		}
		return 0;
	}
	if (found) {
		http_parse_fail(out, 405, "METHOD_NOT_ALLOWED",
		    "%.16s is not allowed on %.*s (allowed: %s)", method,
		    (int)(plen < 200 ? plen : 200), uri, out->allow);
		return out->status;
	}
	http_parse_fail(out, 404, "NOT_FOUND", "no such endpoint: %.16s %.*s", method,
	    (int)(plen < 200 ? plen : 200), uri);
	return out->status;
}

void
http_serve(http_job *j)
{
	const char *method = j->head.method;
	const char *uri = j->head.target;
	const char *qs = strchr(uri, '?');
	size_t      plen = qs != NULL ? (size_t)(qs - uri) : strlen(uri);
	http_parsed pr;
	char        path[HTTP_PATH_MAX];

	snprintf(path, sizeof(path), "%.*s", (int)plen, uri);
	if (strncmp(path, "/api/", 5) != 0 && http_static(j, method, path)) {
		return;
	}
	if (http_parse(method, uri, j->q, &pr) != 0) {
		if (pr.status == 405) {
			j->allow = pr.allow;
		}
		http_fail(j, pr.status, pr.error, "%s", pr.msg);
		return;
	}
	if (pr.route->op != WB_OP_NONE) {
		http_api(j, pr.route);
	} else {
		http_ops(j, pr.route->kind);
	}
}
