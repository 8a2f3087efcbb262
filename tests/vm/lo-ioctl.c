// SPDX-License-Identifier: GPL-2.0
/*
 * lo-ioctl - issue loop ioctls exactly as asked, for the VM tests.
 *
 * losetup never sends a key size of 7 or an encrypt type of 99; the tests
 * need to, to check that the driver refuses them and changes nothing.
 *
 *   lo-ioctl status DEV                 LOOP_GET_STATUS64, printed as key=value
 *   lo-ioctl set-status DEV [OPTS]      LOOP_SET_STATUS64
 *   lo-ioctl status-old DEV             LOOP_GET_STATUS (struct loop_info)
 *   lo-ioctl set-status-old DEV [OPTS]  LOOP_SET_STATUS (struct loop_info)
 *   lo-ioctl set-fd DEV FILE [OPTS]     LOOP_SET_FD, then LOOP_SET_STATUS64
 *                                       if any OPTS are given
 *   lo-ioctl configure DEV FILE [OPTS]  LOOP_CONFIGURE
 *   lo-ioctl clr DEV                    LOOP_CLR_FD
 *   lo-ioctl change-fd DEV FILE         LOOP_CHANGE_FD (FILE opened read-only)
 *   lo-ioctl get-free                   LOOP_CTL_GET_FREE, prints the number
 *   lo-ioctl set-autoclear DEV 0|1      what udisks does to set autoclear:
 *                                       LOOP_GET_STATUS64, change lo_flags,
 *                                       LOOP_SET_STATUS64 with the rest as got
 *   lo-ioctl uevents NAME CMD...        runs CMD and prints the kernel's add
 *                                       and remove uevents of block devices
 *                                       named NAME or NAMEpN meanwhile, one
 *                                       "ACTION DEVNAME" line each
 *   lo-ioctl mmap-run DEV BYTES CMD...  maps the first BYTES of DEV shared,
 *                                       reads every page, runs CMD while the
 *                                       pages stay mapped, then unmaps
 *   lo-ioctl bind-race INDEX FILE ROUNDS  LOOP_CONFIGURE (encrypted, with
 *                                       partscan) of loopINDEX racing
 *                                       LOOP_CLR_FD from a second process on
 *                                       the same open file, then
 *                                       LOOP_CTL_REMOVE and ADD, ROUNDS times
 *   lo-ioctl ctl-race INDEX ROUNDS      three processes on /dev/loop-control:
 *                                       ADD and REMOVE of INDEX, GET_FREE
 *                                       (whose device must then open), each
 *                                       ROUNDS times; fails on an errno none
 *                                       of them may give
 *   lo-ioctl multi DEV HEXFILE          LOOP_MULTI_KEY_SETUP (64 lines of hex
 *                                       key slots) or _V3 (65 lines)
 *   lo-ioctl zeroout DEV OFFSET LENGTH  BLKZEROOUT (bytes): write-zeroes
 *                                       requests, which busybox cannot send
 *   lo-ioctl raw DEV CMD [ARG]          any ioctl number with an integer
 *                                       argument (bad commands, bad pointers)
 *   lo-ioctl as UID SUBCOMMAND...       run SUBCOMMAND as user UID, with no
 *                                       capabilities
 *   lo-ioctl fuzz SEED COUNT FILE DEV...  COUNT random loop ioctls on the
 *                                       DEVs: random commands, sizes, flags,
 *                                       key sizes and bad pointers, and as
 *                                       often valid ones; FILE is the only
 *                                       backing file it binds
 *   lo-ioctl excl DEV CMD...            run CMD while holding DEV open
 *                                       O_EXCL (an exclusive claim, as a
 *                                       mount or mkfs holds it); exits as
 *                                       CMD did
 *   lo-ioctl stall DEV multi|status     LOOP_MULTI_KEY_SETUP_V3 (65 zero
 *                                       keys) or LOOP_SET_STATUS64 (the
 *                                       device's status back) with its
 *                                       argument on a page that userfaultfd
 *                                       holds back; while the kernel waits
 *                                       for it, another process asks
 *                                       LOOP_GET_STATUS64, which must be
 *                                       answered (within 60 s) before the
 *                                       page is given: the argument is read
 *                                       before any lock is taken
 *   lo-ioctl fuzz-mt SEED COUNT PROCS FILE DEV...  the same in PROCS
 *                                       processes on the same DEVs at once,
 *                                       each ioctl on an open of its own,
 *                                       with one more doing COUNT random
 *                                       ADD, REMOVE and GET_FREE on
 *                                       /dev/loop-control (the DEVs' indices
 *                                       and four above the highest) and one
 *                                       more opening, reading, writing and
 *                                       closing all of those devices; the
 *                                       DEVs exist again at the end
 *   lo-ioctl sysfs-race DEV FILE ROUNDS PROGRESS  one process attaches
 *                                       FILE to DEV (LOOP_CONFIGURE) and
 *                                       detaches it (LOOP_CLR_FD), each on an
 *                                       open of its own as losetup does,
 *                                       ROUNDS times, while another reads
 *                                       DEV's loop/backing_file until it is
 *                                       done; each attach and detach
 *                                       appends a byte to PROGRESS; exits 2
 *                                       if a read found the file there but
 *                                       empty
 *   lo-ioctl dio-write DEV FILE SHIFT   write FILE to the start of DEV with
 *                                       one O_DIRECT pwrite from a buffer
 *                                       SHIFT bytes past a page boundary (a
 *                                       request whose segments are not whole
 *                                       pages or blocks)
 * OPTS: -t ENCRYPT_TYPE -s KEY_SIZE -k HEX_KEY -o OFFSET -l SIZELIMIT
 *       -f FLAGS -n CRYPT_NAME -N FILE_NAME -b BLOCK_SIZE -i LO_INIT0
 *       -r (open the file read-only)
 *
 * On failure it prints "lo-ioctl: IOCTL: ERRNAME (message)" and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/netlink.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../loop/aesloop_uapi.h"

static int fail(const char *what)
{
	int e = errno;

	fprintf(stderr, "lo-ioctl: %s: %s (%s)\n", what,
		strerrorname_np(e) ? strerrorname_np(e) : "?", strerror(e));
	return 1;
}

/* dio-write: FILE to the start of DEV, one O_DIRECT write from @shift past a page. */
static int dio_write(const char *dev, const char *file, size_t shift)
{
	long page = sysconf(_SC_PAGESIZE);
	int in = open(file, O_RDONLY), out;
	unsigned char *mem;
	off_t len;

	if (in < 0)
		return fail(file);
	len = lseek(in, 0, SEEK_END);
	if (len <= 0 || posix_memalign((void **)&mem, page, len + page))
		return fail("dio-write buffer");
	if (pread(in, mem + shift, len, 0) != len)
		return fail(file);
	close(in);
	out = open(dev, O_WRONLY | O_DIRECT);
	if (out < 0)
		return fail(dev);
	if (pwrite(out, mem + shift, len, 0) != len)
		return fail("O_DIRECT pwrite");
	if (fsync(out) || close(out))
		return fail(dev);
	free(mem);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: lo-ioctl status|set-status|set-fd|configure|clr|get-free DEV [FILE] [OPTS]\n");
	return 2;
}

static void put_hex(const char *name, const unsigned char *p, size_t n)
{
	printf("%s=", name);
	while (n--)
		printf("%02x", *p++);
	printf("\n");
}

static int parse_opts(int argc, char **argv, struct loop_config *cfg,
		      int *any, int *ro)
{
	struct loop_info64 *info = &cfg->info;
	const char *hex;
	int c;

	while ((c = getopt(argc, argv, "t:s:k:o:l:f:n:N:b:i:r")) != -1) {
		*any = 1;
		switch (c) {
		case 't':
			info->lo_encrypt_type = strtoul(optarg, NULL, 0);
			break;
		case 's':
			info->lo_encrypt_key_size = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			hex = optarg;
			for (size_t i = 0; i < LO_KEY_SIZE && hex[0] && hex[1]; i++, hex += 2)
				sscanf(hex, "%2hhx", &info->lo_encrypt_key[i]);
			break;
		case 'o':
			info->lo_offset = strtoll(optarg, NULL, 0);
			break;
		case 'l':
			info->lo_sizelimit = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			info->lo_flags = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			snprintf((char *)info->lo_crypt_name, LO_NAME_SIZE, "%s", optarg);
			break;
		case 'N':
			snprintf((char *)info->lo_file_name, LO_NAME_SIZE, "%s", optarg);
			break;
		case 'b':
			cfg->block_size = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			info->lo_init[0] = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			*ro = 1;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/* An unexpected errno of a race: counted once, and said. */
static int report(const char *what, int e)
{
	fprintf(stderr, "lo-ioctl: %s: %s\n", what, strerror(e));
	return 1;
}

/*
 * One of the three racers of ctl-race; returns the number of errors that
 * the stock driver never gives for that request.
 */
static long ctl_racer(int which, int index, long rounds)
{
	long n, bad = 0;
	int cfd = open("/dev/loop-control", O_RDWR);

	if (cfd < 0)
		return fail("open /dev/loop-control");
	for (n = 0; n < rounds; n++) {
		int r, e;

		switch (which) {
		case 0:
			r = ioctl(cfd, LOOP_CTL_ADD, index);
			e = errno;
			if (r < 0 && e != EEXIST)
				bad += report("ADD", e);
			break;
		case 1:
			r = ioctl(cfd, LOOP_CTL_REMOVE, index);
			e = errno;
			/* Nothing opens INDEX: EBUSY would be a leaked opener. */
			if (r < 0 && e != ENODEV)
				bad += report("REMOVE", e);
			break;
		default: {
			char name[32];
			int fd;

			r = ioctl(cfd, LOOP_CTL_GET_FREE);
			if (r < 0) {
				bad += report("GET_FREE", errno);
				break;
			}
			/* INDEX may be removed under us; any other must open. */
			if (r == index)
				break;
			snprintf(name, sizeof(name), "/dev/loop%d", r);
			fd = open(name, O_RDONLY);
			if (fd < 0)
				bad += report(name, errno);
			else
				close(fd);
			break;
		}
		}
	}
	close(cfd);
	return bad;
}

static int ctl_race(int index, long rounds)
{
	pid_t pids[2];
	long bad = 0;
	int i, status;

	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return fail("fork");
		if (pids[i] == 0)
			_exit(ctl_racer(i, index, rounds) ? 1 : 0);
	}
	bad = ctl_racer(2, index, rounds);
	for (i = 0; i < 2; i++) {
		if (waitpid(pids[i], &status, 0) < 0)
			return fail("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	printf("ctl-race: %ld rounds each of ADD, REMOVE and GET_FREE; %s\n",
	       rounds, bad ? "unexpected errors" : "no unexpected error");
	return bad ? 1 : 0;
}

/* Runs CMD and waits for it: 0 if it exited 0, 1 if not, -1 if it could not. */
static int run(char **cmd)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		fail("fork");
		return -1;
	}
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		fail("waitpid");
		return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/*
 * The kernel sends a uevent before the call that caused it returns, so
 * once CMD has exited every event it caused is in the socket: no waiting.
 */
static int uevents(const char *name, char **cmd)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int sock, status, size = 4 << 20;
	size_t len = strlen(name);
	static char buf[8192];
	ssize_t n;

	sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (sock < 0 || bind(sock, (struct sockaddr *)&addr, sizeof(addr)))
		return fail("uevent socket");
	setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	status = run(cmd);
	if (status < 0)
		return 1;
	while ((n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		const char *action = NULL, *devname = NULL, *subsys = NULL;
		char *p;

		buf[n] = 0;
		/* "ACTION@DEVPATH", then KEY=VALUE strings, NUL-separated. */
		for (p = buf + strlen(buf) + 1; p < buf + n; p += strlen(p) + 1) {
			if (!strncmp(p, "ACTION=", 7))
				action = p + 7;
			else if (!strncmp(p, "DEVNAME=", 8))
				devname = p + 8;
			else if (!strncmp(p, "SUBSYSTEM=", 10))
				subsys = p + 10;
		}
		if (!action || !devname || !subsys || strcmp(subsys, "block") ||
		    (strcmp(action, "add") && strcmp(action, "remove")) ||
		    strncmp(devname, name, len) ||
		    (devname[len] && devname[len] != 'p'))
			continue;
		printf("%s %s\n", action, devname);
	}
	if (n < 0 && errno == ENOBUFS)
		return fail("uevent socket overrun");
	if (status) {
		fprintf(stderr, "lo-ioctl: uevents: %s failed\n", cmd[0]);
		return 1;
	}
	return 0;
}

static int mmap_run(const char *dev, size_t bytes, char **cmd)
{
	volatile const unsigned char *p;
	unsigned int sum = 0;
	int fd, status;

	fd = open(dev, O_RDONLY);
	if (fd < 0)
		return fail(dev);
	p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail("mmap");
	for (size_t i = 0; i < bytes; i += 4096)
		sum += p[i];
	status = run(cmd);
	if (status < 0)
		return 1;
	munmap((void *)p, bytes);
	close(fd);
	if (status) {
		fprintf(stderr, "lo-ioctl: mmap-run: %s failed (sum %u)\n", cmd[0], sum);
		return 1;
	}
	return 0;
}

static int bind_race(int index, const char *file, long rounds)
{
	struct loop_config cfg;
	char name[32];
	long r, bad = 0;
	int cfd, fd, ffd, status;
	pid_t pid;

	snprintf(name, sizeof(name), "/dev/loop%d", index);
	cfd = open("/dev/loop-control", O_RDWR);
	ffd = open(file, O_RDWR);
	if (cfd < 0 || ffd < 0)
		return fail("open");
	for (r = 0; r < rounds; r++) {
		if (ioctl(cfd, LOOP_CTL_ADD, index) < 0 && errno != EEXIST)
			return fail("LOOP_CTL_ADD");
		fd = open(name, O_RDWR);
		if (fd < 0)
			return fail(name);
		pid = fork();
		if (pid < 0)
			return fail("fork");
		if (pid == 0) {
			/* Until one detach lands: early ones find it unbound. */
			for (int i = 0; i < 100000; i++)
				if (ioctl(fd, LOOP_CLR_FD, 0) == 0)
					break;
			_exit(0);
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = ffd;
		cfg.info.lo_flags = LO_FLAGS_PARTSCAN;
		cfg.info.lo_encrypt_type = LO_CRYPT_AES;
		cfg.info.lo_encrypt_key_size = 16;
		memset(cfg.info.lo_encrypt_key, 0x5a, 16);
		if (ioctl(fd, LOOP_CONFIGURE, &cfg) < 0)
			bad += report("LOOP_CONFIGURE", errno);
		if (waitpid(pid, &status, 0) < 0)
			return fail("waitpid");
		ioctl(fd, LOOP_CLR_FD, 0);
		close(fd);
		if (ioctl(cfd, LOOP_CTL_REMOVE, index) < 0)
			bad += report("LOOP_CTL_REMOVE", errno);
	}
	printf("bind-race: %ld rounds; %ld unexpected errors\n", rounds, bad);
	return bad ? 1 : 0;
}

/*
 * sysfs-race's binder: ROUNDS attaches and detaches of FILE on DEV, the file
 * opened for each attach and closed after it, as losetup does: the detach
 * then drops the file's last reference while readers may be in sysfs.
 */
static int sysfs_bind(const char *dev, const char *file, long rounds, int pfd)
{
	struct loop_config cfg;
	long r, bad = 0;
	int fd, ffd;

	for (r = 0; r < rounds; r++) {
		ffd = open(file, O_RDWR);
		if (ffd < 0)
			return fail(file);
		fd = open(dev, O_RDWR);
		if (fd < 0)
			return fail(dev);
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = ffd;
		if (ioctl(fd, LOOP_CONFIGURE, &cfg) < 0)
			bad += report("LOOP_CONFIGURE", errno);
		close(fd);
		close(ffd);
		if (write(pfd, ".", 1) != 1)
			return fail("progress");
		fd = open(dev, O_RDWR);
		if (fd < 0)
			return fail(dev);
		if (ioctl(fd, LOOP_CLR_FD, 0) < 0)
			bad += report("LOOP_CLR_FD", errno);
		close(fd);
		if (write(pfd, ".", 1) != 1)
			return fail("progress");
	}
	return bad ? 1 : 0;
}

/*
 * sysfs-race: the loop/ group of DEV against attach and detach.  The group
 * is there only while a file is bound; util-linux reads a device with the
 * group as in use and takes the binding from backing_file, so a read that
 * opens it must never find it empty.
 */
static int sysfs_race(const char *dev, const char *file, long rounds,
		      const char *progress)
{
	const char *name = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	long reads = 0, found = 0, empty = 0;
	int pfd, sfd, status;
	char path[96], buf[4096];
	ssize_t n;
	pid_t pid;

	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	pfd = open(progress, O_WRONLY | O_APPEND);
	if (pfd < 0)
		return fail(progress);
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		/* stopped with the reader, when a hang detector kills it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(sysfs_bind(dev, file, rounds, pfd));
	}
	for (;;) {
		pid_t done = waitpid(pid, &status, WNOHANG);

		if (done < 0)
			return fail("waitpid");
		if (done == pid)
			break;
		reads++;
		sfd = open(path, O_RDONLY);
		if (sfd >= 0) {
			found++;
			n = read(sfd, buf, sizeof(buf));
			/* An error is the group going away under the reader. */
			if (n == 0 || (n == 1 && buf[0] == '\n'))
				empty++;
			close(sfd);
		}
	}
	printf("sysfs-race: %ld rounds; %ld reads, %ld with the group there, %ld empty\n",
	       rounds, reads, found, empty);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "lo-ioctl: sysfs-race: the binder failed\n");
		return 1;
	}
	return empty ? 2 : 0;
}

static unsigned long long fuzz_state;

static unsigned long long fuzz_next(void)
{
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545F4914F6CDD1DULL;
}

/*
 * A random argument: a good buffer, NULL, a kernel address, or a number;
 * for the commands that take a number, as often a valid one.
 */
static unsigned long fuzz_arg(unsigned long cmd, void *good, int ffd)
{
	if (fuzz_next() & 1) {
		switch (cmd) {
		case LOOP_SET_FD:
		case LOOP_CHANGE_FD:
			return ffd;
		case LOOP_SET_DIRECT_IO:
			return fuzz_next() & 1;
		case LOOP_SET_BLOCK_SIZE:
			return 512UL << (fuzz_next() % 4);
		case LOOP_CLR_FD:
		case LOOP_SET_CAPACITY:
			return 0;
		}
	}
	switch (fuzz_next() % 6) {
	case 0:
		return 0;
	case 1:
		return 0xffff888000000000UL + (fuzz_next() & 0xfffff);
	case 2:
		return ffd;
	case 3:
		return fuzz_next() & 0xffff;
	default:
		return (unsigned long)good;
	}
}

/*
 * REOPEN (fuzz-mt): each ioctl on a fresh open of its device, closed after,
 * as short-lived openers (udev, losetup) do; an open that fails (a device
 * removed, or detaching) skips that ioctl.  Otherwise the devices stay open
 * and are cleared at the end.
 */
static int fuzz(unsigned long long seed, long count, const char *file,
		char **devs, int ndev, int reopen)
{
	static const unsigned long cmds[] = {
		LOOP_SET_FD, LOOP_CLR_FD, LOOP_SET_STATUS, LOOP_GET_STATUS,
		LOOP_SET_STATUS64, LOOP_GET_STATUS64, LOOP_CHANGE_FD,
		LOOP_SET_CAPACITY, LOOP_SET_DIRECT_IO, LOOP_SET_BLOCK_SIZE,
		LOOP_CONFIGURE, LOOP_MULTI_KEY_SETUP, LOOP_MULTI_KEY_SETUP_V3,
		LOOP_RECOMPUTE_DEV_SIZE, 0x4C0B, 0x4CFF, 0x1234,
	};
	static unsigned char buf[LOOP_MULTI_KEY_SLOTS_V3 * LOOP_MULTI_KEY_SLOT_SIZE + 256];
	int fds[16], ffd, ok = 0, i;
	long n;

	fuzz_state = seed | 1;
	ffd = open(file, O_RDWR);
	if (ffd < 0 || ndev > 16)
		return fail(file);
	for (i = 0; i < ndev && !reopen; i++) {
		fds[i] = open(devs[i], O_RDWR);
		if (fds[i] < 0)
			return fail(devs[i]);
	}
	for (n = 0; n < count; n++) {
		int d = (int)(fuzz_next() % ndev);
		int fd = reopen ? open(devs[d], O_RDWR) : fds[d];
		unsigned long cmd = cmds[fuzz_next() % (sizeof(cmds) / sizeof(cmds[0]))];
		struct loop_config *cfg = (struct loop_config *)buf;
		struct loop_info64 *info = cmd == LOOP_CONFIGURE ? &cfg->info :
					   (struct loop_info64 *)buf;

		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (unsigned char)fuzz_next();
		/* Mostly plausible values, so the deeper paths run too. */
		if (fuzz_next() & 1) {
			static const unsigned int sizes[] = { 0, 7, 16, 24, 32, 33, 0xffffffff };
			static const unsigned int types[] = { 0, 16, 99, 1, 18 };

			info->lo_encrypt_type = types[fuzz_next() % 5];
			info->lo_encrypt_key_size = sizes[fuzz_next() % 7];
			info->lo_offset = (fuzz_next() & 1) ?
					  (fuzz_next() & 0xffff) * 512 :
					  (unsigned long long)-(long long)((fuzz_next() & 0xff) * 512);
			info->lo_sizelimit = (fuzz_next() & 1) ? 0 : fuzz_next() & 0xfffff;
			info->lo_flags = fuzz_next() & 0x1f;
			if (cmd == LOOP_CONFIGURE) {
				cfg->fd = (fuzz_next() & 3) ? ffd : (int)(fuzz_next() & 0xff);
				cfg->block_size = (fuzz_next() & 1) ? 512U << (fuzz_next() % 4) :
						  (unsigned int)fuzz_next();
			}
		}
		if (fd < 0)
			continue;
		if (ioctl(fd, cmd, fuzz_arg(cmd, buf, ffd)) == 0)
			ok++;
		if (reopen)
			close(fd);
	}
	for (i = 0; i < ndev && !reopen; i++) {
		ioctl(fds[i], LOOP_CLR_FD, 0);
		close(fds[i]);
	}
	close(ffd);
	printf("fuzz: %ld ioctls, %d succeeded\n", count, ok);
	return 0;
}

/* Device numbers of fuzz-mt: the DEVs' and four above the highest. */
static int fuzz_indices(char **devs, int ndev, int *idx)
{
	int i, n = 0, top = 0;

	for (i = 0; i < ndev && i < 12; i++) {
		const char *p = strpbrk(devs[i], "0123456789");

		idx[n] = p ? atoi(p) : 0;
		if (idx[n] > top)
			top = idx[n];
		n++;
	}
	for (i = 1; i <= 4; i++)
		idx[n++] = top + i;
	return n;
}

/* ADD, REMOVE and GET_FREE of fuzz-mt's devices; every error is expected. */
static int fuzz_ctl(long count, const int *idx, int nidx)
{
	int cfd = open("/dev/loop-control", O_RDWR);
	long n, ok = 0;

	if (cfd < 0)
		return fail("/dev/loop-control");
	for (n = 0; n < count; n++) {
		static const unsigned long ops[] = {
			LOOP_CTL_ADD, LOOP_CTL_REMOVE, LOOP_CTL_GET_FREE
		};
		unsigned long op = ops[fuzz_next() % 3];
		long arg = (fuzz_next() & 15) ? idx[fuzz_next() % nidx] :
			   (long)(fuzz_next() % 24) - 4;

		if (ioctl(cfd, op, arg) >= 0)
			ok++;
	}
	/* The DEVs are there again for the caller; the four extra ones go. */
	for (n = 0; n < nidx - 4; n++)
		ioctl(cfd, LOOP_CTL_ADD, idx[n]);
	for (n = nidx - 4; n < nidx; n++)
		ioctl(cfd, LOOP_CTL_REMOVE, idx[n]);
	close(cfd);
	printf("fuzz-mt: %ld loop-control requests, %ld succeeded\n", count, ok);
	return 0;
}

/* Opens, reads, writes and closes fuzz-mt's devices under it all. */
static int fuzz_io(long count, const int *idx, int nidx)
{
	static char page[4096];
	long n, ok = 0;

	for (n = 0; n < count; n++) {
		char name[32];
		off_t at = (off_t)(fuzz_next() % 1024) * 4096;
		int fd;

		snprintf(name, sizeof(name), "/dev/loop%d", idx[fuzz_next() % nidx]);
		fd = open(name, (fuzz_next() & 1) ? O_RDWR : O_RDONLY);
		if (fd < 0)
			continue;
		if (fuzz_next() & 1) {
			if (pread(fd, page, sizeof(page), at) >= 0)
				ok++;
		} else if (pwrite(fd, page, sizeof(page), at) >= 0) {
			ok++;
		}
		close(fd);
	}
	printf("fuzz-mt: %ld opens with I/O, %ld transfers succeeded\n", count, ok);
	return 0;
}

/*
 * PROCS ioctl fuzzers on the same devices, a loop-control fuzzer and an
 * I/O process at once; each process has its own seed (SEED + its number).
 * Only setup failures count: what the kernel must survive is checked by
 * the kernel log (guest-dmesg) and the unload afterwards.
 */
static int fuzz_mt(unsigned long long seed, long count, int procs,
		   const char *file, char **devs, int ndev)
{
	int idx[16], nidx = fuzz_indices(devs, ndev, idx);
	pid_t pids[18];
	int i, status, bad = 0, nproc = procs + 2;

	if (procs < 1 || procs > 16)
		return usage();
	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return fail("fork");
		if (pids[i] == 0) {
			fuzz_state = (seed + (unsigned long long)i) | 1;
			if (i == procs)
				_exit(fuzz_ctl(count, idx, nidx));
			if (i == procs + 1)
				_exit(fuzz_io(count, idx, nidx));
			_exit(fuzz(seed + (unsigned long long)i, count, file, devs, ndev, 1));
		}
	}
	for (i = 0; i < nproc; i++) {
		if (waitpid(pids[i], &status, 0) < 0)
			return fail("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	return bad ? 1 : 0;
}

struct stall_call {
	int fd;
	unsigned long cmd;
	void *arg;
	int ret, err;
};

static void *stall_ioctl(void *p)
{
	struct stall_call *c = p;

	c->ret = ioctl(c->fd, c->cmd, c->arg);
	c->err = errno;
	return NULL;
}

/* Whether another process gets LOOP_GET_STATUS64 of DEV answered in 60 s. */
static int status_answered(const char *dev)
{
	struct loop_info64 info;
	int status, i;
	pid_t pid = fork();

	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		int fd = open(dev, O_RDONLY);

		_exit(fd >= 0 && ioctl(fd, LOOP_GET_STATUS64, &info) == 0 ? 0 : 1);
	}
	for (i = 0; i < 600; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		usleep(100000);
	}
	/* Still waiting: it is blocked behind the stalled call. */
	return 0;
}

static int stall(const char *dev, const char *what)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_copy copy = { 0 };
	struct stall_call call;
	struct uffd_msg msg;
	unsigned char *area, *fill;
	pthread_t t;
	int uffd, answered;

	call.fd = open(dev, O_RDWR);
	if (call.fd < 0)
		return fail(dev);
	fill = calloc(1, page);
	area = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!fill || area == MAP_FAILED)
		return fail("memory");
	if (!strcmp(what, "multi")) {
		call.cmd = LOOP_MULTI_KEY_SETUP_V3;
	} else if (!strcmp(what, "status")) {
		call.cmd = LOOP_SET_STATUS64;
		if (ioctl(call.fd, LOOP_GET_STATUS64, fill))
			return fail("LOOP_GET_STATUS64");
	} else {
		return usage();
	}
	call.arg = area;
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return fail("userfaultfd");
	reg.range.start = (unsigned long)area;
	reg.range.len = page;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return fail("UFFDIO_REGISTER");
	if (pthread_create(&t, NULL, stall_ioctl, &call))
		return fail("pthread_create");
	/* Once the fault is reported, the kernel is inside the copy. */
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		return fail("userfaultfd read");
	answered = status_answered(dev);
	copy.dst = (unsigned long)area;
	copy.src = (unsigned long)fill;
	copy.len = page;
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		return fail("UFFDIO_COPY");
	pthread_join(t, NULL);
	if (call.ret) {
		errno = call.err;
		return fail(what);
	}
	printf("stall %s: LOOP_GET_STATUS64 %s while the argument was held back\n",
	       what, answered ? "answered" : "NOT answered");
	return answered ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct loop_config cfg;
	struct loop_info64 info;
	const char *cmd, *dev;
	int fd, ffd, any = 0, ro = 0, n;

	if (argc < 2)
		return usage();
	cmd = argv[1];
	if (!strcmp(cmd, "get-free")) {
		fd = open("/dev/loop-control", O_RDWR);
		if (fd < 0)
			return fail("open /dev/loop-control");
		n = ioctl(fd, LOOP_CTL_GET_FREE);
		if (n < 0)
			return fail("LOOP_CTL_GET_FREE");
		printf("%d\n", n);
		return 0;
	}
	if (!strcmp(cmd, "as") && argc >= 4) {
		uid_t uid = (uid_t)strtoul(argv[2], NULL, 0);

		/* A non-root uid after exec keeps no capabilities. */
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			return fail("setuid");
		argv[2] = argv[0];
		execv("/proc/self/exe", argv + 2);
		return fail("execv");
	}
	if (!strcmp(cmd, "uevents") && argc >= 4)
		return uevents(argv[2], argv + 3);
	if (!strcmp(cmd, "mmap-run") && argc >= 5)
		return mmap_run(argv[2], strtoul(argv[3], NULL, 0), argv + 4);
	if (!strcmp(cmd, "bind-race") && argc == 5)
		return bind_race(atoi(argv[2]), argv[3], strtol(argv[4], NULL, 0));
	if (!strcmp(cmd, "ctl-race") && argc == 4)
		return ctl_race(atoi(argv[2]), strtol(argv[3], NULL, 0));
	if (!strcmp(cmd, "fuzz") && argc >= 6)
		return fuzz(strtoull(argv[2], NULL, 0), strtol(argv[3], NULL, 0),
			    argv[4], argv + 5, argc - 5, 0);
	if (!strcmp(cmd, "excl") && argc >= 4) {
		int rc;

		fd = open(argv[2], O_RDONLY | O_EXCL);
		if (fd < 0)
			return fail(argv[2]);
		rc = run(argv + 3);
		close(fd);
		return rc ? 1 : 0;
	}
	if (!strcmp(cmd, "stall") && argc == 4)
		return stall(argv[2], argv[3]);
	if (!strcmp(cmd, "fuzz-mt") && argc >= 7 && argc <= 6 + 12)
		return fuzz_mt(strtoull(argv[2], NULL, 0), strtol(argv[3], NULL, 0),
			       atoi(argv[4]), argv[5], argv + 6, argc - 6);
	if (!strcmp(cmd, "sysfs-race") && argc == 6)
		return sysfs_race(argv[2], argv[3], strtol(argv[4], NULL, 0), argv[5]);
	if (!strcmp(cmd, "dio-write") && argc == 5)
		return dio_write(argv[2], argv[3], strtoul(argv[4], NULL, 0));
	if (argc < 3)
		return usage();
	dev = argv[2];
	memset(&cfg, 0, sizeof(cfg));
	fd = open(dev, O_RDWR);
	if (fd < 0)
		return fail(dev);

	if (!strcmp(cmd, "zeroout") && argc == 5) {
		uint64_t range[2] = { strtoull(argv[3], NULL, 0),
				      strtoull(argv[4], NULL, 0) };

		if (ioctl(fd, BLKZEROOUT, range))
			return fail("BLKZEROOUT");
		return 0;
	}
	if (!strcmp(cmd, "status")) {
		if (ioctl(fd, LOOP_GET_STATUS64, &info))
			return fail("LOOP_GET_STATUS64");
		printf("number=%u\noffset=%lld\nsizelimit=%llu\nflags=%#x\n",
		       info.lo_number, (long long)info.lo_offset,
		       (unsigned long long)info.lo_sizelimit, info.lo_flags);
		printf("encrypt_type=%u\nencrypt_key_size=%u\n",
		       info.lo_encrypt_type, info.lo_encrypt_key_size);
		printf("file_name=%.64s\ncrypt_name=%.64s\n",
		       (char *)info.lo_file_name, (char *)info.lo_crypt_name);
		printf("init=%llu\n", (unsigned long long)info.lo_init[0]);
		put_hex("encrypt_key", info.lo_encrypt_key, LO_KEY_SIZE);
		return 0;
	}
	if (!strcmp(cmd, "status-old")) {
		struct loop_info old;

		if (ioctl(fd, LOOP_GET_STATUS, &old))
			return fail("LOOP_GET_STATUS");
		printf("number=%d\noffset=%d\nflags=%#x\nencrypt_type=%d\nencrypt_key_size=%d\nname=%.64s\n",
		       old.lo_number, old.lo_offset, old.lo_flags,
		       old.lo_encrypt_type, old.lo_encrypt_key_size, old.lo_name);
		put_hex("encrypt_key", old.lo_encrypt_key, LO_KEY_SIZE);
		return 0;
	}
	if (!strcmp(cmd, "set-status-old")) {
		struct loop_info old;

		optind = 3;
		if (parse_opts(argc, argv, &cfg, &any, &ro))
			return usage();
		memset(&old, 0, sizeof(old));
		old.lo_offset = (int)cfg.info.lo_offset;
		old.lo_encrypt_type = (int)cfg.info.lo_encrypt_type;
		old.lo_encrypt_key_size = (int)cfg.info.lo_encrypt_key_size;
		old.lo_flags = (int)cfg.info.lo_flags;
		memcpy(old.lo_encrypt_key, cfg.info.lo_encrypt_key, LO_KEY_SIZE);
		memcpy(old.lo_name, cfg.info.lo_crypt_name, LO_NAME_SIZE);
		if (ioctl(fd, LOOP_SET_STATUS, &old))
			return fail("LOOP_SET_STATUS");
		return 0;
	}
	if (!strcmp(cmd, "set-autoclear") && argc == 4) {
		if (ioctl(fd, LOOP_GET_STATUS64, &info))
			return fail("LOOP_GET_STATUS64");
		if (atoi(argv[3]))
			info.lo_flags |= LO_FLAGS_AUTOCLEAR;
		else
			info.lo_flags &= ~LO_FLAGS_AUTOCLEAR;
		if (ioctl(fd, LOOP_SET_STATUS64, &info))
			return fail("LOOP_SET_STATUS64");
		return 0;
	}
	if (!strcmp(cmd, "clr")) {
		if (ioctl(fd, LOOP_CLR_FD, 0))
			return fail("LOOP_CLR_FD");
		return 0;
	}
	if (!strcmp(cmd, "multi") && argc == 4) {
		static unsigned char slots[LOOP_MULTI_KEY_SLOTS_V3][LOOP_MULTI_KEY_SLOT_SIZE];
		const int size = LOOP_MULTI_KEY_SLOT_SIZE;
		char line[256];
		FILE *f = fopen(argv[3], "r");
		int count = 0, v3;

		if (!f)
			return fail(argv[3]);
		while (count < LOOP_MULTI_KEY_SLOTS_V3 && fgets(line, sizeof(line), f))
			for (int i = 0; i < size && sscanf(line + 2 * i, "%2hhx", &slots[count][i]) == 1; i++)
				if (i == size - 1)
					count++;
		fclose(f);
		v3 = count == LOOP_MULTI_KEY_SLOTS_V3;
		if (ioctl(fd, v3 ? LOOP_MULTI_KEY_SETUP_V3 : LOOP_MULTI_KEY_SETUP, slots))
			return fail(v3 ? "LOOP_MULTI_KEY_SETUP_V3" : "LOOP_MULTI_KEY_SETUP");
		return 0;
	}
	if (!strcmp(cmd, "raw") && argc >= 4) {
		unsigned long arg = argc > 4 ? strtoul(argv[4], NULL, 0) : 0;

		n = ioctl(fd, strtoul(argv[3], NULL, 0), arg);
		if (n < 0)
			return fail("ioctl");
		printf("%d\n", n);
		return 0;
	}
	if (!strcmp(cmd, "set-status")) {
		optind = 3;
		if (parse_opts(argc, argv, &cfg, &any, &ro))
			return usage();
		if (ioctl(fd, LOOP_SET_STATUS64, &cfg.info))
			return fail("LOOP_SET_STATUS64");
		return 0;
	}
	if (argc < 4)
		return usage();
	optind = 4;
	if (parse_opts(argc, argv, &cfg, &any, &ro))
		return usage();
	ffd = open(argv[3], ro ? O_RDONLY : O_RDWR);
	if (ffd < 0)
		return fail(argv[3]);
	if (!strcmp(cmd, "change-fd")) {
		if (ioctl(fd, LOOP_CHANGE_FD, ffd))
			return fail("LOOP_CHANGE_FD");
		return 0;
	}
	if (!strcmp(cmd, "set-fd")) {
		if (ioctl(fd, LOOP_SET_FD, ffd))
			return fail("LOOP_SET_FD");
		if (any && ioctl(fd, LOOP_SET_STATUS64, &cfg.info))
			return fail("LOOP_SET_STATUS64");
		return 0;
	}
	if (!strcmp(cmd, "configure")) {
		cfg.fd = ffd;
		if (ioctl(fd, LOOP_CONFIGURE, &cfg))
			return fail("LOOP_CONFIGURE");
		return 0;
	}
	return usage();
}
