/* The stop words of a text's language (scrapy_simhash.analysis.function_words): remove_stop_words.
 * The Python form builds a set of the text's function words, sums their counts per
 * language in a loop of the interpreter, and pops them one by one: as long as all the
 * compiled counting before it. Here a word's languages are a bitmask, looked up once per
 * distinct word, and most words are ruled out before that by a bit filter of the function
 * words' hashes, which stays in the processor's cache where the table of 6,000 words does
 * not (a look-up in it cost about as much as all the rest of this function). */
#include "_speedups.h"

#define LANGUAGES 64 /* bits of a mask */
/* The filter: FILTER_BITS bits, two of them set per function word, from its str hash. */
#define FILTER_BITS 65536
#define FILTER_BYTES (FILTER_BITS / 8)

static inline int
may_be_function_word(const unsigned char *filter, Py_hash_t hash)
{
    uint64_t h = (uint64_t)hash;
    unsigned a = (unsigned)(h & (FILTER_BITS - 1)), b = (unsigned)((h >> 16) & (FILTER_BITS - 1));
    return (filter[a >> 3] >> (a & 7) & 1) && (filter[b >> 3] >> (b & 7) & 1);
}

/* The language of the text whose words are counted in *counts*, from the bitmasks of the
 * languages each function word belongs to (*masks*, word -> int; bit 0 is English, and
 * a language of a lower bit comes first in the languages' order), and the removal of the
 * stop words that apply: English ones always, those of that language when its function
 * words occur at least *min_hits* times. What
 * scrapy_simhash.analysis.function_words._remove_stop_words_python does; False, with counts
 * untouched, where the Python form is to decide (a key that is not exactly a str, a count
 * that is not exactly an int or whose sums overflow 64 bits). *filter*, if given, is the
 * FILTER_BYTES bytes that function_words._filter_of builds from masks' words: a word whose
 * two bits are not both set is no function word and is not looked up. */
PyObject *
speedups_remove_stop_words(PyObject *module, PyObject *args)
{
    PyObject *counts, *masks;
    long long min_hits;
    const unsigned char *filter = NULL;
    Py_ssize_t filter_size = 0;
    if (!PyArg_ParseTuple(args, "O!O!L|y#:remove_stop_words", &PyDict_Type, &counts, &PyDict_Type,
                          &masks, &min_hits, &filter, &filter_size)) {
        return NULL;
    }
    if (filter != NULL && filter_size != FILTER_BYTES) {
        PyErr_Format(PyExc_ValueError, "the filter must be %d bytes, not %zd", FILTER_BYTES,
                     filter_size);
        return NULL;
    }
    Py_ssize_t n = PyDict_GET_SIZE(counts);
    /* The languages of each word of counts, in the dict's order (0: no function word). */
    uint64_t *word_masks = PyMem_Malloc(sizeof(uint64_t) * (n ? n : 1));
    if (word_masks == NULL) {
        return PyErr_NoMemory();
    }
    long long hits[LANGUAGES] = {0};
    /* The index of the first word of each language: the text's order breaks ties. */
    Py_ssize_t first[LANGUAGES];
    uint64_t seen = 0;
    PyObject *result = NULL, *word, *count, *doomed = NULL;
    Py_ssize_t position = 0, i = 0;
    /* Only str keys and exact ints: no comparison or addition here runs Python code that
     * could change the dict while it is read. */
    while (PyDict_Next(counts, &position, &word, &count)) {
        if (!PyUnicode_CheckExact(word)) {
            result = Py_NewRef(Py_False);
            goto done;
        }
        word_masks[i] = 0;
        if (filter != NULL) {
            /* A str key of a dict: its hash is cached, this reads it. */
            Py_hash_t hash = PyObject_Hash(word);
            if (hash == -1) {
                goto done;
            }
            if (!may_be_function_word(filter, hash)) {
                i++;
                continue;
            }
        }
        PyObject *mask = PyDict_GetItemWithError(masks, word);
        if (mask == NULL) {
            if (PyErr_Occurred()) {
                goto done;
            }
            i++;
            continue;
        }
        uint64_t languages = PyLong_AsUnsignedLongLong(mask);
        if (languages == (uint64_t)-1 && PyErr_Occurred()) {
            goto done;
        }
        int overflow = 0;
        long long c = PyLong_CheckExact(count) ? PyLong_AsLongLongAndOverflow(count, &overflow) : 0;
        if (!PyLong_CheckExact(count) || overflow) {
            result = Py_NewRef(Py_False);
            goto done;
        }
        for (int b = 0; b < LANGUAGES; b++) {
            if (!(languages >> b & 1)) {
                continue;
            }
            if (!(seen >> b & 1)) {
                seen |= (uint64_t)1 << b;
                first[b] = i;
            }
            if (__builtin_add_overflow(hits[b], c, &hits[b])) {
                result = Py_NewRef(Py_False);
                goto done;
            }
        }
        word_masks[i++] = languages;
    }
    uint64_t stop = 1; /* English */
    if (seen) {
        int language = -1;
        long long best = 0;
        uint64_t leaders = 0;
        for (int b = 0; b < LANGUAGES; b++) {
            if (!(seen >> b & 1)) {
                continue;
            }
            if (leaders == 0 || hits[b] > best) {
                best = hits[b];
                leaders = 0;
            }
            if (hits[b] == best) {
                leaders |= (uint64_t)1 << b;
            }
        }
        if (leaders & 1) {
            language = 0; /* English wins a tie */
        }
        else {
            /* Of languages with as many hits, the one whose function words come first. */
            for (int b = 0; b < LANGUAGES; b++) {
                if (leaders >> b & 1 && (language < 0 || first[b] < first[language])) {
                    language = b;
                }
            }
        }
        if (best >= min_hits) {
            stop |= (uint64_t)1 << language;
        }
    }
    doomed = PyList_New(0);
    if (doomed == NULL) {
        goto done;
    }
    position = 0;
    for (i = 0; PyDict_Next(counts, &position, &word, &count); i++) {
        if (word_masks[i] & stop && PyList_Append(doomed, word) < 0) {
            goto done;
        }
    }
    for (i = 0; i < PyList_GET_SIZE(doomed); i++) {
        if (PyDict_DelItem(counts, PyList_GET_ITEM(doomed, i)) < 0) {
            goto done;
        }
    }
    result = Py_NewRef(Py_True);
done:
    Py_XDECREF(doomed);
    PyMem_Free(word_masks);
    return result;
}
