/* Whose sandbox this is: one rule for every verb and check of the face. */
#ifndef UMW_FACE_USER_H
#define UMW_FACE_USER_H

#include <stdbool.h>
#include <sys/types.h>

struct face_user {
        uid_t uid;
        gid_t gid;
        bool sudo; /* root, acting for its sudo caller */
};

/* The user, or the sudo caller when root came through sudo: euid 0 with
 * SUDO_UID and SUDO_GID both decimal ids and SUDO_UID not 0. Anything else
 * (no sudo, a half or malformed pair) is the real ids themselves. */
struct face_user face_invoking_user(void);

#endif
