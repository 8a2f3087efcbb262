// SPDX-License-Identifier: GPL-2.0
/*
 * aesloop-reencrypt.c - rewrite a loop-AES volume that is not in use from
 * one key setup to another (single-key to multi-key-v3, a new key file or
 * passphrase, another key length), in place, crash-safe and resumable
 * (reencrypt.h: the journal; aesloop-reencrypt.8: the user's side).
 *
 * The keys are read as losetup reads them (lib/keydrive.c, lib/keysetup*.c),
 * the sectors go through aes/loop_aes.c as aesloop-pipe's do.  This file
 * holds the command line, the checks that the volume is free and that the
 * old key is right, the key check values of the journal, and the progress
 * line.
 */
#define _GNU_SOURCE		/* memfd_create */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <blkid.h>
#include <libgen.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <openssl/evp.h>

#include "engines.h"
#include "libaesloop.h"
#include "loop_aes.h"
#include "reencrypt.h"

#define PROG		"aesloop-reencrypt"

/* Plaintext the old key must show a known signature in (libblkid), bytes. */
#define PROBE_LEN	(1024 * 1024)

enum {
	OPT_VERSION = 0x100, OPT_JOURNAL, OPT_CHUNK, OPT_FORCE,
	OPT_NEW_ENCRYPTION, OPT_NEW_PHASH, OPT_NEW_PSEED, OPT_NEW_ITERCOUNTK,
	OPT_NEW_GPGKEY, OPT_NEW_GPGHOME, OPT_NEW_CLEARTEXTKEY, OPT_NEW_PASSFD,
};

static const struct option long_options[] = {
	{ "encryption", required_argument, NULL, 'e' },
	{ "phash", required_argument, NULL, 'H' },
	{ "pseed", required_argument, NULL, 'S' },
	{ "itercountk", required_argument, NULL, 'C' },
	{ "gpgkey", required_argument, NULL, 'K' },
	{ "gpghome", required_argument, NULL, 'G' },
	{ "cleartextkey", required_argument, NULL, 'P' },
	{ "pass-fd", required_argument, NULL, 'p' },
	{ "offset", required_argument, NULL, 'o' },
	{ "sizelimit", required_argument, NULL, 's' },
	{ "new-encryption", required_argument, NULL, OPT_NEW_ENCRYPTION },
	{ "new-phash", required_argument, NULL, OPT_NEW_PHASH },
	{ "new-pseed", required_argument, NULL, OPT_NEW_PSEED },
	{ "new-itercountk", required_argument, NULL, OPT_NEW_ITERCOUNTK },
	{ "new-gpgkey", required_argument, NULL, OPT_NEW_GPGKEY },
	{ "new-gpghome", required_argument, NULL, OPT_NEW_GPGHOME },
	{ "new-cleartextkey", required_argument, NULL, OPT_NEW_CLEARTEXTKEY },
	{ "new-pass-fd", required_argument, NULL, OPT_NEW_PASSFD },
	{ "journal", required_argument, NULL, OPT_JOURNAL },
	{ "chunk-size", required_argument, NULL, OPT_CHUNK },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *out)
{
	fputs("usage: " PROG " [options] -e CIPHER [old key options] [--new-... options] VOLUME\n"
	      "Rewrite a loop-AES volume (a file or a block device, not in use) from its old\n"
	      "keys to new ones, in place.  A journal makes it safe to stop at any moment:\n"
	      "the same command run again finishes the job.\n"
	      "The old keys, as losetup takes them:\n"
	      "  -e, --encryption NAME      AES128, AES192 or AES256 (AES is AES128)\n"
	      "  -P, --cleartextkey FILE    the passphrase or key lines are in FILE\n"
	      "  -p, --pass-fd NUM          ... or are read from file descriptor NUM\n"
	      "  -K, --gpgkey FILE          the key lines are in gpg-encrypted FILE\n"
	      "  -G, --gpghome DIR          home directory for gpg\n"
	      "  -H, --phash NAME           passphrase hash (sha256, ..., unhashed2)\n"
	      "  -S, --pseed STRING         seed appended to the passphrase\n"
	      "  -C, --itercountk NUM       iterate the key NUM thousand times\n"
	      "The new keys: --new-encryption (default: the old one), --new-cleartextkey,\n"
	      "  --new-pass-fd, --new-gpgkey, --new-gpghome, --new-phash, --new-pseed,\n"
	      "  --new-itercountk, as above; a new passphrase on the terminal is asked twice.\n"
	      "The volume:\n"
	      "  -o, --offset [@]NUM        the data starts NUM bytes in (@: not in the IV)\n"
	      "  -s, --sizelimit NUM        at most NUM bytes of data\n"
	      "      --journal FILE         the journal (default VOLUME.reencrypt for a file;\n"
	      "                             required for a block device, on another disk)\n"
	      "      --chunk-size NUM       bytes rewritten per journal step (default 4 MiB)\n"
	      "      --force                go on even if the old keys show no known file\n"
	      "                             system, swap or partition table, or wrong IVs\n"
	      "  -v, --verbose              say what the keys are and what was found\n"
	      "  -q, --quiet                no progress line on the terminal\n"
	      "  -h, --help                 this help; --version: the version\n", out);
}

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* A decimal number (or 0x hex), no sign, at most @max; -1 if not. */
static int parse_num(const char *s, unsigned long long max,
		     unsigned long long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end || *v > max ? -1 : 0;
}

/**
 * struct volume - the volume and its data area
 * @path:   as given
 * @fd:     open read-write (block devices with O_EXCL)
 * @st:     its stat
 * @size:   bytes, the whole file or device
 */
struct volume {
	const char *path;
	int fd;
	struct stat st;
	uint64_t size;
};

/*
 * Is a loop device bound to @v?  Each bound one (it has a loop/ folder in
 * sysfs) is asked with LOOP_GET_STATUS64, which names its backing file by
 * device and inode (a block device: lo_rdevice), whatever its path was;
 * the key bytes it hands back (zeros from aesloop) are wiped.  A device
 * that cannot be opened (no permission) is judged by the path in sysfs.
 */
static const char *loop_bound(const struct volume *v, char *dev, size_t len)
{
	DIR *d = opendir("/sys/block");
	const char *found = NULL;
	struct dirent *e;

	if (!d)
		return NULL;
	while (!found && (e = readdir(d))) {
		char path[PATH_MAX], file[PATH_MAX];
		struct loop_info64 li;
		struct stat st;
		ssize_t n;
		int fd, rc;

		if (strncmp(e->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/loop", e->d_name);
		if (access(path, F_OK))
			continue;	/* not bound */
		snprintf(dev, len, "/dev/%s", e->d_name);
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			rc = ioctl(fd, LOOP_GET_STATUS64, &li);
			close(fd);
			memzero_explicit(li.lo_encrypt_key, sizeof(li.lo_encrypt_key));
			if (!rc) {
				if (S_ISBLK(v->st.st_mode) ?
				    li.lo_rdevice == v->st.st_rdev :
				    li.lo_device == v->st.st_dev && li.lo_inode == v->st.st_ino)
					found = dev;
				continue;
			}
		}
		strcat(path, "/backing_file");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, file, sizeof(file) - 1);
		close(fd);
		if (n <= 0)
			continue;
		file[n] = 0;
		file[strcspn(file, "\n")] = 0;
		if (stat(file, &st))
			continue;
		if (S_ISBLK(v->st.st_mode) ? S_ISBLK(st.st_mode) &&
		    st.st_rdev == v->st.st_rdev :
		    st.st_dev == v->st.st_dev && st.st_ino == v->st.st_ino)
			found = dev;
	}
	closedir(d);
	return found;
}

/* Refuse a volume that a loop device is bound to (@when: "", "now"). */
static void check_not_bound(const struct volume *v, const char *when)
{
	char dev[NAME_MAX + 8];

	if (loop_bound(v, dev, sizeof(dev)))
		die(1, "%s is bound to %s%s%s: detach it first (losetup -d %s); it must not be in use while it is rewritten",
		    v->path, dev, *when ? " " : "", when, dev);
}

/*
 * Open the volume for the conversion: a block device exclusively (nothing
 * has it mounted, and nothing can mount it directly meanwhile), a regular
 * file locked against a second aesloop-reencrypt; neither bound to a loop
 * device (which an exclusive open does not keep out: the run checks again
 * at every chunk).
 */
static void volume_open(struct volume *v, const char *path)
{
	struct stat st;

	v->path = path;
	if (stat(path, &st))
		die(1, "cannot open %s: %s", path, strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		/*
		 * Exclusively from the first open: a close after an open for
		 * writing without it would make udev probe the device again.
		 */
		v->fd = open(path, O_RDWR | O_EXCL | O_CLOEXEC);
		if (v->fd < 0 && errno == EBUSY)
			die(1, "%s is in use (mounted, swap, or held by device mapper or md): it must not be while it is rewritten",
			    path);
	} else if (S_ISREG(st.st_mode)) {
		v->fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
	} else {
		die(1, "%s is neither a regular file nor a block device", path);
	}
	if (v->fd < 0)
		die(1, "cannot open %s read-write: %s", path, strerror(errno));
	if (fstat(v->fd, &v->st))
		die(1, "%s: %s", path, strerror(errno));
	if ((v->st.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
		die(1, "%s changed while it was opened", path);
	if (S_ISBLK(v->st.st_mode)) {
		if (ioctl(v->fd, BLKGETSIZE64, &v->size))
			die(1, "%s: cannot read its size: %s", path, strerror(errno));
	} else {
		if (flock(v->fd, LOCK_EX | LOCK_NB))
			die(1, "%s is locked by another program (another %s?)", path, PROG);
		v->size = (uint64_t)v->st.st_size;
	}
	check_not_bound(v, "");
}

/* The data area of the volume, from -o and -s (doc/format.md §4). */
static void volume_area(const struct volume *v, const char *offset,
			const char *sizelimit, struct reenc_params *p)
{
	unsigned long long off = 0, limit = 0, len;
	int iv_free = 0;

	if (offset && parse_num(aesloop_offset_number(offset, &iv_free),
				INT64_MAX, &off))
		die(2, "-o: '%s' is not an offset in bytes (N or @N)", offset);
	if (sizelimit && parse_num(sizelimit, INT64_MAX, &limit))
		die(2, "-s: '%s' is not a size in bytes", sizelimit);
	if (off >= v->size)
		die(1, "%s: the offset %llu is not inside it (%llu bytes)", v->path,
		    off, (unsigned long long)v->size);
	len = v->size - off;
	if (limit && limit < len)
		len = limit;
	p->data_offset = off;
	p->nsect = len / LOOP_AES_SECTOR_SIZE;
	p->iv_sector = iv_free ? 0 : off / LOOP_AES_SECTOR_SIZE;
	p->vol_size = v->size;
	if (!p->nsect)
		die(1, "%s: no whole sector of data to rewrite", v->path);
}

/*
 * The key check value of a key setup (struct reenc_params): SHA-256 of the
 * journal's salt, a label, the mode and key length, and the keys as they
 * go to the loop driver.  It tells a resume whether it was given the keys
 * of the run it goes on with; a value computed from a guessed passphrase is
 * no cheaper to test than a decryption of the volume's first sector.
 */
static void key_check(const struct keysetup *ks, const uint8_t *salt,
		      uint8_t out[REENC_HASH_LEN])
{
	static const char label[] = "aesloop-reencrypt key check";
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t head[8];
	unsigned int n = 0;
	int ok;

	head[0] = (uint8_t)ks->nslots;
	head[1] = (uint8_t)ks->key_len;
	memset(head + 2, 0, sizeof(head) - 2);
	ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(md, salt, REENC_HASH_LEN) &&
	     EVP_DigestUpdate(md, label, sizeof(label)) &&
	     EVP_DigestUpdate(md, head, sizeof(head)) &&
	     (ks->nslots ?
	      EVP_DigestUpdate(md, ks->slots, (size_t)ks->nslots * sizeof(ks->slots[0])) :
	      EVP_DigestUpdate(md, ks->key_buffer, ks->key_len)) &&
	     EVP_DigestFinal_ex(md, out, &n) && n == REENC_HASH_LEN;
	EVP_MD_CTX_free(md);
	if (!ok)
		die(1, "SHA-256 failed (OpenSSL)");
}

/* The loop_aes context of a derived key setup; NULL if it cannot be set. */
static struct loop_aes_ctx *key_context(const struct keysetup *ks)
{
	size_t size = loop_aes_ctx_size(LOOP_AES_MULTI_KEYS);
	struct loop_aes_ctx *ctx = calloc(1, size);

	if (!ctx)
		return NULL;
	if (ks->nslots ?
	    loop_aes_setup_multi(ctx, &ks->slots[0][0], ks->nslots, ks->key_len) :
	    loop_aes_setup_single(ctx, ks->key_buffer, ks->key_len)) {
		memzero_explicit(ctx, size);
		free(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * Do keys give a plaintext with a known signature?  The first
 * PROBE_LEN bytes of data, decrypted, go to libblkid through a memfd
 * (locked in memory by the mlockall() in force: never swapped out); the
 * pages are wiped before it is closed.  @what gets "ext4", "swap",
 * "dos partition table" and so on; @wrong_iv whether iv_looks_wrong().
 *
 * Return: 1 found, 0 not, -errno if the probe could not run.
 */
/*
 * Do the decrypted sectors look like a wrong IV sector number (-o N where
 * the volume was made with -o @N, or the other way round)?  CBC then
 * garbles only the first 16 bytes of each sector: sectors whose other 496
 * bytes are zeros (plenty in any file system) show non-zero heads, where
 * the right IV gives zeros throughout.  A file system's signatures, further
 * in, survive, so libblkid alone does not notice.
 */
static bool iv_looks_wrong(const uint8_t *plain, uint64_t nsect)
{
	static const uint8_t zero[LOOP_AES_SECTOR_SIZE];
	uint64_t i, tails = 0, heads = 0;

	for (i = 0; i < nsect; i++, plain += LOOP_AES_SECTOR_SIZE) {
		if (memcmp(plain + AES_BLOCK_LEN, zero,
			   LOOP_AES_SECTOR_SIZE - AES_BLOCK_LEN))
			continue;
		tails++;
		if (memcmp(plain, zero, AES_BLOCK_LEN))
			heads++;
	}
	return tails >= 8 && heads * 2 > tails;
}

static int probe_plaintext(const struct volume *v, const struct reenc_params *p,
			   const struct loop_aes_ctx *old, char *what,
			   size_t len, bool *wrong_iv)
{
	uint64_t nsect = p->nsect < PROBE_LEN / LOOP_AES_SECTOR_SIZE ?
			 p->nsect : PROBE_LEN / LOOP_AES_SECTOR_SIZE;
	size_t bytes = (size_t)nsect * LOOP_AES_SECTOR_SIZE, got = 0;
	const char *val = NULL;
	blkid_probe pr = NULL;
	uint8_t *map;
	int fd, rc;

	fd = memfd_create("aesloop-reencrypt-probe", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)bytes)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while (got < bytes) {
		ssize_t n = pread(v->fd, map + got, bytes - got,
				  (off_t)(p->data_offset + got));

		if (n <= 0) {
			rc = n < 0 ? -errno : -ENODATA;
			goto out;
		}
		got += (size_t)n;
	}
	loop_aes_decrypt(old, map, map, nsect, p->iv_sector);
	*wrong_iv = iv_looks_wrong(map, nsect);
	pr = blkid_new_probe();
	rc = -ENOMEM;
	if (!pr || blkid_probe_set_device(pr, fd, 0, (blkid_loff_t)bytes))
		goto out;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0 && !blkid_probe_lookup_value(pr, "TYPE", &val, NULL)) {
		snprintf(what, len, "%s", val);
		rc = 1;
	} else if (rc == 0 && !blkid_probe_lookup_value(pr, "PTTYPE", &val, NULL)) {
		snprintf(what, len, "%s partition table", val);
		rc = 1;
	} else if (rc == -2) {
		snprintf(what, len, "more than one signature");
		rc = 1;
	} else {
		rc = 0;
	}
out:
	if (pr)
		blkid_free_probe(pr);
	memzero_explicit(map, bytes);
	munmap(map, bytes);
	close(fd);
	return rc;
}

/*
 * The keys, wiped at exit whichever way the program ends (die() too): the
 * key setups, and the contexts made from them.
 */
static struct keysetup old_ks, new_ks;
static struct loop_aes_ctx *old_ctx, *new_ctx;

static void wipe_keys(void)
{
	keysetup_wipe(&old_ks);
	keysetup_wipe(&new_ks);
	if (old_ctx)
		loop_aes_wipe(old_ctx);
	if (new_ctx)
		loop_aes_wipe(new_ctx);
	free(old_ctx);
	free(new_ctx);
	old_ctx = new_ctx = NULL;
}

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* The progress line on a terminal, at most a few times a second. */
struct progress {
	int on;
	struct timespec start, last;
	uint64_t start_done;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress_show(struct progress *pg, const struct reenc *r, int last)
{
	struct timespec now;
	double secs;

	if (!pg->on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!last && since(&pg->last, &now) < 0.25)
		return;
	pg->last = now;
	secs = since(&pg->start, &now);
	fprintf(stderr, "\r" PROG ": %5.1f%% rewritten, %.1f MiB/s  ",
		100.0 * (double)r->done / (double)r->p.nsect,
		secs > 0 ? (double)(r->done - pg->start_done) *
			   LOOP_AES_SECTOR_SIZE / secs / (1024 * 1024) : 0.0);
	if (last)
		fputc('\n', stderr);
}

/* The options of the old and of the new key setup, and the rest. */
struct args {
	struct aesloop_opts old_o, new_o;
	const char *offset, *sizelimit, *journal, *volume;
	unsigned long long chunk;
	int force, verbose, quiet;
};

static int parse_fd(const char *s, const char *opt)
{
	unsigned long long fd;

	if (parse_num(s, INT_MAX, &fd))
		die(2, "%s: '%s' is not a file descriptor number", opt, s);
	return (int)fd;
}

static void parse_args(struct args *a, int argc, char **argv)
{
	int c;

	aesloop_opts_init(&a->old_o);
	aesloop_opts_init(&a->new_o);
	a->chunk = REENC_CHUNK_DEFAULT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:H:S:C:K:G:P:p:o:s:vqh", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'e':
			a->old_o.encryption = optarg;
			break;
		case 'H':
			a->old_o.phash = optarg;
			break;
		case 'S':
			a->old_o.pseed = optarg;
			break;
		case 'C':
			a->old_o.itercountk = optarg;
			break;
		case 'K':
			a->old_o.gpgkey = optarg;
			break;
		case 'G':
			a->old_o.gpghome = optarg;
			break;
		case 'P':
			a->old_o.cleartextkey = optarg;
			break;
		case 'p':
			a->old_o.passfd = parse_fd(optarg, "-p");
			break;
		case OPT_NEW_ENCRYPTION:
			a->new_o.encryption = optarg;
			break;
		case OPT_NEW_PHASH:
			a->new_o.phash = optarg;
			break;
		case OPT_NEW_PSEED:
			a->new_o.pseed = optarg;
			break;
		case OPT_NEW_ITERCOUNTK:
			a->new_o.itercountk = optarg;
			break;
		case OPT_NEW_GPGKEY:
			a->new_o.gpgkey = optarg;
			break;
		case OPT_NEW_GPGHOME:
			a->new_o.gpghome = optarg;
			break;
		case OPT_NEW_CLEARTEXTKEY:
			a->new_o.cleartextkey = optarg;
			break;
		case OPT_NEW_PASSFD:
			a->new_o.passfd = parse_fd(optarg, "--new-pass-fd");
			break;
		case 'o':
			a->offset = optarg;
			break;
		case 's':
			a->sizelimit = optarg;
			break;
		case OPT_JOURNAL:
			a->journal = optarg;
			break;
		case OPT_CHUNK:
			if (parse_num(optarg, REENC_CHUNK_MAX, &a->chunk) ||
			    a->chunk < REENC_CHUNK_MIN || a->chunk % 4096)
				die(2, "--chunk-size: '%s' is not a multiple of 4096 bytes from %u to %u",
				    optarg, REENC_CHUNK_MIN, REENC_CHUNK_MAX);
			break;
		case OPT_FORCE:
			a->force = 1;
			break;
		case 'v':
			a->verbose = 1;
			break;
		case 'q':
			a->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf(PROG " (aesloop) " AESLOOP_VERSION "\n");
			exit(0);
		case ':':
			die(2, "option %s needs an argument (see --help)", argv[optind - 1]);
		default:
			die(2, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		die(2, optind < argc ? "one volume only (see --help)" :
			"no volume given (see --help)");
	a->volume = argv[optind];
	if (!a->old_o.encryption)
		die(2, "-e (the old cipher: AES128, AES192 or AES256) is required");
	if (!a->new_o.encryption)
		a->new_o.encryption = a->old_o.encryption;
	if (a->old_o.passfd >= 0 && a->old_o.passfd == a->new_o.passfd)
		die(2, "-p and --new-pass-fd name the same descriptor: give each its own");
	/* A new passphrase typed on the terminal is asked twice. */
	a->new_o.ask_twice = !a->new_o.gpgkey;
}

/* The keys of one side; exits with the key setup's message on failure. */
static void read_keys(struct keysetup *ks, const struct aesloop_opts *o,
		      const struct volume *v, const struct reenc_params *p,
		      const char *side, const char *prompt)
{
	int rc = aesloop_get_keys_offline(ks, o, PROG, v->path, p->data_offset, prompt);

	if (rc == -ENXIO)
		die(1, "%s keys: %s (%s)", side, ks->errmsg, *side == 'o' ?
		    "-p FD or -P FILE" : "--new-pass-fd FD or --new-cleartextkey FILE");
	if (rc)
		die(1, "%s keys: %s", side, ks->errmsg);
	if (ks->hash == KEYSETUP_HASH_RANDOM)
		die(2, "%s keys: phash=random makes keys that no later run has: not for a conversion",
		    side);
}

/* A resume: the journal must be this volume's, and the keys its keys. */
static void check_resume(const char *journal, const struct reenc_params *j,
			 const struct reenc_params *now,
			 const struct keysetup *old_ks,
			 const struct keysetup *new_ks)
{
	uint8_t check[REENC_HASH_LEN];

	if (j->data_offset != now->data_offset || j->nsect != now->nsect ||
	    j->iv_sector != now->iv_sector || j->vol_size != now->vol_size)
		die(1, "the journal %s is of another volume, or of other -o/-s options: it records %llu sectors at byte %llu (IV sector %llu) of a volume of %llu bytes",
		    journal, (unsigned long long)j->nsect,
		    (unsigned long long)j->data_offset,
		    (unsigned long long)j->iv_sector,
		    (unsigned long long)j->vol_size);
	key_check(old_ks, j->salt, check);
	if (memcmp(check, j->old_check, REENC_HASH_LEN))
		die(1, "the old keys are not those of the conversion that %s records: nothing was written",
		    journal);
	key_check(new_ks, j->salt, check);
	if (memcmp(check, j->new_check, REENC_HASH_LEN))
		die(1, "the new keys are not those of the conversion that %s records: nothing was written",
		    journal);
}

/*
 * A journal in memory (tmpfs, ramfs) is lost at a power cut, and with it
 * the only record of which sectors have which key: refused, unless the
 * volume itself is a file in memory too.
 */
static void check_journal_place(const struct volume *v, const char *journal)
{
	char dir[PATH_MAX];
	struct statfs sj, sv;

	if (snprintf(dir, sizeof(dir), "%s", journal) >= (int)sizeof(dir) ||
	    statfs(dirname(dir), &sj))
		return;		/* creating it will say what is wrong */
	if (sj.f_type != TMPFS_MAGIC && sj.f_type != RAMFS_MAGIC)
		return;
	if (S_ISREG(v->st.st_mode) && !fstatfs(v->fd, &sv) &&
	    (sv.f_type == TMPFS_MAGIC || sv.f_type == RAMFS_MAGIC))
		return;
	die(2, "the journal %s would be in memory (tmpfs or ramfs), where a power cut loses it: give --journal on a disk",
	    journal);
}

/*
 * A new conversion: the old keys must find something known in the
 * plaintext with the right IVs (unless --force), the new keys nothing (a
 * volume converted before, or partly, with its journal lost), and the new
 * keys must differ; then the journal.  Return: the journal, open and locked.
 */
static int start_new(const struct args *a, const struct volume *v,
		     struct reenc_params *p, const struct keysetup *old_ks,
		     const struct keysetup *new_ks,
		     const struct loop_aes_ctx *old_ctx,
		     const struct loop_aes_ctx *new_ctx)
{
	char what[128], err[PATH_MAX + 128];
	bool wrong_iv, new_wrong_iv;
	int rc, fd;

	check_journal_place(v, a->journal);
	if (getrandom(p->salt, sizeof(p->salt), 0) != sizeof(p->salt))
		die(1, "cannot get random bytes: %s", strerror(errno));
	key_check(old_ks, p->salt, p->old_check);
	key_check(new_ks, p->salt, p->new_check);
	if (!memcmp(p->old_check, p->new_check, REENC_HASH_LEN))
		die(2, "the new keys are the old keys: nothing to do");
	rc = probe_plaintext(v, p, new_ctx, what, sizeof(what), &new_wrong_iv);
	if (rc > 0)
		die(1, "the new keys already show %s on %s: converted before, or partly and its journal lost (then decrypt the converted start with the new keys and the rest with the old ones by hand): nothing was written",
		    what, v->path);
	rc = probe_plaintext(v, p, old_ctx, what, sizeof(what), &wrong_iv);
	if (rc < 0)
		die(1, "cannot check the old keys against %s: %s", v->path,
		    strerror(-rc));
	if (!rc && !a->force)
		die(1, "the old keys show no file system, swap or partition table on %s: wrong keys or options, or a stopped conversion whose journal is elsewhere (--journal)?  Nothing was written.  (--force goes on anyway, for a volume of raw data: never for one partly converted)",
		    v->path);
	if (wrong_iv && !a->force)
		die(1, "the old keys decrypt %s with the wrong IVs (the start of each sector is garbled): -o N counts the offset in the IV, -o @N does not; give the volume's own (--force goes on anyway): nothing was written",
		    v->path);
	if (a->verbose)
		fprintf(stderr, PROG ": the old keys show %s\n",
			rc ? what : "nothing known (--force)");
	p->old_nslots = old_ks->nslots;
	p->old_key_len = old_ks->key_len;
	p->new_nslots = new_ks->nslots;
	p->new_key_len = new_ks->key_len;
	p->chunk_sect = (uint32_t)(a->chunk / LOOP_AES_SECTOR_SIZE);
	fd = reenc_journal_create(a->journal, p, err, sizeof(err));
	if (fd < 0)
		die(1, "%s", err);
	return fd;
}

static int run(struct reenc *r, const struct volume *v, const char *journal,
	       int quiet)
{
	struct progress pg = { .on = !quiet && isatty(STDERR_FILENO) };
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART };
	char dev[NAME_MAX + 8];
	int rc = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &pg.start);
	pg.last = pg.start;
	pg.start_done = r->done;
	while (r->done < r->p.nsect && !rc && !stop_signal) {
		rc = reenc_chunk(r);
		/* A loop device set up on the volume meanwhile shows a mix. */
		if (!rc && loop_bound(v, dev, sizeof(dev))) {
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "%.80s was bound to %.40s meanwhile, which shows it half rewritten: stopped; detach it and do not use what it showed",
				 v->path, dev);
			rc = -EBUSY;
		}
		progress_show(&pg, r, 0);
	}
	if (!rc && !stop_signal)
		rc = reenc_finish(r, journal);
	else if (!rc)
		rc = reenc_stop(r);
	else
		reenc_stop(r);	/* what is done stays done; its failure changes nothing */
	progress_show(&pg, r, 1);
	if (rc) {
		fprintf(stderr, PROG ": %s; the journal %s keeps what is done: run the same command again to go on\n",
			r->errmsg, journal);
		return 1;
	}
	if (stop_signal && !r->finished) {
		fprintf(stderr, PROG ": stopped (%s) with %.1f%% rewritten; run the same command again to go on\n",
			strsignal(stop_signal),
			100.0 * (double)r->done / (double)r->p.nsect);
		return 1;
	}
	return 0;
}

/*
 * Keys and plaintext stay out of swap and out of core dumps; the CPU's AES
 * instructions are used if it has them and they pass their self-test.
 */
static void prepare_process(void)
{
	const struct loop_aes_engine *engine;
	struct rlimit no_core = { 0, 0 };

	if (keysetup_lock_memory(PROG))
		exit(1);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || setrlimit(RLIMIT_CORE, &no_core))
		die(1, "cannot turn core dumps off: %s", strerror(errno));
	engine = loop_aes_probe(NULL);
	if (engine)
		loop_aes_set_engine(engine);
}

/* The journal of a stopped run: open, locked, and its header read into @p. */
static int open_journal(const char *journal, struct reenc_params *p)
{
	int fd = open(journal, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		die(1, "cannot open the journal %s: %s", journal, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB))
		die(1, "the journal %s is locked by another %s", journal, PROG);
	if (reenc_journal_read_params(fd, p))
		die(1, "%s is not a whole %s journal: nothing was written (if it is not one, give another --journal)",
		    journal, PROG);
	return fd;
}

int main(int argc, char **argv)
{
	char journal_buf[PATH_MAX];
	struct reenc_params now = { 0 };
	struct reenc r = { .jfd = -1 };
	struct volume v;
	struct args a = { 0 };
	size_t chunk_bytes;
	int status, resume;

	parse_args(&a, argc, argv);
	keysetup_init(&old_ks, PROG);
	keysetup_init(&new_ks, PROG);
	atexit(wipe_keys);
	prepare_process();
	if (!a.journal) {
		struct stat st;

		if (!stat(a.volume, &st) && S_ISBLK(st.st_mode))
			die(2, "a block device needs --journal FILE, on another disk");
		if (snprintf(journal_buf, sizeof(journal_buf), "%s.reencrypt",
			     a.volume) >= (int)sizeof(journal_buf))
			die(2, "%s: name too long", a.volume);
		a.journal = journal_buf;
	}
	volume_open(&v, a.volume);
	volume_area(&v, a.offset, a.sizelimit, &now);
	resume = !access(a.journal, F_OK);
	/* A stopped run's journal beside a file volume, and another named now. */
	if (!resume && a.journal != journal_buf && S_ISREG(v.st.st_mode) &&
	    snprintf(journal_buf, sizeof(journal_buf), "%s.reencrypt", a.volume) <
	    (int)sizeof(journal_buf) && !access(journal_buf, F_OK))
		die(1, "%s is the journal of a stopped conversion of %s: go on with it (the same command without --journal), or remove it if it is not; nothing was written",
		    journal_buf, a.volume);
	if (resume)
		r.jfd = open_journal(a.journal, &r.p);

	read_keys(&old_ks, &a.old_o, &v, &now, "old",
		  a.old_o.gpgkey ? "Passphrase of the old key file: " : "Old passphrase: ");
	read_keys(&new_ks, &a.new_o, &v, &now, "new",
		  a.new_o.gpgkey ? "Passphrase of the new key file: " : "New passphrase: ");
	old_ctx = key_context(&old_ks);
	new_ctx = key_context(&new_ks);
	if (!old_ctx || !new_ctx)
		die(1, "cannot set up the AES keys (out of memory?)");
	if (resume) {
		check_resume(a.journal, &r.p, &now, &old_ks, &new_ks);
	} else {
		r.jfd = start_new(&a, &v, &now, &old_ks, &new_ks, old_ctx, new_ctx);
		r.p = now;
	}
	if (a.verbose)
		fprintf(stderr, PROG ": %s%s, %u-bit keys to %s, %u-bit keys; bytes %llu to %llu of %s (IV sector %llu on); AES code %s\n",
			resume ? "resuming: " : "", keysetup_mode_name(&old_ks),
			old_ks.key_len * 8, keysetup_mode_name(&new_ks),
			new_ks.key_len * 8, (unsigned long long)r.p.data_offset,
			(unsigned long long)(r.p.data_offset + r.p.nsect * LOOP_AES_SECTOR_SIZE - 1),
			v.path, (unsigned long long)r.p.iv_sector, loop_aes_get_engine()->name);
	keysetup_wipe(&old_ks);
	keysetup_wipe(&new_ks);

	r.vol_fd = v.fd;
	r.path = a.journal;
	r.old_ctx = old_ctx;
	r.new_ctx = new_ctx;
	chunk_bytes = (size_t)r.p.chunk_sect * LOOP_AES_SECTOR_SIZE;
	r.old = aligned_alloc(4096, chunk_bytes);
	r.new = aligned_alloc(4096, chunk_bytes);
	if (!r.old || !r.new)
		die(1, "out of memory (or locked memory) for two chunks of %zu bytes: try a smaller --chunk-size",
		    chunk_bytes);
	if (reenc_recover(&r)) {
		fprintf(stderr, PROG ": %s\n", r.errmsg);
		status = 1;
	} else {
		if (resume && (a.verbose || (!a.quiet && isatty(STDERR_FILENO))))
			fprintf(stderr, PROG ": going on with the conversion that %s records: %.1f%% was rewritten before\n",
				a.journal, 100.0 * (double)r.done / (double)r.p.nsect);
		status = run(&r, &v, a.journal, a.quiet);
		if (!status && a.verbose)
			fprintf(stderr, PROG ": done: %s opens with the new keys only\n", v.path);
	}

	memzero_explicit(r.new, chunk_bytes);
	free(r.old);
	free(r.new);
	wipe_keys();
	close(r.jfd);
	if (close(v.fd) && !status) {
		fprintf(stderr, PROG ": %s: %s\n", v.path, strerror(errno));
		status = 1;
	}
	return status;
}
