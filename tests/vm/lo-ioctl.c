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
 *                                       key sizes and bad pointers; FILE is
 *                                       the only backing file it binds
 * OPTS: -t ENCRYPT_TYPE -s KEY_SIZE -k HEX_KEY -o OFFSET -l SIZELIMIT
 *       -f FLAGS -n CRYPT_NAME -b BLOCK_SIZE -r (open the file read-only)
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
#include <sys/ioctl.h>
#include <unistd.h>

#define LOOP_MULTI_KEY_SETUP	0x4C4D
#define LOOP_MULTI_KEY_SETUP_V3	0x4C4E

static int fail(const char *what)
{
	int e = errno;

	fprintf(stderr, "lo-ioctl: %s: %s (%s)\n", what,
		strerrorname_np(e) ? strerrorname_np(e) : "?", strerror(e));
	return 1;
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

	while ((c = getopt(argc, argv, "t:s:k:o:l:f:n:b:r")) != -1) {
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
		case 'b':
			cfg->block_size = strtoul(optarg, NULL, 0);
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

static unsigned long long fuzz_state;

static unsigned long long fuzz_next(void)
{
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545F4914F6CDD1DULL;
}

/* A random argument: a good buffer, NULL, a kernel address, or a number. */
static unsigned long fuzz_arg(void *good, int ffd)
{
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

static int fuzz(unsigned long long seed, long count, const char *file,
		char **devs, int ndev)
{
	static const unsigned long cmds[] = {
		LOOP_SET_FD, LOOP_CLR_FD, LOOP_SET_STATUS, LOOP_GET_STATUS,
		LOOP_SET_STATUS64, LOOP_GET_STATUS64, LOOP_CHANGE_FD,
		LOOP_SET_CAPACITY, LOOP_SET_DIRECT_IO, LOOP_SET_BLOCK_SIZE,
		LOOP_CONFIGURE, LOOP_MULTI_KEY_SETUP, LOOP_MULTI_KEY_SETUP_V3,
		0x4C52, 0x4C0B, 0x4CFF, 0x1234,
	};
	static unsigned char buf[65 * 32 + 256];
	int fds[16], ffd, ok = 0, i;
	long n;

	fuzz_state = seed | 1;
	ffd = open(file, O_RDWR);
	if (ffd < 0 || ndev > 16)
		return fail(file);
	for (i = 0; i < ndev; i++) {
		fds[i] = open(devs[i], O_RDWR);
		if (fds[i] < 0)
			return fail(devs[i]);
	}
	for (n = 0; n < count; n++) {
		int fd = fds[fuzz_next() % ndev];
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
		if (ioctl(fd, cmd, fuzz_arg(buf, ffd)) == 0)
			ok++;
	}
	for (i = 0; i < ndev; i++) {
		ioctl(fds[i], LOOP_CLR_FD, 0);
		close(fds[i]);
	}
	close(ffd);
	printf("fuzz: %ld ioctls, %d succeeded\n", count, ok);
	return 0;
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
	if (!strcmp(cmd, "fuzz") && argc >= 6)
		return fuzz(strtoull(argv[2], NULL, 0), strtol(argv[3], NULL, 0),
			    argv[4], argv + 5, argc - 5);
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
	if (!strcmp(cmd, "clr")) {
		if (ioctl(fd, LOOP_CLR_FD, 0))
			return fail("LOOP_CLR_FD");
		return 0;
	}
	if (!strcmp(cmd, "multi") && argc == 4) {
		static unsigned char slots[65][32];
		char line[256];
		FILE *f = fopen(argv[3], "r");
		int count = 0;

		if (!f)
			return fail(argv[3]);
		while (count < 65 && fgets(line, sizeof(line), f))
			for (int i = 0; i < 32 && sscanf(line + 2 * i, "%2hhx", &slots[count][i]) == 1; i++)
				if (i == 31)
					count++;
		fclose(f);
		if (ioctl(fd, count == 65 ? LOOP_MULTI_KEY_SETUP_V3 : LOOP_MULTI_KEY_SETUP, slots))
			return fail(count == 65 ? "LOOP_MULTI_KEY_SETUP_V3" : "LOOP_MULTI_KEY_SETUP");
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
