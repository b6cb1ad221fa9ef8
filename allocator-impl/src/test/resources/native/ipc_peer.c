/*
 * The C side of CIpcTest: speaks datamem's IPC handle protocol over a SOCK_SEQPACKET Unix socket
 * (72 bytes of handle, the memfd attached with SCM_RIGHTS), as docs/ipc.md describes it.
 *   ipc_peer SOCKET
 * 1. receives a handle from Java, checks it (magic, seals, size), maps the mapping, checks the
 *    block holds (i * 31 + 7) & 0xff and overwrites it with (i * 13 + 1) & 0xff;
 * 2. sends its own block of 65541 bytes holding (i * 7 + 3) & 0xff, in a sealed memfd named
 *    datamem:TAG;
 * 3. sends an unsealed memfd with a handle naming it (Java must refuse it);
 * 4. sends 10 bytes and no descriptor (Java must refuse them);
 * 5. waits until Java closes the connection, and exits 0 ("ok") or 1 with a message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define HANDLE_BYTES 72
#define MAGIC 0x43504944u

struct handle {
    uint32_t magic, version;
    int64_t pid;
    int32_t fd, reserved;
    uint64_t tag_high, tag_low, inode;
    int64_t mapping_size, offset, size;
};

_Static_assert(sizeof(struct handle) == HANDLE_BYTES, "the wire form is 72 bytes");

static int fail(const char *what) {
    fprintf(stderr, "ipc_peer: %s: %s\n", what, strerror(errno));
    return 1;
}

static int send_handle(int sock, const struct handle *h, const void *bytes, size_t length, int fd) {
    struct iovec iov = {.iov_base = (void *) (h ? (const void *) h : bytes), .iov_len = h ? HANDLE_BYTES : length};
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t) iov.iov_len ? 0 : -1;
}

/* A sealed (or not) memfd of `size` bytes named datamem:TAG, filled with the C pattern. */
static int make_block(struct handle *h, int64_t size, int sealed) {
    h->magic = MAGIC;
    h->version = 1;
    h->pid = getpid();
    h->reserved = 0;
    h->tag_high = 0x00c0ffee00000000ull | (uint64_t) getpid();
    h->tag_low = sealed ? 0x1111222233334444ull : 0x5555666677778888ull;
    char name[64];
    snprintf(name, sizeof name, "datamem:%016llx%016llx", (unsigned long long) h->tag_high,
             (unsigned long long) h->tag_low);
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    long page = sysconf(_SC_PAGESIZE);
    int64_t length = (size + page - 1) / page * page;
    if (fd < 0 || ftruncate(fd, length) != 0) {
        return -1;
    }
    if (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        return -1;
    }
    unsigned char *p = mmap(NULL, (size_t) length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        return -1;
    }
    for (int64_t i = 0; i < size; i++) {
        p[i] = (unsigned char) (i * 7 + 3);
    }
    munmap(p, (size_t) length);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        return -1;
    }
    h->fd = fd;
    h->inode = st.st_ino;
    h->mapping_size = length;
    h->offset = 0;
    h->size = size;
    return fd;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: ipc_peer SOCKET\n");
        return 2;
    }
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    if (sock < 0 || connect(sock, (struct sockaddr *) &address, sizeof address) != 0) {
        return fail("connect");
    }

    struct handle h;
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    struct iovec iov = {.iov_base = &h, .iov_len = sizeof h};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (n != HANDLE_BYTES || c == NULL || c->cmsg_type != SCM_RIGHTS) {
        fprintf(stderr, "ipc_peer: expected a handle and a descriptor, got %zd bytes\n", n);
        return 1;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if (h.magic != MAGIC || h.version != 1) {
        fprintf(stderr, "ipc_peer: bad magic %x or version %u\n", h.magic, h.version);
        return 1;
    }
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0 || (uint64_t) st.st_ino != h.inode || st.st_size != h.mapping_size
            || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)
            || h.offset + h.size > h.mapping_size) {
        fprintf(stderr, "ipc_peer: the descriptor is not the handle's mapping\n");
        return 1;
    }
    unsigned char *base = mmap(NULL, (size_t) h.mapping_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        return fail("mmap");
    }
    unsigned char *p = base + h.offset;
    for (int64_t i = 0; i < h.size; i++) {
        if (p[i] != (unsigned char) (i * 31 + 7)) {
            fprintf(stderr, "ipc_peer: byte %lld is %u (expected %u)\n", (long long) i, p[i],
                    (unsigned char) (i * 31 + 7));
            return 1;
        }
        p[i] = (unsigned char) (i * 13 + 1);
    }
    munmap(base, (size_t) h.mapping_size);
    printf("ok received %lld bytes from pid %lld\n", (long long) h.size, (long long) h.pid);

    struct handle mine;
    int mine_fd = make_block(&mine, 65541, 1);
    if (mine_fd < 0 || send_handle(sock, &mine, NULL, 0, mine_fd) != 0) {
        return fail("sending a block");
    }
    struct handle unsealed;
    int unsealed_fd = make_block(&unsealed, 4096, 0);
    if (unsealed_fd < 0 || send_handle(sock, &unsealed, NULL, 0, unsealed_fd) != 0) {
        return fail("sending an unsealed block");
    }
    if (send_handle(sock, NULL, "not handle", 10, -1) != 0) {
        return fail("sending garbage");
    }
    char byte;
    while ((n = recv(sock, &byte, 1, 0)) > 0) {
    }
    printf("ok sent 3 messages; the peer closed\n");
    return 0;
}
