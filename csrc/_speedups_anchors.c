/* The sizes of a text's units for its paragraph anchors (scrapy_simhash.analysis.anchors):
 * unit_sizes, its pure-Python twin's loop over every unit in one pass over the characters.
 * A unit's size is its count of words: runs of characters between whitespace
 * (str.split()), plus one for each character of a script written without spaces (Han,
 * kana, Hangul syllables), the ranges of the Python twin's _UNSPACED. */
#include "_speedups.h"

static inline int
is_unspaced(Py_UCS4 ch)
{
    return (ch >= 0x3040 && ch <= 0x30FF) || (ch >= 0x3400 && ch <= 0x4DBF) ||
           (ch >= 0x4E00 && ch <= 0x9FFF) || (ch >= 0xAC00 && ch <= 0xD7AF) ||
           (ch >= 0xF900 && ch <= 0xFAFF);
}

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

/* squeeze(text) -> " ".join(_PUNCTUATION.sub(" ", text).split()): punctuation and
 * symbols dropped, runs of them and of whitespace made one space, none at either end. */
PyObject *
speedups_squeeze(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "squeeze() takes a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *out = PyMem_Malloc(sizeof(Py_UCS4) * (length ? length : 1));
    if (out == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t n = 0;
    int gap = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(ch) || is_anchor_punctuation(ch)) {
            gap = 1;
            continue;
        }
        if (gap && n) {
            out[n++] = ' ';
        }
        gap = 0;
        out[n++] = ch;
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n);
    PyMem_Free(out);
    return result;
}
