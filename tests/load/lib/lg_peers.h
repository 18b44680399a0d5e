/*
 * lg_peers.h - the peers of a run as one set: which run (--peers), their
 * setup from the graph, their backends, a publish outside the mix (the
 * fan-out phase and the sweep) and a look at a home's newest post, the
 * same calls whatever the peer (lg_peer.h has each one's design).
 */
#ifndef LG_PEERS_H
#define LG_PEERS_H

#include "lg_model.h"
#include "lg_peer.h"
#include "lg_report.h"

/* The peers, in the order they take their turns after Warble. */
enum { LG_PEER_REDIS, LG_PEER_REDIS_PLAIN, LG_PEER_PG, LG_PEER_PG_FANOUT, LG_PEERS };

/* One peer of the run. */
typedef struct lg_peer {
	const char *name;
	bool        on;       /* in this run */
	lg_redis   *r;        /* a Redis peer's client (else NULL) */
	lg_pg      *p;        /* a PostgreSQL peer's client (else NULL) */
	lg_servers  srv;      /* its server process, whose CPU a mix charges to it */
	lg_mix      m, paced; /* the mix closed loop, and paced at --moderate */
	lg_model    model;    /* the graph users' posts it acknowledged */
	double      setup_s;  /* its setup's seconds */
	bool        fans_out; /* it fans out on write (a home per fan to check) */
} lg_peer;

/* lg_peers_names is the comma-separated list of every peer's name, for usage lines. */
extern const char lg_peers_names[];

/*
 * lg_peers_open opens the peers of list (comma-separated names; NULL: all)
 * whose server was given: the Redis ones on redis ("host:port"; databases
 * 0 and 1), the PostgreSQL ones on pg (a conninfo; schemas public and
 * fanout); cap is the home timeline cap.  0, or -1 with a message (an
 * unknown name, a peer named whose server is missing, a server that
 * would not open).
 */
int lg_peers_open(lg_peer *pr, const char *list, const char *redis, const char *pg, unsigned cap);

/* lg_peers_close closes every peer of pr. */
void lg_peers_close(lg_peer *pr);

/* lg_peers_any says whether any peer runs. */
bool lg_peers_any(const lg_peer *pr);

/* lg_peer_backend fills b with p's mixed-workload backend (uids: user numbers to uids). */
void lg_peer_backend(lg_peer *p, const uint64_t *uids, lg_backend *b);

/* lg_peer_add_users records n accounts uids[i] named prefix<i>. */
int lg_peer_add_users(lg_peer *p, const uint64_t *uids, const char *prefix, uint64_t n);

/* lg_peer_add_fans makes fans[0..n) follow target. */
int lg_peer_add_fans(lg_peer *p, uint64_t target, const uint64_t *fans, size_t n);

/* lg_peer_finish_setup runs after the graph's follows (PostgreSQL: indexes, statistics). */
int lg_peer_finish_setup(lg_peer *p);

/* lg_peer_refresh runs after bulk posts (PostgreSQL: VACUUM ANALYZE). */
int lg_peer_refresh(lg_peer *p);

/* lg_peer_publish publishes post id by author (named name) outside the mix; *us gets the time
 * until every home has it, *cells the homes written (0 on read). */
int lg_peer_publish(lg_peer *p, uint64_t author, const char *name, uint64_t id, const char *text,
    uint64_t *us, uint64_t *cells);

/* lg_peer_newest returns the newest post id of uid's home (0 if empty). */
uint64_t lg_peer_newest(lg_peer *p, uint64_t uid);

/* lg_peer_memory returns the server's memory in use (Redis; 0 if unknown). */
uint64_t lg_peer_memory(lg_peer *p);

#endif
