/* Lower-casing a text (scrapy_simhash.analysis.words): lower, str.lower() in less time on text of
 * mixed scripts, where str.lower() looks up the full case mapping of every character. */
#include "_speedups.h"

/* The loop of lower for one kind of string: each character of *chars* lower-cased into
 * *out* (UCS4), with the largest character written; -1 when the text holds a character
 * whose lower case is not its simple lower-case mapping (U+0130, lower-cased to two
 * characters, and U+03A3, whose lower case depends on its neighbours), for str.lower(). */
#define LOWER_LOOP(NAME, CHAR)                                                              \
    static Py_UCS4 NAME(const CHAR *chars, Py_ssize_t length, Py_UCS4 *out)                 \
    {                                                                                       \
        Py_UCS4 largest = 0;                                                                \
        for (Py_ssize_t i = 0; i < length; i++) {                                           \
            Py_UCS4 ch = chars[i];                                                          \
            if (ch < 128) {                                                                 \
                ch = Py_TOLOWER(ch);                                                        \
            }                                                                               \
            else if (!is_han(ch)) {                                                         \
                if (ch == 0x130 || ch == 0x3A3) {                                           \
                    return (Py_UCS4)-1;                                                     \
                }                                                                           \
                ch = Py_UNICODE_TOLOWER(ch);                                                \
            }                                                                               \
            out[i] = ch;                                                                    \
            largest = ch > largest ? ch : largest;                                          \
        }                                                                                   \
        return largest;                                                                     \
    }

LOWER_LOOP(lower_ucs2, Py_UCS2)
LOWER_LOOP(lower_ucs4, Py_UCS4)

/* str.lower(text), called (for a subclass of str too: its own lower() may differ). */
static PyObject *
str_lower(PyObject *text)
{
    return PyObject_CallMethod((PyObject *)&PyUnicode_Type, "lower", "O", text);
}

/* str.lower(text): ASCII and Latin-1 texts by str.lower() itself (fast on them already),
 * and texts holding U+0130 or U+03A3. */
PyObject *
speedups_lower(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "lower() takes a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        return str_lower(text);
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *out = PyMem_Malloc(sizeof(Py_UCS4) * (length ? length : 1));
    if (out == NULL) {
        return PyErr_NoMemory();
    }
    Py_UCS4 largest = kind == PyUnicode_2BYTE_KIND
                          ? lower_ucs2(PyUnicode_DATA(text), length, out)
                          : lower_ucs4(PyUnicode_DATA(text), length, out);
    PyObject *result = largest == (Py_UCS4)-1
                           ? str_lower(text)
                           : PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, length);
    PyMem_Free(out);
    return result;
}
