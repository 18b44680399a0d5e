/*
 * rt_admin.c - admin.backup: a consistent checkpoint of the service's
 * store into a folder named by the caller, with its event-log positions
 * (see rt_admin.h).  One backup runs at a time per service.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_admin.h"
#include "rt_log.h"
#include "wb_clock.h"

struct rt_admin {
	char            *name;
	hb_table        *t;
	pthread_mutex_t  mu; /* one backup at a time */
	rt_admin_logs_fn logs;
	void            *logs_arg;
	bool             logs_after;
};

/* rt_admin_dir_check tells what is wrong with dir as a checkpoint destination (NULL: nothing). */
static const char *
rt_admin_dir_check(const char *dir)
{
	struct stat st;
	char        parent[PATH_MAX];
	size_t      n = strlen(dir);

	if (dir[0] != '/') {
		return "dir must be an absolute path on the service's machine";
	}
	if (n >= sizeof(parent) - 16) {
		return "dir is too long";
	}
	if (strstr(dir, "/../") != NULL || (n >= 3 && strcmp(dir + n - 3, "/..") == 0)) {
		return "dir must not contain '..'";
	}
	if (lstat(dir, &st) == 0 || errno != ENOENT) {
		return "dir already exists (a backup never overwrites)";
	}
	memcpy(parent, dir, n + 1);
	while (n > 1 && parent[n - 1] == '/') {
		parent[--n] = '\0';
	}
	char *slash = strrchr(parent, '/');
	if (slash == parent) {
		slash[1] = '\0';
	} else {
		*slash = '\0';
	}
	if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
		return "the parent folder of dir does not exist on the service's machine";
	}
	return NULL;
}

/* rt_admin_backup handles admin.backup {dir}. */
static int
rt_admin_backup(void *arg, const wb_obj *req, wb_obj *rep)
{
	rt_admin   *a = arg;
	const char *dir = NULL, *why;
	size_t      len = 0;
	int         rc = WB_OK;

	if (!wb_get_str(req, WB_F_DIR, &dir, &len) || len == 0 || strlen(dir) != len) {
		wb_reply_error(rep, WB_EINVAL, "dir must be a non-empty path");
		return WB_EINVAL;
	}
	pthread_mutex_lock(&a->mu);
	if ((why = rt_admin_dir_check(dir)) != NULL) {
		pthread_mutex_unlock(&a->mu);
		wb_reply_error(rep, WB_EINVAL, "%s: %s", why, dir);
		return WB_EINVAL;
	}
	uint64_t t0 = wb_mono_us(), now = wb_now_ms();
	wb_reply_ok(rep);
	if (a->logs != NULL && !a->logs_after) {
		rc = a->logs(a->logs_arg, rep); /* a source: its last seq before the copy */
	}
	if (rc == WB_OK && (rc = hb_checkpoint(a->t, dir)) != WB_OK) {
		RT_ERRORF("backup into %s failed: %s %s", dir, wb_strerror(rc), hb_last_error());
		wb_reply_error(rep, rc, "checkpoint into %s failed: %s", dir, hb_last_error());
	}
	if (rc == WB_OK && a->logs != NULL && a->logs_after) {
		rc = a->logs(a->logs_arg, rep); /* a consumer: its applied seqs after the copy */
	}
	uint64_t ms = (wb_mono_us() - t0) / 1000;
	pthread_mutex_unlock(&a->mu);
	if (rc != WB_OK) {
		return rc;
	}
	RT_INFOF("backup into %s in %llu ms", dir, (unsigned long long)ms);
	if ((rc = wb_set_cstr(rep, WB_F_SERVICE, a->name)) == WB_OK &&
	    (rc = wb_set_cstr(rep, WB_F_DIR, dir)) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_TIME, now)) == WB_OK &&
	    (rc = wb_set_cstr(rep, WB_F_RELEASE, WB_RELEASE)) == WB_OK) {
		rc = wb_set_u64(rep, WB_F_ELAPSED, ms);
	}
	return rc;
}

int
rt_admin_open(rt_admin **out, rt_server *srv, const char *name, hb_table *t)
{
	rt_admin *a;
	int       rc;

	*out = NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL || (a->name = strdup(name)) == NULL) {
		free(a);
		return WB_ENOMEM;
	}
	a->t = t;
	pthread_mutex_init(&a->mu, NULL);
	const rt_route r = { WB_OP_ADMIN_BACKUP, rt_admin_backup, 0, 0, 0 }; /* admin only */
	if ((rc = rt_server_routes(srv, &r, 1, a)) != WB_OK) {
		rt_admin_close(a);
		return rc;
	}
	*out = a;
	return WB_OK;
}

void
rt_admin_logs(rt_admin *a, rt_admin_logs_fn fn, void *arg, bool after)
{
	if (a != NULL) {
		a->logs = fn;
		a->logs_arg = arg;
		a->logs_after = after;
	}
}

void
rt_admin_close(rt_admin *a)
{
	if (a == NULL) {
		return;
	}
	pthread_mutex_destroy(&a->mu);
	free(a->name);
	free(a);
}
