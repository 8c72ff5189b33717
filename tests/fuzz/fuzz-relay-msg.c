/* libFuzzer harness for the relay's wire format: the parser child reads
 * these bytes from the sandbox, the least trusted side. Any bytes are
 * refused with a one-line error, which the monitor's check takes as a
 * refusal record, or give a record the check takes, whose line parses
 * back to the very same record. Answers and control messages read from
 * the same bytes are refused in one line or read without a crash. */
#include "face/relay_msg.h"
#include "common/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure must explain itself in one line; either way err is freed. */
static void one_line(int r, struct umw_error *err)
{
        if (r < 0 && (!err || strchr(err->msg, '\n')))
                abort();
        if (r == 0 && err)
                abort();
        umw_error_free(err);
}

/* The record's line parses back to the same bytes, record and line alike. */
static void round_trip(const struct relay_request *q)
{
        static struct relay_request back;
        struct umw_error *err = NULL;
        char *line = NULL;
        size_t len = 0;
        if (relay_request_check(q, &err) < 0 || relay_request_format(q, &line, &len, &err) < 0)
                abort();
        if (len == 0 || len > RELAY_LINE_MAX || line[len - 1] != '\n' || strlen(line) != len)
                abort();
        if (relay_request_parse(line, len - 1, &back, &err) < 0 ||
            memcmp(&back, q, sizeof(back)) != 0)
                abort();
        free(line);
}

/* A refusal goes to the monitor as the parser child sends it, a RELAY_BAD
 * record with the error's line, and the monitor's check must take that. */
static void refusal(struct relay_request *q, const struct umw_error *err)
{
        struct umw_error *e = NULL;
        memset(q, 0, sizeof(*q));
        q->kind = RELAY_BAD;
        snprintf(q->text, sizeof(q->text), "%s", err->msg);
        if (relay_request_check(q, &e) < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* Static: the records are some 10 KiB each. */
        static struct relay_request q;
        static struct relay_answer a;
        static struct relay_control c;
        const char *line = (const char *)data;
        struct umw_error *err = NULL;
        int r = relay_request_parse(line, size, &q, &err);
        if (r < 0 && err)
                refusal(&q, err);
        one_line(r, err);
        if (r == 0)
                round_trip(&q);
        err = NULL;
        r = relay_answer_parse(line, size, &a, &err);
        one_line(r, err);
        if (r == 0 && !relay_status_name(a.status))
                abort();
        err = NULL;
        r = relay_control_parse(line, size, &c, &err);
        one_line(r, err);
        if (r == 0 && (c.op < RELAY_OP_PENDING || c.op > RELAY_OP_ACTIONS))
                abort();
        return 0;
}
