/* Compiled forms of scrapy_simhash.words.count_words_python, of the search in
 * scrapy_simhash.nfkc and of the combine in scrapy_simhash.fingerprint: the same results
 * for any input (tests/test_words.py, tests/test_nfkc.py and tests/test_fingerprint.py
 * compare the two forms).
 *
 * The regular expressions it replaces cost more than segmenting the text: the engine's
 * overhead per match and per position dominates on pages of many short words. One pass
 * over the characters here classifies each as Python's `re` does: a word character is
 * one for which str.isalnum() is true, or "_" (sre's SRE_UNI_IS_WORD); a Han character
 * is one of U+4E00..U+9FD5, the range jieba's dictionary covers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline int
is_han(Py_UCS4 ch)
{
    return ch >= 0x4E00 && ch <= 0x9FD5;
}

static inline int
is_word(Py_UCS4 ch)
{
    if (ch < 128) {
        return Py_ISALNUM(ch) || ch == '_';
    }
    return Py_UNICODE_ISALNUM(ch) || ch == '_';
}

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

/* Appends *item* (a new reference, or NULL after an error) to *list*, and lets go of it. */
static int
append_new(PyObject *list, PyObject *item)
{
    if (item == NULL) {
        return -1;
    }
    int status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
}

/* counts[word] += 1, for a dict (or Counter) of ints. */
static int
add_one(PyObject *counts, PyObject *word, PyObject *one)
{
    PyObject *old = PyDict_GetItemWithError(counts, word);
    if (old == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        return PyDict_SetItem(counts, word, one);
    }
    /* Held: a count's __add__ may be Python code that changes the dict. */
    Py_INCREF(old);
    PyObject *sum = PyNumber_Add(old, one);
    Py_DECREF(old);
    if (sum == NULL) {
        return -1;
    }
    int status = PyDict_SetItem(counts, word, sum);
    Py_DECREF(sum);
    return status;
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
 * one by one (a float may round each addition). */
static int
add_counted(PyObject *text, word_table *table, PyObject *counts)
{
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
        PyObject *old = Py_XNewRef(PyDict_GetItemWithError(counts, word));
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
                status = add_one(counts, word, one);
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

static PyObject *
count_words(PyObject *module, PyObject *args)
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

/* A bitmap of the 65,536 BMP code points (least significant bit first) from a buffer,
 * or NULL and ValueError when it does not hold 8192 bytes. */
static const unsigned char *
bmp_bits(Py_buffer *table)
{
    if (table->len != 0x10000 / 8) {
        PyErr_SetString(PyExc_ValueError, "the table must hold 8192 bytes");
        return NULL;
    }
    return table->buf;
}

/* The start of the next run from *at* of characters that *bits* marks or beyond the BMP,
 * with *at* moved to its end; length when there is none. */
static Py_ssize_t
next_run(int kind, const void *data, Py_ssize_t length, const unsigned char *bits,
         Py_ssize_t *at)
{
#define MARKED(ch) ((ch) > 0xFFFF || (bits[(ch) >> 3] >> ((ch) & 7) & 1))
    Py_ssize_t i = *at;
    while (i < length && !MARKED(PyUnicode_READ(kind, data, i))) {
        i++;
    }
    Py_ssize_t start = i;
    while (i < length && MARKED(PyUnicode_READ(kind, data, i))) {
        i++;
    }
#undef MARKED
    *at = i;
    return start;
}

/* The [start, end) spans of the runs of characters that *table* (a bitmap of the BMP)
 * marks, and of characters beyond the BMP: what scrapy_simhash.nfkc finds with a regular
 * expression. */
static PyObject *
marked_runs(PyObject *module, PyObject *args)
{
    PyObject *text;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "Uy*:marked_runs", &text, &table)) {
        return NULL;
    }
    const unsigned char *bits = bmp_bits(&table);
    PyObject *runs = bits == NULL ? NULL : PyList_New(0);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0, start;
    while (runs != NULL &&
           (start = next_run(PyUnicode_KIND(text), PyUnicode_DATA(text), length, bits, &at)) <
               length) {
        if (append_new(runs, Py_BuildValue("(nn)", start, at)) < 0) {
            Py_CLEAR(runs);
        }
    }
    PyBuffer_Release(&table);
    return runs;
}

/* The SimHash of terms whose 64-bit hashes are *rows* (8 bytes each, little-endian) and
 * whose weights are *weights*: what scrapy_simhash.fingerprint computes with numpy, with
 * the same arithmetic: each weight times 1000 in double precision, rounded half to even,
 * as int64; sums in int64 (wrapping as numpy's do, here by unsigned arithmetic).
 * None when a scaled weight is not finite or not below 2**63 in magnitude. */
static PyObject *
combine(PyObject *module, PyObject *args)
{
    Py_buffer rows;
    PyObject *weights;
    if (!PyArg_ParseTuple(args, "y*O:combine", &rows, &weights)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyObject *seq = PySequence_Fast(weights, "weights must be a sequence");
    if (seq == NULL) {
        goto done;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (rows.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "rows must hold 8 bytes per weight");
        goto done;
    }
    const unsigned char *bytes = rows.buf;
    uint64_t set_weight[64] = {0};
    uint64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double weight = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (weight == -1.0 && PyErr_Occurred()) {
            goto done;
        }
        double scaled = nearbyint(weight * 1000.0);
        if (!(fabs(scaled) < 9223372036854775808.0)) { /* also for NaN */
            result = Py_NewRef(Py_None);
            goto done;
        }
        uint64_t w = (uint64_t)(int64_t)scaled;
        total += w;
        uint64_t hash = 0;
        for (int b = 7; b >= 0; b--) {
            hash = hash << 8 | bytes[i * 8 + b];
        }
        for (int bit = 0; bit < 64; bit++) {
            /* w where the bit is set, 0 where not: a mask, no branch. */
            set_weight[bit] += w & (0 - (hash >> bit & 1));
        }
    }
    uint64_t fingerprint = 0;
    for (int bit = 0; bit < 64; bit++) {
        if ((int64_t)(set_weight[bit] * 2) > (int64_t)total) {
            fingerprint |= (uint64_t)1 << bit;
        }
    }
    result = PyLong_FromUnsignedLongLong(fingerprint);
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&rows);
    return result;
}

/* counts[word] += 1 for each word of the list *words* other than single characters. */
static PyObject *
count_long_words(PyObject *module, PyObject *args)
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
        if (PyUnicode_GET_LENGTH(word) != 1 && add_one(counts, word, one) < 0) {
            Py_DECREF(one);
            return NULL;
        }
    }
    Py_DECREF(one);
    Py_RETURN_NONE;
}

/* The heaviest terms: what scrapy_simhash.heaviest.heaviest_python computes. *counts* maps
 * terms (str) to counts (int or float); *idf* maps terms to their IDF (float), and
 * new_idf(term) gives (and keeps) the IDF of a term missing from it. The weight of a term
 * is count * IDF as Python multiplies them (the int converted to double, as float.__mul__
 * does; an int too large raises OverflowError, as there); the result is the *top_n*
 * heaviest (term, weight) pairs, heaviest first, ties in weight by term in code point
 * order, as Python's sorts order them. None where Python's order is not a plain order of
 * doubles or Python's rules may differ: a NaN weight, a key that is not exactly a str, a
 * count or IDF of another type. */
typedef struct {
    double weight;
    /* The term's first three code points, each plus one (0: none), 21 bits each: the
     * order of these keys is the order of the terms, but where they are equal. */
    uint64_t prefix;
    PyObject *term;
} weighted_term;

static uint64_t
prefix_key(PyObject *term)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(term);
    int kind = PyUnicode_KIND(term);
    const void *data = PyUnicode_DATA(term);
    uint64_t key = 0;
    for (Py_ssize_t i = 0; i < 3; i++) {
        key = key << 21 | (i < length ? (uint64_t)PyUnicode_READ(kind, data, i) + 1 : 0);
    }
    return key;
}

/* Whether x comes before y: heavier, or as heavy and before it in code point order. */
static inline int
before(const weighted_term *x, const weighted_term *y)
{
    if (x->weight != y->weight) {
        return x->weight > y->weight;
    }
    if (x->prefix != y->prefix) {
        return x->prefix < y->prefix;
    }
    /* Distinct dict keys are never equal strings; an error cannot occur for str. */
    return PyUnicode_Compare(x->term, y->term) < 0;
}

/* Sorts items[0..n) by before(), with scratch space for n items: a merge sort, whose time
 * no order of the input can make quadratic (a page chooses the order of its terms). */
static void
sort_terms(weighted_term *items, weighted_term *scratch, Py_ssize_t n)
{
    const Py_ssize_t run = 16;
    for (Py_ssize_t start = 0; start < n; start += run) {
        Py_ssize_t end = start + run < n ? start + run : n;
        for (Py_ssize_t i = start + 1; i < end; i++) {
            weighted_term item = items[i];
            Py_ssize_t j = i;
            while (j > start && before(&item, &items[j - 1])) {
                items[j] = items[j - 1];
                j--;
            }
            items[j] = item;
        }
    }
    weighted_term *from = items, *to = scratch;
    for (Py_ssize_t width = run; width < n; width *= 2) {
        for (Py_ssize_t left = 0; left < n; left += 2 * width) {
            Py_ssize_t middle = left + width < n ? left + width : n;
            Py_ssize_t end = left + 2 * width < n ? left + 2 * width : n;
            Py_ssize_t i = left, j = middle, k = left;
            while (i < middle && j < end) {
                /* Stable: from the right half only when strictly before. */
                to[k++] = before(&from[j], &from[i]) ? from[j++] : from[i++];
            }
            while (i < middle) {
                to[k++] = from[i++];
            }
            while (j < end) {
                to[k++] = from[j++];
            }
        }
        weighted_term *swap = from;
        from = to;
        to = swap;
    }
    if (from != items) {
        memcpy(items, from, sizeof(weighted_term) * n);
    }
}

static double
number_as_double(PyObject *number, int *usable)
{
    if (PyFloat_CheckExact(number)) {
        return PyFloat_AS_DOUBLE(number);
    }
    if (PyLong_CheckExact(number) || PyBool_Check(number)) {
        return PyLong_AsDouble(number); /* -1.0 and an error when too large */
    }
    *usable = 0;
    return 0.0;
}

static PyObject *
heaviest(PyObject *module, PyObject *args)
{
    PyObject *counts, *idf, *new_idf;
    Py_ssize_t top_n;
    if (!PyArg_ParseTuple(args, "O!O!On:heaviest", &PyDict_Type, &counts, &PyDict_Type, &idf,
                          &new_idf, &top_n)) {
        return NULL;
    }
    if (top_n < 1) {
        PyErr_SetString(PyExc_ValueError, "top_n must be at least 1");
        return NULL;
    }
    Py_ssize_t n = PyDict_GET_SIZE(counts);
    weighted_term *terms = PyMem_Malloc(sizeof(weighted_term) * (n ? n : 1));
    weighted_term *scratch = PyMem_Malloc(sizeof(weighted_term) * (n ? n : 1));
    PyObject *result = NULL;
    Py_ssize_t held = 0; /* terms whose reference the array holds */
    if (terms == NULL || scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t position = 0;
    PyObject *term, *count;
    int usable = 1;
    while (PyDict_Next(counts, &position, &term, &count)) {
        if (held == n) { /* the dict grew while new_idf ran */
            usable = 0;
            break;
        }
        if (!PyUnicode_CheckExact(term)) {
            usable = 0;
            break;
        }
        Py_INCREF(term);
        terms[held++].term = term;
        Py_INCREF(count);
        double c = number_as_double(count, &usable);
        Py_DECREF(count);
        if (!usable) {
            break;
        }
        if (c == -1.0 && PyErr_Occurred()) {
            goto done;
        }
        PyObject *value = PyDict_GetItemWithError(idf, term);
        double d;
        if (value != NULL) {
            Py_INCREF(value);
        }
        else if (PyErr_Occurred() || (value = PyObject_CallOneArg(new_idf, term)) == NULL) {
            goto done;
        }
        d = PyFloat_CheckExact(value) ? PyFloat_AS_DOUBLE(value) : NAN;
        Py_DECREF(value);
        double weight = c * d;
        if (isnan(weight)) {
            usable = 0;
            break;
        }
        terms[held - 1].weight = weight;
    }
    if (!usable || held != PyDict_GET_SIZE(counts)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    /* Python sorts only the terms that can make the cut; all of them sorted here give the
     * same first top_n, as the order is total (terms are distinct). */
    for (Py_ssize_t i = 0; i < n; i++) {
        terms[i].prefix = prefix_key(terms[i].term);
    }
    sort_terms(terms, scratch, n);
    Py_ssize_t kept = n;
    if (kept > top_n) {
        kept = top_n;
    }
    result = PyList_New(kept);
    if (result == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < kept; i++) {
        PyObject *weight = PyFloat_FromDouble(terms[i].weight);
        PyObject *pair = weight == NULL ? NULL : PyTuple_Pack(2, terms[i].term, weight);
        Py_XDECREF(weight);
        if (pair == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, pair);
    }
done:
    if (terms != NULL) {
        for (Py_ssize_t i = 0; i < held; i++) {
            Py_DECREF(terms[i].term);
        }
    }
    PyMem_Free(terms);
    PyMem_Free(scratch);
    return result;
}

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
 * scrapy_simhash.attribution.contains_any_python finds with one `in` per needle, in one
 * pass over the text (each `in` is a pass, and converts the needle to the text's kind). */
static PyObject *
contains_any(PyObject *module, PyObject *args)
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
 * scrapy_simhash.attribution.line_starts_python finds with a regular expression. For each
 * line after a line break, the position of its first character, when its first word
 * character (before the line's end) is a non-ASCII one outside U+4E00..U+9FD5, an ASCII
 * digit, or the start of one of *keywords* (ASCII letters in either case, other characters
 * as they are). */
static PyObject *
line_starts(PyObject *module, PyObject *args)
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
        int found = (ch >= 128 && !is_han(ch)) || (ch >= '0' && ch <= '9');
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
        if (found && append_new(starts, PyLong_FromSsize_t(i + 1)) < 0) {
            Py_DECREF(starts);
            return NULL;
        }
    }
#undef FOLD
    return starts;
}

/* What scrapy_simhash.nfkc.nfkc does with the runs that marked_runs finds: each run
 * normalised by normalize(form, piece) from the character before it, the text between runs
 * copied; the pieces joined. The Python loop over the runs cost as much as normalising
 * them (a Chinese text has a run at each full-width punctuation mark). */
static PyObject *
normalize_runs(PyObject *module, PyObject *args)
{
    PyObject *text, *normalize, *form;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "Uy*OO:normalize_runs", &text, &table, &normalize, &form)) {
        return NULL;
    }
    const unsigned char *bits = bmp_bits(&table);
    PyObject *pieces = bits == NULL ? NULL : PyList_New(0), *result = NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0, copied = 0, start;
    if (pieces == NULL) {
        goto done;
    }
    while ((start = next_run(PyUnicode_KIND(text), PyUnicode_DATA(text), length, bits, &at)) <
           length) {
        if (start) { /* from the boundary before the run */
            start--;
        }
        PyObject *piece = PyUnicode_Substring(text, start, at);
        if (piece == NULL || append_new(pieces, PyUnicode_Substring(text, copied, start)) < 0 ||
            append_new(pieces, PyObject_CallFunctionObjArgs(normalize, form, piece, NULL)) < 0) {
            Py_XDECREF(piece);
            goto done;
        }
        Py_DECREF(piece);
        copied = at;
    }
    if (append_new(pieces, PyUnicode_Substring(text, copied, length)) == 0) {
        PyObject *empty = PyUnicode_New(0, 0);
        if (empty != NULL) {
            result = PyUnicode_Join(empty, pieces);
            Py_DECREF(empty);
        }
    }
done:
    Py_XDECREF(pieces);
    PyBuffer_Release(&table);
    return result;
}

static PyMethodDef methods[] = {
    {"normalize_runs", normalize_runs, METH_VARARGS,
     "normalize_runs(text, table, normalize, form) -> text with each run of characters marked "
     "in table (or beyond the BMP) replaced by normalize(form, run), from the character "
     "before it."},
    {"contains_any", contains_any, METH_VARARGS,
     "contains_any(text, needles) -> whether text holds any of the tuple of str needles."},
    {"line_starts", line_starts, METH_VARARGS,
     "line_starts(text, keywords) -> the starts of the lines that can begin an attribution."},
    {"heaviest", heaviest, METH_VARARGS,
     "heaviest(counts, idf, new_idf, top_n) -> the top_n heaviest (term, count * IDF) pairs, "
     "heaviest first, ties by term; None where the pure-Python form is to decide."},
    {"count_long_words", count_long_words, METH_VARARGS,
     "count_long_words(words, counts): counts[word] += 1 for each word of the list words "
     "other than single characters."},
    {"combine", combine, METH_VARARGS,
     "combine(rows, weights) -> the SimHash of 8-byte little-endian hashes and their "
     "weights, or None for a weight out of range."},
    {"marked_runs", marked_runs, METH_VARARGS,
     "marked_runs(text, table) -> [(start, end), ...] of the runs of characters marked "
     "in table (8192 bytes, a bit per BMP code point) or beyond the BMP."},
    {"count_words", count_words, METH_VARARGS,
     "count_words(text, counts) -> Han runs of text joined by line breaks; the other "
     "words of text that can carry content counted into the dict counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
