/* The gpubp remote protocol, version 1 (docs/remote-protocol.md): the constants and the frame
 * layout shared by the client (lib/remote/remote.c) and the server (tools/serve/gpubp_serve.c).
 * Header-only and self-contained (libc only), so that the server does not link the library.
 *
 * Every message, in both directions, is a 16-byte frame header followed by `len` body bytes:
 *
 *   u32 magic   GBPR_MAGIC ("GBPR" as bytes)
 *   u16 type    a request type; a reply is the request type | GBPR_REPLY, or GBPR_ERROR
 *   u16 flags   0
 *   u32 id      chosen by the client, echoed by the reply
 *   u32 len     body bytes that follow (<= GBPR_MAX_REQUEST for requests,
 *               <= GBPR_MAX_REPLY for replies)
 *
 * All integers are little-endian. Strings are a u32 length then the bytes, no terminating NUL. */
#ifndef GBP_REMOTE_PROTO_H
#define GBP_REMOTE_PROTO_H

#include <stdint.h>
#include <string.h>

#define GBPR_MAGIC 0x52504247u /* 'G' 'B' 'P' 'R' */
#define GBPR_VERSION 1u
#define GBPR_HEADER_SIZE 16u

/* Caps, checked by both sides before anything is allocated. */
#define GBPR_MAX_TOKEN 4096u
#define GBPR_MAX_PATH 4096u
#define GBPR_MAX_NAME 64u
#define GBPR_MAX_REQUEST (8u + GBPR_MAX_PATH + GBPR_MAX_TOKEN)
#define GBPR_MAX_READ (16u << 20)                    /* bytes of one PREAD or READ_FILE reply */
#define GBPR_MAX_REPLY (GBPR_MAX_READ + 64u)
#define GBPR_MAX_MESSAGE 4096u                       /* text of an ERROR or STATUS reply */
#define GBPR_OPEN_IDX_MAX (1u << 20)                 /* md.idx bytes an OPEN reply may carry */
#define GBPR_OPEN_MD0_MAX (4u << 20)                 /* md.0 bytes an OPEN reply may carry */
#define GBPR_OPEN_MAX_REPLY (20u + GBPR_OPEN_IDX_MAX + GBPR_OPEN_MD0_MAX)

enum {
    GBPR_HELLO = 1,     /* u32 version, str token                -> u32 version, u32 max_read */
    GBPR_OPEN = 2,      /* str path (relative to the root)       -> u32 flags, u64 idx_size,
                                                                    str md.idx (if flags & 1),
                                                                    str md.0 prefix (flags & 2) */
    GBPR_READ_FILE = 3, /* str name                              -> u64 size, bytes */
    GBPR_SIZE = 4,      /* str name                              -> u64 size */
    GBPR_PREAD = 5,     /* u64 off, u32 len, str name            -> bytes (short only at EOF) */
    GBPR_CLOSE = 6,     /* (empty)                               -> (empty) */
    GBPR_STATUS = 7,    /* (empty)                               -> text "key=value\n"... */
    GBPR_REPLY = 0x8000,
    GBPR_ERROR = 0xffff /* u32 code, i32 errno, str message */
};

#define GBPR_OPEN_HAVE_IDX 1u /* OPEN reply flag: the md.idx bytes follow */
#define GBPR_OPEN_HAVE_MD0 2u /* OPEN reply flag: md.0 from 0 to the end of the last indexed step */

/* Codes of an ERROR reply. */
enum {
    GBPR_E_MALFORMED = 1, /* a message that breaks the protocol; the server closes the connection */
    GBPR_E_VERSION = 2,   /* no common protocol version */
    GBPR_E_AUTH = 3,      /* missing or wrong token */
    GBPR_E_NOT_FOUND = 4, /* no such dataset or file */
    GBPR_E_NOT_BP4 = 5,   /* the path is not a BP4 dataset */
    GBPR_E_BP5 = 6,       /* the path is an ADIOS2 BP5 dataset (servers before BP5 reads) */
    GBPR_E_FORBIDDEN = 7, /* outside the root, or a name that is not a dataset file */
    GBPR_E_NO_DATASET = 8,/* a file request before OPEN */
    GBPR_E_IO = 9,        /* a system call failed on the server (errno in the reply) */
    GBPR_E_BUSY = 10      /* too many connections; retry later */
};

typedef struct gbpr_header {
    uint32_t magic;
    uint16_t type;
    uint16_t flags;
    uint32_t id;
    uint32_t len;
} gbpr_header;

static inline void gbpr_st16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void gbpr_st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void gbpr_st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t gbpr_ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t gbpr_ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t gbpr_ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static inline void gbpr_put_header(uint8_t out[GBPR_HEADER_SIZE], uint16_t type, uint32_t id,
                                   uint32_t len)
{
    gbpr_st32(out, GBPR_MAGIC);
    gbpr_st16(out + 4, type);
    gbpr_st16(out + 6, 0);
    gbpr_st32(out + 8, id);
    gbpr_st32(out + 12, len);
}

/* Decodes a header; 0 when the magic and flags are right, -1 otherwise. */
static inline int gbpr_get_header(const uint8_t in[GBPR_HEADER_SIZE], gbpr_header *h)
{
    h->magic = gbpr_ld32(in);
    h->type = gbpr_ld16(in + 4);
    h->flags = gbpr_ld16(in + 6);
    h->id = gbpr_ld32(in + 8);
    h->len = gbpr_ld32(in + 12);
    return h->magic == GBPR_MAGIC && h->flags == 0 ? 0 : -1;
}

/* A bounds-checked reader over a received body: every take fails (returns -1) instead of
 * reading past the end, and a failed cursor stays failed. */
typedef struct gbpr_cursor {
    const uint8_t *p;
    size_t left;
    int bad;
} gbpr_cursor;

static inline int gbpr_take(gbpr_cursor *c, size_t n, const uint8_t **out)
{
    if (c->bad || n > c->left) {
        c->bad = 1;
        return -1;
    }
    *out = c->p;
    c->p += n;
    c->left -= n;
    return 0;
}
static inline uint32_t gbpr_take32(gbpr_cursor *c)
{
    const uint8_t *p;
    return gbpr_take(c, 4, &p) ? 0 : gbpr_ld32(p);
}
static inline uint64_t gbpr_take64(gbpr_cursor *c)
{
    const uint8_t *p;
    return gbpr_take(c, 8, &p) ? 0 : gbpr_ld64(p);
}
/* A string of at most `cap` bytes; *s points into the body (not NUL-terminated). */
static inline int gbpr_take_str(gbpr_cursor *c, size_t cap, const char **s, size_t *n)
{
    uint32_t l = gbpr_take32(c);
    const uint8_t *p = NULL;
    if (c->bad || l > cap || gbpr_take(c, l, &p)) {
        c->bad = 1;
        return -1;
    }
    *s = (const char *)p;
    *n = l;
    return 0;
}

/* 1 when name is a file of a BP4 or BP5 dataset that the server may serve: md.idx, md.0, mmd.0
 * (BP5) or data.N (N decimal, no leading zero, at most 7 digits). */
static inline int gbpr_dataset_name_ok(const char *name, size_t n)
{
    if (n == 6 && !memcmp(name, "md.idx", 6)) return 1;
    if (n == 4 && !memcmp(name, "md.0", 4)) return 1;
    if (n == 5 && !memcmp(name, "mmd.0", 5)) return 1; /* BP5 */
    if (n < 6 || n > 12 || memcmp(name, "data.", 5)) return 0;
    if (name[5] == '0' && n > 6) return 0;
    for (size_t i = 5; i < n; i++)
        if (name[i] < '0' || name[i] > '9') return 0;
    return 1;
}

#endif /* GBP_REMOTE_PROTO_H */
