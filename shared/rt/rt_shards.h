/*
 * rt_shards.h - the shards of one service as clients: shard i of N is the
 * i-th address of a list, and a request goes to the shard that owns the
 * slot of its uid, post id or media id (proto/wb_slot.h).
 *
 *   rt_shards *rel;
 *   rt_shards_open(&rel, "tcp://r0:7102,tcp://r1:7102", NULL, &opts);
 *   rt_call(rt_shards_for_uid(rel, follower), req, &rep);
 *
 * A list with one address is one shard that owns every slot: the layout
 * of a single machine.  Thread-safe as rt_client is.
 */
#ifndef RT_SHARDS_H
#define RT_SHARDS_H

#include <stdint.h>

#include "rt_client.h"
#include "wb_slot.h"

#define RT_SHARDS_URLS_MAX 8192 /* characters of a list of addresses */

typedef struct rt_shards rt_shards;

/*
 * rt_shards_open makes a client of each address of urls (comma-separated,
 * in shard order; NULL or empty: single, one shard); WB_EINVAL with a
 * logged message if the list is malformed or longer than WB_SHARDS_MAX.
 */
int rt_shards_open(
    rt_shards **out, const char *urls, const char *single, const rt_client_opts *opts);

/* rt_shards_close closes every client; NULL is ignored. */
void rt_shards_close(rt_shards *s);

/* rt_shards_shutdown ends the calls in flight on every shard (rt_client_shutdown). */
void rt_shards_shutdown(rt_shards *s);

/* rt_shards_count returns the number of shards. */
unsigned rt_shards_count(const rt_shards *s);

/* rt_shards_at returns shard i's client (i < rt_shards_count). */
rt_client *rt_shards_at(const rt_shards *s, unsigned i);

/* rt_shards_url returns shard i's address. */
const char *rt_shards_url(const rt_shards *s, unsigned i);

/* rt_shards_for_uid returns the client of the shard owning uid's slot. */
rt_client *rt_shards_for_uid(const rt_shards *s, uint64_t uid);

/* rt_shards_for_id returns the client of the shard owning post id's slot group. */
rt_client *rt_shards_for_id(const rt_shards *s, uint64_t id);

/* rt_shards_index_of_id returns the index of the shard owning post id's slot group. */
unsigned rt_shards_index_of_id(const rt_shards *s, uint64_t id);

/* rt_shards_list_count counts the addresses of a list (0 if NULL or empty). */
unsigned rt_shards_list_count(const char *urls);

#endif
