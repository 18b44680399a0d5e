/*
 * lg_graph.c - the social graph of the mixed workload, as fan lists.
 *
 *   real:       an .edges file (tests/data/graphs), each line "a b" an
 *               undirected friendship = a follows b and b follows a
 *   synthetic:  n users, user t has d_t fans drawn uniformly, where d_t is
 *               Pareto distributed (tail exponent 1.5, so a few users have
 *               very many fans), mean about deg; a fixed seed makes it
 *               the same graph every run
 *
 *   off: [0, d_0, d_0 + d_1, ...]    fan: fans of 0 | fans of 1 | ...
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lg.h"

#define LG_GRAPH_MAX_USERS 10000000u

uint64_t
lg_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* lg_graph_cmp orders u32 for qsort. */
static int
lg_graph_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* lg_graph_read_pass reads every edge, counting degrees (fill false) or filling lists. */
static int
lg_graph_read_pass(FILE *f, lg_graph *g, uint64_t *pos, bool fill)
{
	char          line[256];
	unsigned long a, b;

	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lu %lu", &a, &b) != 2) {
			continue; /* comments, headers */
		}
		if (a >= LG_GRAPH_MAX_USERS || b >= LG_GRAPH_MAX_USERS || a == b) {
			continue;
		}
		if (!fill) {
			if (a + 1 > g->n) {
				g->n = (uint32_t)a + 1;
			}
			if (b + 1 > g->n) {
				g->n = (uint32_t)b + 1;
			}
			continue;
		}
		g->fan[pos[b]++] = (uint32_t)a; /* a follows b */
		g->fan[pos[a]++] = (uint32_t)b;
	}
	return 0;
}

/* lg_graph_sort_unique sorts each fan list and drops repeats, compacting the arrays. */
static void
lg_graph_sort_unique(lg_graph *g)
{
	uint64_t w = 0, start = 0;

	for (uint32_t t = 0; t < g->n; t++) {
		uint64_t end = g->off[t + 1];
		qsort(g->fan + start, end - start, sizeof(uint32_t), lg_graph_cmp);
		g->off[t] = w;
		for (uint64_t i = start; i < end; i++) {
			if (i == start || g->fan[i] != g->fan[i - 1]) {
				g->fan[w++] = g->fan[i];
			}
		}
		start = end;
	}
	g->off[g->n] = w;
	g->follows = w;
}

int
lg_graph_load(lg_graph *g, const char *path)
{
	FILE     *f = fopen(path, "r");
	uint64_t *pos;
	char      line[256];

	memset(g, 0, sizeof(*g));
	if (f == NULL) {
		fprintf(stderr, "warble-load: %s: %s\n", path, strerror(errno));
		return -1;
	}
	lg_graph_read_pass(f, g, NULL, false);
	if (g->n == 0 || (g->off = calloc((size_t)g->n + 1, sizeof(uint64_t))) == NULL) {
		fprintf(stderr, "warble-load: %s: no edges\n", path);
		fclose(f);
		return -1;
	}
	/* degrees, then prefix sums */
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long a, b;
		if (sscanf(line, "%lu %lu", &a, &b) == 2 && a < g->n && b < g->n && a != b) {
			g->off[a + 1]++;
			g->off[b + 1]++;
		}
	}
	for (uint32_t t = 0; t < g->n; t++) {
		g->off[t + 1] += g->off[t];
	}
	pos = malloc(((size_t)g->n + 1) * sizeof(uint64_t));
	g->fan = malloc((g->off[g->n] + 1) * sizeof(uint32_t));
	if (pos == NULL || g->fan == NULL) {
		free(pos);
		fclose(f);
		lg_graph_free(g);
		return -1;
	}
	memcpy(pos, g->off, ((size_t)g->n + 1) * sizeof(uint64_t));
	lg_graph_read_pass(f, g, pos, true);
	free(pos);
	fclose(f);
	lg_graph_sort_unique(g);
	const char *base = strrchr(path, '/');
	snprintf(g->name, sizeof(g->name), "%s", base ? base + 1 : path);
	return 0;
}

int
lg_graph_synth(lg_graph *g, uint32_t n, uint32_t deg, uint64_t seed)
{
	uint64_t s = seed ? seed : 1;
	double   xmin = deg / 3.0 > 1 ? deg / 3.0 : 1;

	memset(g, 0, sizeof(*g));
	if (n < 2 || (g->off = calloc((size_t)n + 1, sizeof(uint64_t))) == NULL) {
		return -1;
	}
	g->n = n;
	for (uint32_t t = 0; t < n; t++) {
		double   u = ((double)(lg_rand(&s) >> 11) + 1) / 9007199254740993.0;
		double   d = floor(xmin * pow(u, -1.0 / 1.5));
		uint64_t k = d > n - 1 ? n - 1 : (uint64_t)d;
		g->off[t + 1] = g->off[t] + k;
	}
	if ((g->fan = malloc((g->off[n] + 1) * sizeof(uint32_t))) == NULL) {
		lg_graph_free(g);
		return -1;
	}
	for (uint32_t t = 0; t < n; t++) {
		for (uint64_t i = g->off[t]; i < g->off[t + 1]; i++) {
			uint32_t f;
			do {
				f = (uint32_t)(lg_rand(&s) % n);
			} while (f == t);
			g->fan[i] = f;
		}
	}
	lg_graph_sort_unique(g);
	snprintf(g->name, sizeof(g->name), "synthetic power law n=%u mean=%u seed=%llu", n, deg,
	    (unsigned long long)seed);
	return 0;
}

void
lg_graph_free(lg_graph *g)
{
	free(g->off);
	free(g->fan);
	g->off = NULL;
	g->fan = NULL;
}

static size_t lg_text_len; /* lg_post_text_len */

void
lg_post_text_len(size_t len)
{
	lg_text_len = len;
}

void
lg_post_text(char *buf, size_t n, uint32_t u, uint64_t k)
{
	static const char *words[] = { "warble", "timeline", "coffee", "release", "latency",
		"follow", "morning", "build", "deploy", "weekend", "music", "reading", "garden",
		"rain", "train", "lunch" };
	uint64_t           s = ((uint64_t)u << 32 | (k & 0xffffffffu)) * 2654435761u + 1;
	int                w = snprintf(buf, n, "post %llu by %u:", (unsigned long long)k, u);

	for (int i = 0; i < 8 && w > 0 && (size_t)w < n; i++) {
		w += snprintf(buf + w, n - (size_t)w, " %s", words[lg_rand(&s) % 16]);
	}
	if (lg_text_len > 0 && w > 0) { /* a word of 1 to 8 letters, then a space */
		size_t len = lg_text_len < n ? lg_text_len : n - 1;
		for (size_t i = (size_t)w < len ? (size_t)w : len; i < len; i++) {
			uint64_t r = lg_rand(&s);
			buf[i] =
			    r % 6 == 0 && buf[i - 1] != ' ' ? ' ' : (char)('a' + (r >> 8) % 26);
		}
		buf[len] = '\0';
	}
}
