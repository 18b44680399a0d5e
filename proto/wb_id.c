/* wb_id.c - time-ordered unique post ids (layout in wb_id.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wb_id.h"

#define WB_ID_SHIFT   (WB_ID_NODE_BITS + WB_ID_SEQ_BITS)
#define WB_ID_SEQ_MAX ((UINT64_C(1) << WB_ID_SEQ_BITS) - 1)

struct wb_idgen {
	pthread_mutex_t mu;
	uint64_t        last_ms; /* ms part (since the epoch) of the last id */
	uint64_t        seq;     /* sequence of the last id */
};

wb_idgen *
wb_idgen_new(void)
{
	wb_idgen *g;

	if ((g = calloc(1, sizeof(*g))) == NULL) {
		return NULL;
	}
	pthread_mutex_init(&g->mu, NULL);
	return g;
}

void
wb_idgen_free(wb_idgen *g)
{
	if (g != NULL) {
		pthread_mutex_destroy(&g->mu);
		free(g);
	}
}

void
wb_idgen_floor(wb_idgen *g, uint64_t last)
{
	pthread_mutex_lock(&g->mu);
	uint64_t ms = last >> WB_ID_SHIFT;
	if (ms > g->last_ms) {
		g->last_ms = ms;
		g->seq = WB_ID_SEQ_MAX; /* the next id moves past this ms */
	}
	pthread_mutex_unlock(&g->mu);
}

uint64_t
wb_id_next(wb_idgen *g, unsigned node, uint64_t now_ms)
{
	uint64_t ms = now_ms > WB_ID_EPOCH_MS ? now_ms - WB_ID_EPOCH_MS : 0;
	uint64_t id;

	pthread_mutex_lock(&g->mu);
	if (ms > g->last_ms) {
		g->last_ms = ms;
		g->seq = 0;
	} else if (g->seq < WB_ID_SEQ_MAX) {
		g->seq++; /* same ms, or the clock went back: stay on last_ms */
	} else {
		g->last_ms++; /* sequence exhausted: borrow the next ms */
		g->seq = 0;
	}
	id = (g->last_ms << WB_ID_SHIFT) | ((uint64_t)(node & WB_ID_NODE_MAX) << WB_ID_SEQ_BITS) |
	     g->seq;
	pthread_mutex_unlock(&g->mu);
	return id;
}

uint64_t
wb_id_ms(uint64_t id)
{
	return (id >> WB_ID_SHIFT) + WB_ID_EPOCH_MS;
}

uint64_t
wb_id_min(uint64_t ms)
{
	return ms > WB_ID_EPOCH_MS ? (ms - WB_ID_EPOCH_MS) << WB_ID_SHIFT : 0;
}

char *
wb_media_id_format(char *buf, uint64_t author, uint64_t id)
{
	snprintf(
	    buf, WB_MEDIA_ID_MAX, "%llu-%llu", (unsigned long long)author, (unsigned long long)id);
	return buf;
}

/* wb_media_id_part reads one nonzero decimal without leading zeros from s[0..n). */
static bool
wb_media_id_part(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20 || s[0] == '0') {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool
wb_media_id_parse(const char *s, size_t n, uint64_t *author, uint64_t *id)
{
	const char *dash = s != NULL ? memchr(s, '-', n) : NULL;

	return dash != NULL && wb_media_id_part(s, (size_t)(dash - s), author) &&
	       wb_media_id_part(dash + 1, n - (size_t)(dash - s) - 1, id);
}
