/* A text's paragraph anchors (scrapy_simhash.analysis.anchors), their pure-Python twins'
 * loops in C:
 *
 * - unit_sizes: the sizes in words of a list of units;
 * - anchor_form: a unit's case-folded form without punctuation, in one pass where its
 *   characters case-fold to themselves or to ASCII;
 *
 * A unit's size is its count of words: runs of characters between whitespace
 * (str.split()), plus one for each character of a script written without spaces (Han,
 * kana, Hangul syllables), the ranges of the Python twin's _UNSPACED. */
#include "_speedups.h"

/* The loop of unit_size for one kind of string. */
#define SIZE_LOOP(NAME, CHAR)                                                               \
    static Py_ssize_t NAME(const CHAR *chars, Py_ssize_t length)                           \
    {                                                                                       \
        Py_ssize_t size = 0;                                                                \
        int in_word = 0;                                                                    \
        for (Py_ssize_t i = 0; i < length; i++) {                                           \
            Py_UCS4 ch = chars[i];                                                          \
            if (ch >= 0x3040 && is_unspaced(ch)) {                                          \
                size += in_word ? 1 : 2;                                                    \
                in_word = 1;                                                                \
                continue;                                                                   \
            }                                                                               \
            if (ch < 128 ? Py_ISSPACE(ch) || (ch >= 0x1C && ch <= 0x1F)                    \
                         : Py_UNICODE_ISSPACE(ch)) {                                        \
                in_word = 0;                                                                \
                continue;                                                                   \
            }                                                                               \
            if (!in_word) {                                                                 \
                size++;                                                                     \
                in_word = 1;                                                                \
            }                                                                               \
        }                                                                                   \
        return size;                                                                        \
    }

SIZE_LOOP(size_ucs1, Py_UCS1)
SIZE_LOOP(size_ucs2, Py_UCS2)
SIZE_LOOP(size_ucs4, Py_UCS4)

/* The size of *unit* in words (see the top of this file). */
static Py_ssize_t
unit_size(PyObject *unit)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(unit);
    switch (PyUnicode_KIND(unit)) {
    case PyUnicode_1BYTE_KIND:
        return size_ucs1(PyUnicode_1BYTE_DATA(unit), length);
    case PyUnicode_2BYTE_KIND:
        return size_ucs2(PyUnicode_2BYTE_DATA(unit), length);
    default:
        return size_ucs4(PyUnicode_4BYTE_DATA(unit), length);
    }
}

/* unit_sizes(units, min_chars) -> (words of all units, [(size, unit) for each unit of at
 * least min_chars characters]). */
PyObject *
speedups_unit_sizes(PyObject *module, PyObject *args)
{
    PyObject *units;
    Py_ssize_t min_chars;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &units, &min_chars)) {
        return NULL;
    }
    PyObject *sized = PyList_New(0);
    if (sized == NULL) {
        return NULL;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(units); i++) {
        PyObject *unit = PyList_GET_ITEM(units, i);
        if (!PyUnicode_Check(unit)) {
            Py_DECREF(sized);
            PyErr_SetString(PyExc_TypeError, "unit_sizes() takes a list of str");
            return NULL;
        }
        Py_ssize_t size = unit_size(unit);
        total += size;
        if (PyUnicode_GET_LENGTH(unit) >= min_chars &&
            speedups_append_new(sized, Py_BuildValue("(nO)", size, unit)) < 0) {
            Py_DECREF(sized);
            return NULL;
        }
    }
    PyObject *result = Py_BuildValue("(nN)", total, sized);
    return result;
}

/* The characters anchor_form drops (the Python twin's _PUNCTUATION_POINTS): ASCII's
 * punctuation and symbols, U+00A1..U+00BF, U+00D7, U+00F7, general punctuation and the
 * symbols after it (U+2010..U+206F), CJK punctuation (U+3000..U+303F), the CJK
 * compatibility and small forms (U+FE30..U+FE6F) and the fullwidth forms that are not
 * letters or digits (U+FF01..U+FF65). */
static inline int
is_anchor_punctuation(Py_UCS4 ch)
{
    if (ch < 0x80) {
        return ch >= 0x21 && ch <= 0x7E && !Py_ISALNUM(ch);
    }
    return (ch >= 0xA1 && ch <= 0xBF) || ch == 0xD7 || ch == 0xF7 ||
           (ch >= 0x2010 && ch <= 0x206F) || (ch >= 0x3000 && ch <= 0x303F) ||
           (ch >= 0xFE30 && ch <= 0xFE6F) ||
           (ch >= 0xFF01 && ch <= 0xFF65 && !Py_UNICODE_ISALNUM(ch));
}


/* Whether *ch*, not ASCII, case-folds to itself (str.casefold()): the tests check each
 * character of these ranges. Latin-1's symbols but U+00B5 (folded to a Greek mu), general
 * punctuation, CJK punctuation, kana, Han, Hangul syllables, CJK compatibility
 * ideographs, small forms, and the fullwidth forms but the letters. */
static inline int
folds_to_itself(Py_UCS4 ch)
{
    return (ch >= 0x3000 && ch <= 0x9FFF) || (ch >= 0xAC00 && ch <= 0xD7AF) ||
           (ch >= 0x2000 && ch <= 0x206F) || (ch >= 0xA0 && ch <= 0xBF && ch != 0xB5) ||
           ch == 0xD7 || ch == 0xF7 || (ch >= 0xF900 && ch <= 0xFAFF) ||
           (ch >= 0xFE30 && ch <= 0xFE6F) || (ch >= 0xFF01 && ch <= 0xFF20) ||
           (ch >= 0xFF3B && ch <= 0xFF40) || (ch >= 0xFF5B && ch <= 0xFFEF);
}

/* ASCII as anchor_form writes it: each character lower-cased (as str.casefold() does),
 * or -1 for one it drops (whitespace, punctuation and symbols). */
static short ascii_forms[128];

static void
fill_ascii_forms(void)
{
    for (Py_UCS4 ch = 0; ch < 128; ch++) {
        ascii_forms[ch] = Py_UNICODE_ISSPACE(ch) || is_anchor_punctuation(ch) ? -1
                                                                              : Py_TOLOWER(ch);
    }
}

static inline int
is_ascii_lower(Py_UCS4 ch)
{
    return (Py_UCS4)(ch - 'a') < 26u;
}

/* The loop of anchor_form for one kind of string: *chars* without punctuation and
 * symbols, runs of them and of whitespace made one space, none at either end, each
 * number (a run of ASCII digits that no ASCII letter touches) made one 0, into *out*
 * (as long); case-folded too where *fold* is set, or -1 at a character folded otherwise
 * than here (to itself, or ASCII to its lower case). Without a branch on what a
 * character of ASCII (most of most texts) is: a space is written where one may go and
 * counted where it does, and the count of characters written, the one value carried from
 * a character to the next, takes one addition. */
#define FORM_LOOP(NAME, CHAR)                                                               \
    static Py_ssize_t NAME(const CHAR *chars, Py_ssize_t length, int fold, int zero,        \
                           CHAR *out)                                                       \
    {                                                                                       \
        Py_ssize_t n = 0, run = -1; /* where a run of digits written began */               \
        int gap = 0, started = 0, after_letter = 0;                                         \
        for (Py_ssize_t i = 0; i < length; i++) {                                           \
            Py_UCS4 ch = chars[i];                                                          \
            int digit = (Py_UCS4)(ch - '0') < 10u;                                          \
            int keep;                                                                       \
            if (ch < 0x80) {                                                                \
                int form = ascii_forms[ch];                                                 \
                keep = form >= 0;                                                           \
                ch = fold ? (Py_UCS4)form : ch;                                             \
            }                                                                               \
            else {                                                                          \
                if (fold && !folds_to_itself(ch)) {                                         \
                    return -1;                                                              \
                }                                                                           \
                keep = !is_anchor_punctuation(ch) && !is_space(ch);                         \
            }                                                                               \
            /* A space before a character kept after one dropped, but at the start. */     \
            int space = keep & gap;                                                         \
            int joined = keep & !space; /* to the character written before it */           \
            if (run >= 0 && !(joined & digit)) {                                            \
                /* A run of digits ends: a number unless a letter touches it. */            \
                if (zero && !after_letter && !(joined & is_ascii_lower(ch))) {              \
                    out[run] = '0';                                                         \
                    n = run + 1;                                                            \
                }                                                                           \
                run = -1;                                                                   \
            }                                                                               \
            else if (run < 0 && keep & digit) {                                             \
                run = n + space;                                                            \
                after_letter = joined && n > 0 && is_ascii_lower(out[n - 1]);               \
            }                                                                               \
            out[n] = ' ';                                                                   \
            out[n + space] = (CHAR)ch;                                                      \
            n += space + keep;                                                              \
            started |= keep;                                                                \
            gap = (!keep) & started;                                                        \
        }                                                                                   \
        if (zero && run >= 0 && !after_letter) {                                            \
            out[run] = '0';                                                                 \
            n = run + 1;                                                                    \
        }                                                                                   \
        return n;                                                                           \
    }

FORM_LOOP(form_ucs1, Py_UCS1)
FORM_LOOP(form_ucs2, Py_UCS2)
FORM_LOOP(form_ucs4, Py_UCS4)

/* The *length* characters of *text* from *start* squeezed (and with *fold*, case-folded),
 * or Py_None (not a new reference) where one of them is not folded here. Folding here
 * never makes a character larger, so the result is written in the text's kind (on the
 * stack, for a paragraph). */
static PyObject *
form(PyObject *text, Py_ssize_t start, Py_ssize_t length, int fold, int zero)
{
    static int filled = 0;
    if (!filled) {
        fill_ascii_forms();
        filled = 1;
    }
    int kind = PyUnicode_KIND(text);
    char small[4096];
    void *out = (size_t)length * kind <= sizeof(small) ? small : PyMem_Malloc(length * kind);
    if (out == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t n;
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        n = form_ucs1(PyUnicode_1BYTE_DATA(text) + start, length, fold, zero, out);
        break;
    case PyUnicode_2BYTE_KIND:
        n = form_ucs2(PyUnicode_2BYTE_DATA(text) + start, length, fold, zero, out);
        break;
    default:
        n = form_ucs4(PyUnicode_4BYTE_DATA(text) + start, length, fold, zero, out);
    }
    PyObject *result = n < 0 ? Py_None : PyUnicode_FromKindAndData(kind, out, n);
    if (out != small) {
        PyMem_Free(out);
    }
    return result;
}

/* squeeze(folded) for *folded*, a new reference to what a casefold() returned (with
 * *zero*, each number made one 0). */
static PyObject *
squeeze_folded(PyObject *folded, int zero)
{
    if (folded == NULL) {
        return NULL;
    }
    PyObject *result = PyUnicode_Check(folded)
                           ? form(folded, 0, PyUnicode_GET_LENGTH(folded), 0, zero)
                           : PyErr_Format(PyExc_TypeError, "casefold() returned a value not a str");
    Py_DECREF(folded);
    return result;
}

/* The form of the *length* characters of the str *text* from *start*, each number made
 * one 0 with *zero*: in one pass where each of them folds to itself or is ASCII, else
 * str.casefold() of them squeezed. */
static PyObject *
form_of(PyObject *text, Py_ssize_t start, Py_ssize_t length, int zero)
{
    PyObject *result = form(text, start, length, 1, zero);
    if (result != Py_None) {
        return result;
    }
    PyObject *unit = PyUnicode_Substring(text, start, start + length);
    if (unit == NULL) {
        return NULL;
    }
    PyObject *folded = PyObject_CallMethod((PyObject *)&PyUnicode_Type, "casefold", "O", unit);
    result = squeeze_folded(folded, zero);
    Py_DECREF(unit);
    return result;
}

/* The anchor form of the *length* characters of the str *text* from *start*. */
PyObject *
speedups_form_of(PyObject *text, Py_ssize_t start, Py_ssize_t length)
{
    return form_of(text, start, length, 1);
}

static PyObject *
line_form(PyObject *line, int zero, const char *name)
{
    if (!PyUnicode_Check(line)) {
        PyErr_Format(PyExc_TypeError, "%s() takes a str", name);
        return NULL;
    }
    if (PyUnicode_CheckExact(line)) {
        return form_of(line, 0, PyUnicode_GET_LENGTH(line), zero);
    }
    /* Its own casefold() may differ from str's. */
    return squeeze_folded(PyObject_CallMethod(line, "casefold", NULL), zero);
}

/* anchor_form(line) -> squeeze(line.casefold()): case-folded, punctuation and symbols
 * dropped, runs of them and of whitespace made one space, none at either end, each
 * number made one 0. */
PyObject *
speedups_anchor_form(PyObject *module, PyObject *line)
{
    return line_form(line, 1, "anchor_form");
}

/* sketch_form(line): anchor_form(line) with its numbers as they are. */
PyObject *
speedups_sketch_form(PyObject *module, PyObject *line)
{
    return line_form(line, 0, "sketch_form");
}
