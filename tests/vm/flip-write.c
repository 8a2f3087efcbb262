// SPDX-License-Identifier: GPL-2.0
/*
 * flip-write - O_DIRECT writes from a buffer that a second thread keeps
 * changing, and the check of what they left on the device
 * (multi-key writes must hash and encrypt the same bytes).
 *
 *   flip-write write DEV PASSES   write all of DEV, PASSES times over, in
 *                                 CHUNK-byte O_DIRECT writes of one buffer
 *                                 that the second thread switches between
 *                                 two versions all the while; then fsync
 *   flip-write check DEV          read all of DEV with O_DIRECT (through
 *                                 the loop: decrypted) and check that each
 *                                 16-byte block of each sector is that
 *                                 block of one of the two versions
 *
 * The versions come from a fixed seed, so both commands make the same.
 * They differ in one byte of each sector (few stores, so the other thread
 * changes each sector often), in bytes 16..511, which the multi-key IV
 * hashes.  A block read at any moment is one version or the other: a
 * driver that encrypts the bytes it hashed cannot fail the check, whatever
 * the timing.  One that hashes one read of the page and encrypts another
 * leaves sectors whose first block decrypts to data nobody wrote.  DEV's
 * size must be a multiple of CHUNK.
 * Prints one line of counts; exits 1 on a bad sector or an I/O error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK		(64 * 1024)	/* bytes per write: 16 pages, 128 sectors */
#define SECTOR		512
#define BLOCK		16
#define NSECT		(CHUNK / SECTOR)

static unsigned char ver[2][CHUNK];
static unsigned int diff_at[NSECT];
static unsigned char *buf;		/* CHUNK bytes, page-aligned */
static unsigned long rounds;
static int stop;

static void make_versions(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned int i;

	for (i = 0; i < CHUNK; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		ver[0][i] = (unsigned char)((x * 0x2545F4914F6CDD1DULL) >> 56);
	}
	memcpy(ver[1], ver[0], CHUNK);
	/* One byte of each sector, past the first block: in what is hashed. */
	for (i = 0; i < NSECT; i++) {
		diff_at[i] = i * SECTOR + BLOCK + (ver[0][i * SECTOR] * 2U) % (SECTOR - BLOCK);
		ver[1][diff_at[i]] = (unsigned char)~ver[0][diff_at[i]];
	}
}

static void set_version(unsigned int v)
{
	unsigned int i;

	for (i = 0; i < NSECT; i++)
		__atomic_store_n(&buf[diff_at[i]], ver[v][diff_at[i]],
				 __ATOMIC_RELAXED);
}

/*
 * Where the threads run: both of this program's on the first CPU, the
 * loop device's workers (kthreads "loopN-I", aesloop's naming) on the
 * last, so that the worker encrypting a write runs beside the thread that
 * changes the buffer, not in turns with it on one CPU (then the page could
 * change only where the worker is preempted).  Not needed for correctness:
 * without it the race is just run less often.  Returns the workers moved.
 */
static int place_threads(const char *dev)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *base = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	char prefix[32], path[300], comm[64];
	struct dirent *d;
	cpu_set_t set;
	int moved = 0;
	DIR *proc;

	if (ncpu < 2 || strncmp(base, "loop", 4))
		return 0;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	snprintf(prefix, sizeof(prefix), "%s-", base);
	CPU_ZERO(&set);
	CPU_SET(ncpu - 1, &set);
	proc = opendir("/proc");
	while (proc && (d = readdir(proc))) {
		FILE *f;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, prefix, strlen(prefix)) &&
		    !sched_setaffinity(atoi(d->d_name), sizeof(set), &set))
			moved++;
		fclose(f);
	}
	if (proc)
		closedir(proc);
	return moved;
}

static void *writer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		set_version(1);
		set_version(0);
		__atomic_fetch_add(&rounds, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static off_t dev_size(int fd, const char *dev)
{
	off_t size = lseek(fd, 0, SEEK_END);

	if (size <= 0 || size % CHUNK) {
		fprintf(stderr, "flip-write: %s: size %lld is not a multiple of %d\n",
			dev, (long long)size, CHUNK);
		return -1;
	}
	return size;
}

static int do_write(const char *dev, int passes)
{
	unsigned long writes = 0, seen;
	off_t size, off;
	pthread_t tid;
	int fd, p, moved, err = 0;

	fd = open(dev, O_WRONLY | O_DIRECT);
	if (fd < 0) {
		perror(dev);
		return 1;
	}
	size = dev_size(fd, dev);
	if (size < 0)
		return 1;
	memcpy(buf, ver[0], CHUNK);
	moved = place_threads(dev);	/* before: the thread inherits it */
	if (pthread_create(&tid, NULL, writer, NULL)) {
		fprintf(stderr, "flip-write: pthread_create failed\n");
		return 1;
	}
	for (p = 0; p < passes && !err; p++)
		for (off = 0; off < size && !err; off += CHUNK) {
			/* The other thread must have run since the last write. */
			seen = __atomic_load_n(&rounds, __ATOMIC_ACQUIRE);
			while (__atomic_load_n(&rounds, __ATOMIC_ACQUIRE) == seen)
				sched_yield();
			if (pwrite(fd, buf, CHUNK, off) != CHUNK) {
				fprintf(stderr, "flip-write: write at %lld: %s\n",
					(long long)off, strerror(errno));
				err = 1;
			}
			writes++;
		}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(tid, NULL);
	if (!err && fsync(fd)) {
		perror("flip-write: fsync");
		err = 1;
	}
	close(fd);
	printf("flip-write: %lu writes of %d bytes, %lu rounds of the other thread, %d loop workers moved\n",
	       writes, CHUNK, __atomic_load_n(&rounds, __ATOMIC_RELAXED), moved);
	return err;
}

static int do_check(const char *dev)
{
	unsigned long sectors = 0, bad = 0, second = 0, first_bad = 0;
	unsigned int s, k;
	off_t size, off;
	int fd;

	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror(dev);
		return 1;
	}
	size = dev_size(fd, dev);
	if (size < 0)
		return 1;
	for (off = 0; off < size; off += CHUNK) {
		if (pread(fd, buf, CHUNK, off) != CHUNK) {
			fprintf(stderr, "flip-write: read at %lld: %s\n",
				(long long)off, strerror(errno));
			return 1;
		}
		for (s = 0; s < CHUNK / SECTOR; s++, sectors++) {
			unsigned int seen[2] = { 0, 0 }, ok = 1;

			for (k = 0; k < SECTOR / BLOCK; k++) {
				size_t b = (size_t)s * SECTOR + k * BLOCK;

				if (!memcmp(buf + b, ver[0] + b, BLOCK))
					seen[0]++;
				else if (!memcmp(buf + b, ver[1] + b, BLOCK))
					seen[1]++;
				else
					ok = 0;
			}
			if (!ok && !bad++)
				first_bad = sectors;
			if (ok && seen[1])
				second++;
		}
	}
	close(fd);
	printf("flip-write: %lu sectors, %lu with a block of neither version%s, %lu of the second\n",
	       sectors, bad, bad ? "" : " (none)", second);
	if (bad)
		printf("flip-write: the first is sector %lu\n", first_bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (posix_memalign((void **)&buf, 4096, CHUNK))
		return 1;
	make_versions();
	if (argc == 4 && !strcmp(argv[1], "write") && atoi(argv[3]) > 0)
		return do_write(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "check"))
		return do_check(argv[2]);
	fprintf(stderr, "usage: flip-write write DEV PASSES | check DEV\n");
	return 2;
}
