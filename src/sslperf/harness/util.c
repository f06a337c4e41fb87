/* Helpers shared by the family files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"

prep_status prep_na(prep_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
    ERR_clear_error();
    return res->status = PREP_NA;
}

prep_status prep_unknown(prep_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
    return res->status = PREP_UNKNOWN;
}

prep_status prep_error(prep_result *res, const char *fmt, ...)
{
    va_list ap;
    size_t used;
    unsigned long code;

    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
    /* Say what the library said: its first queued error, if any. */
    code = ERR_get_error();
    used = strlen(res->reason);
    if (code != 0 && used + 4 < sizeof(res->reason)) {
        memcpy(res->reason + used, " (", 3);
        ERR_error_string_n(code, res->reason + used + 2, sizeof(res->reason) - used - 3);
        used = strlen(res->reason);
        if (used + 1 < sizeof(res->reason))
            memcpy(res->reason + used, ")", 2);
    }
    ERR_clear_error();
    return res->status = PREP_ERROR;
}

int parse_size(const char *text, size_t *out)
{
    char *end = NULL;
    unsigned long long value;

    if (text == NULL || *text < '0' || *text > '9')
        return 0;
    value = strtoull(text, &end, 10);
    if (*end != '\0' || value == 0 || value > (1ULL << 26))
        return 0;
    *out = (size_t)value;
    return 1;
}

void fill_pattern(unsigned char *buf, size_t len, unsigned seed)
{
    /* Deterministic, not all-zero: some code paths special-case zeros. */
    unsigned state = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < len; i++) {
        state = state * 1103515245u + 12345u;
        buf[i] = (unsigned char)(state >> 16);
    }
}

int hex_equal(const unsigned char *bytes, size_t len, const char *hex)
{
    static const char digits[] = "0123456789abcdef";
    if (strlen(hex) != 2 * len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (hex[2 * i] != digits[bytes[i] >> 4] || hex[2 * i + 1] != digits[bytes[i] & 15])
            return 0;
    }
    return 1;
}

void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}
