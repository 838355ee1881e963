/* The first split of a text into words (scrapy_simhash.analysis.words): count_words and
 * count_long_words. */
#include "_speedups.h"

#include <string.h>

/* Whether the word text[start:end] is one that can carry content: a single character
 * only if it is a decimal digit, a longer word only if it is not all underscores. */
static int
is_content_word(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (end - start == 1) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, start);
        return ch != '_' && Py_UNICODE_ISDECIMAL(ch);
    }
    for (Py_ssize_t i = start; i < end; i++) {
        if (PyUnicode_READ(kind, data, i) != '_') {
            return 1;
        }
    }
    return 0;
}

/* The distinct words of a text, counted: spans of the text in a table of their own, so
 * that a word is made a Python string, hashed and looked up in the counts once per
 * distinct word rather than once per occurrence (a page repeats most of its words). */
typedef struct {
    Py_ssize_t start, length, count;
    uint64_t hash;
} word_span;

typedef struct {
    int kind;
    const char *data;
    word_span *words; /* in the order of their first occurrence */
    Py_ssize_t used, allocated;
    Py_ssize_t *slots; /* index + 1 into words, 0 for an empty slot */
    Py_ssize_t mask;
} word_table;

/* FNV-1a over the code points of a word, computed as the word is read. */
#define HASH_START 14695981039346656037ULL
#define HASH_NEXT(hash, ch) (((hash) ^ (ch)) * 1099511628211ULL)

static int
table_grow(word_table *table)
{
    Py_ssize_t size = (table->mask + 1) * 2;
    Py_ssize_t *slots = PyMem_Calloc(size, sizeof(Py_ssize_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < table->used; i++) {
        Py_ssize_t slot = (Py_ssize_t)(table->words[i].hash & (uint64_t)(size - 1));
        while (slots[slot]) {
            slot = (slot + 1) & (size - 1);
        }
        slots[slot] = i + 1;
    }
    PyMem_Free(table->slots);
    table->slots = slots;
    table->mask = size - 1;
    return 0;
}

/* Counts the word text[start:start + length], whose hash is *hash*. */
static int
table_add(word_table *table, Py_ssize_t start, Py_ssize_t length, uint64_t hash)
{
    const char *bytes = table->data + start * table->kind;
    size_t size = (size_t)length * table->kind;
    Py_ssize_t slot = (Py_ssize_t)(hash & (uint64_t)table->mask);
    while (table->slots[slot]) {
        word_span *word = &table->words[table->slots[slot] - 1];
        if (word->hash == hash && word->length == length &&
            memcmp(table->data + word->start * table->kind, bytes, size) == 0) {
            word->count++;
            return 0;
        }
        slot = (slot + 1) & table->mask;
    }
    if (table->used == table->allocated) {
        Py_ssize_t allocated = table->allocated * 2;
        word_span *words = PyMem_Realloc(table->words, allocated * sizeof(word_span));
        if (words == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        table->words = words;
        table->allocated = allocated;
    }
    table->words[table->used] = (word_span){start, length, 1, hash};
    table->slots[slot] = ++table->used;
    if (table->used * 2 > table->mask + 1) {
        return table_grow(table);
    }
    return 0;
}

/* counts[word] += n for each word of the table, in its order: n at once to an int, else
 * one by one (a float may round each addition). Into empty counts (as the term extractor
 * passes), each word is new: set without a lookup first. */
static int
add_counted(PyObject *text, word_table *table, PyObject *counts)
{
    int fresh = PyDict_GET_SIZE(counts) == 0;
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL) {
        return -1;
    }
    int status = 0;
    for (Py_ssize_t i = 0; i < table->used && status == 0; i++) {
        word_span *span = &table->words[i];
        PyObject *word = PyUnicode_Substring(text, span->start, span->start + span->length);
        if (word == NULL) {
            status = -1;
            break;
        }
        PyObject *old = fresh ? NULL : Py_XNewRef(PyDict_GetItemWithError(counts, word));
        if (old == NULL && PyErr_Occurred()) {
            status = -1;
        }
        else if (old == NULL || PyLong_CheckExact(old)) {
            PyObject *count = PyLong_FromSsize_t(span->count);
            PyObject *sum = count == NULL || old == NULL ? Py_XNewRef(count)
                                                         : PyNumber_Add(old, count);
            status = sum == NULL ? -1 : PyDict_SetItem(counts, word, sum);
            Py_XDECREF(count);
            Py_XDECREF(sum);
        }
        else {
            for (Py_ssize_t n = 0; n < span->count && status == 0; n++) {
                status = speedups_add_one(counts, word, one);
            }
        }
        Py_XDECREF(old);
        Py_DECREF(word);
    }
    Py_DECREF(one);
    return status;
}

/* The loop of count_words for one kind of string: the Han runs copied to *han* (UCS-2:
 * they are all in the BMP) with a line break after each but the last, the other words
 * that can carry content added to *table*. Returns the length written to han, -1 on error. */
#define COUNT_WORDS_LOOP(NAME, CHAR)                                                        \
    static Py_ssize_t NAME(const CHAR *chars, Py_ssize_t length, int kind, Py_UCS2 *han,   \
                           word_table *table)                                              \
    {                                                                                      \
        Py_ssize_t written = 0, i = 0;                                                     \
        while (i < length) {                                                               \
            Py_UCS4 ch = chars[i];                                                         \
            Py_ssize_t start = i;                                                          \
            if (is_han(ch)) {                                                              \
                if (written) {                                                             \
                    han[written++] = '\n';                                                 \
                }                                                                          \
                do {                                                                       \
                    han[written++] = (Py_UCS2)chars[i];                                    \
                } while (++i < length && is_han(chars[i]));                                \
            }                                                                              \
            else if (is_word(ch)) {                                                        \
                uint64_t hash = HASH_START;                                                \
                do {                                                                       \
                    hash = HASH_NEXT(hash, chars[i]);                                      \
                } while (++i < length && !is_han(chars[i]) && is_word(chars[i]));          \
                if (is_content_word(kind, chars, start, i) &&                              \
                    table_add(table, start, i - start, hash) < 0) {                        \
                    return -1;                                                             \
                }                                                                          \
            }                                                                              \
            else {                                                                         \
                i++;                                                                       \
            }                                                                              \
        }                                                                                  \
        return written;                                                                    \
    }

COUNT_WORDS_LOOP(count_words_ucs1, Py_UCS1)
COUNT_WORDS_LOOP(count_words_ucs2, Py_UCS2)
COUNT_WORDS_LOOP(count_words_ucs4, Py_UCS4)

PyObject *
speedups_count_words(PyObject *module, PyObject *args)
{
    PyObject *text, *counts;
    if (!PyArg_ParseTuple(args, "UO!:count_words", &text, &PyDict_Type, &counts)) {
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *result = NULL;
    /* Slots for a word in eight characters, at least 128, half of them used at most. */
    Py_ssize_t slots = 128;
    while (slots < length / 8 && slots < ((Py_ssize_t)1 << 20)) {
        slots *= 2;
    }
    word_table table = {kind, data, NULL, 0, slots / 2, NULL, slots - 1};
    /* A Han run of n characters takes n + 1 with its line break: never more than the text. */
    Py_UCS2 *han = kind == PyUnicode_1BYTE_KIND ? NULL : PyMem_Malloc(sizeof(Py_UCS2) * length);
    table.words = PyMem_Malloc(sizeof(word_span) * table.allocated);
    table.slots = PyMem_Calloc(table.mask + 1, sizeof(Py_ssize_t));
    if (table.words == NULL || table.slots == NULL || (han == NULL && kind != PyUnicode_1BYTE_KIND)) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t written;
    if (kind == PyUnicode_1BYTE_KIND) {
        written = count_words_ucs1(data, length, kind, han, &table); /* Latin-1: no Han */
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        written = count_words_ucs2(data, length, kind, han, &table);
    }
    else {
        written = count_words_ucs4(data, length, kind, han, &table);
    }
    if (written < 0 || add_counted(text, &table, counts) < 0) {
        goto done;
    }
    result = written ? PyUnicode_FromKindAndData(PyUnicode_2BYTE_KIND, han, written)
                     : PyUnicode_FromStringAndSize("", 0);
done:
    PyMem_Free(han);
    PyMem_Free(table.words);
    PyMem_Free(table.slots);
    return result;
}

/* counts[word] += 1 for each word of the list *words* other than single characters. */
PyObject *
speedups_count_long_words(PyObject *module, PyObject *args)
{
    PyObject *words, *counts;
    if (!PyArg_ParseTuple(args, "O!O!:count_long_words", &PyList_Type, &words, &PyDict_Type,
                          &counts)) {
        return NULL;
    }
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(words); i++) {
        PyObject *word = PyList_GET_ITEM(words, i);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            Py_DECREF(one);
            return NULL;
        }
        if (PyUnicode_GET_LENGTH(word) != 1 && speedups_add_one(counts, word, one) < 0) {
            Py_DECREF(one);
            return NULL;
        }
    }
    Py_DECREF(one);
    Py_RETURN_NONE;
}
