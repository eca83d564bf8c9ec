/* The number reader of scoring/numbers.py, compiled, for the usual answer.
 *
 * scoring.numbers.read_numbers is the reference: this file follows its
 * steps one for one (dates, then "per" denominators, blanked; the token
 * pattern _TOKEN as the regex engine would try it; a hyphenated name
 * skipped; each token's readings as _readings and _base_reading make them)
 * and returns the same Number tuples. Whatever it does not follow it hands
 * back, by returning None, and the Python reader reads the whole answer:
 * a character outside the table numbers.py gives it (scripts written
 * without spaces, digits other than ASCII ones, anything past U+23FF), a
 * non-ASCII language code, an ordinal's suffix ("37th"), a German day
 * ("3. März"), a token no grouping reads ("1.234.567" in English) and any
 * digit string too long to read here. tests/scoring/test_numbers_compiled.py
 * holds the two equal on generated answers in every language.
 *
 * The character table is made in Python from the `re` module's own classes
 * (numbers._character_table), so \w, \d and \s mean here what they mean
 * to the patterns in numbers.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Flags of a character in the table. */
#define WORD 1   /* \w, less the letters of scripts written without spaces */
#define DIGIT 2  /* an ASCII digit (any other digit is UNSAFE) */
#define SPACE 4  /* \s */
#define ALPHA 8  /* str.isalpha() */
#define UNSAFE 16 /* hand the answer to the Python reader */

static unsigned char *table;
static Py_ssize_t table_size;
static PyObject *table_bytes; /* keeps the table alive */
static PyTypeObject *number_type;
static char dot_languages[32][2];
static int dot_language_count;

#define FLAGS(c) (table[(c)])
#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')
#define IS_WORD(c) (FLAGS(c) & WORD)
/* _SEPARATOR: the characters that may group thousands. */
#define IS_SEP(c)                                                                        \
    ((c) == ' ' || (c) == 0x00a0 || (c) == 0x202f || (c) == 0x2009 || (c) == '\'' ||    \
     (c) == 0x2019 || (c) == ',' || (c) == '.')

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *bytes, *type, *languages;
    if (!PyArg_ParseTuple(args, "SO!O", &bytes, &PyType_Type, &type, &languages)) return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "Number must be a tuple type");
        return NULL;
    }
    PyObject *codes = PySequence_Fast(languages, "languages must be a sequence");
    if (codes == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(codes);
    if (count > 32) {
        Py_DECREF(codes);
        PyErr_SetString(PyExc_ValueError, "at most 32 languages");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        const char *code = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(codes, i));
        if (code == NULL || strlen(code) != 2) {
            Py_DECREF(codes);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "language codes are two letters");
            return NULL;
        }
        memcpy(dot_languages[i], code, 2);
    }
    Py_DECREF(codes);
    dot_language_count = (int)count;
    Py_INCREF(bytes);
    Py_XDECREF(table_bytes);
    table_bytes = bytes;
    table = (unsigned char *)PyBytes_AS_STRING(bytes);
    table_size = PyBytes_GET_SIZE(bytes);
    Py_INCREF(type);
    Py_XDECREF((PyObject *)number_type);
    number_type = (PyTypeObject *)type;
    Py_RETURN_NONE;
}

/* float() of an ASCII string of digits and at most one ".". Returns 0 and
 * sets *value, or -1 when the string is too long to read here. */
static const double powers_of_ten[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* float() of digits with at most one ".". Clinger's fast path first: an
 * integer below 2**53 and a power of ten to 1e22 are exact doubles, so one
 * division is the correctly rounded value float() gives. Otherwise
 * PyOS_string_to_double, which is correct for any length but sets the FPU's
 * control word on each call (an eighth of the reader's time when it did
 * every number). */
static int read_float(const char *digits, Py_ssize_t length, double *value) {
    uint64_t mantissa = 0;
    Py_ssize_t decimals = -1;
    int fast = 1;
    for (Py_ssize_t i = 0; fast && i < length; i++) {
        if (digits[i] == '.') {
            decimals = 0;
            continue;
        }
        mantissa = mantissa * 10 + (uint64_t)(digits[i] - '0');
        if (decimals >= 0) decimals++;
        fast = mantissa < ((uint64_t)1 << 53);
    }
    if (fast && decimals <= 22) {
        *value = decimals > 0 ? (double)mantissa / powers_of_ten[decimals] : (double)mantissa;
        return 0;
    }
    char buffer[128];
    if (length >= (Py_ssize_t)sizeof buffer) return -1;
    memcpy(buffer, digits, length);
    buffer[length] = '\0';
    char *end;
    /* Overflow gives inf, as float() does; no exception is set. */
    *value = PyOS_string_to_double(buffer, &end, NULL);
    if (*value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

typedef struct {
    double value;
    Py_ssize_t decimals;
} Reading;

/* A token's body split into runs of digits and the single separators
 * between them: runs[0] sep[1] runs[1] ... sep[m] runs[m]. */
#define MAX_PARTS 64
typedef struct {
    Py_ssize_t at[MAX_PARTS];  /* where each run starts in the body */
    Py_ssize_t len[MAX_PARTS]; /* its length */
    Py_UCS4 sep[MAX_PARTS];    /* sep[i] precedes run i (sep[0] unused) */
    int m;
} Parts;

/* _base_reading: every " " or "," before exactly three digits dropped,
 * then "," read as ".". Returns -1 where float() would fail. */
static int base_reading(const Py_UCS4 *body, const Parts *p, Reading *out) {
    char text[128];
    Py_ssize_t n = 0, dots = 0, after_dot = -1;
    for (int i = 0; i <= p->m; i++) {
        if (i > 0) {
            Py_UCS4 s = p->sep[i];
            if (!((s == ' ' || s == ',') && p->len[i] == 3)) {
                if (s != ',' && s != '.') return -1;
                if (n >= (Py_ssize_t)sizeof text) return -1;
                text[n++] = '.';
                dots++;
                after_dot = n;
            }
        }
        if (n + p->len[i] >= (Py_ssize_t)sizeof text) return -1;
        for (Py_ssize_t k = 0; k < p->len[i]; k++) text[n++] = (char)body[p->at[i] + k];
    }
    if (dots > 1) return -1;
    out->decimals = after_dot < 0 ? 0 : n - after_dot;
    return read_float(text, n, &out->value);
}

/* The digits of runs first..last joined, with "." before run `dot_before`
 * (or none when it is -1). */
static int joined_float(const Py_UCS4 *body, const Parts *p, int first, int last, int dot_before,
                        double *value) {
    char text[128];
    Py_ssize_t n = 0;
    for (int i = first; i <= last; i++) {
        if (n + p->len[i] + 1 >= (Py_ssize_t)sizeof text) return -1;
        if (i == dot_before) text[n++] = '.';
        for (Py_ssize_t k = 0; k < p->len[i]; k++) text[n++] = (char)body[p->at[i] + k];
    }
    return read_float(text, n, value);
}

/* _readings: every (value, decimals) of an unsigned body, the base rules'
 * reading first. Returns how many (0 when none fits: the caller hands the
 * answer back), or -1 when the body cannot be read here. */
static int readings_of(const Py_UCS4 *body, Py_ssize_t length, int dot_groups, Reading out[2]) {
    Parts p;
    p.m = 0;
    p.at[0] = 0;
    Py_ssize_t k = 0;
    while (k < length && IS_DIGIT(body[k])) k++;
    p.len[0] = k;
    while (k < length) {
        if (p.m + 1 >= MAX_PARTS) return -1;
        p.m++;
        p.sep[p.m] = body[k++];
        p.at[p.m] = k;
        while (k < length && IS_DIGIT(body[k])) k++;
        p.len[p.m] = k - p.at[p.m];
    }
    int m = p.m;
    if (m == 0) {
        out[0].decimals = 0;
        return joined_float(body, &p, 0, 0, -1, &out[0].value) < 0 ? -1 : 1;
    }
    if (m == 1 && p.len[1] != 3) {
        out[0].decimals = p.len[1];
        return joined_float(body, &p, 0, 1, 1, &out[0].value) < 0 ? -1 : 1;
    }
    int count = 0;
    /* All separators group thousands, the same grouper throughout. */
    Py_UCS4 first = p.sep[1];
    int grouping = first != '.' || dot_groups;
    for (int i = 1; grouping && i <= m; i++) grouping = p.sep[i] == first && p.len[i] == 3;
    if (grouping) {
        if (joined_float(body, &p, 0, m, -1, &out[count].value) < 0) return -1;
        out[count++].decimals = 0;
    }
    /* The last separator is the decimal mark; the others group by threes,
     * alike and unlike the mark. */
    Py_UCS4 mark = p.sep[m];
    int decimal = mark == '.' || mark == ',';
    if (decimal && m > 1) {
        Py_UCS4 group = p.sep[1];
        decimal = group != mark && (group != '.' || dot_groups);
        for (int i = 1; decimal && i < m; i++) decimal = p.sep[i] == group && p.len[i] == 3;
    }
    if (decimal) {
        if (joined_float(body, &p, 0, m, m, &out[count].value) < 0) return -1;
        out[count++].decimals = p.len[m];
    }
    if (count > 1) {
        /* _BASE_TOKEN.fullmatch: " " or "," before each run of three, the
         * last separator possibly a decimal "." or ",". */
        int full = 1;
        for (int i = 1; full && i < m; i++) full = (p.sep[i] == ' ' || p.sep[i] == ',') && p.len[i] == 3;
        if (full) {
            Py_UCS4 s = p.sep[m];
            full = ((s == ' ' || s == ',') && p.len[m] == 3) || s == '.' || s == ',';
        }
        if (full) {
            Reading base;
            if (base_reading(body, &p, &base) < 0) return -1;
            int first_is_base = out[0].value == base.value && out[0].decimals == base.decimals;
            int second_is_base = out[1].value == base.value && out[1].decimals == base.decimals;
            if (!first_is_base && second_is_base) {
                Reading swap = out[0];
                out[0] = out[1];
                out[1] = swap;
            }
        }
    }
    return count;
}

/* What follows a token's candidate end, as _TOKEN's last group tries it:
 * 1 a plain end, 2 an ordinal's suffix (the group matched), 0 no end. */
static int token_end(const Py_UCS4 *b, Py_ssize_t n, Py_ssize_t e) {
    if (e >= n) return 1;
    Py_UCS4 c = b[e];
    if (!IS_WORD(c)) return 1;
    if (c >= 'A' && c <= 'Z' && e + 4 <= n) {
        int identifier = 1;
        for (Py_ssize_t k = e + 1; k < e + 4; k++) {
            Py_UCS4 d = b[k];
            identifier &= (d >= 'A' && d <= 'Z') || IS_DIGIT(d) || d == '_';
        }
        if (identifier) return 1;
    }
    Py_ssize_t after = -1;
    if (c == 0x00ba || c == 0x00aa) {
        after = e + 1;
    } else if (e + 2 <= n) {
        Py_UCS4 d = b[e + 1];
        if ((c == 's' && d == 't') || (c == 'n' && d == 'd') || (c == 'r' && d == 'd') ||
            (c == 't' && d == 'h') || (c == 'S' && d == 'T') || (c == 'N' && d == 'D') ||
            (c == 'R' && d == 'D') || (c == 'T' && d == 'H'))
            after = e + 2;
    }
    if (after >= 0 && (after >= n || !IS_WORD(b[after]))) return 2;
    return 0;
}

/* dates (\d{4}-\d{2}-\d{2}) blanked, left to right. */
static void blank_dates(Py_UCS4 *b, Py_ssize_t n) {
    static const char shape[] = "dddd-dd-dd";
    Py_ssize_t i = 0;
    while (i + 10 <= n) {
        int date = 1;
        for (int k = 0; date && k < 10; k++) date = shape[k] == 'd' ? IS_DIGIT(b[i + k]) : b[i + k] == '-';
        if (date) {
            for (int k = 0; k < 10; k++) b[i + k] = ' ';
            i += 10;
        } else {
            i++;
        }
    }
}

/* _DENOMINATOR, \b(?i:per)\s+\d+(?:[ ,]\d{3})*(?:[.,]\d+)?, blanked. */
static void blank_denominators(Py_UCS4 *b, Py_ssize_t n) {
    /* \b looks at the text before blanking: a blank ends in a digit, so no
       "per" starts a word right where the last blank ended ("1,000per"). */
    Py_ssize_t i = 0, blank_end = -1;
    while (i + 3 <= n) {
        if ((b[i] == 'p' || b[i] == 'P') && (b[i + 1] == 'e' || b[i + 1] == 'E') &&
            (b[i + 2] == 'r' || b[i + 2] == 'R') && i != blank_end &&
            (i == 0 || !(FLAGS(b[i - 1]) & WORD))) {
            Py_ssize_t k = i + 3;
            while (k < n && (FLAGS(b[k]) & SPACE)) k++;
            if (k > i + 3 && k < n && IS_DIGIT(b[k])) {
                while (k < n && IS_DIGIT(b[k])) k++;
                while (k + 4 <= n && (b[k] == ' ' || b[k] == ',') && IS_DIGIT(b[k + 1]) &&
                       IS_DIGIT(b[k + 2]) && IS_DIGIT(b[k + 3]))
                    k += 4;
                if (k + 2 <= n && (b[k] == '.' || b[k] == ',') && IS_DIGIT(b[k + 1])) {
                    k += 2;
                    while (k < n && IS_DIGIT(b[k])) k++;
                }
                for (Py_ssize_t j = i; j < k; j++) b[j] = ' ';
                i = blank_end = k;
                continue;
            }
        }
        i++;
    }
}

static PyObject *new_number(PyObject *text, Py_ssize_t start, Py_ssize_t end, const Reading *readings,
                            int count, int sign) {
    PyObject *values = PyTuple_New(count);
    if (values == NULL) return NULL;
    for (int i = 0; i < count; i++) {
        double v = sign ? -readings[i].value : readings[i].value;
        PyObject *f = PyFloat_FromDouble(v);
        if (f == NULL) {
            Py_DECREF(values);
            return NULL;
        }
        PyTuple_SET_ITEM(values, i, f);
    }
    PyObject *slice = PyUnicode_Substring(text, start, end);
    PyObject *first = PyTuple_GET_ITEM(values, 0);
    PyObject *items[8] = {first, slice, PyLong_FromSsize_t(start), PyLong_FromSsize_t(end), values,
                          PyLong_FromSsize_t(readings[0].decimals), sign ? Py_True : Py_False, Py_False};
    /* As tuple.__new__(Number, ...) makes it: the named tuple's Python
     * constructor is skipped, as in numbers.py. */
    PyObject *number = number_type->tp_alloc(number_type, 8);
    if (number == NULL || slice == NULL || items[2] == NULL || items[3] == NULL || items[5] == NULL) {
        Py_XDECREF(number);
        Py_XDECREF(slice);
        Py_XDECREF(items[2]);
        Py_XDECREF(items[3]);
        Py_XDECREF(items[5]);
        Py_DECREF(values);
        return NULL;
    }
    Py_INCREF(first);
    Py_INCREF(items[6]);
    Py_INCREF(items[7]);
    for (int i = 0; i < 8; i++) PyTuple_SET_ITEM(number, i, items[i]);
    return number;
}

/* The language's first two letters, lower-cased: 1 when "." groups
 * thousands in it, and *german set. -1 when not plain ASCII. */
static int language_flags(PyObject *language, int *german) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(language);
    char code[2] = {0, 0};
    for (Py_ssize_t i = 0; i < n && i < 2; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(language, i);
        if (c >= 128) return -1;
        code[i] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
    *german = n >= 2 && code[0] == 'd' && code[1] == 'e';
    if (n < 2) return 0;
    for (int i = 0; i < dot_language_count; i++)
        if (dot_languages[i][0] == code[0] && dot_languages[i][1] == code[1]) return 1;
    return 0;
}

static PyObject *scan(PyObject *text, Py_UCS4 *o, Py_UCS4 *b, Py_ssize_t n, int dot_groups, int german,
                      int *handed_back) {
    PyObject *numbers = PyList_New(0);
    if (numbers == NULL) return NULL;
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = b[i];
        int sign = c == '-' || c == 0x2212;
        if (!(IS_DIGIT(c) || sign)) {
            i++;
            continue;
        }
        /* (?<!W.)(?<!\..): not glued to a word or after a dot. */
        if (i > 0 && (IS_WORD(b[i - 1]) || b[i - 1] == '.')) {
            i++;
            continue;
        }
        Py_ssize_t k = i + 1;
        if (sign && !(k < n && IS_DIGIT(b[k]))) {
            i++;
            continue;
        }
        while (k < n && IS_DIGIT(b[k])) k++;
        /* (?:SEP\d{3})*, greedy: each repetition is four characters. */
        Py_ssize_t whole = k, groups = 0;
        while (k + 4 <= n && IS_SEP(b[k]) && IS_DIGIT(b[k + 1]) && IS_DIGIT(b[k + 2]) && IS_DIGIT(b[k + 3])) {
            k += 4;
            groups++;
        }
        /* Back off as the regex engine does: the decimal part, then one
         * group at a time. Ending inside a run of digits never ends a
         * token (a digit follows), so only whole runs are tried. */
        Py_ssize_t end = -1;
        int kind = 0;
        for (Py_ssize_t g = groups; g >= 0 && kind == 0; g--) {
            Py_ssize_t at = whole + 4 * g;
            if (at + 1 < n && (b[at] == '.' || b[at] == ',') && IS_DIGIT(b[at + 1])) {
                Py_ssize_t e = at + 2;
                while (e < n && IS_DIGIT(b[e])) e++;
                if ((kind = token_end(b, n, e))) {
                    end = e;
                    break;
                }
            }
            if ((kind = token_end(b, n, at))) end = at;
        }
        if (kind == 0) {
            i++;
            continue;
        }
        if (kind == 2) {
            *handed_back = 1; /* an ordinal: numbers.py decides what it is */
            return numbers;
        }
        Py_ssize_t digits_at = sign ? i + 1 : i;
        if (digits_at >= 2 && (b[digits_at - 1] == '-' || b[digits_at - 1] == 0x2010) &&
            (FLAGS(o[digits_at - 2]) & ALPHA)) {
            i = end; /* a hyphenated name such as COVID-19 */
            continue;
        }
        Py_ssize_t length = end - digits_at;
        if (german && length <= 2 && end < n && b[end] == '.') {
            *handed_back = 1; /* perhaps "3. März", a date */
            return numbers;
        }
        Reading readings[2];
        int count = readings_of(b + digits_at, length, dot_groups, readings);
        if (count <= 0) {
            *handed_back = 1; /* read by the base rules' prefix, or too long */
            return numbers;
        }
        PyObject *number = new_number(text, i, end, readings, count, sign);
        if (number == NULL || PyList_Append(numbers, number) < 0) {
            Py_XDECREF(number);
            Py_DECREF(numbers);
            return NULL;
        }
        Py_DECREF(number);
        i = end;
    }
    return numbers;
}

static PyObject *read_numbers(PyObject *self, PyObject *args) {
    PyObject *text, *language;
    if (!PyArg_ParseTuple(args, "UU", &text, &language)) return NULL;
    if (table == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    int german;
    int dot_groups = language_flags(language, &german);
    if (dot_groups < 0) Py_RETURN_NONE;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int digits = 0, dash = 0, per = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= (Py_UCS4)table_size || (FLAGS(c) & UNSAFE)) Py_RETURN_NONE;
        digits |= IS_DIGIT(c);
        dash |= c == '-';
        per |= c == 'p' || c == 'P';
    }
    if (!digits) return PyList_New(0);
    Py_UCS4 small[2 * 512];
    Py_UCS4 *o = n <= 512 ? small : PyMem_Malloc(2 * n * sizeof(Py_UCS4));
    if (o == NULL) return PyErr_NoMemory();
    Py_UCS4 *b = o + n;
    for (Py_ssize_t i = 0; i < n; i++) o[i] = b[i] = PyUnicode_READ(kind, data, i);
    if (dash) blank_dates(b, n);
    if (per) blank_denominators(b, n);
    int handed_back = 0;
    PyObject *numbers = scan(text, o, b, n, dot_groups, german, &handed_back);
    if (o != small) PyMem_Free(o);
    if (handed_back) {
        Py_XDECREF(numbers);
        Py_RETURN_NONE;
    }
    return numbers;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(table, Number, dot_grouping_languages): the character table and the type to make."},
    {"read_numbers", read_numbers, METH_VARARGS,
     "read_numbers(text, language): the numbers in text, or None to hand it to the Python reader."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_numbers_c", NULL, -1, methods};

PyMODINIT_FUNC PyInit__numbers_c(void) { return PyModule_Create(&module); }
