// SPDX-License-Identifier: GPL-2.0
/*
 * aesloop-pipe.c - encrypt or decrypt standard input to standard output in
 * the loop-AES formats (single-key, multi-key-v2, multi-key-v3), with
 * aespipe's command line.
 *
 *   aesloop-pipe [-d] [-e AES128|AES192|AES256] [-H phash] [-S pseed]
 *                [-C itercountk] [-O sector] [-p fd | -P keyfile]
 *                [-K gpgkey [-G gpghome]] [-T] [-w sec] [-q] [-v]
 *                < input > output
 *
 * The keys come from lib/keysetup*.c (the code losetup uses too, doc/format.md
 * §3), the data goes through aes/loop_aes.c (doc/format.md §1, §2).  Key data of
 * 64 lines selects multi-key-v2, 65 lines multi-key-v3; other counts are
 * taken as aespipe takes them, with a warning.
 *
 * Lengths that are not a whole number of sectors, as Debian's aespipe 2.4d
 * handles them (found by running it, and matched here byte for byte): the
 * input is read in full buffers; only at the end of the input, a last
 * chunk whose length is not a multiple of 16 is padded with zero bytes up
 * to the next multiple of 16, and the output is that padded length.  A last
 * partial sector is one CBC chain over its (padded) 16-byte blocks, with the
 * IV of its sector number, exactly like the start of a whole sector.  So
 * encrypting 513 bytes gives 528, and decrypting 100 bytes of ciphertext
 * zero-pads the ciphertext to 112 and gives 112 bytes.  In the multi-key
 * modes, whose IV hashes the whole sector, the last chunk is padded to a
 * whole sector instead (aespipe does the same): 513 bytes give 1024.  An
 * empty input gives an empty output.
 *
 * Differences from aespipe, on purpose: -C, -O and -w must be decimal
 * numbers (aespipe reads "abc" as 0), and -O takes a 64-bit sector number
 * (aespipe wraps it modulo 2^32).  -A (a gpg-agent socket, for gpg 1) is
 * not supported: gpg 2 finds its agent by its home directory (-G).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keysetup.h"
#include "engines.h"
#include "loop_aes.h"

#define PROG		"aesloop-pipe"
#define BUF_LEN		(64 * 1024)	/* a multiple of the sector size */
#define NBUF		4		/* buffers between reading and writing */
#define WRITER_STACK	(128 * 1024)	/* bytes; the writer only calls write() */
#define OPT_VERSION	256	/* --version: no short option, as aespipe has -v */

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *out)
{
	fputs("usage: " PROG " [options] <inputfile >outputfile\n"
	      "Encrypt (or with -d decrypt) standard input to standard output in the\n"
	      "loop-AES formats, like aespipe: a passphrase gives single-key mode, key\n"
	      "data of 64 lines multi-key-v2, of 65 lines multi-key-v3.\n"
	      "options:  -e aes128|aes192|aes256  key length (default aes128; aes = aes128)\n"
	      "          -H sha256|sha384|sha512|rmd160|unhashed1|unhashed2\n"
	      "                      password hash (default by key length)\n"
	      "          -d          decrypt\n"
	      "          -p num      read the password or key lines from file descriptor num\n"
	      "          -P file     read the password or key lines from a cleartext key file\n"
	      "          -K file     the key lines are in this gpg-encrypted file; the password\n"
	      "                      read (terminal, -p or -P) unlocks it\n"
	      "          -G dir      home directory for gpg\n"
	      "          -S pseed    password seed (single-key only)\n"
	      "          -C num      iterate the key num thousand times through AES-256\n"
	      "                      (single-key only)\n"
	      "          -T          ask the password twice (terminal only)\n"
	      "          -w num      wait num seconds before asking the password\n"
	      "          -O num      IV offset in 512-byte sectors\n"
	      "          -q          do not complain about write errors\n"
	      "          -v          print the mode to standard error\n"
	      "          -h, --help  this help; --version: the version\n"
	      "Without -p and -P the password is asked on the terminal.\n", out);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Parse a decimal number of digits only, up to @max. */
static int parse_u64(const char *s, unsigned long long max,
		     unsigned long long *out)
{
	unsigned long long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned int d;

		if (*s < '0' || *s > '9')
			return -1;
		d = (unsigned int)(*s - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Read until @len bytes or end of input; return the count or -errno. */
static ssize_t read_full(int fd, u8 *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The single-key IV of doc/format.md §2.1 (the same as loop_aes.c builds). */
static void plain64_iv(u8 iv[AES_BLOCK_LEN], u64 sector)
{
	aes_put_le32(iv, (u32)sector);
	aes_put_le32(iv + 4, (u32)(sector >> 32));
	memset(iv + 8, 0, 8);
}

/*
 * Transform @len bytes (a multiple of 16) in place, from IV sector
 * @sector: whole sectors through loop_aes, then a last partial sector as
 * one CBC chain of its blocks with that sector's IV, under @tail_key (the
 * same key: loop_aes only does whole sectors).
 */
static void transform(const struct loop_aes_ctx *ctx,
		      const struct aes_key *tail_key, int decrypt, u8 *buf,
		      size_t len, u64 sector)
{
	size_t nsect = len / LOOP_AES_SECTOR_SIZE;
	size_t tail = len % LOOP_AES_SECTOR_SIZE;
	u8 iv[AES_BLOCK_LEN];

	if (decrypt)
		loop_aes_decrypt(ctx, buf, buf, nsect, sector);
	else
		loop_aes_encrypt(ctx, buf, buf, nsect, sector);
	if (!tail)
		return;
	buf += nsect * LOOP_AES_SECTOR_SIZE;
	plain64_iv(iv, sector + nsect);
	if (decrypt)
		aes_cbc_decrypt(tail_key, buf, buf, tail, iv);
	else
		aes_cbc_encrypt(tail_key, buf, buf, tail, iv);
}

/*
 * The output is written by a thread of its own, so that the main thread
 * reads and transforms the next buffers meanwhile: done in line, the
 * encryption's time adds to that of the two copies (from a file into
 * tmpfs the thread made it 1.3-1.6 times faster).  NBUF buffers of BUF_LEN
 * go round; the main thread fills them in order, the writer empties them
 * in the same order.
 */
struct ring {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* filled or written changed, or err, or end */
	u8 *buf;		/* nbuf * BUF_LEN bytes */
	unsigned int nbuf;	/* buffers allocated: NBUF, or 1 */
	size_t len[NBUF];
	unsigned long filled;	/* buffers handed to the writer */
	unsigned long written;	/* buffers it has written */
	int end;		/* no more buffers will come */
	int err;		/* the write that failed: -errno */
};

/*
 * Whether the writer thread can help.  Fed by another process through a
 * pipe on a machine of two CPUs or fewer, that process needs the second
 * one: cat <in | aesloop-pipe >out ran v3 encryption at 0.63-0.77 of cat's
 * pace with the thread and 0.78-0.91 without (2 CPUs, three runs each),
 * while from a file the thread was 1.3-1.6 times faster.
 */
static int writer_thread_helps(void)
{
	struct stat st;

	if (sysconf(_SC_NPROCESSORS_ONLN) > 2)
		return 1;
	return fstat(STDIN_FILENO, &st) == 0 && !S_ISFIFO(st.st_mode);
}

static void *writer(void *arg)
{
	struct ring *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		unsigned int i;
		int rc;

		while (r->written == r->filled && !r->end)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->written == r->filled)
			break;
		i = r->written % r->nbuf;
		pthread_mutex_unlock(&r->lock);
		rc = keysetup_write_all(STDOUT_FILENO, r->buf + i * BUF_LEN,
					r->len[i]);
		pthread_mutex_lock(&r->lock);
		if (rc)
			r->err = rc;
		else
			r->written++;
		pthread_cond_signal(&r->cond);
		if (rc)
			break;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/*
 * Standard input to standard output through transform(), from IV sector
 * @sector; the last chunk padded to @pad bytes.  Return: the exit status.
 */
static int run(const struct loop_aes_ctx *ctx, const struct aes_key *tail_key,
	       int decrypt, unsigned int pad, u64 sector, int quiet,
	       struct ring *r)
{
	pthread_attr_t attr;
	pthread_t thread;
	unsigned int nbuf;
	int status = 0, threaded, rc;

	/*
	 * A small stack: with mlockall(MCL_FUTURE) in force, the default 8 MiB
	 * would be locked too, beyond RLIMIT_MEMLOCK of most users.
	 */
	rc = r->nbuf > 1 ? pthread_attr_init(&attr) : EAGAIN;
	if (!rc) {
		rc = pthread_attr_setstacksize(&attr, WRITER_STACK);
		if (!rc)
			rc = pthread_create(&thread, &attr, writer, r);
		pthread_attr_destroy(&attr);
	}
	/*
	 * Where the thread would not help (writer_thread_helps()), or there
	 * is no room for it or the ring (a tight memlock limit, say), write in
	 * line from one buffer.
	 */
	threaded = !rc;
	nbuf = threaded ? r->nbuf : 1;
	for (;;) {
		unsigned int i = r->filled % nbuf;
		u8 *buf = r->buf + i * BUF_LEN;
		ssize_t n;
		size_t len;

		pthread_mutex_lock(&r->lock);
		while (r->filled - r->written == nbuf && !r->err)
			pthread_cond_wait(&r->cond, &r->lock);
		rc = r->err;
		pthread_mutex_unlock(&r->lock);
		if (rc)
			break;
		n = read_full(STDIN_FILENO, buf, BUF_LEN);
		if (n < 0) {
			fprintf(stderr, PROG ": read from standard input failed: %s\n",
				strerror((int)-n));
			status = 1;
			break;
		}
		if (n == 0)
			break;
		len = (size_t)n;
		while (len % pad)
			buf[len++] = 0;
		transform(ctx, tail_key, decrypt, buf, len, sector);
		sector += len / LOOP_AES_SECTOR_SIZE;
		pthread_mutex_lock(&r->lock);
		r->len[i] = len;
		r->filled++;
		pthread_cond_signal(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (!threaded) {
			rc = keysetup_write_all(STDOUT_FILENO, buf, len);
			if (rc) {
				r->err = rc;
				break;
			}
			r->written++;
		}
		if ((size_t)n < BUF_LEN)
			break;	/* that was the end of the input */
	}
	if (threaded) {
		pthread_mutex_lock(&r->lock);
		r->end = 1;
		pthread_cond_signal(&r->cond);
		pthread_mutex_unlock(&r->lock);
		pthread_join(thread, NULL);
	}
	if (r->err) {
		if (!quiet)
			fprintf(stderr, PROG ": write to standard output failed: %s\n",
				strerror(-r->err));
		status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *cipher = "AES128", *hash = NULL, *seed = NULL, *iter = NULL;
	const char *key_file = NULL, *gpg_file = NULL, *gpg_home = NULL;
	size_t ctx_size = loop_aes_ctx_size(LOOP_AES_MULTI_KEYS);
	unsigned long long sector = 0, fdnum, wait_sec = 0;
	int decrypt = 0, verbose = 0, pass_fd = -1, ask_twice = 0, quiet = 0;
	int c, rc, status;
	unsigned int pad;
	struct loop_aes_ctx *ctx;
	struct aes_key *tail_key;
	struct keysetup ks;
	struct ring ring = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	u8 *buf;

	/* Keys and plaintext stay out of swap. */
	if (keysetup_lock_memory(PROG))
		return 1;
	{
		/* the CPU's AES instructions, if it has them and they pass their self-test */
		const struct loop_aes_engine *engine = loop_aes_probe(NULL);

		if (engine)
			loop_aes_set_engine(engine);
	}

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:H:dp:P:S:C:O:vhK:G:A:Tw:q", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'e':
			cipher = optarg;
			break;
		case 'H':
			hash = optarg;
			break;
		case 'd':
			decrypt = 1;
			break;
		case 'p':
			if (parse_u64(optarg, INT_MAX, &fdnum))
				die("-p: '%s' is not a file descriptor number", optarg);
			pass_fd = (int)fdnum;
			break;
		case 'P':
			key_file = optarg;
			break;
		case 'K':
			gpg_file = optarg;
			break;
		case 'G':
			gpg_home = optarg;
			break;
		case 'S':
			seed = optarg;
			break;
		case 'C':
			iter = optarg;
			break;
		case 'T':
			ask_twice = 1;
			break;
		case 'w':
			if (parse_u64(optarg, 86400, &wait_sec))
				die("-w: '%s' is not a number of seconds (0..86400)", optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'O':
			if (parse_u64(optarg, UINT64_MAX, &sector))
				die("-O: '%s' is not a sector number (a decimal number of 512-byte sectors)",
				    optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf(PROG " (aesloop) " AESLOOP_VERSION "\n");
			return 0;
		case 'A':
			die("option -A (gpg-agent socket) is not supported: gpg 2 finds its agent through its home directory (-G)");
		case ':':
			die("option -%c needs an argument (see -h)", optopt);
		default:
			if (optopt)
				die("unknown option -%c (see -h)", optopt);
			die("unknown option '%s' (see -h)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s': data is read from standard input (see -h)",
		    argv[optind]);

	keysetup_init(&ks, PROG);
	/* aespipe takes key data of unexpected line counts, with a warning. */
	ks.lenient = 1;
	/* As in aespipe, -p wins over -P and -T, and -P over -T. */
	ks.ask_twice = ask_twice && pass_fd < 0 && !key_file;
	rc = keysetup_set_cipher(&ks, cipher);
	if (!rc && hash)
		rc = keysetup_set_hash(&ks, hash);
	if (!rc && ks.hash == KEYSETUP_HASH_RANDOM) {
		snprintf(ks.errmsg, sizeof(ks.errmsg),
			 "password hash '%.64s' (65 random keys, lost at exit) is for losetup and mount, not for a pipe",
			 hash);
		rc = -EINVAL;
	}
	if (!rc && seed)
		rc = keysetup_set_seed(&ks, seed);
	if (!rc && iter)
		rc = keysetup_set_itercountk(&ks, iter);
	if (!rc)
		rc = keysetup_set_gpg(&ks, gpg_file, gpg_home);
	if (!rc) {
		if (wait_sec && pass_fd < 0 && !key_file)
			sleep((unsigned int)wait_sec);
		if (pass_fd >= 0)
			rc = keysetup_read_fd(&ks, pass_fd);
		else if (key_file)
			rc = keysetup_read_file(&ks, key_file);
		else
			rc = keysetup_read_tty(&ks, "Password: ");
	}
	if (!rc)
		rc = keysetup_derive(&ks);

	ctx = calloc(1, ctx_size);
	tail_key = calloc(1, sizeof(*tail_key));
	/*
	 * Page-aligned, not malloc's 16 bytes: the copies into and out of the
	 * kernel and the engines' 64-byte vectors then keep to whole cache
	 * lines (cat <in | aesloop-pipe >out in tmpfs: 2-5% faster).
	 */
	ring.nbuf = writer_thread_helps() ? NBUF : 1;
	buf = aligned_alloc(4096, ring.nbuf * BUF_LEN);
	if (!buf && ring.nbuf > 1) {
		ring.nbuf = 1;
		buf = aligned_alloc(4096, BUF_LEN);
	}
	if (!rc && (!ctx || !tail_key || !buf)) {
		snprintf(ks.errmsg, sizeof(ks.errmsg), "out of memory");
		rc = -ENOMEM;
	}
	if (!rc && ks.nslots &&
	    loop_aes_setup_multi(ctx, &ks.slots[0][0], ks.nslots, ks.key_len)) {
		snprintf(ks.errmsg, sizeof(ks.errmsg), "cannot set up %u %u-byte AES keys",
			 ks.nslots, ks.key_len);
		rc = -EINVAL;
	}
	if (!rc && !ks.nslots &&
	    (loop_aes_setup_single(ctx, ks.key_buffer, ks.key_len) ||
	     aes_key_setup(tail_key, ks.key_buffer, ks.key_len))) {
		snprintf(ks.errmsg, sizeof(ks.errmsg), "cannot set up a %u-byte AES key",
			 ks.key_len);
		rc = -EINVAL;
	}
	if (rc) {
		fprintf(stderr, PROG ": %s\n", ks.errmsg);
		keysetup_wipe(&ks);
		if (ctx)
			memzero_explicit(ctx, ctx_size);
		if (tail_key)
			aes_key_wipe(tail_key);
		free(ctx);
		free(tail_key);
		free(buf);
		return 1;
	}
	if (verbose)
		fprintf(stderr, PROG ": AES code %s, %u key bits, %s, %s mode\n",
			loop_aes_get_engine()->name, ks.key_len * 8,
			decrypt ? "decrypting" : "encrypting", keysetup_mode_name(&ks));
	/* Multi-key IVs hash a whole sector: pad the end to one, as aespipe. */
	pad = ks.nslots ? LOOP_AES_SECTOR_SIZE : AES_BLOCK_LEN;
	keysetup_wipe(&ks);

	ring.buf = buf;
	status = run(ctx, tail_key, decrypt, pad, sector, quiet, &ring);

	loop_aes_wipe(ctx);
	aes_key_wipe(tail_key);
	memzero_explicit(buf, ring.nbuf * BUF_LEN);
	free(ctx);
	free(tail_key);
	free(buf);
	return status;
}
