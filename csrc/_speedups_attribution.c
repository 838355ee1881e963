/* The searches for attribution lines (scrapy_simhash.analysis.attribution): contains_any and
 * line_starts. */
#include "_speedups.h"

/* The first position from i on where *pairs* marks the character and the one after it (by
 * their low 6 bits: pairs[a & 63] >> (b & 63); the end of the text counts as a 0 after the
 * last one), or length: a loop for each kind of string, without a test of the kind per
 * character. Two characters make far fewer false hits than one in Latin text, where "a"
 * and "t" begin notices. */
#define PAIR_LOOP(CHAR)                                                                   \
    {                                                                                     \
        const CHAR *chars = data;                                                         \
        for (; i + 1 < length; i++) {                                                     \
            if (pairs[chars[i] & 63] >> (chars[i + 1] & 63) & 1) {                        \
                return i;                                                                 \
            }                                                                             \
        }                                                                                 \
        return i < length && pairs[chars[i] & 63] & 1 ? i : length;                      \
    }
static Py_ssize_t
next_pair(int kind, const void *data, Py_ssize_t i, Py_ssize_t length, const uint64_t *pairs)
{
    if (kind == PyUnicode_1BYTE_KIND) {
        PAIR_LOOP(Py_UCS1)
    }
    if (kind == PyUnicode_2BYTE_KIND) {
        PAIR_LOOP(Py_UCS2)
    }
    PAIR_LOOP(Py_UCS4)
}
#undef PAIR_LOOP

typedef struct {
    Py_UCS4 first;
    Py_ssize_t size;
    int kind;
    const void *data;
} needle_view;

/* Whether *text* holds any of the strings of the tuple *needles*: what
 * scrapy_simhash.analysis.attribution._contains_any_python finds with one `in` per needle, in one
 * pass over the text (each `in` is a pass, and converts the needle to the text's kind). */
PyObject *
speedups_contains_any(PyObject *module, PyObject *args)
{
    PyObject *text, *needles;
    if (!PyArg_ParseTuple(args, "UO!:contains_any", &text, &PyTuple_Type, &needles)) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(needles);
    needle_view *views = PyMem_Malloc(sizeof(needle_view) * (count ? count : 1));
    if (views == NULL) {
        return PyErr_NoMemory();
    }
    uint64_t pairs[64] = {0}; /* the needles' first two characters (see next_pair) */
    int found = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *needle = PyTuple_GET_ITEM(needles, k);
        if (!PyUnicode_Check(needle)) {
            PyMem_Free(views);
            PyErr_SetString(PyExc_TypeError, "'in <string>' requires string as left operand");
            return NULL;
        }
        views[k].size = PyUnicode_GET_LENGTH(needle);
        views[k].kind = PyUnicode_KIND(needle);
        views[k].data = PyUnicode_DATA(needle);
        if (views[k].size == 0) {
            found = 1; /* "" is in every text */
            continue;
        }
        views[k].first = PyUnicode_READ(views[k].kind, views[k].data, 0);
        pairs[views[k].first & 63] |=
            views[k].size == 1
                ? ~(uint64_t)0
                : (uint64_t)1 << (PyUnicode_READ(views[k].kind, views[k].data, 1) & 63);
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; !found && (i = next_pair(kind, data, i, length, pairs)) < length;
         i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        for (Py_ssize_t k = 0; k < count && !found; k++) {
            const needle_view *view = &views[k];
            if (view->first != ch || view->size > length - i) {
                continue;
            }
            Py_ssize_t j = 1;
            while (j < view->size &&
                   PyUnicode_READ(view->kind, view->data, j) == PyUnicode_READ(kind, data, i + j)) {
                j++;
            }
            found = j == view->size;
        }
    }
    PyMem_Free(views);
    return PyBool_FromLong(found);
}

/* The lines of *text* that can start an attribution: what
 * scrapy_simhash.analysis.attribution._line_starts_python finds with a regular expression. For each
 * line after a line break, the position of its first character, when its first word
 * character (before the line's end) is a non-ASCII one outside U+4E00..U+9FD5, the start
 * of one of *keywords* (ASCII letters in either case, other characters as they are; each
 * keyword starts with a word character, or ValueError), or an ASCII digit followed by no
 * word character to the line's end but decimal digits and 年, 月, 日. */
PyObject *
speedups_line_starts(PyObject *module, PyObject *args)
{
    PyObject *text, *keywords;
    if (!PyArg_ParseTuple(args, "UO!:line_starts", &text, &PyTuple_Type, &keywords)) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(keywords);
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *keyword = PyTuple_GET_ITEM(keywords, k);
        if (!PyUnicode_Check(keyword)) {
            PyErr_SetString(PyExc_TypeError, "keywords must be str");
            return NULL;
        }
        /* The line's first word character is where a keyword is compared. */
        if (PyUnicode_GET_LENGTH(keyword) == 0 || !is_word(PyUnicode_READ_CHAR(keyword, 0))) {
            PyErr_SetString(PyExc_ValueError, "keywords must start with a word character");
            return NULL;
        }
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *starts = PyList_New(0);
    if (starts == NULL) {
        return NULL;
    }
#define FOLD(ch) ((ch) >= 'A' && (ch) <= 'Z' ? (ch) + 32 : (ch))
    for (Py_ssize_t i = 0; i < length; i++) {
        if (PyUnicode_READ(kind, data, i) != '\n') {
            continue;
        }
        Py_ssize_t j = i + 1;
        Py_UCS4 ch = 0;
        while (j < length && (ch = PyUnicode_READ(kind, data, j)) != '\n' && !is_word(ch)) {
            j++;
        }
        if (j == length || ch == '\n') {
            i = j - 1; /* the next line break, if any, is looked at next */
            continue;
        }
        int found = ch >= 128 && !is_han(ch);
        if (ch >= '0' && ch <= '9') {
            /* A date or a time only: no word character but decimal digits and 年, 月, 日
             * to the end of the line (headings "12.1.1. RAID" and figures are content). */
            Py_ssize_t m = j + 1;
            Py_UCS4 next;
            found = 1;
            while (m < length && (next = PyUnicode_READ(kind, data, m)) != '\n') {
                if (is_word(next) && !Py_UNICODE_ISDECIMAL(next) && next != 0x5E74 &&
                    next != 0x6708 && next != 0x65E5) {
                    found = 0;
                    break;
                }
                m++;
            }
        }
        for (Py_ssize_t k = 0; k < count && !found; k++) {
            PyObject *keyword = PyTuple_GET_ITEM(keywords, k);
            Py_ssize_t size = PyUnicode_GET_LENGTH(keyword);
            int keyword_kind = PyUnicode_KIND(keyword);
            const void *keyword_data = PyUnicode_DATA(keyword);
            if (size > length - j) {
                continue;
            }
            Py_ssize_t m = 0;
            while (m < size) {
                Py_UCS4 want = PyUnicode_READ(keyword_kind, keyword_data, m);
                Py_UCS4 have = PyUnicode_READ(kind, data, j + m);
                if (FOLD(want) != FOLD(have)) {
                    break;
                }
                m++;
            }
            found = m == size;
        }
        if (found && speedups_append_new(starts, PyLong_FromSsize_t(i + 1)) < 0) {
            Py_DECREF(starts);
            return NULL;
        }
    }
#undef FOLD
    return starts;
}
