/* libgpubp version: the one source of truth, read by CMake and by gpubp_version(). */
#ifndef GPUBP_VERSION_H
#define GPUBP_VERSION_H

#define GPUBP_VERSION_MAJOR 0
#define GPUBP_VERSION_MINOR 1
#define GPUBP_VERSION_PATCH 0
#define GPUBP_VERSION_STRING "0.1.0"

/* One number that compares: 10000 * major + 100 * minor + patch. */
#define GPUBP_VERSION_NUMBER \
    (GPUBP_VERSION_MAJOR * 10000 + GPUBP_VERSION_MINOR * 100 + GPUBP_VERSION_PATCH)

#endif /* GPUBP_VERSION_H */
