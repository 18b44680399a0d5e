/*
 * http_static.c - the web page's files, read once at start into memory
 * (a handful of small files) and served from there: no file system
 * access per request and no path from a request ever reaches open().
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_int.h"
#include "rt_log.h"

static const struct {
	const char *ext, *ctype;
} http_types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".json", "application/json" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".ico", "image/x-icon" },
	{ ".txt", "text/plain; charset=utf-8" },
};

static const char *
http_static_type(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(http_types) / sizeof(http_types[0]); i++) {
		size_t e = strlen(http_types[i].ext);
		if (n > e && strcmp(name + n - e, http_types[i].ext) == 0) {
			return http_types[i].ctype;
		}
	}
	return "application/octet-stream";
}

/* http_static_read reads one regular file of at most HTTP_FILE_MAX bytes. */
static int
http_static_read(const char *path, char **data, size_t *len)
{
	FILE       *f;
	struct stat st;
	char       *p;

	if ((f = fopen(path, "rb")) == NULL) {
		return WB_EIO;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > HTTP_FILE_MAX) {
		fclose(f);
		return WB_ETOOBIG;
	}
	if ((p = malloc((size_t)st.st_size + 1)) == NULL) {
		fclose(f);
		return WB_ENOMEM;
	}
	if (fread(p, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(p);
		fclose(f);
		return WB_EIO;
	}
	fclose(f);
	*data = p;
	*len = (size_t)st.st_size;
	return WB_OK;
}

int
http_static_load(http_server *h, const char *dir)
{
	DIR           *d;
	struct dirent *e;
	char           path[1024];
	int            rc = WB_OK;

	if ((d = opendir(dir)) == NULL) {
		RT_WARNF("no web page: cannot open %s (set WARBLE_WEB_DIR)", dir);
		return WB_OK;
	}
	while (rc == WB_OK && (e = readdir(d)) != NULL) {
		http_file *f;

		if (e->d_name[0] == '.' || strlen(e->d_name) + 2 > sizeof(f->path)) {
			continue;
		}
		if (h->nfiles == HTTP_FILES_MAX) {
			RT_WARNF("web page: more than %d files in %s, ignoring the rest",
			    HTTP_FILES_MAX, dir);
			break;
		}
		f = &h->files[h->nfiles];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if ((rc = http_static_read(path, &f->data, &f->len)) != WB_OK) {
			if (rc != WB_ENOMEM) {
				RT_WARNF("web page: skipping %s (%s)", path, wb_strerror(rc));
				rc = WB_OK;
			}
			continue;
		}
		snprintf(f->path, sizeof(f->path), "/%s", e->d_name);
		f->ctype = http_static_type(e->d_name);
		h->nfiles++;
	}
	closedir(d);
	if (rc == WB_OK) {
		RT_INFOF("web page: %d files from %s", h->nfiles, dir);
	}
	return rc;
}

const http_file *
http_static_find(http_server *h, const char *path)
{
	if (strcmp(path, "/") == 0) {
		path = "/index.html";
	}
	for (int i = 0; i < h->nfiles; i++) {
		if (strcmp(h->files[i].path, path) == 0) {
			return &h->files[i];
		}
	}
	return NULL;
}

void
http_static_free(http_server *h)
{
	for (int i = 0; i < h->nfiles; i++) {
		free(h->files[i].data);
	}
	h->nfiles = 0;
}

const char *
http_web_dir(char *buf, size_t n)
{
	char        exe[768], *slash;
	ssize_t     k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (k > 0) {
		exe[k] = '\0';
		/* <root>/build/bin/warble-gateway -> <root> */
		for (int up = 0; up < 3 && (slash = strrchr(exe, '/')) != NULL; up++) {
			*slash = '\0';
		}
		snprintf(buf, n, "%s/services/gateway/web", exe);
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
			return buf;
		}
	}
	snprintf(buf, n, "services/gateway/web");
	if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
		return buf;
	}
	snprintf(buf, n, "/usr/local/share/warble/web");
	return buf;
}
