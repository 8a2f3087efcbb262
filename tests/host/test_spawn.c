// SPDX-License-Identifier: GPL-2.0
// covers: spawn
/*
 * test_spawn.c - lib/spawn.c, the one way userland starts gpg,
 * systemd-ask-password and mkswap: the paths tried in order (and which
 * error a failure reports), the descriptors the child gets and only those
 * (moved into place even when they cross, /dev/null, the caller's own),
 * the environment, the real IDs of a set-user-ID caller, and the status
 * aesloop_spawn_wait() reports.
 *
 * The children are /bin/sh scripts.  Checks that change this process's
 * own descriptors or IDs run in a forked process of their own, which hands
 * its child's output back through a pipe.
 */
#define _GNU_SOURCE		/* setresuid, setresgid */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aesloop-spawn.h"
#include "testutil.h"

/* A missing path first: every spawn here also walks the path list. */
static const char *const sh_paths[] = { "/nonexistent/aesloop/sh", "/bin/sh", NULL };

/* All of @fd into @out (NUL-terminated, one trailing newline dropped). */
static void read_all(int fd, char *out, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got + 1 < len && ((n = read(fd, out + got, len - 1 - got)) > 0 ||
				 (n < 0 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	out[got] = '\0';
	if (got && out[got - 1] == '\n')
		out[got - 1] = '\0';
}

/*
 * A program of @paths with stdin @fd0, stdout into @out, stderr the
 * caller's; returns aesloop_spawn()'s error or the child's status.
 */
static int run_prog(const char *const *paths, char *const *argv,
		    char *const *envp, int fd0, int real_ids, char *out, size_t len)
{
	struct aesloop_spawn sp = {
		.paths = paths,
		.argv = argv,
		.envp = envp,
		.fds = { fd0, -1, AESLOOP_SPAWN_KEEP },
		.nfds = 3,
		.real_ids = real_ids,
	};
	int p[2], rc;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	sp.fds[1] = p[1];
	rc = aesloop_spawn(&sp, &pid);
	close(p[1]);
	if (!rc) {
		read_all(p[0], out, len);
		rc = aesloop_spawn_wait(pid);
	}
	close(p[0]);
	return rc;
}

/* sh -c @script, as run_prog() runs it. */
static int run_sh(const char *script, char *const *envp, int fd0, int real_ids,
		  char *out, size_t len)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };

	return run_prog(sh_paths, argv, envp, fd0, real_ids, out, len);
}

/* Run @fn in a forked process; what it writes to its descriptor in @out. */
static int in_subprocess(void (*fn)(int res), char *out, size_t len)
{
	int p[2], status = 0;
	pid_t pid;

	out[0] = '\0';
	if (pipe(p))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		fn(p[1]);
		_exit(0);
	}
	close(p[1]);
	read_all(p[0], out, len);
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void put(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		_exit(1);
}

/*
 * The child's stdin is the caller's stdout and the other way round: moved
 * one after the other, the second move would find the first one's result.
 */
static void crossed_fds(int res)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"read l; echo \"$l\"", NULL };
	struct aesloop_spawn sp = {
		.paths = sh_paths, .argv = argv, .fds = { 1, 0 }, .nfds = 2,
	};
	int data[2], result[2];
	char got[64];
	pid_t pid;

	if (pipe(data) || pipe(result) || write(data[1], "crossed\n", 8) != 8)
		_exit(1);
	close(data[1]);
	/* Our stdout is where the child reads, our stdin where it writes. */
	if (dup2(data[0], 1) != 1 || dup2(result[1], 0) != 0)
		_exit(1);
	close(data[0]);
	close(result[1]);
	if (aesloop_spawn(&sp, &pid))
		_exit(1);
	close(0);
	close(1);
	read_all(result[0], got, sizeof(got));
	put(res, got);
	_exit(aesloop_spawn_wait(pid) == 0 ? 0 : 1);
}

/* AESLOOP_SPAWN_KEEP: the child writes to the caller's own stderr. */
static void kept_stderr(int res)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"echo kept >&2", NULL };
	struct aesloop_spawn sp = {
		.paths = sh_paths, .argv = argv,
		.fds = { AESLOOP_SPAWN_NULL, AESLOOP_SPAWN_NULL, AESLOOP_SPAWN_KEEP },
		.nfds = 3,
	};
	char got[64];
	int e[2];
	pid_t pid;

	if (pipe(e) || dup2(e[1], 2) != 2)
		_exit(1);
	close(e[1]);
	if (aesloop_spawn(&sp, &pid))
		_exit(1);
	close(2);
	read_all(e[0], got, sizeof(got));
	put(res, got);
	_exit(aesloop_spawn_wait(pid) == 0 ? 0 : 1);
}

/*
 * As a set-user-ID root program that nobody (65534) ran, the effective
 * IDs the child has, with real_ids and without.  id(1) itself, not sh,
 * which would drop them on its own.
 */
static void setuid_caller(int res)
{
	static const char *const id_paths[] = { "/usr/bin/id", "/bin/id", NULL };
	char *id_u[] = { (char *)"id", (char *)"-u", NULL };
	char *id_g[] = { (char *)"id", (char *)"-g", NULL };
	char got[64];
	int real_ids;

	if (setresgid(65534, 0, 0) || setresuid(65534, 0, 0))
		_exit(1);
	for (real_ids = 1; real_ids >= 0; real_ids--) {
		run_prog(id_paths, id_u, NULL, AESLOOP_SPAWN_NULL, real_ids, got, sizeof(got));
		put(res, got);
		put(res, " ");
		run_prog(id_paths, id_g, NULL, AESLOOP_SPAWN_NULL, real_ids, got, sizeof(got));
		put(res, got);
		put(res, real_ids ? " / " : "");
	}
}

static void test_paths_and_status(void)
{
	char *argv[] = { (char *)"true", NULL };
	const char *const none[] = { "/nonexistent/a", "/nonexistent/b", NULL };
	char notexec[] = "/tmp/aesloop-spawn-XXXXXX";
	const char *paths[] = { notexec, "/nonexistent/c", NULL };
	struct aesloop_spawn sp = { .paths = none, .argv = argv };
	char out[256];
	pid_t pid;
	int rc, fd;

	rc = run_sh("exit 7", NULL, AESLOOP_SPAWN_NULL, 0, out, sizeof(out));
	t_result(rc == 7, "spawn-second-path-exit-status", "status %d, expected 7", rc);
	rc = run_sh("kill -TERM $$", NULL, AESLOOP_SPAWN_NULL, 0, out, sizeof(out));
	t_result(rc == 128 + SIGTERM, "spawn-killed-status", "status %d, expected %d",
		 rc, 128 + SIGTERM);

	rc = aesloop_spawn(&sp, &pid);
	t_result(rc == -ENOENT, "spawn-nowhere-enoent", "got %d (%s)", rc, strerror(-rc));

	/* A file that is there but cannot run says more than "not there". */
	fd = mkstemp(notexec);
	if (fd >= 0) {
		close(fchmod(fd, 0644) ? -1 : fd);
		sp.paths = paths;
		rc = aesloop_spawn(&sp, &pid);
		t_result(rc == -EACCES, "spawn-not-executable-eacces", "got %d (%s)", rc,
			 strerror(-rc));
		unlink(notexec);
	} else {
		t_result(0, "spawn-not-executable-eacces", "mkstemp: %s", strerror(errno));
	}

	sp.nfds = AESLOOP_SPAWN_MAX_FDS + 1;
	sp.paths = sh_paths;
	rc = aesloop_spawn(&sp, &pid);
	t_result(rc == -EINVAL, "spawn-too-many-fds", "got %d", rc);

	rc = aesloop_spawn_wait(getpid());
	t_result(rc == -ECHILD, "spawn-wait-not-a-child", "got %d", rc);
}

static void test_fds(void)
{
	char out[256], script[128];
	int fd, in[2], rc;

	rc = run_sh("readlink /proc/$$/fd/0", NULL, AESLOOP_SPAWN_NULL, 0, out, sizeof(out));
	t_result(rc == 0 && !strcmp(out, "/dev/null"), "spawn-stdin-dev-null",
		 "status %d, stdin '%s'", rc, out);

	/* An inherited descriptor (not close-on-exec) of ours: not the child's. */
	fd = fcntl(STDIN_FILENO, F_DUPFD, 40);
	snprintf(script, sizeof(script), "[ -e /proc/$$/fd/%d ] && echo open || echo closed", fd);
	rc = run_sh(script, NULL, AESLOOP_SPAWN_NULL, 0, out, sizeof(out));
	t_result(fd >= 0 && rc == 0 && !strcmp(out, "closed"), "spawn-no-other-fds",
		 "fd %d in the child: '%s' (status %d)", fd, out, rc);
	if (fd >= 0)
		close(fd);

	/* A pipe of ours as the child's stdin, as gpg gets its key file. */
	if (pipe2(in, O_CLOEXEC) == 0) {
		if (write(in[1], "line one\n", 9) != 9)
			t_result(0, "spawn-pipe-stdin", "write: %s", strerror(errno));
		close(in[1]);
		rc = run_sh("read l; echo \"[$l]\"", NULL, in[0], 0, out, sizeof(out));
		t_result(rc == 0 && !strcmp(out, "[line one]"), "spawn-pipe-stdin",
			 "status %d, got '%s'", rc, out);
		close(in[0]);
	}

	rc = in_subprocess(crossed_fds, out, sizeof(out));
	t_result(rc == 0 && !strcmp(out, "crossed"), "spawn-crossed-fds",
		 "got '%s' (subprocess %d)", out, rc);
	rc = in_subprocess(kept_stderr, out, sizeof(out));
	t_result(rc == 0 && !strcmp(out, "kept"), "spawn-keep-stderr",
		 "got '%s' (subprocess %d)", out, rc);
}

static void test_env_and_ids(void)
{
	char *envp[] = { (char *)"AESLOOP_T=42", NULL };
	const char *script = "echo \"${AESLOOP_T-unset} ${AESLOOP_OTHER-unset}\"";
	char out[256];
	int rc;

	setenv("AESLOOP_OTHER", "x", 1);
	rc = run_sh(script, envp, AESLOOP_SPAWN_NULL, 0, out, sizeof(out));
	t_result(rc == 0 && !strcmp(out, "42 unset"), "spawn-env-given",
		 "status %d, got '%s'", rc, out);
	rc = run_sh(script, NULL, AESLOOP_SPAWN_NULL, 0, out, sizeof(out));
	t_result(rc == 0 && !strcmp(out, "unset x"), "spawn-env-callers",
		 "status %d, got '%s'", rc, out);
	unsetenv("AESLOOP_OTHER");

	if (geteuid() != 0) {
		t_skip("spawn-real-ids", "needs root, to play a set-user-ID program");
		return;
	}
	rc = in_subprocess(setuid_caller, out, sizeof(out));
	t_result(rc == 0 && !strcmp(out, "65534 65534 / 0 0"), "spawn-real-ids",
		 "real_ids 1 / 0 gave uid gid '%s' (subprocess %d)", out, rc);
}

int main(void)
{
	test_paths_and_status();
	test_fds();
	test_env_and_ids();
	return t_exit();
}
