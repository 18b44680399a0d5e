/*
 * warble-load - Warble's load generator, with Redis and PostgreSQL peers
 * measured in the same run on the same graph and posts: redis (a
 * function library), redis-plain (commands from the client), postgres
 * (fan-out on read) and postgres-fanout (fan-out on write); lg_peer.h.
 *
 *   warble-load --graph tests/data/graphs/ego-facebook.edges \
 *       --fanout 10000,100000,1000000 --redis 127.0.0.1:6390 \
 *       --pg "host=127.0.0.1 port=5440 user=postgres dbname=postgres" --out bench-out
 *
 * Phases (each system in turn):
 *   setup     accounts (user.register_many), follows (rel.follow_many):
 *             the graph's mutual follows, and one celebrity per --fanout
 *             count F followed by the fan-pool accounts 0..F-1
 *   seed      every graph user publishes --seed-posts posts
 *   fan-out   each celebrity publishes; time until the post is in every
 *             fan's inbox (the inbox's content_applied gauge moves past
 *             the post's event once its last inbox batch is written),
 *             verified on --sample random fans; each peer's publish
 *   visible   publish-to-visible: an ordinary user publishes, a follower
 *             polls its home timeline until the post shows
 *   mix       DeathStarBench's social-network mix: 60% home timeline,
 *             30% user timeline, 10% posts, --threads closed-loop
 *             clients for --duration s (or paced at --rate req/s total);
 *             the systems take turns in --rounds rounds; a Warble round
 *             lasts until its inbox has applied every post of it
 *   check     after the seed posts and after each mix, --check random
 *             graph users' home and user timeline pages, in every
 *             system, compared post by post with the posts that system
 *             acknowledged (lg_model.h): a wrong page fails the run
 *   sweep     --sweep F1,..: one reader per F follows F authors with
 *             --sweep-posts posts each; its home checked, then read
 *             closed loop (where fan-out on write should win:
 *             home_by_follows)
 *   media     --media UxM: U graph users upload M images each (PNGs of 64,
 *             256 and 900 KiB) on --threads connections, publish them in
 *             posts, and the images are downloaded; PostgreSQL stores and
 *             reads the same bytes as bytea: MiB/s both ways, bytes on
 *             disk per image beside the raw size
 *   disk      the stopped inbox store compacted; bytes per entry; the
 *             stopped content store's images (blob files); with
 *             --store-disk every family of the relation and content
 *             stores compacted: bytes per follow edge and per post
 *
 * Output: a summary on stdout, OUT/report.json, the .dat files in OUT and, when
 * gnuplot is installed, OUT/latency.png, OUT/fanout.png and
 * OUT/home_by_follows.png.
 *
 * By default warble-load starts its own five daemons (and, with --one,
 * the one-process warble).  With --gateway it drives a running deployment
 * instead, any number of shards and gateways (lg_warble_attach): setup
 * goes to the internal services named by the daemons' own variables,
 * rel.follow_many split by the followers' relation shard; server CPU is
 * each process's process_cpu_us gauge, every process counted once; the
 * store's bytes on disk are not measured.
 */
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lg.h"
#include "lg_disk.h"
#include "lg_model.h"
#include "lg_peers.h"
#include "lg_report.h"
#include "lg_warble.h"
#include "lg_wrk.h"
#include "rt_shards.h"
#include "warble.h"

#define LG_MAX_CELEBS 8
#define LG_MAX_SWEEP  8

static struct {
	const char *graph, *redis, *pg, *peers, *out;
	uint32_t    synth_n, degree, threads, duration, rounds, visible, seed_posts, reps, sample;
	uint32_t    check;
	uint32_t    sweep_posts, home_secs, http_conns;
	uint32_t    inbox_max;
	uint64_t    seed, rate, moderate;
	uint32_t    timeout;
	uint64_t    fanout[LG_MAX_CELEBS];
	int         ncelebs;
	uint64_t    sweep[LG_MAX_SWEEP]; /* follow counts of the sweep's readers */
	int         nsweep;
	bool        one;                    /* the mix again on the one-process warble */
	bool        store_disk;             /* the relation and content stores measured too */
	const char *gateways, *http_url;    /* a running deployment (NULL: start one) */
	uint32_t    media_users, media_per; /* the media phase (0: none) */
} opt = {
	.out = "bench-out",
	.degree = 20,
	.threads = 8,
	.duration = 20,
	.rounds = 1,
	.visible = 200,
	.seed_posts = 2,
	.reps = 3,
	.sample = 1000,
	.check = 200,
	.inbox_max = 800,
	.seed = 42,
	.timeout = 3600,
	.fanout = { 100000 },
	.ncelebs = 1,
	.sweep_posts = 20,
	.home_secs = 3,
};

static lg_graph  G;
static lg_warble W;
static lg_peer   PR[LG_PEERS]; /* the peers (lg_peers.h); those that run are on */
static lg_model  wmodel;       /* the graph users' posts Warble acknowledged */
static uint64_t  celeb_uid[LG_MAX_CELEBS];
static uint64_t  posts_published; /* Warble content events so far */
static lg_hist   pub_ack;         /* Warble publish acks (seed, visible, mix) */
static lg_hist   vis;             /* publish-to-visible */
static uint64_t *sweep_author;    /* the sweep's authors' uids */
static uint64_t *sweep_id;        /* their posts' ids, round r's of author a at r * na + a */
static uint64_t  sweep_na;        /* how many authors */
static double    media_secs;      /* the media phase's wall time, disk measurement included */

/* the media phase in Warble and PostgreSQL */
static lg_media_result wmedia, pmedia;

static void
usage(void)
{
	fprintf(stderr,
	    "usage: warble-load [options]\n"
	    "  --graph FILE        real graph (.edges: \"a b\" lines, each a mutual follow)\n"
	    "  --synthetic N       or a seeded power-law graph of N users\n"
	    "  --degree D          its mean follower count (20)\n"
	    "  --seed S            random seed (42)\n"
	    "  --fanout F1,F2,..   one celebrity per count, followed by F fan accounts (100000; at "
	    "most 8, each <= 1000000)\n"
	    "  --reps R            publishes per celebrity (3)\n"
	    "  --sample K          inboxes checked after each fan-out (1000)\n"
	    "  --visible K         publish-to-visible samples (200)\n"
	    "  --seed-posts P      posts per graph user before the mix (2)\n"
	    "  --post-len L        every post's text exactly L bytes, padded with random words\n"
	    "                      (0: about 70 B of a few repeated words; at most 250)\n"
	    "  --threads T         mixed-workload client threads (8)\n"
	    "  --duration S        mixed-workload seconds per system (20)\n"
	    "  --rounds N          the mix (closed and paced) in N turns per system, the "
	    "systems alternating (1; at most 100)\n"
	    "  --rate R            mixed-workload target req/s in total (0: closed loop)\n"
	    "  --moderate R        also run the mix paced at R req/s in total (moderate load; 0: "
	    "no)\n"
	    "  --sweep F1,F2,..    home reads of one reader per count, following F authors (at "
	    "most 8, each <= 100000; none by default)\n"
	    "  --sweep-posts P     posts per sweep author (20)\n"
	    "  --http C            home reads over HTTP/JSON and over the SDK, C connections "
	    "each (0: no)\n"
	    "  --home-secs S       seconds of each closed-loop home run of --sweep; --http "
	    "takes S turns of 1 s each way (3)\n"
	    "  --one               the mix (and --moderate) again on the one-process warble\n"
	    "  --store-disk        after the run, the relation and content stores compacted and\n"
	    "                      measured family by family: bytes per follow edge and per post\n"
	    "  --media UxM         U graph users upload M images each, then they are read back "
	    "(Warble and PostgreSQL; none by default)\n"
	    "  --check K           graph users whose home and user timeline pages are checked "
	    "against the model after the seed posts and each mix, in every system (200)\n"
	    "  --inbox-max N       inbox cap, Warble and the peers' home timelines (800; at "
	    "least 20)\n"
	    "  --redis HOST:PORT   the Redis peers' server (databases 0 and 1 are flushed)\n"
	    "  --pg CONNINFO       the PostgreSQL peers' server (tables users, follows, posts, "
	    "media and schema fanout are replaced)\n"
	    "  --peers LIST        the peers to run, of redis,redis-plain,postgres,postgres-fanout "
	    "(default: every one whose server is given)\n"
	    "  --timeout S         give up (exit, daemons killed) after S seconds in all (3600)\n"
	    "  --out DIR           report.json, .dat files and plots (bench-out)\n"
	    "\n"
	    "A running deployment (warble-load starts no daemon; it must be fresh: none of\n"
	    "the accounts it registers, gu*, fp*, cel*, sa*, sr*, may exist yet):\n"
	    "  --gateway URL,...   its gateways (msgpack API); the clients spread over them\n"
	    "  --http-url URL      its HTTP/JSON API for --http (http://host:port; default\n"
	    "                      WARBLE_HTTP_URL, else http://127.0.0.1:8080)\n"
	    "  Setup uses the internal bulk operations, which a gateway refuses: the user\n"
	    "  service at WARBLE_USER_URL and every shard from WARBLE_RELATION_URLS,\n"
	    "  WARBLE_CONTENT_URLS and WARBLE_INBOX_URLS (each empty: the one address of\n"
	    "  WARBLE_RELATION_URL, ...), the variables the daemons read; rel.follow_many\n"
	    "  goes to each follower's relation shard; with WARBLE_TLS_DIR, as the admin\n"
	    "  identity (DIR/admin.pem).  Server CPU is each process's\n"
	    "  process_cpu_us (its stats), summed over every gateway and shard, a process\n"
	    "  serving several services (warble --shard) counted once.  Start the daemons\n"
	    "  with WARBLE_BACKFILL=0 WARBLE_INBOX_MAX=800 WARBLE_MEDIA_RATE=0\n"
	    "  WARBLE_REGISTER_RATE=0 (and a cheap WARBLE_PWHASH_OPS=1 WARBLE_PWHASH_MEM=8192)\n"
	    "  to match the cluster warble-load starts itself.  --one is refused; bytes on\n"
	    "  disk are not measured.\n"
	    "  example: WARBLE_USER_URL=tcp://10.0.0.5:7101 \\\n"
	    "    WARBLE_RELATION_URLS=tcp://10.0.0.6:7102,tcp://10.0.0.7:7102 \\\n"
	    "    WARBLE_CONTENT_URLS=tcp://10.0.0.6:7103,tcp://10.0.0.7:7103 \\\n"
	    "    WARBLE_INBOX_URLS=tcp://10.0.0.6:7104,tcp://10.0.0.7:7104 \\\n"
	    "    warble-load --gateway tcp://10.0.0.6:7100,tcp://10.0.0.7:7100 \\\n"
	    "      --http-url http://10.0.0.6:8080 --graph tests/data/graphs/ego-facebook.edges\n");
}

/* parse_list reads "a,b,c" (at most max counts, each 1..limit) into out; *n gets the count. */
static int
parse_list(const char *s, uint64_t *out, int max, uint64_t limit, int *n)
{
	char *end;

	*n = 0;
	while (*s != '\0') {
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || v == 0 || v > limit || *n == max || (*end != ',' && *end != '\0')) {
			return -1;
		}
		out[(*n)++] = v;
		s = *end == ',' ? end + 1 : end;
	}
	return *n > 0 ? 0 : -1;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "graph", 1, 0, 'g' },
		{ "synthetic", 1, 0, 'n' },
		{ "degree", 1, 0, 'd' },
		{ "seed", 1, 0, 's' },
		{ "fanout", 1, 0, 'f' },
		{ "reps", 1, 0, 'r' },
		{ "sample", 1, 0, 'k' },
		{ "visible", 1, 0, 'v' },
		{ "seed-posts", 1, 0, 'p' },
		{ "threads", 1, 0, 't' },
		{ "duration", 1, 0, 'D' },
		{ "rounds", 1, 0, 'N' },
		{ "rate", 1, 0, 'R' },
		{ "inbox-max", 1, 0, 'm' },
		{ "redis", 1, 0, 'x' },
		{ "pg", 1, 0, 'q' },
		{ "peers", 1, 0, 'e' },
		{ "check", 1, 0, 'c' },
		{ "out", 1, 0, 'o' },
		{ "moderate", 1, 0, 'M' },
		{ "timeout", 1, 0, 'T' },
		{ "sweep", 1, 0, 'w' },
		{ "sweep-posts", 1, 0, 'P' },
		{ "home-secs", 1, 0, 'S' },
		{ "http", 1, 0, 'H' },
		{ "one", 0, 0, '1' },
		{ "store-disk", 0, 0, 'B' },
		{ "post-len", 1, 0, 'L' },
		{ "media", 1, 0, 'I' },
		{ "gateway", 1, 0, 'G' },
		{ "http-url", 1, 0, 'U' },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		unsigned long v = optarg ? strtoul(optarg, NULL, 10) : 0;
		switch (c) {
		case 'g':
			opt.graph = optarg;
			break;
		case 'n':
			opt.synth_n = (uint32_t)v;
			break;
		case 'd':
			opt.degree = (uint32_t)v;
			break;
		case 's':
			opt.seed = v;
			break;
		case 'f':
			if (parse_list(optarg, opt.fanout, LG_MAX_CELEBS, 1000000, &opt.ncelebs) !=
			    0) {
				fprintf(stderr, "warble-load: bad --fanout %s\n", optarg);
				return -1;
			}
			break;
		case 'w':
			if (parse_list(optarg, opt.sweep, LG_MAX_SWEEP, 100000, &opt.nsweep) != 0) {
				fprintf(stderr, "warble-load: bad --sweep %s\n", optarg);
				return -1;
			}
			break;
		case 'P':
			opt.sweep_posts = v < 1 ? 1 : v > 1000 ? 1000 : (uint32_t)v;
			break;
		case 'S':
			opt.home_secs = v < 1 ? 1 : v > 600 ? 600 : (uint32_t)v;
			break;
		case 'H':
			opt.http_conns = v > 256 ? 256 : (uint32_t)v;
			break;
		case '1':
			opt.one = true;
			break;
		case 'B':
			opt.store_disk = true;
			break;
		case 'L':
			if (v > 250) {
				fprintf(stderr, "warble-load: --post-len is at most 250\n");
				return -1;
			}
			lg_post_text_len(v);
			break;
		case 'G':
			opt.gateways = optarg;
			break;
		case 'U':
			opt.http_url = optarg;
			break;
		case 'I': {
			unsigned nu = 0, nm = 0;
			char     x = 0;
			if (sscanf(optarg, "%u%c%u", &nu, &x, &nm) != 3 || x != 'x' || nu == 0 ||
			    nm == 0 || (uint64_t)nu * nm > 100000) {
				fprintf(stderr,
				    "warble-load: bad --media %s (UxM, at most 100000 images)\n",
				    optarg);
				return -1;
			}
			opt.media_users = nu;
			opt.media_per = nm;
			break;
		}
		case 'r':
			opt.reps = v < 1 ? 1 : v > 8 ? 8 : (uint32_t)v;
			break;
		case 'k':
			opt.sample = (uint32_t)v;
			break;
		case 'v':
			opt.visible = (uint32_t)v;
			break;
		case 'p':
			opt.seed_posts = (uint32_t)v;
			break;
		case 't':
			opt.threads = v < 1 ? 1 : v > 256 ? 256 : (uint32_t)v;
			break;
		case 'D':
			opt.duration = v > 3600 ? 3600 : (uint32_t)v;
			break;
		case 'N':
			opt.rounds = v < 1 ? 1 : v > 100 ? 100 : (uint32_t)v;
			break;
		case 'R':
			opt.rate = v;
			break;
		case 'm':
			opt.inbox_max = v < LG_PAGE ? LG_PAGE : v > 1000000 ? 1000000 : (uint32_t)v;
			break;
		case 'x':
			opt.redis = optarg;
			break;
		case 'q':
			opt.pg = optarg;
			break;
		case 'e':
			opt.peers = optarg;
			break;
		case 'c':
			opt.check = v > 100000 ? 100000 : (uint32_t)v;
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'M':
			opt.moderate = v;
			break;
		case 'T':
			opt.timeout = (uint32_t)v;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			usage();
			return -1;
		}
	}
	if ((opt.graph == NULL) == (opt.synth_n == 0)) {
		fprintf(stderr, "warble-load: give --graph FILE or --synthetic N\n");
		return -1;
	}
	if (opt.gateways != NULL && opt.one) {
		fprintf(stderr, "warble-load: --one starts a warble process: not with --gateway\n");
		return -1;
	}
	if (opt.http_url != NULL && opt.gateways == NULL) {
		fprintf(
		    stderr, "warble-load: --http-url is for a running deployment (--gateway)\n");
		return -1;
	}
	return 0;
}

/* ---- setup ---- */

static uint64_t
max_fanout(void)
{
	uint64_t m = 0;

	for (int i = 0; i < opt.ncelebs; i++) {
		m = opt.fanout[i] > m ? opt.fanout[i] : m;
	}
	return m;
}

/* setup_warble creates the accounts and follows in Warble, the celebrities' too if celebs. */
static int
setup_warble(bool celebs)
{
	uint64_t *buf = malloc(((size_t)G.n + 1) * sizeof(uint64_t));
	uint64_t  t0 = lg_now_us();

	W.n = G.n;
	W.npool = celebs ? max_fanout() : 0;
	W.guid = malloc((size_t)G.n * sizeof(uint64_t));
	W.puid = malloc(W.npool * sizeof(uint64_t));
	if (buf == NULL || W.guid == NULL || W.puid == NULL ||
	    lg_warble_register(&W, "gu", G.n, W.guid) != 0 ||
	    (celebs && (lg_warble_register(&W, "cel", (uint64_t)opt.ncelebs, celeb_uid) != 0 ||
	                   lg_warble_register(&W, "fp", W.npool, W.puid) != 0))) {
		free(buf);
		return -1;
	}
	fprintf(stderr, "warble: %u + %llu + %d accounts in %.1f s\n", G.n,
	    (unsigned long long)W.npool, celebs ? opt.ncelebs : 0, (lg_now_us() - t0) / 1e6);
	t0 = lg_now_us();
	for (uint32_t t = 0; t < G.n; t++) {
		size_t k = 0;
		for (uint64_t i = G.off[t]; i < G.off[t + 1]; i++) {
			buf[k++] = W.guid[G.fan[i]];
		}
		if (k > 0 && lg_warble_follow_many(&W, W.guid[t], buf, k) != 0) {
			free(buf);
			return -1;
		}
		lg_progress("follow (graph)", t + 1, G.n);
	}
	free(buf);
	for (int c = 0; celebs && c < opt.ncelebs; c++) {
		for (uint64_t off = 0; off < opt.fanout[c]; off += 100000) {
			uint64_t k = opt.fanout[c] - off < 100000 ? opt.fanout[c] - off : 100000;
			if (lg_warble_follow_many(&W, celeb_uid[c], W.puid + off, k) != 0) {
				return -1;
			}
			lg_progress("follow (celebrities)", off + k, opt.fanout[c]);
		}
	}
	fprintf(stderr, "warble: %llu follows in %.1f s\n",
	    (unsigned long long)(G.follows + W.npool), (lg_now_us() - t0) / 1e6);
	t0 = lg_now_us();
	if (!lg_warble_wait_inbox(&W, 0, 3600)) {
		return -1;
	}
	fprintf(stderr, "warble: inbox applied the follow events in %.1f s\n",
	    (lg_now_us() - t0) / 1e6);
	return lg_warble_login_graph(&W);
}

/* setup_peer mirrors the graph, the celebrities and the fan pool into peer p. */
static int
setup_peer(lg_peer *p)
{
	uint64_t *buf = malloc(((size_t)G.n + 1) * sizeof(uint64_t));
	uint64_t  t0 = lg_now_us();
	char      what[64];
	int       rc = buf ? 0 : -1;

	if (rc == 0) {
		rc = lg_peer_add_users(p, W.guid, "gu", G.n);
	}
	if (rc == 0) {
		rc = lg_peer_add_users(p, celeb_uid, "cel", (uint64_t)opt.ncelebs);
	}
	if (rc == 0) {
		rc = lg_peer_add_users(p, W.puid, "fp", W.npool);
	}
	snprintf(what, sizeof(what), "%s graph", p->name);
	for (uint32_t t = 0; rc == 0 && t < G.n; t++) {
		size_t k = 0;
		for (uint64_t i = G.off[t]; i < G.off[t + 1]; i++) {
			buf[k++] = W.guid[G.fan[i]];
		}
		if (k > 0) {
			rc = lg_peer_add_fans(p, W.guid[t], buf, k);
		}
		lg_progress(what, t + 1, G.n);
	}
	for (int c = 0; rc == 0 && c < opt.ncelebs; c++) {
		rc = lg_peer_add_fans(p, celeb_uid[c], W.puid, opt.fanout[c]);
	}
	free(buf);
	rc = rc == 0 ? lg_peer_finish_setup(p) : rc;
	p->setup_s = (lg_now_us() - t0) / 1e6;
	return rc;
}

/* ---- parallel helpers ---- */

typedef struct lg_job {
	lg_backend *b;
	lg_model   *model; /* the posts acknowledged go here (NULL: nowhere) */
	int         tid;
	uint64_t    deadline_us, start_us;
	uint32_t    round; /* of the mix: each round draws other users and texts */
	double      per_thread_rate;
	lg_mix      mix;
	int         rc;
} lg_job;

/* seed_main publishes the seed posts of the users tid, tid + T, ... */
static void *
seed_main(void *arg)
{
	lg_job  *j = arg;
	lg_conn *c = j->b->conn_open(j->b->ctx);
	char     text[256];

	if (c == NULL) {
		j->rc = -1;
		return NULL;
	}
	for (uint32_t u = (uint32_t)j->tid; u < G.n; u += opt.threads) {
		for (uint32_t k = 0; k < opt.seed_posts; k++) {
			uint64_t id, t0 = lg_now_us();
			lg_post_text(text, sizeof(text), u, k);
			if (j->b->post(c, u, text, &id) != 0) {
				j->mix.errors++;
			} else {
				lg_hist_add(&j->mix.post, lg_now_us() - t0);
				j->mix.ops++;
				if (j->model != NULL) {
					lg_model_add(j->model, u, k, id);
				}
			}
		}
	}
	j->b->conn_close(c);
	return NULL;
}

/* mix_main runs the 60/30/10 mix until the deadline. */
static void *
mix_main(void *arg)
{
	lg_job  *j = arg;
	lg_conn *c = j->b->conn_open(j->b->ctx);
	uint64_t s = (opt.seed * 1000003 + (uint64_t)j->tid + 1) ^ ((uint64_t)j->round << 40);
	uint64_t k = 1000000 + (uint64_t)j->tid * 10000000000ull + (uint64_t)j->round * 100000000;
	uint64_t next = lg_now_us();
	char     text[256];

	if (c == NULL) {
		j->rc = -1;
		return NULL;
	}
	while (lg_now_us() < j->deadline_us) {
		uint32_t u = (uint32_t)(lg_rand(&s) % G.n), r = (uint32_t)(lg_rand(&s) % 100);
		size_t   n = 0;
		uint64_t id, t0;
		int      rc;

		if (j->per_thread_rate > 0) { /* paced: latency from the intended start */
			uint64_t now = lg_now_us();
			if (next > now) {
				lg_sleep_us(next - now);
			}
			t0 = next;
			next += (uint64_t)(1e6 / j->per_thread_rate);
		} else {
			t0 = lg_now_us();
		}
		if (r < 60) {
			rc = j->b->home(c, u, NULL, &n);
			lg_hist_add(&j->mix.home, lg_now_us() - t0);
			j->mix.empty_home += rc == 0 && n == 0;
		} else if (r < 90) {
			rc = j->b->timeline(c, (uint32_t)(lg_rand(&s) % G.n), NULL, &n);
			lg_hist_add(&j->mix.tl, lg_now_us() - t0);
		} else {
			lg_post_text(text, sizeof(text), u, k);
			rc = j->b->post(c, u, text, &id);
			lg_hist_add(&j->mix.post, lg_now_us() - t0);
			if (rc == 0 && j->model != NULL) {
				lg_model_add(j->model, u, k, id);
			}
			k++;
		}
		j->mix.ops++;
		j->mix.errors += rc != 0;
	}
	j->b->conn_close(c);
	return NULL;
}

/*
 * run_jobs runs fn on opt.threads threads for ms (round of the mix) and
 * merges their results into out, the posts acknowledged into model (if
 * not NULL); with srv, it also charges the CPU that each of those
 * processes and this one (the client) used over the run, read from /proc
 * before it and after srv's settle, whose wait counts in the run's time.
 */
static int
run_jobs(lg_backend *b, void *(*fn)(void *), uint64_t ms, uint32_t round, lg_mix *out,
    const lg_servers *srv, lg_model *model)
{
	lg_job   *jobs = calloc(opt.threads, sizeof(*jobs));
	pthread_t th[256];
	uint64_t  t0, cpu0[LG_MAX_SERVERS], self0;
	int       rc = 0;

	memset(out, 0, sizeof(*out));
	if (jobs == NULL) {
		return -1;
	}
	if (srv != NULL) {
		out->srv = *srv;
	}
	for (int i = 0; i < out->srv.n; i++) {
		cpu0[i] = lg_servers_cpu(&out->srv, i);
	}
	lg_vis vis0 = { 0 };
	if (out->srv.visible != NULL && !out->srv.visible(&vis0)) {
		out->srv.visible = NULL; /* a build without the histogram */
	}
	self0 = lg_self_cpu_us();
	t0 = lg_now_us();
	for (uint32_t i = 0; i < opt.threads; i++) {
		jobs[i].b = b;
		jobs[i].model = model;
		jobs[i].tid = (int)i;
		jobs[i].deadline_us = t0 + ms * 1000;
		jobs[i].round = round;
		jobs[i].per_thread_rate = opt.rate ? (double)opt.rate / opt.threads : 0;
		pthread_create(&th[i], NULL, fn, &jobs[i]);
	}
	for (uint32_t i = 0; i < opt.threads; i++) {
		pthread_join(th[i], NULL);
		lg_hist_merge(&out->home, &jobs[i].mix.home);
		lg_hist_merge(&out->tl, &jobs[i].mix.tl);
		lg_hist_merge(&out->post, &jobs[i].mix.post);
		out->ops += jobs[i].mix.ops;
		out->errors += jobs[i].mix.errors;
		out->empty_home += jobs[i].mix.empty_home;
		rc |= jobs[i].rc;
	}
	out->req_secs = (lg_now_us() - t0) / 1e6;
	if (out->srv.settle != NULL) {
		uint64_t t1 = lg_now_us();
		rc |= out->srv.settle() ? 0 : -1;
		out->settle_max_ms = (lg_now_us() - t1) / 1e3;
		out->settle_secs = out->settle_max_ms / 1e3;
	}
	out->secs = out->req_secs + out->settle_secs;
	if (out->srv.visible != NULL && out->srv.visible(&out->visible)) {
		lg_vis_add(&out->visible, &vis0, -1);
	}
	out->client_cpu_us = lg_self_cpu_us() - self0;
	for (int i = 0; i < out->srv.n; i++) {
		uint64_t c1 = lg_servers_cpu(&out->srv, i);
		out->srv_cpu_us[i] = c1 > cpu0[i] ? c1 - cpu0[i] : 0;
	}
	free(jobs);
	return rc;
}

/* One system's share of the mix. */
typedef struct lg_turn {
	const char       *name;
	lg_backend        b;
	const lg_servers *srv;
	lg_mix           *m, *paced; /* results closed loop, and paced at opt.moderate */
	lg_model         *model;     /* its posts */
} lg_turn;

/*
 * run_mix runs the mix (closed loop, or paced at opt.rate) on the n
 * systems in turn, opt.rounds times (opt.duration s per system in all), so that a minute in which
 * the machine is busier than the next weighs on every system alike;
 * each system's rounds add up in its lg_mix.
 */
static int
run_mix(lg_turn *t, int n, bool paced)
{
	uint64_t ms = (uint64_t)opt.duration * 1000 / opt.rounds;

	if (opt.rounds > 1) {
		printf("mix: %u rounds of %.1f s per system, the systems taking turns\n",
		    opt.rounds, ms / 1e3);
	}
	for (uint32_t r = 0; r < opt.rounds; r++) {
		for (int i = 0; i < n; i++) {
			lg_mix one;

			if (run_jobs(&t[i].b, mix_main, ms, r, &one, t[i].srv, t[i].model) != 0) {
				return -1;
			}
			lg_mix_add(paced ? t[i].paced : t[i].m, &one);
		}
	}
	for (int i = 0; i < n; i++) {
		lg_mix_print(t[i].name, paced ? t[i].paced : t[i].m);
	}
	return 0;
}

/* ---- fan-out ---- */

/*
 * fanout_peer publishes Warble's post id (text) as celebrity c in peer p
 * (rep of fr's) and, on the last rep, samples fans' homes for it: opt.sample
 * of a peer that fans out on write, 100 of one that reads on demand (each
 * check is a home query).
 */
static int
fanout_peer(lg_peer *p, int c, uint64_t id, const char *text, int rep, uint64_t *s, lg_fan *fr)
{
	lg_fan_peer *fp = &fr->peer[p - PR];
	uint64_t     F = opt.fanout[c], m0 = lg_peer_memory(p), us, cells;
	char         name[32];

	snprintf(name, sizeof(name), "cel%d", c);
	if (lg_peer_publish(p, celeb_uid[c], name, id, text, &us, &cells) != 0) {
		fprintf(stderr, "warble-load: %s: the celebrity's publish failed\n", p->name);
		return -1;
	}
	fp->s[rep] = us / 1e6;
	fp->cells = cells;
	if (rep == 0 && m0 > 0) {
		uint64_t m1 = lg_peer_memory(p);
		fp->mem_bytes = m1 > m0 ? m1 - m0 : 0;
	}
	if (rep == fr->reps - 1) {
		uint64_t k = p->fans_out ? (opt.sample < F ? opt.sample : F) : (100 < F ? 100 : F);
		for (uint64_t i = 0; i < k; i++) {
			fp->missing += lg_peer_newest(p, W.puid[lg_rand(s) % F]) != id;
		}
		fp->checked = k;
	}
	return 0;
}

/* fanout_one publishes as celebrity c reps times in each system and measures. */
static int
fanout_one(int c, lg_fan *fr)
{
	char     name[32], text[256];
	uint64_t s = opt.seed + 77 + (uint64_t)c, F = opt.fanout[c];

	memset(fr, 0, sizeof(*fr));
	fr->f = F;
	fr->reps = (int)opt.reps;
	snprintf(name, sizeof(name), "cel%d", c);
	for (int rep = 0; rep < fr->reps; rep++) {
		uint64_t id = 0, ack = 0, target, done = 0, polls = 0;
		uint64_t c0 = lg_warble_gauge_sum(W.inbox, "cells_written");
		uint64_t cpu0 = lg_warble_gauge_sum(W.inbox, "process_cpu_us");
		uint64_t t0 = lg_now_us();

		lg_post_text(text, sizeof(text), 0, 900000000 + (uint64_t)c * 10 + (uint64_t)rep);
		if (lg_warble_publish(&W, name, text, &id, &ack) != WARBLE_OK) {
			return -1;
		}
		posts_published++;
		lg_hist_add(&pub_ack, ack);
		/* in every inbox once each shard's content_applied passes every content log's end */
		target = lg_warble_content_last(&W);
		if (target == UINT64_MAX ||
		    !lg_warble_wait_applied(&W, target, 1000, 600, &done, &polls)) {
			fprintf(stderr, "warble-load: fan-out of %llu not done in 600 s\n",
			    (unsigned long long)F);
			return -1;
		}
		fr->w_s[rep] = (done - t0) / 1e6;
		fr->w_ack_ms[rep] = ack / 1e3;
		fr->w_inbox_ms[rep] = 0;
		for (unsigned i = 0; i < rt_shards_count(W.inbox); i++) { /* the slowest shard's */
			uint64_t ms = wbt_stat(rt_shards_at(W.inbox, i), "last_fanout_ms");
			fr->w_inbox_ms[rep] = ms != UINT64_MAX && ms > fr->w_inbox_ms[rep]
			                          ? (double)ms
			                          : fr->w_inbox_ms[rep];
		}
		fr->w_cells = lg_warble_gauge_sum(W.inbox, "cells_written") - c0;
		fr->w_cells_all += fr->w_cells;
		fr->w_cpu_us += lg_warble_gauge_sum(W.inbox, "process_cpu_us") - cpu0;
		fr->w_polls += polls;
		fr->w_rss_kb = W.running ? lg_warble_gauge_sum(W.inbox, "process_rss_bytes") / 1024
		                         : (uint64_t)lg_rss_kb(W.cl.inbox->pid, "VmHWM:");
		if (rep == fr->reps - 1) { /* verify the last post on a sample */
			uint32_t k = opt.sample < F ? opt.sample : (uint32_t)F;
			for (uint32_t i = 0; i < k; i++) {
				uint64_t j = lg_rand(&s) % F;
				fr->w_missing += lg_warble_inbox_newest(&W, W.puid[j]) != id;
			}
		}
		for (int i = 0; i < LG_PEERS; i++) {
			if (PR[i].on && fanout_peer(&PR[i], c, id, text, rep, &s, fr) != 0) {
				return -1;
			}
		}
	}
	double ws = lg_median(fr->w_s, fr->reps);
	printf("fan-out %8llu followers: warble %.3f s (%.0f cells/s; inbox's own %.0f ms), "
	       "%llu/%u sampled inboxes missing it; inbox %s %llu MiB; inbox CPU %.3f us a "
	       "cell (%llu stats polls in it)\n",
	    (unsigned long long)F, ws, F / ws, lg_median(fr->w_inbox_ms, fr->reps),
	    (unsigned long long)fr->w_missing, opt.sample < F ? opt.sample : (unsigned)F,
	    W.running ? "processes' RSS now (every shard's)" : "peak RSS",
	    (unsigned long long)fr->w_rss_kb / 1024,
	    fr->w_cells_all ? (double)fr->w_cpu_us / (double)fr->w_cells_all : 0.0,
	    (unsigned long long)fr->w_polls);
	for (int i = 0; i < LG_PEERS; i++) {
		const lg_fan_peer *fp = &fr->peer[i];
		if (!PR[i].on) {
			continue;
		}
		double ps = lg_median(fp->s, fr->reps);
		printf("    %-15s %.3f s (%s), %llu/%llu sampled homes missing it", PR[i].name, ps,
		    fp->cells ? "every home written" : "the post's insert: read on demand",
		    (unsigned long long)fp->missing, (unsigned long long)fp->checked);
		if (fp->mem_bytes > 0) {
			printf(", +%.0f B memory per timeline entry",
			    (double)fp->mem_bytes / (double)F);
		}
		printf("; %s/warble time %.2f\n", PR[i].name, ps / ws);
	}
	fflush(stdout);
	return 0;
}

/* ---- publish-to-visible ---- */

static int
visible_run(void)
{
	warble_client *pub, *rd;
	uint64_t       s = opt.seed + 5;
	char           text[256];
	int            done = 0;

	if (warble_open(&pub, lg_warble_gateway(&W), 10000) != WARBLE_OK) {
		return -1;
	}
	if (warble_open(&rd, lg_warble_gateway(&W), 10000) != WARBLE_OK) {
		warble_close(pub);
		return -1;
	}
	for (uint32_t i = 0; i < opt.visible * 4 && (uint32_t)done < opt.visible; i++) {
		uint32_t u = (uint32_t)(lg_rand(&s) % G.n);
		uint64_t nf = G.off[u + 1] - G.off[u], id = 0;
		if (nf == 0) {
			continue;
		}
		uint32_t f = G.fan[G.off[u] + lg_rand(&s) % nf];
		lg_post_text(text, sizeof(text), u, 500000000 + i);
		warble_set_token(pub, W.token[u]);
		warble_set_token(rd, W.token[f]);
		uint64_t t0 = lg_now_us();
		if (warble_post(pub, text, &id) != WARBLE_OK) {
			continue;
		}
		posts_published++;
		lg_model_add(&wmodel, u, 500000000 + i, id);
		lg_hist_add(&pub_ack, lg_now_us() - t0);
		uint64_t dl = t0 + 10000000;
		while (lg_now_us() < dl) {
			warble_posts_t *p = NULL;
			bool            seen = warble_home(rd, 0, 1, &p) == WARBLE_OK && p->n > 0 &&
			            p->posts[0].id >= id;
			warble_posts_free(p);
			if (seen) {
				lg_hist_add(&vis, lg_now_us() - t0);
				done++;
				break;
			}
			lg_sleep_us(200);
		}
		lg_progress("publish-to-visible", (uint64_t)done, opt.visible);
	}
	warble_close(pub);
	warble_close(rd);
	return done > 0 ? 0 : -1;
}

/* ---- follow-count sweep ---- */

static uint64_t sweep_posted; /* the sweep's posts Warble has published (their ids known) */
static bool     sweep_failed; /* a publish of the sweep failed: its threads stop */

/*
 * sweep_peer_main publishes the sweep's posts in peer arg, with Warble's
 * ids, following Warble's publishes as their ids come (a thread per peer,
 * each on its own connection, so that setup takes the slowest system's
 * time rather than the sum).
 */
static void *
sweep_peer_main(void *arg)
{
	lg_peer *p = arg;
	uint64_t total = sweep_na * opt.sweep_posts, us, cells;
	char     name[32], text[256];

	for (uint64_t q = 0; q < total; q++) {
		while (__atomic_load_n(&sweep_posted, __ATOMIC_ACQUIRE) <= q) {
			if (__atomic_load_n(&sweep_failed, __ATOMIC_ACQUIRE)) {
				return NULL;
			}
			lg_sleep_us(200);
		}
		uint64_t a = q % sweep_na, r = q / sweep_na;
		lg_post_text(text, sizeof(text), (uint32_t)(G.n + a), 5000000 + r);
		snprintf(name, sizeof(name), "sa%llu", (unsigned long long)a);
		if (lg_peer_publish(p, sweep_author[a], name, sweep_id[q], text, &us, &cells) !=
		    0) {
			fprintf(stderr, "warble-load: %s: a sweep publish failed\n", p->name);
			__atomic_store_n(&sweep_failed, true, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	return NULL;
}

/*
 * setup_sweep gives each system opt.nsweep readers, user numbers G.n + k,
 * where reader k follows sweep authors 0 .. opt.sweep[k] - 1, and then has
 * every author publish opt.sweep_posts posts (round by round, so the
 * newest posts come from every author), the same ids and text everywhere.
 */
static int
setup_sweep(void)
{
	uint64_t  na = 0, t0 = lg_now_us(), id = 0;
	uint64_t *author, fans[LG_MAX_SWEEP];
	char      name[32], text[256];
	size_t    nu = (size_t)G.n + (size_t)opt.nsweep;
	void     *g = realloc(W.guid, nu * sizeof(*W.guid)), *t;

	if (g == NULL) {
		return -1;
	}
	W.guid = g;
	if ((t = realloc(W.token, nu * sizeof(*W.token))) == NULL) {
		return -1;
	}
	W.token = t;
	for (int k = 0; k < opt.nsweep; k++) {
		na = opt.sweep[k] > na ? opt.sweep[k] : na;
	}
	if ((author = malloc(na * sizeof(*author))) == NULL ||
	    (sweep_id = calloc(na * opt.sweep_posts, sizeof(*sweep_id))) == NULL ||
	    lg_warble_register(&W, "sa", na, author) != 0 ||
	    lg_warble_register(&W, "sr", (uint64_t)opt.nsweep, W.guid + G.n) != 0) {
		goto fail;
	}
	for (int i = 0; i < LG_PEERS; i++) {
		if (PR[i].on &&
		    (lg_peer_add_users(&PR[i], author, "sa", na) != 0 ||
		        lg_peer_add_users(&PR[i], W.guid + G.n, "sr", (uint64_t)opt.nsweep) != 0)) {
			goto fail;
		}
	}
	for (int k = 0; k < opt.nsweep; k++) {
		snprintf(name, sizeof(name), "sr%d", k);
		if (lg_warble_login(&W, name, W.token[G.n + k], sizeof(W.token[0])) != 0) {
			goto fail;
		}
	}
	for (uint64_t a = 0; a < na; a++) {
		size_t nf = 0;
		for (int k = 0; k < opt.nsweep; k++) {
			if (opt.sweep[k] > a) {
				fans[nf++] = W.guid[G.n + k];
			}
		}
		if (lg_warble_follow_many(&W, author[a], fans, nf) != 0) {
			goto fail;
		}
		for (int i = 0; i < LG_PEERS; i++) {
			if (PR[i].on && lg_peer_add_fans(&PR[i], author[a], fans, nf) != 0) {
				goto fail;
			}
		}
		lg_progress("sweep follows", a + 1, na);
	}
	sweep_author = author;
	sweep_na = na;
	sweep_posted = 0;
	sweep_failed = false;
	pthread_t th[LG_PEERS];
	bool      started[LG_PEERS] = { false };
	int       rc = 0;
	for (int i = 0; i < LG_PEERS; i++) {
		started[i] = PR[i].on && pthread_create(&th[i], NULL, sweep_peer_main, &PR[i]) == 0;
		rc |= PR[i].on && !started[i] ? -1 : 0;
	}
	for (uint32_t r = 0; rc == 0 && r < opt.sweep_posts; r++) {
		for (uint64_t a = 0; rc == 0 && a < na; a++) {
			lg_post_text(text, sizeof(text), (uint32_t)(G.n + a), 5000000 + r);
			rc = lg_warble_post_as(&W, author[a], text, &id);
			sweep_id[r * na + a] = id;
			__atomic_store_n(&sweep_posted, r * na + a + 1, __ATOMIC_RELEASE);
		}
		lg_progress("sweep posts", r + 1, opt.sweep_posts);
	}
	if (rc != 0) {
		__atomic_store_n(&sweep_failed, true, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < LG_PEERS; i++) {
		if (started[i]) {
			pthread_join(th[i], NULL);
		}
	}
	if (rc != 0 || sweep_failed) {
		sweep_author = NULL;
		goto fail;
	}
	/* up to content's newest event: posts_published leaves out the mix's posts */
	for (int i = 0; i < LG_PEERS; i++) {
		if (PR[i].on && lg_peer_refresh(&PR[i]) != 0) {
			return -1;
		}
	}
	if (!lg_warble_wait_inbox(&W, lg_warble_content_last(&W), 600)) {
		return -1;
	}
	printf("sweep: %llu authors with %u posts each, readers following", (unsigned long long)na,
	    opt.sweep_posts);
	for (int k = 0; k < opt.nsweep; k++) {
		printf(" %llu", (unsigned long long)opt.sweep[k]);
	}
	printf(" of them; setup %.1f s in every system\n", (lg_now_us() - t0) / 1e6);
	return 0;
fail:
	free(author);
	return -1;
}

/* sweep_newest_first orders indexes of sweep_id by their ids, newest first. */
static int
sweep_newest_first(const void *a, const void *b)
{
	uint64_t x = sweep_id[*(const uint64_t *)a], y = sweep_id[*(const uint64_t *)b];

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * sweep_check reads sweep reader k's home once through b and compares it
 * with what it must show: the newest LG_PAGE posts (by id) of the authors
 * it follows.
 */
static int
sweep_check(const lg_backend *b, int k)
{
	lg_page  *got = malloc(sizeof(*got)), *want = malloc(sizeof(*want));
	lg_conn  *c = b->conn_open(b->ctx);
	uint64_t  F = opt.sweep[k] < sweep_na ? opt.sweep[k] : sweep_na, np = 0;
	uint64_t *ix = malloc(F * opt.sweep_posts * sizeof(*ix) + 1);
	char      name[LG_NAME_MAX], text[LG_TEXT_MAX], what[96];
	size_t    n = 0;
	int       rc = -1;

	if (got == NULL || want == NULL || c == NULL || ix == NULL) {
		goto out;
	}
	for (uint32_t r = 0; r < opt.sweep_posts; r++) {
		for (uint64_t a = 0; a < F; a++) {
			ix[np++] = r * sweep_na + a;
		}
	}
	qsort(ix, np, sizeof(*ix), sweep_newest_first);
	want->n = 0;
	for (uint64_t i = 0; i < np && want->n < LG_PAGE; i++) {
		uint64_t a = ix[i] % sweep_na, r = ix[i] / sweep_na;
		int      nl = snprintf(name, sizeof(name), "sa%llu", (unsigned long long)a);
		lg_post_text(text, sizeof(text), (uint32_t)(G.n + a), 5000000 + r);
		lg_page_put(want, want->n, sweep_id[ix[i]], sweep_author[a], name, (size_t)nl, text,
		    strlen(text));
	}
	got->n = 0;
	snprintf(what, sizeof(what), "%s: home of sweep reader %d (%llu follows)", b->name, k,
	    (unsigned long long)opt.sweep[k]);
	rc = b->home(c, G.n + (uint32_t)k, got, &n) == 0 && n == got->n ? 0 : -1;
	rc = rc == 0 ? lg_page_diff(got, want, what) : rc;
out:
	if (c != NULL) {
		b->conn_close(c);
	}
	free(ix);
	free(got);
	free(want);
	return rc;
}

/* run_sweep reads each sweep reader's home, closed loop, in each system in turn. */
static int
run_sweep(lg_sweep_point *pt)
{
	lg_backend b;
	lg_hist   *h = malloc(sizeof(*h));
	int        rc = 0;

	if (h == NULL) {
		return -1;
	}
	for (int k = 0; k < opt.nsweep; k++) {
		memset(&pt[k], 0, sizeof(pt[k]));
		pt[k].follows = opt.sweep[k];
		for (int sys = 0; sys < LG_MAX_SYSTEMS; sys++) {
			if (sys == 0) {
				lg_warble_backend(&W, &b);
			} else if (PR[sys - 1].on) {
				lg_peer_backend(&PR[sys - 1], W.guid, &b);
			} else {
				continue;
			}
			if (sweep_check(&b, k) != 0 ||
			    lg_homes_run(&b, G.n + (uint32_t)k, 1, 20, opt.threads, opt.home_secs,
			        h, &pt[k].per_s[sys]) != 0) {
				fprintf(stderr,
				    "warble-load: %s: a sweep home read failed, was short or "
				    "wrong\n",
				    b.name);
				rc = -1;
			}
			pt[k].p50_ms[sys] = lg_hist_q(h, 0.50) / 1e3;
			pt[k].p99_ms[sys] = lg_hist_q(h, 0.99) / 1e3;
		}
		printf("home, reader following %5llu:", (unsigned long long)pt[k].follows);
		for (int sys = 0; sys < LG_MAX_SYSTEMS; sys++) {
			if (pt[k].per_s[sys] > 0) {
				printf("%s %s p50 %.2f p99 %.2f ms %6.0f/s", sys ? " |" : "",
				    sys ? PR[sys - 1].name : "warble", pt[k].p50_ms[sys],
				    pt[k].p99_ms[sys], pt[k].per_s[sys]);
			}
		}
		printf("\n");
		fflush(stdout);
	}
	free(h);
	return rc;
}

/* inbox_visible reads the inbox's histogram of posts' commit to visible (lg_servers.visible of
 * Warble's runs). */
static bool
inbox_visible(lg_vis *v)
{
	return lg_warble_visible(&W, v);
}

/* settle waits until the inbox has applied every event so far (lg_servers.settle of Warble's runs). */
static bool
settle(void)
{
	return lg_warble_wait_inbox(&W, lg_warble_content_last(&W), 600);
}

/*
 * check_pages compares opt.check graph users' home and user timeline pages
 * in b's system with model (after when); 0 if each matched.
 */
static int
check_pages(const char *when, const lg_backend *b, const lg_model *model, const uint64_t *uids)
{
	lg_check ck;

	if (opt.check == 0) {
		return 0;
	}
	if (lg_model_check(model, &G, uids, b, opt.check, opt.seed + 9, &ck) != 0) {
		fprintf(stderr,
		    "warble-load: check after %s: %s: %llu of %llu pages differ from the %llu "
		    "posts "
		    "it acknowledged\n",
		    when, b->name, (unsigned long long)ck.wrong, (unsigned long long)ck.pages,
		    (unsigned long long)ck.posts);
		return -1;
	}
	printf("check after %s: %s: %llu home and user timeline pages match the %llu posts it "
	       "acknowledged\n",
	    when, b->name, (unsigned long long)ck.pages, (unsigned long long)ck.posts);
	fflush(stdout);
	return 0;
}

/*
 * run_one runs the mix (closed loop, then paced if --moderate) on the
 * one-process warble, set up afresh with the same graph and seed posts
 * (no celebrities: the mix reads and writes as graph users only).
 */
static int
run_one(const char *const *env, lg_mix *m, lg_mix *mod)
{
	lg_backend b;
	lg_mix     seed;
	lg_model   model;
	uint64_t   closed = opt.rate;
	int        rc = -1;

	lg_model_init(&model);
	if (lg_warble_start(&W, env, WBT_ONE) != 0 || setup_warble(false) != 0) {
		goto out;
	}
	lg_warble_backend(&W, &b);
	b.name = "warble_one";
	if (run_jobs(&b, seed_main, 0, 0, &seed, NULL, &model) != 0 ||
	    !lg_warble_wait_inbox(&W, seed.ops, 600)) {
		goto out;
	}
	lg_servers one = { 1, { W.cl.gateway->pid }, { "warble" }, false, settle,
		.visible = inbox_visible };
	printf("mix on the one-process warble (every service in one process):\n");
	if (run_jobs(&b, mix_main, opt.duration * 1000ull, 0, m, &one, &model) != 0) {
		goto out;
	}
	lg_mix_print("warble_one", m);
	if (check_pages("the mix", &b, &model, W.guid) != 0) {
		goto out;
	}
	if (opt.moderate > 0) {
		opt.rate = opt.moderate;
		rc = run_jobs(&b, mix_main, opt.duration * 1000ull, 0, mod, &one, NULL);
		opt.rate = closed;
		lg_mix_print("warble_one", mod);
		if (rc != 0) {
			goto out;
		}
	}
	rc = 0;
out:
	lg_warble_stop(&W);
	lg_model_free(&model);
	return rc;
}

/* The running sums of one way of reading homes in run_http. */
typedef struct lg_http_sum {
	lg_hist  h;                    /* SDK and HTTP/JSON */
	double   secs, p50_ms, p99_ms; /* wrk: the worst round's quantiles */
	uint64_t n, gw_us, all_us, client_us;
	bool     skipped;
} lg_http_sum;

/* run_http_round reads homes one way (k) for 1 s and adds it to sum; -1 if a read failed. */
static int
run_http_round(int k, const lg_servers *srv, lg_http_sum *sum, lg_hist *h)
{
	uint64_t      cpu0[LG_MAX_SERVERS], self0 = lg_self_cpu_us(), n = 0, client = 0;
	double        per_s = 0;
	lg_backend    b;
	lg_wrk_result wr;
	int           rc = 0, wrc;

	for (int i = 0; i < srv->n; i++) {
		cpu0[i] = lg_servers_cpu(srv, i);
	}
	if (k < 2) {
		if (k == 0) {
			lg_warble_backend(&W, &b);
		} else {
			lg_http_backend(&W, &b);
		}
		if (lg_homes_run(&b, 0, G.n, 1, opt.http_conns, 1, h, &per_s) != 0) {
			fprintf(
			    stderr, "warble-load: %s: a home read failed or was empty\n", b.name);
			rc = -1;
		}
		lg_hist_merge(&sum->h, h);
		n = h->n;
		client = lg_self_cpu_us() - self0;
	} else if ((wrc = lg_wrk_home(&W, G.n, opt.http_conns, 1, &wr)) == 0) {
		per_s = wr.per_s;
		sum->p50_ms = wr.p50_ms > sum->p50_ms ? wr.p50_ms : sum->p50_ms;
		sum->p99_ms = wr.p99_ms > sum->p99_ms ? wr.p99_ms : sum->p99_ms;
		n = wr.requests;
		client = wr.client_cpu_us;
		if (wr.bad > 0) {
			fprintf(stderr, "warble-load: wrk: %llu failed home reads\n",
			    (unsigned long long)wr.bad);
			rc = -1;
		}
	} else {
		sum->skipped = wrc == 1; /* wrk is not installed */
		return wrc == 1 ? 0 : -1;
	}
	for (int i = 0; i < srv->n; i++) {
		uint64_t c1 = lg_servers_cpu(srv, i);
		uint64_t d = c1 > cpu0[i] ? c1 - cpu0[i] : 0;
		sum->all_us += d;
		sum->gw_us += i == 0 ? d : 0; /* the gateway comes first */
	}
	sum->n += n;
	sum->secs += per_s > 0 ? (double)n / per_s : 0;
	sum->client_us += client;
	return rc;
}

/*
 * run_http reads random graph users' homes on opt.http_conns connections
 * through the SDK, over HTTP with this client (which parses the JSON) and
 * with wrk (which does not), with the CPU each read cost: 1 s each in
 * turn, opt.home_secs times, so that all three see the machine alike.
 */
static int
run_http(lg_http_cmp *hc, const lg_servers *srv)
{
	static const char *names[LG_HTTP_RUNS] = { "msgpack SDK", "HTTP/JSON", "HTTP wrk" };
	lg_http_sum       *sum = calloc(LG_HTTP_RUNS, sizeof(*sum));
	lg_hist           *round = malloc(sizeof(*round)); /* one turn's reads */
	int                rc = 0;

	if (sum == NULL || round == NULL) {
		free(sum);
		free(round);
		return -1;
	}
	for (uint32_t r = 0; r < opt.home_secs; r++) {
		for (int k = 0; k < LG_HTTP_RUNS; k++) {
			if (!sum[k].skipped) {
				rc |= run_http_round(k, srv, &sum[k], round);
			}
		}
	}
	for (int k = 0; k < LG_HTTP_RUNS; k++) {
		if (sum[k].skipped) {
			printf(
			    "home over HTTP with wrk: skipped (wrk is not installed: tests/deps.sh "
			    "bench installs it)\n");
			continue;
		}
		hc->per_s[k] = sum[k].secs > 0 ? sum[k].n / sum[k].secs : 0;
		hc->p50_ms[k] = k < 2 ? lg_hist_q(&sum[k].h, 0.50) / 1e3 : sum[k].p50_ms;
		hc->p99_ms[k] = k < 2 ? lg_hist_q(&sum[k].h, 0.99) / 1e3 : sum[k].p99_ms;
		if (sum[k].n > 0) {
			hc->gw_cpu_us[k] = (double)sum[k].gw_us / (double)sum[k].n;
			hc->srv_cpu_us[k] = (double)sum[k].all_us / (double)sum[k].n;
			hc->client_cpu_us[k] = (double)sum[k].client_us / (double)sum[k].n;
		}
		printf("home, %u connections, %-11s %6.0f/s p50 %.2f p99 %.2f ms; CPU per read: "
		       "gateway %.1f, servers %.1f, client %.1f us",
		    opt.http_conns, names[k], hc->per_s[k], hc->p50_ms[k], hc->p99_ms[k],
		    hc->gw_cpu_us[k], hc->srv_cpu_us[k], hc->client_cpu_us[k]);
		if (k > 0 && hc->per_s[0] > 0) {
			printf("; req/s %.2fx the SDK", hc->per_s[k] / hc->per_s[0]);
		}
		printf("\n");
	}
	fflush(stdout);
	free(round);
	free(sum);
	return rc;
}

/* ---- media ---- */

/*
 * run_media uploads, publishes and downloads opt.media_users x
 * opt.media_per images in Warble (graph users 0 .. U-1, their sessions),
 * then stores and reads the same bytes in PostgreSQL; the content
 * folder's growth while running is kept (the bytes at rest are measured
 * once the cluster has stopped: lg_disk_media).
 */
static int
run_media(const lg_servers *wsrv, const lg_servers *psrv, lg_media_result *wr, lg_media_result *pr)
{
	lg_media_set     set;
	lg_media_backend b;
	char             path[4096];
	uint64_t         t0 = lg_now_us(), du0;
	int              rc = 0;

	if (opt.media_users > G.n) {
		fprintf(stderr, "warble-load: --media has more users than the graph (%u)\n", G.n);
		return -1;
	}
	if (lg_media_make(&set, opt.media_users, opt.media_per, opt.seed) != 0) {
		return -1;
	}
	printf("media: %u users x %u images (PNGs of about 64, 256 and 900 KiB), %.1f MiB in all, "
	       "made in %.1f s; %u connections\n",
	    set.users, set.per_user, set.bytes / 1048576.0, (lg_now_us() - t0) / 1e6, opt.threads);
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/content", W.cl.data);
	du0 = W.running ? 0 : lg_du(path); /* a running deployment's folders are out of reach */
	lg_warble_media_backend(&W, &b);
	if (lg_media_run(&b, &set, opt.threads, wsrv, wr) != 0) {
		rc = -1;
	}
	uint64_t du1 = W.running ? 0 : lg_du(path);
	wr->live_growth_bytes = du1 > du0 ? du1 - du0 : 0;
	printf("media (warble): upload %.2f s, publish %.2f s (%u posts), download %.2f s\n",
	    wr->up_s, wr->publish_s, set.users * ((set.per_user + 3) / 4), wr->down_s);
	lg_pg *P = PR[LG_PEER_PG].on ? PR[LG_PEER_PG].p : NULL;
	if (rc == 0 && P != NULL) {
		lg_pg_media_backend(P, W.guid, &b);
		if (lg_media_run(&b, &set, opt.threads, psrv, pr) != 0) {
			rc = -1;
		}
		pr->disk_bytes = lg_pg_media_bytes(P);
		printf("media (postgres): insert %.2f s, select %.2f s\n", pr->up_s, pr->down_s);
	}
	fflush(stdout);
	lg_media_free(&set);
	media_secs += (lg_now_us() - t0) / 1e6;
	return rc;
}

/* print_media prints the media phase's table (Warble's bytes on disk if disk). */
static void
print_media(const lg_media_result *wr, const lg_media_result *pr, bool disk)
{
	printf("media      n   up MiB/s  down MiB/s  up p50/p99 ms     down p50/p99 ms   "
	       "disk B/image raw B/image stored B/i preview B/i disk/raw  server CPU ms/MiB "
	       "up/down\n");
	bool P = PR[LG_PEER_PG].on;

	lg_media_print("warble", wr);
	if (P) {
		lg_media_print("postgres", pr);
	}
	if (!disk) {
		printf("warble on disk: not measured (a running deployment's stores are out of "
		       "reach)\n");
	} else {
		printf("warble on disk: blob files and the image families' tables, flushed, as the "
		       "run left them (uploads attached since still in blob files until a "
		       "compaction drops them); after a full compaction %.0f B/image (%.3fx raw); "
		       "the content folder grew %.0f B/image while running (WAL included)\n",
		    wr->images ? (double)wr->disk_compacted_bytes / wr->images : 0.0,
		    wr->bytes ? (double)wr->disk_compacted_bytes / wr->bytes : 0.0,
		    wr->images ? (double)wr->live_growth_bytes / wr->images : 0.0);
	}
	if (P) {
		printf("postgres on disk: pg_total_relation_size('media') (heap, TOAST, index); "
		       "ratios warble/postgres: upload MiB/s %.2f, download MiB/s %.2f\n",
		    pr->up_s > 0 && wr->up_s > 0 ? pr->up_s / wr->up_s : 0.0,
		    pr->down_s > 0 && wr->down_s > 0 ? pr->down_s / wr->down_s : 0.0);
	}
	printf("stored B/i: what the system keeps of each image (warble: the image decoded and "
	       "written again, metadata stripped); preview B/i: its preview (warble: a WebP of at "
	       "most 640 px a side); server CPU per MiB of images uploaded (raw) and downloaded "
	       "(stored), over every server process\n");
	printf("media phase: %.1f s in all (images made, both systems, the disk measured)\n",
	    media_secs);
	fflush(stdout);
}

/* ---- ratios against the best peer ---- */

/* A figure of a mixed run, and whether more of it is better. */
typedef struct lg_figure {
	const char *name;
	bool        higher; /* higher is better */
	double (*of)(const lg_mix *m);
} lg_figure;

static double
fig_ops(const lg_mix *m)
{
	return m->secs > 0 ? m->ops / m->secs : 0.0;
}

static double
fig_home_s(const lg_mix *m)
{
	return m->secs > 0 ? m->home.n / m->secs : 0.0;
}

static double
fig_p50(const lg_mix *m)
{
	return lg_hist_q(&m->home, 0.50) / 1e3;
}

static double
fig_p99(const lg_mix *m)
{
	return lg_hist_q(&m->home, 0.99) / 1e3;
}

static double
fig_cpu(const lg_mix *m)
{
	return lg_mix_cpu_per_op(m, -1);
}

static const lg_figure figures[] = {
	{ "mix_req_per_s", true, fig_ops },
	{ "home_req_per_s", true, fig_home_s },
	{ "home_p50_ms", false, fig_p50 },
	{ "home_p99_ms", false, fig_p99 },
	{ "server_cpu_us_per_req", false, fig_cpu },
};

#define LG_FIGURES (int)(sizeof(figures) / sizeof(figures[0]))

/* best_peer returns the peer best at figure f in the closed-loop mix (-1 if none ran). */
static int
best_peer(const lg_figure *f)
{
	int best = -1;

	for (int i = 0; i < LG_PEERS; i++) {
		if (!PR[i].on || PR[i].m.ops == 0) {
			continue;
		}
		double v = f->of(&PR[i].m), b = best < 0 ? 0 : f->of(&PR[best].m);
		if (best < 0 || (f->higher ? v > b : v < b)) {
			best = i;
		}
	}
	return best;
}

/* print_ratios prints what/best peer for each figure of the mix m. */
static void
print_ratios(const char *what, const lg_mix *m)
{
	if (!lg_peers_any(PR)) {
		return;
	}
	printf("ratios %s/best peer:", what);
	for (int k = 0; k < LG_FIGURES; k++) {
		int b = best_peer(&figures[k]);
		if (b >= 0) {
			double w = figures[k].of(m), p = figures[k].of(&PR[b].m);
			printf("%s %s %.2f (%s %.2f vs %s %.2f)", k ? "," : "", figures[k].name,
			    p > 0 ? w / p : 0.0, what, w, PR[b].name, p);
		}
	}
	printf("; req/s: higher is better, ms and CPU: lower is better\n");
	fflush(stdout);
}

/* ratios_json is report.json's ratios: per figure, the best peer and Warble's ratios to it. */
static json_t *
ratios_json(const lg_mix *wm, const lg_mix *om)
{
	json_t *o = json_object();

	for (int k = 0; k < LG_FIGURES; k++) {
		int b = best_peer(&figures[k]);
		if (b < 0) {
			continue;
		}
		double p = figures[k].of(&PR[b].m);
		json_object_set_new(o, figures[k].name,
		    json_pack("{s:s, s:f, s:b, s:f, s:o*}", "best_peer", PR[b].name,
		        "best_peer_value", p, "higher_is_better", figures[k].higher, "warble",
		        p > 0 ? figures[k].of(wm) / p : 0.0, "warble_one",
		        om != NULL ? json_real(p > 0 ? figures[k].of(om) / p : 0.0) : NULL));
	}
	return o;
}

/* store_disk_print prints one measured store, family by family, per counted cell. */
static void
store_disk_print(const char *store, const char *per, const lg_disk_store *d)
{
	double n = d->cells ? (double)d->cells : 1.0;

	printf("%s on disk after compaction: %llu %ss, %llu B of tables = %.2f B/%s (whole "
	       "folder %.2f B/%s)\n",
	    store, (unsigned long long)d->cells, per, (unsigned long long)d->sst_bytes,
	    d->sst_bytes / n, per, d->folder_bytes / n, per);
	printf("  by family, B/%s:", per);
	for (int f = 0; f < d->nfams; f++) {
		printf(" %s %.2f", d->name[f], d->bytes[f] / n);
	}
	printf("\n");
}

/* store_disk_run measures the stopped relation and content stores under data into d[0], d[1]. */
static int
store_disk_run(const char *data, lg_disk_store d[2])
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/relation", data);
	if (lg_disk_relation(path, &d[0]) != 0) {
		return -1;
	}
	store_disk_print("relation", "edge", &d[0]);
	snprintf(path, sizeof(path), "%s/content", data);
	if (lg_disk_content(path, &d[1]) != 0) {
		return -1;
	}
	store_disk_print("content", "post", &d[1]);
	printf("  post text: %.1f B a post on average\n",
	    d[1].cells ? (double)d[1].value_bytes / d[1].cells : 0.0);
	return 0;
}

/* store_disk_json is one measured store for report.json. */
static json_t *
store_disk_json(const lg_disk_store *d)
{
	json_t *fams = json_object();

	for (int f = 0; f < d->nfams; f++) {
		json_object_set_new(fams, d->name[f], json_integer((json_int_t)d->bytes[f]));
	}
	return json_pack("{s:I, s:I, s:I, s:I, s:f, s:o}", "cells", (json_int_t)d->cells,
	    "value_bytes", (json_int_t)d->value_bytes, "sst_bytes", (json_int_t)d->sst_bytes,
	    "folder_bytes", (json_int_t)d->folder_bytes, "bytes_per_cell",
	    d->cells ? (double)d->sst_bytes / d->cells : 0.0, "families", fams);
}

int
main(int argc, char **argv)
{
	lg_backend     b;
	lg_mix         wm = { 0 }, seed = { 0 };
	lg_mix         om = { 0 }, omod = { 0 }; /* the one-process warble */
	lg_fan         fr[LG_MAX_CELEBS];
	lg_disk        disk = { 0 };
	lg_disk_store  sdisk[2] = { { 0 } }; /* relation, content (--store-disk) */
	lg_sweep_point sweep[LG_MAX_SWEEP];
	lg_http_cmp    hc = { 0 };
	int            cores, rc = 1;
	long           mem;
	char           kernel[256], cpu[256], date[64], path[4096], inmax[64];
	long           rss[5] = { 0 };
	time_t         now = time(NULL);
	json_t        *deployment = NULL; /* a running deployment's shape */

	if (parse_args(argc, argv) != 0) {
		return 2;
	}
	/* a watchdog: whatever hangs, the run ends (SIGALRM kills the process,
	 * and the daemons follow it through PR_SET_PDEATHSIG) */
	alarm(opt.timeout);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	lg_machine(&cores, &mem, kernel, sizeof(kernel), cpu, sizeof(cpu));
	mkdir(opt.out, 0755);
	if ((opt.graph ? lg_graph_load(&G, opt.graph)
	               : lg_graph_synth(&G, opt.synth_n, opt.degree, opt.seed)) != 0) {
		return 1;
	}
	printf("warble-load: %s, %d cores, %ld MiB, %s\n", date, cores, mem, kernel);
	printf("graph %s: %u users, %llu follows; celebrities:", G.name, G.n,
	    (unsigned long long)G.follows);
	for (int c = 0; c < opt.ncelebs; c++) {
		printf(" %llu", (unsigned long long)opt.fanout[c]);
	}
	printf(" followers\n");
	fflush(stdout);

	/* Warble runs with its durable defaults (WAL on every write, no fsync:
	 * WARBLE_SYNC=0); follows come before any post, so backfill has nothing
	 * to copy and is switched off to spare a content call per follow.  The
	 * fan-out rows measure fan-out on write, so no account is kept in an
	 * outbox however many followers it has (WARBLE_FANOUT_LIMIT=0). */
	snprintf(inmax, sizeof(inmax), "WARBLE_INBOX_MAX=%u", opt.inbox_max);
	const char *env[] = { inmax, "WARBLE_BACKFILL=0", "WARBLE_MEDIA_RATE=0",
		"WARBLE_FANOUT_LIMIT=0", NULL };
	if (opt.gateways != NULL) {
		if (lg_warble_attach(&W, opt.gateways, opt.http_url) != 0) {
			goto out;
		}
		lg_warble_describe(&W, stdout);
		fflush(stdout);
		deployment = json_pack("{s:i, s:i, s:i, s:i, s:i}", "gateways", (int)W.ngateways,
		    "relation_shards", (int)rt_shards_count(W.rel), "content_shards",
		    (int)rt_shards_count(W.content), "inbox_shards", (int)rt_shards_count(W.inbox),
		    "processes", W.nprocs);
	} else if (lg_warble_start(&W, env, WBT_FIVE) != 0) {
		goto out;
	}
	if (lg_peers_open(PR, opt.peers, opt.redis, opt.pg, opt.inbox_max) != 0) {
		goto out;
	}
	uint64_t t0 = lg_now_us();
	if (setup_warble(true) != 0) {
		goto out;
	}
	double setup_w = (lg_now_us() - t0) / 1e6;
	printf("setup: warble %.1f s", setup_w);
	for (int i = 0; i < LG_PEERS; i++) {
		if (PR[i].on && setup_peer(&PR[i]) != 0) {
			fprintf(stderr, "warble-load: %s: setup failed\n", PR[i].name);
			goto out;
		}
		if (PR[i].on) {
			printf(", %s %.1f s", PR[i].name, PR[i].setup_s);
		}
	}
	printf("\n");

	/* seed posts, the same in each system */
	lg_warble_backend(&W, &b);
	if (run_jobs(&b, seed_main, 0, 0, &seed, NULL, &wmodel) != 0) {
		goto out;
	}
	posts_published += seed.ops;
	lg_hist_merge(&pub_ack, &seed.post);
	if (!lg_warble_wait_inbox(&W, posts_published, 600) ||
	    check_pages("the seed posts", &b, &wmodel, W.guid) != 0) {
		goto out;
	}
	for (int i = 0; i < LG_PEERS; i++) {
		lg_mix tmp = { 0 };
		if (!PR[i].on) {
			continue;
		}
		lg_peer_backend(&PR[i], W.guid, &b);
		if (run_jobs(&b, seed_main, 0, 0, &tmp, NULL, &PR[i].model) != 0 ||
		    tmp.errors > 0 || lg_peer_refresh(&PR[i]) != 0 ||
		    check_pages("the seed posts", &b, &PR[i].model, W.guid) != 0) {
			goto out;
		}
	}

	for (int c = 0; c < opt.ncelebs; c++) {
		if (fanout_one(c, &fr[c]) != 0) {
			goto out;
		}
	}
	if (opt.visible > 0 && visible_run() != 0) {
		goto out;
	}
	printf("publish-to-visible (warble): p50 %.2f ms, p99 %.2f ms over %llu posts\n",
	    lg_hist_q(&vis, 0.5) / 1e3, lg_hist_q(&vis, 0.99) / 1e3, (unsigned long long)vis.n);

	lg_servers wsrv = { 5, { 0 }, { "gateway", "user", "relation", "content", "inbox" }, false,
		settle, .visible = inbox_visible };
	if (W.running) { /* the processes' own counters, LG_ROLE_GATEWAY .. LG_ROLE_INBOX */
		wsrv.cpu_us = lg_warble_role_cpu;
		wsrv.cpu_ctx = &W;
	} else {
		wbt_daemon *wd[5] = { W.cl.gateway, W.cl.user, W.cl.relation, W.cl.content,
			W.cl.inbox };
		for (int i = 0; i < 5; i++) {
			wsrv.pid[i] = wd[i]->pid;
		}
	}
	lg_mix  wmod = { 0 };
	lg_turn turns[LG_MAX_SYSTEMS] = { { "warble", .srv = &wsrv, .m = &wm, .paced = &wmod,
	    .model = &wmodel } };
	int     nturns = 1;
	lg_warble_backend(&W, &turns[0].b);
	for (int i = 0; i < LG_PEERS; i++) {
		if (PR[i].on) {
			turns[nturns] = (lg_turn) { PR[i].name, .srv = &PR[i].srv, .m = &PR[i].m,
				.paced = &PR[i].paced, .model = &PR[i].model };
			lg_peer_backend(&PR[i], W.guid, &turns[nturns++].b);
		}
	}
	if (run_mix(turns, nturns, false) != 0) {
		goto out;
	}
	for (int i = 0; i < nturns; i++) {
		if (check_pages("the mix", &turns[i].b, turns[i].model, W.guid) != 0) {
			goto out;
		}
	}
	lg_hist_merge(&pub_ack, &wm.post);
	if (opt.moderate > 0) {
		uint64_t closed = opt.rate;
		opt.rate = opt.moderate;
		printf("mix paced at %llu req/s in total (moderate load), latency from each "
		       "request's intended start:\n",
		    (unsigned long long)opt.moderate);
		if (run_mix(turns, nturns, true) != 0) {
			goto out;
		}
		lg_hist_merge(&pub_ack, &wmod.post);
		opt.rate = closed;
	}
	if (opt.nsweep > 0 && (setup_sweep() != 0 || run_sweep(sweep) != 0)) {
		goto out;
	}
	if (opt.http_conns > 0 && run_http(&hc, &wsrv) != 0) {
		goto out;
	}
	if (opt.media_users > 0 && run_media(&wsrv, &PR[LG_PEER_PG].srv, &wmedia, &pmedia) != 0) {
		goto out;
	}
	printf("publish ack (warble, all posts): p50 %.2f ms, p99 %.2f ms over %llu posts\n",
	    lg_hist_q(&pub_ack, 0.5) / 1e3, lg_hist_q(&pub_ack, 0.99) / 1e3,
	    (unsigned long long)pub_ack.n);

	static const char *dn[5] = { "user", "relation", "content", "inbox", "gateway" };
	if (W.running) { /* its processes' resident memory now, each role's summed */
		static const int role[5] = { LG_ROLE_USER, LG_ROLE_RELATION, LG_ROLE_CONTENT,
			LG_ROLE_INBOX, LG_ROLE_GATEWAY };
		printf("RSS now (every process of a role):");
		for (int i = 0; i < 5; i++) {
			rss[i] = (long)(lg_warble_role_rss(&W, role[i]) / 1024);
			printf(" %s %.1f MiB", dn[i], rss[i] / 1024.0);
		}
	} else {
		wbt_daemon *d[5] = { W.cl.user, W.cl.relation, W.cl.content, W.cl.inbox,
			W.cl.gateway };
		printf("peak RSS:");
		for (int i = 0; i < 5; i++) {
			rss[i] = lg_rss_kb(d[i]->pid, "VmHWM:");
			printf(" %s %.1f MiB", dn[i], rss[i] / 1024.0);
		}
	}
	printf("\n");
	bool running = W.running; /* the stores are out of reach */
	lg_warble_stop(&W);
	snprintf(path, sizeof(path), "%s/inbox", W.cl.data);
	if (!running && lg_disk_inbox(path, opt.inbox_max, 2592000000ull, &disk) == 0) {
		printf(
		    "inbox on disk after compaction: %llu entries, %llu B of tables = %.2f B/entry "
		    "(whole folder %.2f B/entry)\n",
		    (unsigned long long)disk.cells, (unsigned long long)disk.sst_bytes,
		    disk.cells ? (double)disk.sst_bytes / disk.cells : 0.0,
		    disk.cells ? (double)disk.folder_after_bytes / disk.cells : 0.0);
	}
	if (opt.store_disk && !running && store_disk_run(W.cl.data, sdisk) != 0) {
		goto out;
	}
	if (opt.media_users > 0) {
		uint64_t d0 = lg_now_us();
		snprintf(path, sizeof(path), "%s/content", W.cl.data);
		if (!running &&
		    lg_disk_media(path, &wmedia.disk_bytes, &wmedia.disk_compacted_bytes) != 0) {
			goto out;
		}
		media_secs += (lg_now_us() - d0) / 1e6;
		print_media(&wmedia, &pmedia, !running);
	}
	if (opt.one && run_one(env, &om, &omod) != 0) {
		goto out;
	}
	print_ratios("warble", &wm);
	if (opt.one) {
		print_ratios("warble_one", &om);
	}

	/* report */
	lg_write_dat(opt.out, "home_warble.dat", &wm.home);
	lg_write_dat(opt.out, "visible_warble.dat", &vis);
	const char *names[LG_MAX_SYSTEMS] = { "warble" };
	bool        fans_out[LG_MAX_PEERS] = { false };
	for (int i = 0; i < LG_PEERS; i++) {
		names[1 + i] = PR[i].on ? PR[i].name : NULL;
		fans_out[i] = PR[i].fans_out;
		if (PR[i].on) {
			snprintf(path, sizeof(path), "home_%s.dat", PR[i].name);
			lg_write_dat(opt.out, path, &PR[i].m.home);
		}
	}
	lg_write_plots(opt.out, fr, opt.ncelebs, sweep, opt.nsweep, names, fans_out);
	json_t *fans = json_array();
	for (int c = 0; c < opt.ncelebs; c++) {
		double  ws = lg_median(fr[c].w_s, fr[c].reps);
		json_t *o = json_pack("{s:I, s:i, s:f, s:f, s:f, s:f, s:I, s:I, s:I}", "followers",
		    (json_int_t)fr[c].f, "reps", fr[c].reps, "warble_s", ws, "warble_cells_per_s",
		    fr[c].f / ws, "warble_inbox_fanout_ms", lg_median(fr[c].w_inbox_ms, fr[c].reps),
		    "warble_publish_ack_ms", lg_median(fr[c].w_ack_ms, fr[c].reps), "warble_cells",
		    (json_int_t)fr[c].w_cells, "warble_missing", (json_int_t)fr[c].w_missing,
		    "inbox_peak_rss_kb", (json_int_t)fr[c].w_rss_kb);
		for (int i = 0; i < LG_PEERS; i++) {
			const lg_fan_peer *fp = &fr[c].peer[i];
			if (PR[i].on) {
				json_object_set_new(o, PR[i].name,
				    json_pack("{s:f, s:I, s:I, s:I, s:f}", "s",
				        lg_median(fp->s, fr[c].reps), "cells",
				        (json_int_t)fp->cells, "checked", (json_int_t)fp->checked,
				        "missing", (json_int_t)fp->missing, "bytes_per_entry",
				        (double)fp->mem_bytes / (double)fr[c].f));
			}
		}
		json_array_append_new(fans, o);
		json_object_set_new(json_array_get(fans, json_array_size(fans) - 1),
		    "warble_inbox_cpu_us_per_cell",
		    json_real(fr[c].w_cells_all ? (double)fr[c].w_cpu_us / (double)fr[c].w_cells_all
		                                : 0.0));
		json_object_set_new(json_array_get(fans, json_array_size(fans) - 1),
		    "warble_inbox_stats_polls", json_integer((json_int_t)fr[c].w_polls));
	}
	json_t *rep = json_pack("{s:s, s:{s:i, s:I, s:s, s:s}, s:{s:s, s:I, s:I}, s:{s:I, s:i, "
	                        "s:i, s:i, s:i, s:I, s:i, s:i, s:i, s:b, s:b, s:s}}",
	    "date", date, "machine", "cores", cores, "memory_mib", (json_int_t)mem, "kernel",
	    kernel, "cpu", cpu, "graph", "name", G.name, "users", (json_int_t)G.n, "follows",
	    (json_int_t)G.follows, "settings", "seed", (json_int_t)opt.seed, "threads",
	    (int)opt.threads, "duration_s", (int)opt.duration, "rounds", (int)opt.rounds, "reps",
	    (int)opt.reps, "rate", (json_int_t)opt.rate, "inbox_max", (int)opt.inbox_max,
	    "seed_posts", (int)opt.seed_posts, "sample", (int)opt.sample, "redis",
	    opt.redis != NULL, "postgres", opt.pg != NULL, "warble_write_options",
	    "RocksDB WAL on every write, sync=false (WARBLE_SYNC=0): a killed process loses "
	    "nothing acknowledged; a power cut may lose the last writes");
	json_object_set_new(rep, "fanout", fans);
	if (deployment != NULL) {
		json_object_set_new(rep, "deployment", deployment);
		deployment = NULL;
	}
	json_t *setup = json_pack("{s:f}", "warble", setup_w);
	json_t *mix = json_pack("{s:o, s:o*}", "warble", lg_mix_json(&wm), "warble_one",
	    opt.one ? lg_mix_json(&om) : NULL);
	json_t *mixmod = json_pack("{s:I, s:o, s:o*}", "rate", (json_int_t)opt.moderate, "warble",
	    lg_mix_json(&wmod), "warble_one", opt.one ? lg_mix_json(&omod) : NULL);
	for (int i = 0; i < LG_PEERS; i++) {
		if (PR[i].on) {
			json_object_set_new(setup, PR[i].name, json_real(PR[i].setup_s));
			json_object_set_new(mix, PR[i].name, lg_mix_json(&PR[i].m));
			json_object_set_new(mixmod, PR[i].name, lg_mix_json(&PR[i].paced));
		}
	}
	json_object_set_new(rep, "setup_s", setup);
	json_object_set_new(rep, "publish_ack", lg_hist_json(&pub_ack, 0));
	json_object_set_new(rep, "publish_to_visible", lg_hist_json(&vis, 0));
	json_object_set_new(rep, "mix", mix);
	if (opt.moderate > 0) {
		json_object_set_new(rep, "mix_moderate", mixmod);
	} else {
		json_decref(mixmod);
	}
	json_object_set_new(rep, "ratios", ratios_json(&wm, opt.one ? &om : NULL));
	if (opt.nsweep > 0) {
		json_object_set_new(
		    rep, "home_by_follows", lg_sweep_json(sweep, opt.nsweep, names));
	}
	if (opt.http_conns > 0) {
		json_object_set_new(rep, "home_http", lg_http_json(&hc, (int)opt.http_conns));
	}
	if (opt.media_users > 0) {
		json_object_set_new(rep, "media",
		    json_pack("{s:i, s:i, s:i, s:s, s:o, s:o*, s:s, s:s*}", "users",
		        (int)opt.media_users, "images_per_user", (int)opt.media_per, "threads",
		        (int)opt.threads, "images",
		        "PNG, random pixels in stored deflate blocks: 160x136 (65,484 B), 320x273 "
		        "(262,441 B), 600x512 (922,250 B), cycled",
		        "warble", lg_media_json(&wmedia), "postgres",
		        PR[LG_PEER_PG].on ? lg_media_json(&pmedia) : NULL, "warble_disk",
		        "blob files + SST files of the upload and media families, the content "
		        "store reopened after the run and those families flushed, no compaction "
		        "forced (store_bytes counts SST files only, not blob files)",
		        "postgres_disk",
		        PR[LG_PEER_PG].on ? "pg_total_relation_size('media'): heap, TOAST and index"
		                          : NULL));
	}
	json_object_set_new(rep, "peak_rss_kb",
	    json_pack("{s:I, s:I, s:I, s:I, s:I}", "user", (json_int_t)rss[0], "relation",
	        (json_int_t)rss[1], "content", (json_int_t)rss[2], "inbox", (json_int_t)rss[3],
	        "gateway", (json_int_t)rss[4]));
	json_object_set_new(rep, "inbox_disk",
	    json_pack("{s:I, s:I, s:I, s:f}", "entries", (json_int_t)disk.cells, "sst_bytes",
	        (json_int_t)disk.sst_bytes, "folder_bytes", (json_int_t)disk.folder_after_bytes,
	        "bytes_per_entry", disk.cells ? (double)disk.sst_bytes / disk.cells : 0.0));
	if (opt.store_disk && !running) {
		json_object_set_new(rep, "store_disk",
		    json_pack("{s:o, s:o}", "relation", store_disk_json(&sdisk[0]), "content",
		        store_disk_json(&sdisk[1])));
	}
	snprintf(path, sizeof(path), "%s/report.json", opt.out);
	if (json_dump_file(rep, path, JSON_INDENT(2)) == 0) {
		printf("report: %s\n", path);
	}
	json_decref(rep);
	rc = 0;
out:
	if (rc != 0) {
		fprintf(stderr, "warble-load: failed\n");
	}
	json_decref(deployment);
	lg_warble_stop(&W);
	lg_peers_close(PR);
	lg_model_free(&wmodel);
	lg_graph_free(&G);
	wbt_cleanup();
	return rc;
}
