/*
 * lg_redis_fn.h - the Redis peer's function library (lg_redis_fn.c).
 */
#ifndef LG_REDIS_FN_H
#define LG_REDIS_FN_H

/* lg_redis_fn_source returns the library's Lua source, for FUNCTION LOAD REPLACE. */
const char *lg_redis_fn_source(void);

#endif
