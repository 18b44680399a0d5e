/*
 * rt_local.c - the process's table of servers callable in-process (see
 * rt_local.h).  Slots are never reused for another URL, so a client's
 * slot number stays meaningful for the life of the process.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_local.h"

#define RT_LOCAL_MAX 16

typedef struct rt_local_srv {
	char       *url; /* NULL: a free slot (and every slot after it) */
	rt_local_fn fn;  /* NULL while the URL has no server */
	void       *arg;
	bool        serving; /* calls are taken */
	int         calls;   /* calls running */
} rt_local_srv;

static pthread_mutex_t rt_local_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  rt_local_cv = PTHREAD_COND_INITIALIZER;
static rt_local_srv    rt_local_tab[RT_LOCAL_MAX];

/* rt_local_slot returns url's index in the table, or -1; under rt_local_mu. */
static int
rt_local_slot(const char *url)
{
	for (int i = 0; i < RT_LOCAL_MAX && rt_local_tab[i].url != NULL; i++) {
		if (strcmp(rt_local_tab[i].url, url) == 0) {
			return i;
		}
	}
	return -1;
}

int
rt_local_add(const char *url, rt_local_fn fn, void *arg)
{
	int i;

	pthread_mutex_lock(&rt_local_mu);
	if ((i = rt_local_slot(url)) < 0) {
		for (i = 0; i < RT_LOCAL_MAX && rt_local_tab[i].url != NULL; i++) {
		}
		if (i == RT_LOCAL_MAX || (rt_local_tab[i].url = strdup(url)) == NULL) {
			i = -1;
		}
	} else if (rt_local_tab[i].fn != NULL) {
		i = -1; /* another server has it */
	}
	if (i >= 0) {
		rt_local_tab[i].fn = fn;
		rt_local_tab[i].arg = arg;
	}
	pthread_mutex_unlock(&rt_local_mu);
	return i + 1;
}

void
rt_local_serving(int slot, bool on)
{
	rt_local_srv *e = &rt_local_tab[slot - 1];

	pthread_mutex_lock(&rt_local_mu);
	e->serving = on;
	while (!on && e->calls > 0) {
		pthread_cond_wait(&rt_local_cv, &rt_local_mu);
	}
	pthread_mutex_unlock(&rt_local_mu);
}

void
rt_local_remove(int slot)
{
	rt_local_serving(slot, false);
	pthread_mutex_lock(&rt_local_mu);
	rt_local_tab[slot - 1].fn = NULL;
	rt_local_tab[slot - 1].arg = NULL;
	pthread_mutex_unlock(&rt_local_mu);
}

int
rt_local_find(const char *url)
{
	int i;

	pthread_mutex_lock(&rt_local_mu);
	i = rt_local_slot(url);
	pthread_mutex_unlock(&rt_local_mu);
	return i + 1;
}

int
rt_local_call(int slot, const wb_obj *req, wb_obj **rep)
{
	rt_local_srv *e;
	rt_local_fn   fn = NULL;
	void         *arg = NULL;
	int           rv;

	*rep = NULL;
	if (slot < 1 || slot > RT_LOCAL_MAX) {
		return WB_EUNAVAIL;
	}
	e = &rt_local_tab[slot - 1];
	pthread_mutex_lock(&rt_local_mu);
	if (e->serving && e->fn != NULL) {
		fn = e->fn;
		arg = e->arg;
		e->calls++;
	}
	pthread_mutex_unlock(&rt_local_mu);
	if (fn == NULL) {
		return WB_EUNAVAIL;
	}
	rv = fn(arg, req, rep);
	pthread_mutex_lock(&rt_local_mu);
	if (--e->calls == 0) {
		pthread_cond_broadcast(&rt_local_cv);
	}
	pthread_mutex_unlock(&rt_local_mu);
	return rv;
}
