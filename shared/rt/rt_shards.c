/* rt_shards.c - a client per shard of one service (see rt_shards.h). */
#include <stdlib.h>
#include <string.h>

#include "rt_log.h"
#include "rt_shards.h"
#include "wb_id.h"

struct rt_shards {
	unsigned   n;
	rt_client *c[WB_SHARDS_MAX];
	char      *url[WB_SHARDS_MAX];
};

/* rt_shards_next cuts the next address of a list at *p (blanks around it dropped) into buf; its length, 0 at the end. */
static size_t
rt_shards_next(const char **p, char *buf, size_t cap)
{
	const char *s = *p, *e;
	size_t      n;

	while (*s == ' ' || *s == '\t' || *s == ',') {
		s++;
	}
	e = s + strcspn(s, ",");
	*p = *e == ',' ? e + 1 : e;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t')) {
		e--;
	}
	n = (size_t)(e - s);
	if (n >= cap) {
		return cap; /* too long: the caller refuses it */
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return n;
}

unsigned
rt_shards_list_count(const char *urls)
{
	char     buf[RT_SHARDS_URLS_MAX];
	unsigned n = 0;

	while (urls != NULL && rt_shards_next(&urls, buf, sizeof(buf)) > 0) {
		n++;
	}
	return n;
}

int
rt_shards_open(rt_shards **out, const char *urls, const char *single, const rt_client_opts *opts)
{
	rt_shards  *s;
	const char *p = urls != NULL && urls[0] != '\0' ? urls : single;
	char        buf[RT_SHARDS_URLS_MAX];
	size_t      n;
	int         rc = WB_OK;

	*out = NULL;
	if (p == NULL || (s = calloc(1, sizeof(*s))) == NULL) {
		return p == NULL ? WB_EINVAL : WB_ENOMEM;
	}
	while (rc == WB_OK && (n = rt_shards_next(&p, buf, sizeof(buf))) > 0) {
		if (n == sizeof(buf) || s->n == WB_SHARDS_MAX) {
			RT_ERRORF("a list of shards holds at most %d addresses of at most %zu "
			          "characters: %.60s...",
			    WB_SHARDS_MAX, sizeof(buf) - 1, urls);
			rc = WB_EINVAL;
		} else if ((s->url[s->n] = strdup(buf)) == NULL) {
			rc = WB_ENOMEM;
		} else if ((rc = rt_client_open(&s->c[s->n], buf, opts)) != WB_OK) {
			RT_ERRORF("shard %u: bad address %s", s->n, buf);
			free(s->url[s->n]);
		} else {
			s->n++;
		}
	}
	if (rc == WB_OK && s->n == 0) {
		RT_ERRORF("an empty list of shards");
		rc = WB_EINVAL;
	}
	if (rc != WB_OK) {
		rt_shards_close(s);
		return rc;
	}
	*out = s;
	return WB_OK;
}

void
rt_shards_close(rt_shards *s)
{
	if (s == NULL) {
		return;
	}
	for (unsigned i = 0; i < s->n; i++) {
		rt_client_close(s->c[i]);
		free(s->url[i]);
	}
	free(s);
}

void
rt_shards_shutdown(rt_shards *s)
{
	for (unsigned i = 0; s != NULL && i < s->n; i++) {
		rt_client_shutdown(s->c[i]);
	}
}

unsigned
rt_shards_count(const rt_shards *s)
{
	return s->n;
}

rt_client *
rt_shards_at(const rt_shards *s, unsigned i)
{
	return s->c[i];
}

const char *
rt_shards_url(const rt_shards *s, unsigned i)
{
	return s->url[i];
}

rt_client *
rt_shards_for_uid(const rt_shards *s, uint64_t uid)
{
	return s->c[wb_uid_shard(uid, s->n)];
}

unsigned
rt_shards_index_of_id(const rt_shards *s, uint64_t id)
{
	return wb_group_shard(wb_id_node(id), s->n);
}

rt_client *
rt_shards_for_id(const rt_shards *s, uint64_t id)
{
	return s->c[rt_shards_index_of_id(s, id)];
}
