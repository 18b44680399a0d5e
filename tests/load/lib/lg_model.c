/*
 * lg_model.c - the posts each system acknowledged and the check of its
 * pages against them (lg_model.h), and lg_page_put.
 */
#include <stdlib.h>
#include <string.h>

#include "lg_model.h"

#define LG_MODEL_SHOWN 5 /* mismatches printed per check */

void
lg_page_put(lg_page *pg, size_t i, uint64_t id, uint64_t author, const char *name, size_t nlen,
    const char *text, size_t tlen)
{
	if (pg == NULL || i >= LG_PAGE) {
		return;
	}
	lg_entry *e = &pg->e[i];
	e->id = id;
	e->author = author;
	nlen = nlen < sizeof(e->name) - 1 ? nlen : sizeof(e->name) - 1;
	tlen = tlen < sizeof(e->text) - 1 ? tlen : sizeof(e->text) - 1;
	memcpy(e->name, name != NULL ? name : "", name != NULL ? nlen : 0);
	e->name[name != NULL ? nlen : 0] = '\0';
	memcpy(e->text, text != NULL ? text : "", text != NULL ? tlen : 0);
	e->text[text != NULL ? tlen : 0] = '\0';
	pg->n = i + 1;
}

void
lg_model_init(lg_model *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->mu, NULL);
}

void
lg_model_free(lg_model *m)
{
	free(m->p);
	m->p = NULL;
	m->n = m->cap = 0;
	m->lost = false;
}

void
lg_model_add(lg_model *m, uint32_t u, uint64_t k, uint64_t id)
{
	pthread_mutex_lock(&m->mu);
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 4096;
		void  *p = realloc(m->p, cap * sizeof(*m->p));
		if (p == NULL) {
			m->lost = true;
			pthread_mutex_unlock(&m->mu);
			return;
		}
		m->p = p;
		m->cap = cap;
	}
	m->p[m->n++] = (lg_model_post) { .id = id, .k = k, .u = u };
	pthread_mutex_unlock(&m->mu);
}

/* lg_model_newest_first orders posts by id, newest first. */
static int
lg_model_newest_first(const void *a, const void *b)
{
	uint64_t x = ((const lg_model_post *)a)->id, y = ((const lg_model_post *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
}

int
lg_page_diff(const lg_page *got, const lg_page *want, const char *what)
{
	if (got->n != want->n) {
		if (what == NULL) {
			return -1;
		}
		fprintf(stderr, "warble-load: %s: %zu posts, the model has %zu\n", what, got->n,
		    want->n);
		return -1;
	}
	for (size_t i = 0; i < got->n; i++) {
		const lg_entry *g = &got->e[i], *w = &want->e[i];
		const char     *bad = g->id != w->id                  ? "id"
		                      : g->author != w->author        ? "author"
		                      : strcmp(g->name, w->name) != 0 ? "author's name"
		                      : strcmp(g->text, w->text) != 0 ? "text"
		                                                      : NULL;
		if (bad != NULL && what == NULL) {
			return -1;
		}
		if (bad != NULL) {
			fprintf(stderr,
			    "warble-load: %s: post %zu: %s differs: got %llu by %llu (%s) \"%s\", "
			    "the model has %llu by %llu (%s) \"%s\"\n",
			    what, i, bad, (unsigned long long)g->id, (unsigned long long)g->author,
			    g->name, g->text, (unsigned long long)w->id,
			    (unsigned long long)w->author, w->name, w->text);
			return -1;
		}
	}
	return 0;
}

/* lg_model_want fills want with the newest posts (p: newest first) whose author shows (show[u]). */
static void
lg_model_want(
    const lg_model_post *p, size_t n, const uint8_t *show, const uint64_t *uids, lg_page *want)
{
	char name[LG_NAME_MAX], text[LG_TEXT_MAX];

	want->n = 0;
	for (size_t i = 0; i < n && want->n < LG_PAGE; i++) {
		if (show[p[i].u]) {
			int nl = snprintf(name, sizeof(name), "gu%u", p[i].u);
			lg_post_text(text, sizeof(text), p[i].u, p[i].k);
			lg_page_put(want, want->n, p[i].id, uids[p[i].u], name, (size_t)nl, text,
			    strlen(text));
		}
	}
}

/* lg_model_page reads r's page with read (b's home or timeline) and counts it, and whether it
 * differs from want, in out: -1 if the read failed. */
static int
lg_model_page(const lg_backend *b, lg_conn                            *c,
    int (*read)(lg_conn *, uint32_t, lg_page *, size_t *), const char *kind, uint32_t r,
    lg_page *got, const lg_page *want, lg_check *out)
{
	char   what[96];
	size_t n;

	got->n = 0;
	snprintf(what, sizeof(what), "%s: %s of gu%u", b->name, kind, r);
	if (read(c, r, got, &n) != 0 || n != got->n) {
		fprintf(stderr, "warble-load: %s: the read failed\n", what);
		return -1;
	}
	out->pages++;
	out->wrong += lg_page_diff(got, want, out->wrong < LG_MODEL_SHOWN ? what : NULL) != 0;
	return 0;
}

int
lg_model_check(const lg_model *m, const lg_graph *g, const uint64_t *uids, const lg_backend *b,
    uint32_t k, uint64_t seed, lg_check *out)
{
	lg_model_post *p = NULL;
	uint8_t       *show = calloc(g->n, 1);
	lg_page       *got = malloc(sizeof(*got)), *want = malloc(sizeof(*want));
	lg_conn       *c = NULL;
	uint64_t       s = seed | 1;
	int            rc = -1;

	memset(out, 0, sizeof(*out));
	out->posts = m->n;
	if (m->lost) {
		fprintf(stderr, "warble-load: %s: the model lost posts (out of memory)\n", b->name);
		goto out;
	}
	if (show == NULL || got == NULL || want == NULL ||
	    (m->n > 0 && (p = malloc(m->n * sizeof(*p))) == NULL) ||
	    (c = b->conn_open(b->ctx)) == NULL) {
		goto out;
	}
	if (m->n > 0) {
		memcpy(p, m->p, m->n * sizeof(*p));
	}
	qsort(p, m->n, sizeof(*p), lg_model_newest_first);
	rc = 0;
	for (uint32_t i = 0; i < k && g->n > 0; i++) {
		uint32_t r = (uint32_t)(lg_rand(&s) % g->n);

		/* home: the accounts r follows (r is a fan of each) and r */
		memset(show, 0, g->n);
		for (uint32_t t = 0; t < g->n; t++) {
			for (uint64_t j = g->off[t]; j < g->off[t + 1] && !show[t]; j++) {
				show[t] = g->fan[j] == r;
			}
		}
		show[r] = 1;
		lg_model_want(p, m->n, show, uids, want);
		if ((rc = lg_model_page(b, c, b->home, "home", r, got, want, out)) != 0) {
			break;
		}
		/* user timeline: r's own */
		memset(show, 0, g->n);
		show[r] = 1;
		lg_model_want(p, m->n, show, uids, want);
		if ((rc = lg_model_page(b, c, b->timeline, "user timeline", r, got, want, out)) !=
		    0) {
			break;
		}
	}
	rc = rc == 0 && out->wrong == 0 ? 0 : -1;
out:
	if (c != NULL) {
		b->conn_close(c);
	}
	free(p);
	free(show);
	free(got);
	free(want);
	return rc;
}
