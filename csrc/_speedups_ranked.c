/* anchor_forms (scrapy_simhash.analysis.anchors): the units of a text's paragraph anchors
 * where they are its lines, sized and ranked in one pass over its characters, and the
 * forms of those the anchors take, without a str of any line (str.splitlines() makes one
 * of each, and units() and unit_sizes read each again). A text whose lines may be
 * hard-wrapped is left to the Python code (units()). */
#include "_speedups.h"

/* A line of the text: where it starts, its length and its size in words. */
struct line {
    Py_ssize_t start, length, size;
};

struct lines {
    struct line *items;
    Py_ssize_t count, allocated;
};

static int
push_line(struct lines *lines, Py_ssize_t start, Py_ssize_t end, Py_ssize_t size)
{
    if (lines->count == lines->allocated) {
        Py_ssize_t allocated = lines->allocated ? 2 * lines->allocated : 64;
        struct line *items = PyMem_Realloc(lines->items, sizeof(struct line) * allocated);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        lines->items = items;
        lines->allocated = allocated;
    }
    lines->items[lines->count++] = (struct line){start, end - start, size};
    return 0;
}

/* Where str.splitlines() breaks a line (each is whitespace too). */
static inline int
is_line_break(Py_UCS4 ch)
{
    return ch < 128 ? ch == '\n' || ch == '\r' || ch == 0x0B || ch == 0x0C ||
                          (ch >= 0x1C && ch <= 0x1E)
                    : ch == 0x85 || ch == 0x2028 || ch == 0x2029;
}

/* The loop of anchor_forms for one kind of string: the lines of str.splitlines(), each
 * sized as unit_sizes does (see _speedups_anchors.c). ASCII first and without a branch
 * on whether a character ends a word: where words are short, one would be mispredicted
 * often. */
#define LINES_LOOP(NAME, CHAR)                                                              \
    static int NAME(const CHAR *chars, Py_ssize_t length, struct lines *lines)              \
    {                                                                                       \
        Py_ssize_t start = 0, size = 0;                                                     \
        int in_word = 0;                                                                    \
        for (Py_ssize_t i = 0; i < length; i++) {                                           \
            Py_UCS4 ch = chars[i];                                                          \
            if (ch < 0x80) {                                                                \
                if (ch < 0x20 && is_line_break(ch)) {                                       \
                    goto line_break;                                                        \
                }                                                                           \
                int space = Py_UNICODE_ISSPACE(ch);                                         \
                size += (!space) & (!in_word);                                              \
                in_word = !space;                                                           \
                continue;                                                                   \
            }                                                                               \
            if (ch >= 0x3040 && is_unspaced(ch)) {                                          \
                size += 2 - in_word;                                                        \
                in_word = 1;                                                                \
                continue;                                                                   \
            }                                                                               \
            if (is_line_break(ch)) {                                                        \
                goto line_break;                                                            \
            }                                                                               \
            if (is_space(ch)) {                                                             \
                in_word = 0;                                                                \
            }                                                                               \
            else if (!in_word) {                                                            \
                size++;                                                                     \
                in_word = 1;                                                                \
            }                                                                               \
            continue;                                                                       \
        line_break:                                                                         \
            if (push_line(lines, start, i, size) < 0) {                                     \
                return -1;                                                                  \
            }                                                                               \
            size = 0;                                                                       \
            in_word = 0;                                                                    \
            if (ch == '\r' && i + 1 < length && chars[i + 1] == '\n') {                     \
                i++;                                                                        \
            }                                                                               \
            start = i + 1;                                                                  \
        }                                                                                   \
        return start < length ? push_line(lines, start, length, size) : 0;                  \
    }

LINES_LOOP(lines_ucs1, Py_UCS1)
LINES_LOOP(lines_ucs2, Py_UCS2)
LINES_LOOP(lines_ucs4, Py_UCS4)

static int
compare_lengths(const void *a, const void *b)
{
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

/* Whether *lines* may be hard-wrapped, as the Python twin's _may_be_wrapped tells: the
 * tests units() makes first (a width of 50 to 100 characters, that 40% of the lines
 * fill); -1 after an error. */
static int
may_be_wrapped(const struct lines *lines)
{
    Py_ssize_t count = 0, from_50 = 0, over_100 = 0;
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        Py_ssize_t length = lines->items[i].length;
        count += length > 0;
        from_50 += length >= 50;
        over_100 += length > 100;
    }
    Py_ssize_t at = (9 * count) / 10;
    /* The width is the length at *at* of the sorted lengths: past 100 where more than
     * count - at lines are, under 50 where more than at lines are. */
    if (count < 4 || over_100 >= count - at || count - from_50 > at) {
        return 0;
    }
    Py_ssize_t *lengths = PyMem_Malloc(sizeof(Py_ssize_t) * count);
    if (lengths == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        if (lines->items[i].length) {
            lengths[n++] = lines->items[i].length;
        }
    }
    qsort(lengths, n, sizeof(Py_ssize_t), compare_lengths);
    Py_ssize_t width = lengths[at];
    PyMem_Free(lengths);
    Py_ssize_t full = 0;
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        /* len(line) >= 0.75 * width, in integers. */
        full += 4 * lines->items[i].length >= 3 * width;
    }
    return (double)full >= 0.4 * (double)count;
}

/* A long line, as ranked: its size, where it starts and its length. */
struct ranked {
    Py_ssize_t size, start, length;
};

/* Whether *a* ranks before *b* in the text's characters *data* of *kind*: larger, or
 * of one size and first in code point order (Python's order of (-size, line)). */
static inline int
ranks_before(int kind, const void *data, const struct ranked *a, const struct ranked *b)
{
    if (a->size != b->size) {
        return a->size > b->size;
    }
    Py_ssize_t common = Py_MIN(a->length, b->length);
    for (Py_ssize_t i = 0; i < common; i++) {
        Py_UCS4 x = PyUnicode_READ(kind, data, a->start + i);
        Py_UCS4 y = PyUnicode_READ(kind, data, b->start + i);
        if (x != y) {
            return x < y;
        }
    }
    return a->length < b->length;
}

/* Sorts *items* by ranks_before, stably (a merge sort through *scratch*, as long). */
static void
rank(int kind, const void *data, struct ranked *items, struct ranked *scratch, Py_ssize_t n)
{
    struct ranked *from = items, *to = scratch;
    for (Py_ssize_t width = 1; width < n; width *= 2) {
        for (Py_ssize_t low = 0; low < n; low += 2 * width) {
            Py_ssize_t mid = Py_MIN(low + width, n), high = Py_MIN(low + 2 * width, n);
            Py_ssize_t i = low, j = mid, k = low;
            while (i < mid && j < high) {
                to[k++] = ranks_before(kind, data, &from[j], &from[i]) ? from[j++] : from[i++];
            }
            while (i < mid) {
                to[k++] = from[i++];
            }
            while (j < high) {
                to[k++] = from[j++];
            }
        }
        struct ranked *swap = from;
        from = to;
        to = swap;
    }
    if (from != items) {
        memcpy(items, from, sizeof(struct ranked) * n);
    }
}

/* Whether *form* is one of the *count* forms of *pairs* (size, form) marked in *taken*. */
static int
taken_before(PyObject *pairs, const char *taken, PyObject *form)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); i++) {
        PyObject *other = PyTuple_GET_ITEM(PyList_GET_ITEM(pairs, i), 1);
        if (taken[i] && PyUnicode_GET_LENGTH(other) == PyUnicode_GET_LENGTH(form) &&
            PyUnicode_Compare(other, form) == 0) {
            return 1;
        }
    }
    return 0;
}

/* [(size, form), ...] of the *n* ranked *items* of *text*, in their order, up to the one
 * that makes *count* distinct forms of at least *min_chars* characters; *more* set where
 * items are left after it. */
static PyObject *
ranked_forms(PyObject *text, const struct ranked *items, Py_ssize_t n, Py_ssize_t min_chars,
             Py_ssize_t count, int *more)
{
    PyObject *forms = PyList_New(0);
    char *taken = PyMem_Malloc(n + 1);
    Py_ssize_t distinct = 0;
    *more = 0;
    if (forms == NULL || taken == NULL) {
        goto error;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *form = speedups_form_of(text, items[i].start, items[i].length);
        if (form == NULL) {
            goto error;
        }
        taken[i] = PyUnicode_GET_LENGTH(form) >= min_chars && !taken_before(forms, taken, form);
        distinct += taken[i];
        PyObject *size = PyLong_FromSsize_t(items[i].size);
        PyObject *pair = size == NULL ? NULL : PyTuple_Pack(2, size, form);
        Py_XDECREF(size);
        Py_DECREF(form);
        if (speedups_append_new(forms, pair) < 0) {
            goto error;
        }
        if (taken[i] && distinct == count) {
            *more = i + 1 < n;
            break;
        }
    }
    PyMem_Free(taken);
    return forms;
error:
    Py_XDECREF(forms);
    PyMem_Free(taken);
    return NULL;
}

/* The result of anchor_forms for *lines* of *text* not wrapped. */
static PyObject *
forms_result(PyObject *text, const struct lines *lines, Py_ssize_t min_chars, Py_ssize_t count)
{
    Py_ssize_t total = 0, long_words = 0, n = 0;
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        total += lines->items[i].size;
        n += lines->items[i].length >= min_chars;
    }
    struct ranked *items = PyMem_Malloc(sizeof(struct ranked) * (2 * n + 1));
    if (items == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        const struct line *line = &lines->items[i];
        if (line->length >= min_chars) {
            items[k++] = (struct ranked){line->size, line->start, line->length};
            long_words += line->size;
        }
    }
    rank(PyUnicode_KIND(text), PyUnicode_DATA(text), items, items + n, n);
    int more;
    PyObject *forms = ranked_forms(text, items, n, min_chars, count, &more);
    PyMem_Free(items);
    if (forms == NULL) {
        return NULL;
    }
    return Py_BuildValue("(nnNO)", total, long_words, forms, more ? Py_True : Py_False);
}

/* anchor_forms(text, min_chars, count) -> None where the text's lines may be hard-wrapped
 * (then units() decides), else (words of all lines, words of the lines of at least
 * min_chars characters, [(size, form)] of those lines, largest first, ties by their
 * text, up to the one that makes count distinct forms of at least min_chars characters,
 * whether lines are left after it). */
PyObject *
speedups_anchor_forms(PyObject *module, PyObject *args)
{
    PyObject *text;
    Py_ssize_t min_chars, count;
    if (!PyArg_ParseTuple(args, "O!nn", &PyUnicode_Type, &text, &min_chars, &count)) {
        return NULL;
    }
    struct lines lines = {NULL, 0, 0};
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int status;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        status = lines_ucs1(PyUnicode_1BYTE_DATA(text), length, &lines);
        break;
    case PyUnicode_2BYTE_KIND:
        status = lines_ucs2(PyUnicode_2BYTE_DATA(text), length, &lines);
        break;
    default:
        status = lines_ucs4(PyUnicode_4BYTE_DATA(text), length, &lines);
    }
    PyObject *result = NULL;
    if (status == 0) {
        status = may_be_wrapped(&lines);
    }
    if (status == 0) {
        result = forms_result(text, &lines, min_chars, count);
    }
    else if (status == 1) {
        result = Py_NewRef(Py_None);
    }
    PyMem_Free(lines.items);
    return result;
}
