/*
 * lg_model.h - what each system should show: the posts it acknowledged
 * (graph users' posts with the deterministic texts of lg_post_text), and
 * the check of its home and user timeline pages against them.
 *
 * Every system's home holds the newest LG_PAGE posts of the accounts the
 * reader follows and of the reader (an author reads their own posts in
 * their home, as on Twitter and Mastodon); a user timeline, the newest
 * LG_PAGE of the user's own.  Each post must come back with its id, its
 * author's uid and name ("gu<u>") and its text, newest first.
 */
#ifndef LG_MODEL_H
#define LG_MODEL_H

#include <pthread.h>

#include "lg.h"

/* One post a system acknowledged: by graph user u, text lg_post_text(u, k), its id there. */
typedef struct lg_model_post {
	uint64_t id, k;
	uint32_t u;
} lg_model_post;

/* The posts of one system, added from any thread. */
typedef struct lg_model {
	pthread_mutex_t mu;
	lg_model_post  *p;
	size_t          n, cap;
	bool            lost; /* a post could not be kept (out of memory): no check */
} lg_model;

/* What a check found. */
typedef struct lg_check {
	uint64_t pages; /* pages read and compared */
	uint64_t wrong; /* pages that differ from the model */
	uint64_t posts; /* posts in the model */
} lg_check;

/* lg_model_init makes m empty. */
void lg_model_init(lg_model *m);

/* lg_model_free frees m's posts. */
void lg_model_free(lg_model *m);

/* lg_model_add records that graph user u published text k and got id (thread-safe). */
void lg_model_add(lg_model *m, uint32_t u, uint64_t k, uint64_t id);

/*
 * lg_model_check reads the home and the user timeline of k graph users
 * (seeded, at random) through b on one connection and compares each page
 * with what m says it holds; the first mismatches are printed on stderr.
 * uids maps user numbers to the system's uids.  0 if every page matched,
 * -1 if one did not, a read failed, or m lost a post.
 */
int lg_model_check(const lg_model *m, const lg_graph *g, const uint64_t *uids, const lg_backend *b,
    uint32_t k, uint64_t seed, lg_check *out);

/* lg_page_diff compares got with want, post by post; 0 if they match (else what differs is
 * printed on stderr after what, unless what is NULL). */
int lg_page_diff(const lg_page *got, const lg_page *want, const char *what);

#endif
