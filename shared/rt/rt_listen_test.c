/*
 * rt_listen_test.c - listening sockets: URL forms, addresses in use, and
 * ipc socket files left behind by a server that is gone.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rt_listen.h"
#include "wb_errors.h"
#include "wbt.h"

Test(rt_listen, url_forms, .fini = wbt_cleanup)
{
	const char *bad[] = { "inproc://x", "tcp://", "tcp://127.0.0.1",
		"tcp://127.0.0.1:", "tcp://256.1.1.1:1", "ipc://", NULL };
	char        url[64];
	int         fd, port = wbt_free_port();

	for (int i = 0; bad[i] != NULL; i++) {
		cr_expect_eq(rt_listen_open(bad[i], &fd), WB_EINVAL, "%s", bad[i]);
	}
	cr_assert(!rt_listen_supports(NULL));
	cr_assert(!rt_listen_supports("inproc://x"));
	cr_assert_gt(port, 0);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	cr_assert_eq(rt_listen_open(url, &fd), WB_OK);
	int again;
	cr_assert_eq(rt_listen_open(url, &again), WB_EINVAL, "an address in use is refused");
	rt_listen_close(url, fd);
	snprintf(url, sizeof(url), "tcp://*:%d", port);
	cr_assert_eq(rt_listen_open(url, &fd), WB_OK, "every address");
	rt_listen_close(url, fd);
	snprintf(url, sizeof(url), "tcp://[::1]:%d", port);
	if (rt_listen_open(url, &fd) == WB_OK) { /* a machine may have no IPv6 loopback */
		rt_listen_close(url, fd);
	}
}

Test(rt_listen, ipc_socket_files, .fini = wbt_cleanup)
{
	char               url[200];
	const char        *path;
	int                fd, again, left;
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct stat        st;

	snprintf(url, sizeof(url), "ipc://%s/l.ipc", wbt_dir());
	path = url + 6;
	cr_assert_eq(rt_listen_open(url, &fd), WB_OK);
	cr_assert_eq(rt_listen_open(url, &again), WB_EINVAL, "a live server's path is not taken");
	cr_assert_eq(stat(path, &st), 0, "and its socket file stays");
	rt_listen_close(url, fd);
	cr_assert_neq(stat(path, &st), 0, "close removes the socket file");

	/* a socket file whose server is gone (bound, never unlinked) is replaced */
	memcpy(un.sun_path, path, strlen(path) + 1);
	left = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(left, (struct sockaddr *)&un, sizeof(un)), 0);
	close(left);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(rt_listen_open(url, &fd), WB_OK);
	rt_listen_close(url, fd);

	/* closing what was never opened leaves someone else's file alone */
	left = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(left, (struct sockaddr *)&un, sizeof(un)), 0);
	rt_listen_close(url, -1);
	cr_assert_eq(stat(path, &st), 0);
	close(left);
	unlink(path);
}
