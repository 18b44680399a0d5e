/*
 * lg_peers.c - the peers of a run as one set (lg_peers.h).
 */
#include <stdlib.h>
#include <string.h>

#include "lg_peers.h"

static const char *const lg_peer_name[LG_PEERS] = { "redis", "redis-plain", "postgres",
	"postgres-fanout" };

const char lg_peers_names[] = "redis,redis-plain,postgres,postgres-fanout";

/* lg_peers_pick marks the peers named in list (NULL: all); -1 on an unknown name. */
static int
lg_peers_pick(lg_peer *pr, const char *list)
{
	const char *s = list;

	for (int i = 0; i < LG_PEERS; i++) {
		pr[i].on = list == NULL;
	}
	while (s != NULL && *s != '\0') {
		size_t n = strcspn(s, ",");
		int    i = 0;
		while (i < LG_PEERS &&
		       (strlen(lg_peer_name[i]) != n || strncmp(s, lg_peer_name[i], n)))
			i++;
		if (i == LG_PEERS) {
			fprintf(stderr, "warble-load: unknown peer in --peers %s (peers: %s)\n",
			    list, lg_peers_names);
			return -1;
		}
		pr[i].on = true;
		s += n + (s[n] == ',');
	}
	return 0;
}

int
lg_peers_open(lg_peer *pr, const char *list, const char *redis, const char *pg, unsigned cap)
{
	char host[64];
	int  port = 6379;

	memset(pr, 0, LG_PEERS * sizeof(*pr));
	for (int i = 0; i < LG_PEERS; i++) {
		pr[i].name = lg_peer_name[i];
		lg_model_init(&pr[i].model);
	}
	if (lg_peers_pick(pr, list) != 0) {
		return -1;
	}
	if (redis != NULL) {
		snprintf(host, sizeof(host), "%s", redis);
		char *colon = strrchr(host, ':');
		if (colon != NULL) {
			*colon = '\0';
			port = atoi(colon + 1);
		}
	}
	for (int i = 0; i < LG_PEERS; i++) {
		bool is_redis = i == LG_PEER_REDIS || i == LG_PEER_REDIS_PLAIN;
		if (pr[i].on && (is_redis ? redis : pg) == NULL) {
			if (list != NULL) {
				fprintf(stderr, "warble-load: peer %s needs %s\n", pr[i].name,
				    is_redis ? "--redis" : "--pg");
				return -1;
			}
			pr[i].on = false; /* all by default: those whose server was given */
		}
		if (!pr[i].on) {
			continue;
		}
		int rc = is_redis ? lg_redis_open(&pr[i].r, host, port, i == LG_PEER_REDIS ? 0 : 1,
		                        i == LG_PEER_REDIS, cap)
		                  : lg_pg_open(&pr[i].p, pg, i == LG_PEER_PG_FANOUT, cap);
		if (rc != 0) {
			return -1;
		}
		pr[i].fans_out = i != LG_PEER_PG;
		pr[i].srv = (lg_servers) { 1,
			{ is_redis ? lg_redis_server_pid(pr[i].r) : lg_pg_server_pid(pr[i].p) },
			{ pr[i].name }, !is_redis, NULL };
	}
	return 0;
}

void
lg_peers_close(lg_peer *pr)
{
	for (int i = 0; i < LG_PEERS; i++) {
		lg_redis_close(pr[i].r);
		lg_pg_close(pr[i].p);
		lg_model_free(&pr[i].model);
		pr[i].r = NULL;
		pr[i].p = NULL;
		pr[i].on = false;
	}
}

bool
lg_peers_any(const lg_peer *pr)
{
	for (int i = 0; i < LG_PEERS; i++) {
		if (pr[i].on) {
			return true;
		}
	}
	return false;
}

void
lg_peer_backend(lg_peer *p, const uint64_t *uids, lg_backend *b)
{
	if (p->r != NULL) {
		lg_redis_backend(p->r, uids, b);
	} else {
		lg_pg_backend(p->p, uids, b);
	}
}

int
lg_peer_add_users(lg_peer *p, const uint64_t *uids, const char *prefix, uint64_t n)
{
	return p->p != NULL ? lg_pg_copy_users(p->p, uids, prefix, n)
	                    : lg_redis_add_users(p->r, uids, prefix, n);
}

int
lg_peer_add_fans(lg_peer *p, uint64_t target, const uint64_t *fans, size_t n)
{
	return p->r != NULL ? lg_redis_add_fans(p->r, target, fans, n)
	                    : lg_pg_copy_follows(p->p, target, fans, n);
}

int
lg_peer_finish_setup(lg_peer *p)
{
	return p->p != NULL ? lg_pg_finish_setup(p->p) : 0;
}

int
lg_peer_refresh(lg_peer *p)
{
	return p->p != NULL ? lg_pg_analyze(p->p) : 0;
}

int
lg_peer_publish(lg_peer *p, uint64_t author, const char *name, uint64_t id, const char *text,
    uint64_t *us, uint64_t *cells)
{
	uint64_t ack = 0, fan = 0;
	int      rc;

	*cells = 0;
	if (p->r != NULL) {
		rc = lg_redis_publish(p->r, author, name, id, text, &ack, &fan, cells);
	} else {
		rc = lg_pg_publish(p->p, author, id, text, &ack, cells);
	}
	*us = ack + fan;
	return rc;
}

uint64_t
lg_peer_newest(lg_peer *p, uint64_t uid)
{
	return p->r != NULL ? lg_redis_newest(p->r, uid) : lg_pg_newest(p->p, uid);
}

uint64_t
lg_peer_memory(lg_peer *p)
{
	return p->r != NULL ? lg_redis_used_memory(p->r) : 0;
}
