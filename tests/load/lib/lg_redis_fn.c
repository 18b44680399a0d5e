/*
 * lg_redis_fn.c - the Redis peer's server-side functions: a Redis 7
 * function library (Lua) that reads a page and publishes a post each in
 * one call, loaded with FUNCTION LOAD REPLACE.
 *
 *   FCALL_RO page 1 <tl:uid | utl:uid> <n>
 *       the newest n posts of the timeline, each as five strings: id,
 *       author, name, text, time (one round trip, one command)
 *   FCALL publish 4 post:<id> utl:<a> tl:<a> fans:<a> <id> <a> <name> <text> <time> <cap>
 *       stores the post, adds it to the author's own timeline and home,
 *       and pushes it into the homes of the first page of fans (SSCAN
 *       COUNT 1000: all of a small set); replies {cursor, fans pushed}
 *   FCALL fanout 1 fans:<a> <cursor> <id> <cap>
 *       the next page of fans, until the cursor is "0"
 *
 * A home is a sorted set of post ids capped at cap (the inbox cap):
 * ZCARD is O(1), so the trim runs only when the set is over it.  A
 * celebrity's fan-out runs a page per call so that no call holds the
 * server for longer than about a thousand pushes.
 */
#include "lg_redis_fn.h"

static const char lg_redis_fn_lua[] =
    "#!lua name=wbload\n"
    "local function push(key, id, cap)\n"
    "  redis.call('ZADD', key, id, id)\n"
    "  if redis.call('ZCARD', key) > cap then\n"
    "    redis.call('ZREMRANGEBYRANK', key, 0, -cap - 1)\n"
    "  end\n"
    "end\n"
    "local function fan(key, cursor, id, cap)\n"
    "  local r = redis.call('SSCAN', key, cursor, 'COUNT', 1000)\n"
    "  local fans = r[2]\n"
    "  for i = 1, #fans do\n"
    "    push('tl:' .. fans[i], id, cap)\n"
    "  end\n"
    "  return {r[1], #fans}\n"
    "end\n"
    "local function publish(keys, args)\n"
    "  local cap = tonumber(args[6])\n"
    "  redis.call('HSET', keys[1], 'author', args[2], 'name', args[3], 'text', args[4],\n"
    "    'time', args[5])\n"
    "  redis.call('ZADD', keys[2], args[1], args[1])\n"
    "  push(keys[3], args[1], cap)\n"
    "  return fan(keys[4], '0', args[1], cap)\n"
    "end\n"
    "local function fanout(keys, args)\n"
    "  return fan(keys[1], args[1], args[2], tonumber(args[3]))\n"
    "end\n"
    "local function page(keys, args)\n"
    "  local ids = redis.call('ZREVRANGE', keys[1], 0, tonumber(args[1]) - 1)\n"
    "  local out = {}\n"
    "  for i = 1, #ids do\n"
    "    local p = redis.call('HMGET', 'post:' .. ids[i], 'author', 'name', 'text', 'time')\n"
    "    out[#out + 1] = ids[i]\n"
    "    for j = 1, 4 do\n"
    "      out[#out + 1] = p[j]\n"
    "    end\n"
    "  end\n"
    "  return out\n"
    "end\n"
    "redis.register_function('publish', publish)\n"
    "redis.register_function('fanout', fanout)\n"
    "redis.register_function{function_name = 'page', callback = page, flags = {'no-writes'}}\n";

const char *
lg_redis_fn_source(void)
{
	return lg_redis_fn_lua;
}
